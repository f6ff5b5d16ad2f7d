class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1, 32, 512]", in1: "f32[4096, 512]", in2: "f32[1, 16, 32, 64]"):
        # No stacktrace found for following nodes
        linear_3: "f32[1, 1, 32, 4096]" = torch._C._nn.linear(in0, in1, None);  in0 = in1 = None
        view_3: "f32[1, 32, 16, 256]" = linear_3.view((1, 32, -1, 256));  linear_3 = None
        transpose_1: "f32[1, 16, 32, 256]" = view_3.transpose(1, 2);  view_3 = None
        new_empty: "f32[1, 16, 32, 192]" = transpose_1.new_empty(1, 16, 32, 192)
        split_2 = torch.functional.split(transpose_1, [128, 128], dim = -1);  transpose_1 = None
        getitem_77: "f32[1, 16, 32, 128]" = split_2[0]
        getitem_78: "f32[1, 16, 32, 128]" = split_2[1];  split_2 = None
        getitem_79: "f32[1, 16, 32, 128]" = new_empty[(Ellipsis, slice(None, 128, None))]
        copy_: "f32[1, 16, 32, 128]" = getitem_79.copy_(getitem_77);  getitem_79 = getitem_77 = copy_ = None
        getitem_80: "f32[1, 16, 32, 64]" = new_empty[(Ellipsis, slice(128, None, None))]
        copy__1: "f32[1, 16, 32, 64]" = getitem_80.copy_(in2);  getitem_80 = in2 = copy__1 = None
        return (getitem_78, new_empty)
