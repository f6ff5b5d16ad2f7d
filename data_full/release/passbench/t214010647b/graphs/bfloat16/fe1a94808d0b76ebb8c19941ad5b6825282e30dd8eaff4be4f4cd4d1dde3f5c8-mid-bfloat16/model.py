import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        interpolate = torch.nn.functional.interpolate(in_0, None, 2, 'bilinear', True);  in_0 = None
        return (interpolate,)

