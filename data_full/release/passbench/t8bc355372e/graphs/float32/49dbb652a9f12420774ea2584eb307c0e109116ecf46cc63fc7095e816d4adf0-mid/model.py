import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        interpolate = torch.nn.functional.interpolate(in_0, align_corners = False, mode = 'bilinear', scale_factor = 4);  in_0 = None
        cat = torch.cat([in_1, interpolate], dim = 1);  in_1 = interpolate = None
        permute = cat.permute(0, 2, 3, 1);  cat = None
        return (permute,)

