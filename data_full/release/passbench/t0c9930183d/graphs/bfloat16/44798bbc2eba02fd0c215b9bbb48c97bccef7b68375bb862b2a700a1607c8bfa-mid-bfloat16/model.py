import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        max_pool3d = torch.nn.functional.max_pool3d(in_0, (3, 3, 3), 1, 1, 1, ceil_mode = False, return_indices = False);  in_0 = None
        return (max_pool3d,)

