import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2, in_3, in_4):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        cat = torch.cat((conv2d, in_1), 1);  conv2d = in_1 = None
        view = cat.view(4, 144, -1)
        cat_1 = torch.cat([view, in_2, in_3, in_4], 2);  view = in_2 = in_3 = in_4 = None
        split = cat_1.split((64, 80), 1);  cat_1 = None
        getitem = split[1]
        sigmoid = getitem.sigmoid();  getitem = None
        getitem_1 = split[0];  split = None
        view_1 = getitem_1.view(4, 4, 16, 8500);  getitem_1 = None
        transpose = view_1.transpose(2, 1);  view_1 = None
        return (sigmoid, cat, transpose)

