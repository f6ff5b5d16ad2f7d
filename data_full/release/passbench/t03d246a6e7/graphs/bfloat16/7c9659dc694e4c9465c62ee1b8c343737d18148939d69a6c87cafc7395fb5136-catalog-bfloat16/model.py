import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 2);  in_0 = w_0 = w_1 = None
        hardswish = torch.nn.functional.hardswish(conv2d, False);  conv2d = None
        pad = torch._C._nn.pad(hardswish, (1, 0, 1, 0), 'constant', 0.0);  hardswish = None
        return (pad,)

