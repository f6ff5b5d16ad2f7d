class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 2048, 25, 25]", in1: "f32[256, 2048, 1, 1]", in2: "f32[256]"):
        # No stacktrace found for following nodes
        conv2d_53: "f32[1, 256, 25, 25]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        flatten_34: "f32[1, 256, 625]" = conv2d_53.flatten(2);  conv2d_53 = None
        permute_5: "f32[1, 625, 256]" = flatten_34.permute(0, 2, 1);  flatten_34 = None
        return (permute_5,)
