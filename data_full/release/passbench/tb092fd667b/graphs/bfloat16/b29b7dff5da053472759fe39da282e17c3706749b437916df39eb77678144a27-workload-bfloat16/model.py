import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        cat = torch.cat([conv2d, in_1, in_2], dim = 1);  conv2d = in_1 = in_2 = None
        return (cat,)

