import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0):
        conv2d = torch.conv2d(in_0, w_0, None, (2, 2), (0, 0), (1, 1), 1);  in_0 = w_0 = None
        getitem = conv2d[(slice(None, None, None), slice(None, 2048, None), slice(None, None, None), slice(None, None, None))]
        getitem_1 = conv2d[(slice(None, None, None), slice(2048, None, None), slice(None, None, None), slice(None, None, None))];  conv2d = None
        return (getitem, getitem_1)

