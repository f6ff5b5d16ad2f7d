import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        bmm = torch.bmm(in_0, in_1);  in_0 = in_1 = None
        view = bmm.view(1, 4, 32, 32);  bmm = None
        return (view,)

