import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        interpolate = torch.nn.functional.interpolate(in_0, None, 2.0, 'bilinear', False, recompute_scale_factor = None);  in_0 = None
        cat = torch.cat((in_1, interpolate), dim = 1);  in_1 = None
        return (interpolate, cat)

