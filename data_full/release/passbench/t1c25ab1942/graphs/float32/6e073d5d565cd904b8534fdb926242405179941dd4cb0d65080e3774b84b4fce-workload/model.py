import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0):
        conv2d = torch.conv2d(in_0, w_0, None, (2, 2), (0, 0), (1, 1), 640);  in_0 = w_0 = None
        pow_1 = conv2d.pow(2)
        return (conv2d, pow_1)

