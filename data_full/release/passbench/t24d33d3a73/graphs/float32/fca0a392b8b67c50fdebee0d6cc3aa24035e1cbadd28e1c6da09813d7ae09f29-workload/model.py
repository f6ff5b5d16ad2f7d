import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        to = in_0.to(device(type='cpu'));  in_0 = None
        getitem = to[(slice(None, None, None), None, None, slice(None, None, None))]
        to_1 = getitem.to(device(type='cpu'));  getitem = None
        return (to, to_1)

