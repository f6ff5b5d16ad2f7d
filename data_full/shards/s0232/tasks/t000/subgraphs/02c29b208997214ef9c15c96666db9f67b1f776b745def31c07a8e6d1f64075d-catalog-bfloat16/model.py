class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 300, 256]", in1: "f32[2, 256]", in2: "f32[2]", in3: "f32[1, 300, 2]", in4: "f32[1, 300, 2]", in5: "f32[1, 300, 2]", in6: "f32[1, 300, 2]", in7: "f32[1, 300, 2]"):
        # No stacktrace found for following nodes
        linear_132: "f32[1, 300, 2]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        stack_11: "f32[1, 6, 300, 2]" = torch.stack((in3, in4, in5, in6, in7, linear_132), dim = 1);  in3 = in4 = in5 = in6 = in7 = linear_132 = None
        return (stack_11,)
