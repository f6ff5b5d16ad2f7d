import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, w_0):
        conv2d = torch.conv2d(in_0, in_1, w_0, (1, 1), (0, 0), (1, 1), 1);  in_0 = in_1 = w_0 = None
        gelu = torch._C._nn.gelu(conv2d);  conv2d = None
        return (gelu,)

