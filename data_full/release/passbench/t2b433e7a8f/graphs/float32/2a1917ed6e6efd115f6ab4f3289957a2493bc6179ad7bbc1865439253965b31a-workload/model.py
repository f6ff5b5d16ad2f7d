import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        ones_like = torch.ones_like(in_0)
        mul = in_0 * ones_like;  in_0 = None
        return (mul, ones_like)

