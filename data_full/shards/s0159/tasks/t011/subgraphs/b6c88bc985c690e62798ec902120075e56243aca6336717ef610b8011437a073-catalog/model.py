class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 64, 28, 28]", in1: "f32[64, 64, 3, 3]", in2: "f32[1, 192, 28, 28]"):
        # No stacktrace found for following nodes
        conv2d_5: "f32[1, 64, 28, 28]" = torch.conv2d(in0, in1, None, (1, 1), (1, 1), (1, 1), 1);  in0 = in1 = None
        cat_1: "f32[1, 256, 28, 28]" = torch.cat((conv2d_5, in2), 1);  conv2d_5 = in2 = None
        return (cat_1,)
