import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        view = conv2d.view(1, 19, -1);  conv2d = None
        mul = 1 * view;  view = None
        return (mul,)

