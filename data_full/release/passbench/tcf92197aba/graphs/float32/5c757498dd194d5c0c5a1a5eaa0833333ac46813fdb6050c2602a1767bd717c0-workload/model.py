import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        group_norm = torch.nn.functional.group_norm(in_0, 1, w_0, w_1, 1e-08);  in_0 = w_0 = w_1 = None
        return (group_norm,)

