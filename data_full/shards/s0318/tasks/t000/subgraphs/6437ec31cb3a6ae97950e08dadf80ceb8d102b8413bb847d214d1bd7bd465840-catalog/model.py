class GraphModule(torch.nn.Module):
    def forward(self, in0: "f16[1, 1024, 24, 24]", in1: "f16[1024, 1024, 1, 1]"):
        # No stacktrace found for following nodes
        conv2d_10: "f16[1, 1024, 24, 24]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        return (conv2d_10,)
