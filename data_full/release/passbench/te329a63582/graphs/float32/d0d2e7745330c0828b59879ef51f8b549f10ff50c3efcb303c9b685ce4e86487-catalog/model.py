import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, in_2, in_3):
        arange = torch.arange(96, device = device(type='cpu'))
        add = arange + 0;  arange = None
        getitem = add[(None, None, None, slice(None, None, None))];  add = None
        gt = getitem > in_0;  in_0 = None
        to = gt.to(device(type='cpu'));  gt = None
        and_ = in_2 & to;  in_2 = to = None
        le = getitem <= in_1;  in_1 = None
        to_1 = le.to(device(type='cpu'));  le = None
        and__1 = and_ & to_1;  and_ = to_1 = None
        to_2 = and__1.to(device(type='cpu'));  and__1 = None
        and__2 = in_3 & to_2;  in_3 = to_2 = None
        return (getitem, and__2)

