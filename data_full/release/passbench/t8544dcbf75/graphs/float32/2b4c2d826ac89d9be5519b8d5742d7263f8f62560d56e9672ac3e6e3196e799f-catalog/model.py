import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (16, 16), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        permute = conv2d.permute(0, 2, 3, 1);  conv2d = None
        dropout = torch.nn.functional.dropout(permute, 0.0, False, False);  permute = None
        return (dropout,)

