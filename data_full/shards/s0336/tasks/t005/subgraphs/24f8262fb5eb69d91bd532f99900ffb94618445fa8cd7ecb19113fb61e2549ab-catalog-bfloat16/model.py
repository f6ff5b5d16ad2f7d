class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 168, 1, 1]", in1: "f32[16, 168, 1, 1]", in2: "f32[16]"):
        # No stacktrace found for following nodes
        conv2d_29: "f32[1, 16, 1, 1]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        hardswish_19: "f32[1, 16, 1, 1]" = torch.nn.functional.hardswish(conv2d_29, True);  conv2d_29 = None
        return (hardswish_19,)
