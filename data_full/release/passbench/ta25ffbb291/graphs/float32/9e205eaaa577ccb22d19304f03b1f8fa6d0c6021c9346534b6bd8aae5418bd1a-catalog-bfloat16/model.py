import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        arange = torch.arange(32, device = device(type='cpu'))
        add = arange + 0;  arange = None
        getitem = add[(None, None, slice(None, None, None), None)];  add = None
        le = in_0 <= getitem;  in_0 = None
        new_ones = getitem.new_ones((), dtype = torch.bool);  getitem = None
        to = le.to(device(type='cpu'));  le = None
        and_ = new_ones & to;  new_ones = to = None
        return (and_,)

