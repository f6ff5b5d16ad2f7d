class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 65, 64]", in1: "f32[64, 64]", in2: "f32[64]"):
        # No stacktrace found for following nodes
        linear_6: "f32[1, 65, 64]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        transpose: "f32[65, 1, 64]" = linear_6.transpose(1, 0)
        return (transpose, linear_6)
