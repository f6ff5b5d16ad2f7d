import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, in_2):
        max_pool2d = torch.nn.functional.max_pool2d(in_0, 13, 1, 6, 1, ceil_mode = False, return_indices = False)
        cat = torch.cat([in_0, in_1, in_2, max_pool2d], dim = 1);  in_0 = in_1 = in_2 = max_pool2d = None
        return (cat,)

