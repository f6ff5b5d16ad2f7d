class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 32, 4096]", in1: "f32[2, 4096]", in2: "f32[2]"):
        # No stacktrace found for following nodes
        linear_224: "f32[1, 32, 2]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        return (linear_224,)
