import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, in_1, in_2, in_3):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), (3, 3), (1, 1), 57);  in_0 = w_0 = w_1 = None
        cat = torch.cat([in_1, in_2, conv2d], dim = 1);  in_1 = in_2 = conv2d = None
        reshape = cat.reshape(8, 8, 19, 196);  cat = None
        transpose = reshape.transpose(-1, -2);  reshape = None
        mul = in_3 * transpose;  in_3 = transpose = None
        pad = torch._C._nn.pad(mul, (0, 0, 1, 0, 0, 0), 'constant', None);  mul = None
        return (pad,)

