import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2, in_3):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (1, 1), (1, 1), 38);  in_0 = w_0 = w_1 = None
        cat = torch.cat([conv2d, in_1, in_2], dim = 1);  conv2d = in_1 = in_2 = None
        reshape = cat.reshape(4, 8, 19, 784);  cat = None
        transpose = reshape.transpose(-1, -2);  reshape = None
        mul = in_3 * transpose;  in_3 = transpose = None
        pad = torch._C._nn.pad(mul, (0, 0, 1, 0, 0, 0), 'constant', None);  mul = None
        return (pad,)

