import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = w_1 = None
        mul = conv2d * 1.0;  conv2d = None
        reshape = mul.reshape(-1, 17, 4096);  mul = None
        return (reshape,)

