import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        flatten = conv2d.flatten(2);  conv2d = None
        permute = flatten.permute(0, 2, 1);  flatten = None
        return (permute,)

