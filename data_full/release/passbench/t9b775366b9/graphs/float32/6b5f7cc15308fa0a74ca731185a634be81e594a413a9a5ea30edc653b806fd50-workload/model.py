import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        softmax = torch.nn.functional.softmax(in_0, dim = -1);  in_0 = None
        in_1[(slice(None, None, None), slice(None, None, None), slice(None, 64, None), slice(None, None, None))] = softmax;  setitem = in_1;  in_1 = setitem = None
        return (softmax,)

