import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        to = in_0.to(dtype = torch.float32);  in_0 = None
        view = to.view(4, 3, 192, 192);  to = None
        eq = view == 0.0
        return (eq, view)

