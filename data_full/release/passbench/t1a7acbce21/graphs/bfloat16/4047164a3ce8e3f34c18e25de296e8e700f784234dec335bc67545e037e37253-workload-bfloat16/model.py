import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        topk = in_0.topk(150, dim = 1);  in_0 = None
        getitem = topk[1];  topk = None
        add = getitem + 0;  getitem = None
        return (add,)

