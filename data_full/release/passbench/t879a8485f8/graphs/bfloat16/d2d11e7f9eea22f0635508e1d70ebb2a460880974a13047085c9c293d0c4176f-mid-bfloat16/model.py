import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        topk = in_0.topk(2, dim = -1);  in_0 = None
        getitem = topk[0];  topk = None
        return (getitem,)

