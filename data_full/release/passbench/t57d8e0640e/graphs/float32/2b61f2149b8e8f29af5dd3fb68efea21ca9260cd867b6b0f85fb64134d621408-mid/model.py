import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, w_0, w_1, w_2, w_3, w_4, w_5, w_6, w_7, w_8, w_9):
        conv2d = torch.conv2d(in_0, w_0, w_1, (4, 4), (3, 3), (1, 1), 1);  in_0 = w_0 = w_1 = None
        batch_norm = torch.nn.functional.batch_norm(conv2d, w_2, w_3, w_4, w_5, False, 0.1, 1e-05);  conv2d = w_2 = w_3 = w_4 = w_5 = None
        batch_norm_1 = torch.nn.functional.batch_norm(batch_norm, w_6, w_7, w_8, w_9, False, 0.1, 1e-05);  w_6 = w_7 = w_8 = w_9 = None
        return (batch_norm_1, batch_norm)

