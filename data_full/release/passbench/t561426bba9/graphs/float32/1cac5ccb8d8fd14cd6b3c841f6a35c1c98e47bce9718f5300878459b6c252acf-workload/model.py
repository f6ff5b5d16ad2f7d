import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, in_2):
        index_select = torch.index_select(in_0, 3, in_1);  in_0 = in_1 = None
        add = in_2 + index_select;  in_2 = index_select = None
        return (add,)

