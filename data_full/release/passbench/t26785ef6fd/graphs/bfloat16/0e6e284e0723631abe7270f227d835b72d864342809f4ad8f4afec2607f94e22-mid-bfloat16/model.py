import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, in_1):
        conv2d = torch.conv2d(in_0, w_0, None, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = None
        cat = torch.cat([in_1, conv2d], dim = 1);  in_1 = conv2d = None
        return (cat,)

