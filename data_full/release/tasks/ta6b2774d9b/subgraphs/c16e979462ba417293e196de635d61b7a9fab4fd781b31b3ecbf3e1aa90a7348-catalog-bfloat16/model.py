class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 512, 64, 64]", in1: "f32[64, 512, 1, 1]", in2: "f32[64]"):
        # No stacktrace found for following nodes
        conv2d_108: "f32[1, 64, 64, 64]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        reshape: "f32[1, 64, 4096]" = conv2d_108.reshape(1, 64, -1);  conv2d_108 = None
        return (reshape,)
