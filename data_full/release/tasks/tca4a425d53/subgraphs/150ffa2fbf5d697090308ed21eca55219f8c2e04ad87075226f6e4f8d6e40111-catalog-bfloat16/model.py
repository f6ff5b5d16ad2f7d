class GraphModule(torch.nn.Module):
    def forward(self, in0: "f16[1, 11, 256]", in1: "f16[256, 256]", in2: "f16[256]"):
        # No stacktrace found for following nodes
        linear_1: "f16[1, 11, 256]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        view_1: "f16[1, 11, 4, 64]" = linear_1.view(1, -1, 4, 64);  linear_1 = None
        transpose_2: "f16[1, 4, 11, 64]" = view_1.transpose(1, 2);  view_1 = None
        return (transpose_2,)
