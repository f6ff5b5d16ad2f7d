import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        matmul = in_0 @ in_1;  in_0 = in_1 = None
        return (matmul,)

