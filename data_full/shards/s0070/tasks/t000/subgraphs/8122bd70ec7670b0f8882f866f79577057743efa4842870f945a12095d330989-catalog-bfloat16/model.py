class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 24, 24]", in1: "f32[1024, 256, 1, 1]"):
        # No stacktrace found for following nodes
        conv2d_27: "f32[1, 1024, 24, 24]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        return (conv2d_27,)
