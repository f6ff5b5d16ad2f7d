import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, in_1):
        conv2d = torch.conv2d(in_0, w_0, None, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = None
        add = in_1 + conv2d;  in_1 = conv2d = None
        split = torch.functional.split(add, [128, 384], dim = 1)
        getitem = split[0]
        getitem_1 = split[1];  split = None
        return (add, getitem, getitem_1)

