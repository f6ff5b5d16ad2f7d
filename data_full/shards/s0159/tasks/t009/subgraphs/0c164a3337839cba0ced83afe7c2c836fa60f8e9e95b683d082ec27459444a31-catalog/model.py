class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 56, 56]", in1: "f32[128, 256, 1, 1]", in2: "f32[1, 128, 56, 56]"):
        # No stacktrace found for following nodes
        conv2d_3: "f32[1, 128, 56, 56]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        add: "f32[1, 128, 56, 56]" = in2 + conv2d_3;  in2 = conv2d_3 = None
        return (add,)
