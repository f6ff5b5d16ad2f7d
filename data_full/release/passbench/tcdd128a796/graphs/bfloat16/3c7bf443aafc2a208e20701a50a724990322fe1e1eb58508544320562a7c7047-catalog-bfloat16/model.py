import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv1d = torch.conv1d(in_0, w_0, w_1, (1,), (0,), (1,), 4);  in_0 = w_0 = w_1 = None
        gelu = torch._C._nn.gelu(conv1d);  conv1d = None
        return (gelu,)

