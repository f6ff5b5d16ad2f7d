import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2, in_3):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        cat = torch.cat((in_1, conv2d), 1);  in_1 = conv2d = None
        view = cat.view(1, 79, -1)
        cat_1 = torch.cat([view, in_2, in_3], 2);  view = in_2 = in_3 = None
        split = cat_1.split((64, 15), 1);  cat_1 = None
        getitem = split[1]
        sigmoid = getitem.sigmoid();  getitem = None
        getitem_1 = split[0];  split = None
        view_1 = getitem_1.view(1, 4, 16, 8400);  getitem_1 = None
        transpose = view_1.transpose(2, 1);  view_1 = None
        return (cat, sigmoid, transpose)

