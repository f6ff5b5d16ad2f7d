import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        relu = torch.nn.functional.relu(conv2d, inplace = True);  conv2d = None
        pad = torch._C._nn.pad(relu, (2, 1, 2, 1), 'constant', None);  relu = None
        return (pad,)

