import torch
from torch import device
from math import inf, nan


class GraphModule(torch.nn.Module):
    def forward(self, in_0, in_1):
        softmax = torch.nn.functional.softmax(in_0, dim = -1);  in_0 = None
        getitem = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(64, 256, None))]
        getitem_1 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(256, -64, None))]
        getitem_2 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(256, -64, None))]
        getitem_3 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(64, 256, None))]
        getitem_4 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(-64, None, None))]
        getitem_5 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(-64, None, None))]
        view = getitem_5.view(4, 12, -1, 64);  getitem_5 = None
        view_1 = getitem_3.view(4, 12, 8, 64, 3, 64);  getitem_3 = None
        view_2 = getitem_1.view(4, 12, 8, 64, 3, 64);  getitem_1 = None
        getitem_6 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, 64, None))]
        getitem_7 = softmax[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, 64, None))];  softmax = None
        view_3 = getitem_6.view(4, 12, -1, 64);  getitem_6 = None
        in_1[(slice(None, None, None), slice(None, None, None), slice(128, -128, None), slice(None, 64, None))] = view_3;  setitem = in_1;  view_3 = setitem = None
        in_1[(slice(None, None, None), slice(None, None, None), slice(128, -128, None), slice(-64, None, None))] = view;  setitem_1 = in_1;  in_1 = view = setitem_1 = None
        return (getitem, getitem_2, getitem_4, view_2, view_1, getitem_7)

