import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        interpolate = torch.nn.functional.interpolate(in_0, None, 2.0, 'bilinear', False, recompute_scale_factor = None);  in_0 = None
        return (interpolate,)

