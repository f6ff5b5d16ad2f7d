class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 249, 64]", in1: "f32[1, 64]", in2: "f32[1]"):
        # No stacktrace found for following nodes
        linear_148: "f32[1, 249, 1]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        transpose_102: "f32[1, 1, 249]" = linear_148.transpose(2, 1);  linear_148 = None
        return (transpose_102,)
