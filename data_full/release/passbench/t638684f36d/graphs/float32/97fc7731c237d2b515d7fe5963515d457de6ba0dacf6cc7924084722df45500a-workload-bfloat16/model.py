import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        view = in_0.view(-1, 512);  in_0 = None
        ne = view.ne(1)
        int_1 = ne.int();  ne = None
        return (view, int_1)

