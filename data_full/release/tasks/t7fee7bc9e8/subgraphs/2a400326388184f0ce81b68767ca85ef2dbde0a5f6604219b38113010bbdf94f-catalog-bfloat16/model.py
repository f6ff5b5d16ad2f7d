class GraphModule(torch.nn.Module):
    def forward(self, in0: "f16[1, 11, 256]", in1: "f16[256, 256]", in2: "f16[256]"):
        # No stacktrace found for following nodes
        linear_3: "f16[1, 11, 256]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        view: "f16[1, 11, 4, 64]" = linear_3.view(1, -1, 4, 64);  linear_3 = None
        transpose: "f16[1, 4, 11, 64]" = view.transpose(1, 2);  view = None
        transpose_1: "f16[1, 4, 64, 11]" = transpose.transpose(-1, -2);  transpose = None
        return (transpose_1,)
