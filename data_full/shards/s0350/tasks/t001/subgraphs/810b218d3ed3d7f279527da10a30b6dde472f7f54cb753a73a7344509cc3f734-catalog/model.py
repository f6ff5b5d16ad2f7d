class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 16, 4, 8400]", in1: "f32[1, 16, 1, 1]"):
        # No stacktrace found for following nodes
        conv2d_218: "f32[1, 1, 4, 8400]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        view_27: "f32[1, 4, 8400]" = conv2d_218.view(1, 4, 8400);  conv2d_218 = None
        split_17 = view_27.split(2, dim = 1);  view_27 = None
        getitem_65: "f32[1, 2, 8400]" = split_17[0]
        getitem_66: "f32[1, 2, 8400]" = split_17[1];  split_17 = None
        add_80: "f32[1, 2, 8400]" = getitem_65 + getitem_66
        sub: "f32[1, 2, 8400]" = getitem_66 - getitem_65;  getitem_66 = getitem_65 = None
        truediv: "f32[1, 2, 8400]" = sub / 2;  sub = None
        split_18 = truediv.split(1, dim = 1);  truediv = None
        getitem_67: "f32[1, 1, 8400]" = split_18[0]
        getitem_68: "f32[1, 1, 8400]" = split_18[1];  split_18 = None
        return (getitem_67, getitem_68, add_80)
