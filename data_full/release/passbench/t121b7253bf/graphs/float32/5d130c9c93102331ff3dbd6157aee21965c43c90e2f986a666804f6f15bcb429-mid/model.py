import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        arange = torch.arange(128, device = device(type='cpu'))
        add = arange + 0;  arange = None
        getitem = add[(None, None, None, slice(None, None, None))];  add = None
        le = getitem <= in_0;  in_0 = None
        to = le.to(device(type='cpu'));  le = None
        and_ = in_1 & to;  in_1 = to = None
        return (getitem, and_)

