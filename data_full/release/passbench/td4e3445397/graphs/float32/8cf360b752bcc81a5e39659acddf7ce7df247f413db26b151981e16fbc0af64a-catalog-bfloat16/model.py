import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0):
        to = in_0.to(device(type='cpu'));  in_0 = None
        unsqueeze = to.unsqueeze(1);  to = None
        to_1 = unsqueeze.to(device(type='cpu'));  unsqueeze = None
        return (to_1,)

