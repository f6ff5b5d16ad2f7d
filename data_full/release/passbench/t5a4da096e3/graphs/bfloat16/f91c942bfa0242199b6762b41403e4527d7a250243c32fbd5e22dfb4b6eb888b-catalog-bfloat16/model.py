import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        softmax = in_0.softmax(dim = -1);  in_0 = None
        transpose = softmax.transpose(-2, -1);  softmax = None
        return (transpose,)

