import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, w_0, in_0):
        tile = w_0.tile([1, 1, 7, 7]);  w_0 = None
        add = in_0 + tile;  in_0 = tile = None
        permute = add.permute(0, 2, 3, 1);  add = None
        return (permute,)

