import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        cumsum = in_0.cumsum(dim = -1)
        sub = cumsum - 1;  cumsum = None
        mul = sub * in_0;  sub = in_0 = None
        getitem = mul[(slice(None, None, None), None, slice(None, None, None))];  mul = None
        return (getitem,)

