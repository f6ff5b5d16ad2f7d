import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        float_1 = in_0.float();  in_0 = None
        pow_1 = float_1.pow(2)
        return (float_1, pow_1)

