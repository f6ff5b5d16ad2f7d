import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, w_0):
        conv2d = torch.conv2d(in_0, in_1, w_0);  in_0 = in_1 = w_0 = None
        view = conv2d.view(1, 8, 32, 40, 40);  conv2d = None
        return (view,)

