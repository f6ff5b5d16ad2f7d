import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0):
        conv2d = torch.conv2d(in_0, w_0, None, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = None
        split = torch.functional.split(conv2d, [64, 64, 512], dim = 1);  conv2d = None
        getitem = split[2]
        reshape = getitem.reshape(4, 128, -1);  getitem = None
        getitem_1 = split[0]
        transpose = reshape.transpose(-1, -2);  reshape = None
        reshape_1 = getitem_1.reshape(4, 16, -1);  getitem_1 = None
        transpose_1 = reshape_1.transpose(-1, -2);  reshape_1 = None
        reshape_2 = transpose_1.reshape(4, 16, 16, -1)
        transpose_2 = reshape_2.transpose(1, 2)
        getitem_2 = split[1];  split = None
        reshape_3 = getitem_2.reshape(4, 16, -1);  getitem_2 = None
        return (transpose_1, reshape_3, reshape_2, transpose_2, transpose)

