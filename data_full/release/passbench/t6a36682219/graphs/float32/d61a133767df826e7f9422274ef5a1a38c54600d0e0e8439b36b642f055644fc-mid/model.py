import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, w_2, w_3, w_4, w_5):
        conv2d = torch.conv2d(in_0, w_0, w_1, (1, 1), 'same', (1, 1), 1024);  w_0 = w_1 = None
        gelu = torch._C._nn.gelu(conv2d, approximate = 'none');  conv2d = None
        batch_norm = torch.nn.functional.batch_norm(gelu, w_2, w_3, w_4, w_5, False, 0.1, 1e-05);  gelu = w_2 = w_3 = w_4 = w_5 = None
        add = batch_norm + in_0;  batch_norm = in_0 = None
        return (add,)

