import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        linear = torch._C._nn.linear(in_0, w_0, w_1);  in_0 = w_0 = w_1 = None
        tanh = torch.tanh(linear);  linear = None
        return (tanh,)

