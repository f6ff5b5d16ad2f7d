import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0):
        conv1d = torch.conv1d(in_0, w_0, None, (1,), (4,), (1,), 768);  in_0 = w_0 = None
        return (conv1d,)

