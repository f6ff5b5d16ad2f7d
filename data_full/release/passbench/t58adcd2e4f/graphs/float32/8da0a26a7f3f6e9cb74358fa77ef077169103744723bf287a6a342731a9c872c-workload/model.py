import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        topk = torch.topk(in_0, dim = -1, k = 4, sorted = False);  in_0 = None
        getitem = topk[1];  topk = None
        return (getitem,)

