import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, w_2, w_3, w_4):
        conv2d = torch.conv2d(in_0, w_0, None, (1, 1), (0, 0), (1, 1), 1);  in_0 = w_0 = None
        batch_norm = torch.nn.functional.batch_norm(conv2d, w_1, w_2, w_3, w_4, False, 0.1, 0.001);  conv2d = w_1 = w_2 = w_3 = w_4 = None
        relu = torch.nn.functional.relu(batch_norm, inplace = True);  batch_norm = None
        pad = torch._C._nn.pad(relu, (2, 2, 2, 2), 'constant', 0);  relu = None
        return (pad,)

