import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        full = torch.full((8, 900, 256), -1000000.0, device = device(type='cpu'))
        full[(Ellipsis, slice(None, 7, None))] = in_0;  setitem = full;  in_0 = setitem = None
        return (full,)

