import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1, in_2, in_3, in_4, in_5, in_6, in_7):
        avg_pool2d = torch._C._nn.avg_pool2d(in_0, 3, 2, 1, False, True, None);  in_0 = None
        cat = torch.cat([in_1, in_2, in_3, in_4, in_5, in_6, in_7, avg_pool2d], 1);  in_1 = in_2 = in_3 = in_4 = in_5 = in_6 = in_7 = avg_pool2d = None
        return (cat,)

