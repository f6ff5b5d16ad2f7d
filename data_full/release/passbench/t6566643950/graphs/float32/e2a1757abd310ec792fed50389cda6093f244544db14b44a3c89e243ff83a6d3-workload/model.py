import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        min_1 = torch.min(in_0, in_1);  in_0 = in_1 = None
        return (min_1,)

