import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv1d = torch.conv1d(in_0, w_0, w_1, (2,), (3,), (1,), 196);  in_0 = w_0 = w_1 = None
        return (conv1d,)

