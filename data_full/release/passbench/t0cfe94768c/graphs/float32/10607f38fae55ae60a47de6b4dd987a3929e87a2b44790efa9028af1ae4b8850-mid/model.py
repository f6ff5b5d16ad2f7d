import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (2, 2), (1, 1), (1, 1), 1280);  in_0 = w_0 = w_1 = None
        gelu = torch._C._nn.gelu(conv2d);  conv2d = None
        return (gelu,)

