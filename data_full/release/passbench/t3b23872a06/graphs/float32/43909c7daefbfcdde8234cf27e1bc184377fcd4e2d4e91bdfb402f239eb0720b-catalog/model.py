import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        item = in_0.item();  in_0 = None
        pad = torch._C._nn.pad(in_1, (0, 1, 0, 1), 'constant', item);  in_1 = item = None
        return (pad,)

