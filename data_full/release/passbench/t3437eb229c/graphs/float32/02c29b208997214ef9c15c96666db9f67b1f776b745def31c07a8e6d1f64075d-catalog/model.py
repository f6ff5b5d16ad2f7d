import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2, in_3, in_4, in_5):
        linear = torch._C._nn.linear(in_0, w_0, w_1);  in_0 = w_0 = w_1 = None
        stack = torch.stack((in_1, in_2, in_3, in_4, in_5, linear), dim = 1);  in_1 = in_2 = in_3 = in_4 = in_5 = linear = None
        return (stack,)

