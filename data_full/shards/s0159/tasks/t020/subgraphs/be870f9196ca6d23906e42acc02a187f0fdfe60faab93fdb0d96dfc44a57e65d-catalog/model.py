class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1024, 14, 14]", in1: "f32[512, 1024, 1, 1]", in2: "f32[1, 512, 14, 14]"):
        # No stacktrace found for following nodes
        conv2d_14: "f32[1, 512, 14, 14]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        add_3: "f32[1, 512, 14, 14]" = in2 + conv2d_14;  in2 = conv2d_14 = None
        split_4 = torch.functional.split(add_3, [128, 384], dim = 1)
        getitem_8: "f32[1, 384, 14, 14]" = split_4[1]
        getitem_9: "f32[1, 128, 14, 14]" = split_4[0];  split_4 = None
        return (add_3, getitem_9, getitem_8)
