class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 816, 1, 1]", in1: "f32[34, 816, 1, 1]", in2: "f32[34]"):
        # No stacktrace found for following nodes
        conv2d_71: "f32[1, 34, 1, 1]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        silu_43: "f32[1, 34, 1, 1]" = torch.nn.functional.silu(conv2d_71, inplace = True);  conv2d_71 = None
        return (silu_43,)
