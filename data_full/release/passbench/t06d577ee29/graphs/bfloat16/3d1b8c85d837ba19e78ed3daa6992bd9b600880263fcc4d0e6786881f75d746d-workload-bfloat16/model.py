import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1):
        layer_norm = torch.nn.functional.layer_norm(in_0, (2560,), w_0, w_1, 1e-05);  in_0 = w_0 = w_1 = None
        return (layer_norm,)

