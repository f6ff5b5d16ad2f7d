class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1, 4, 4]", in1: "f32[2, 4]", in2: "f32[2]", in3: "f32[1, 1, 4, 8]"):
        # No stacktrace found for following nodes
        linear_20: "f32[1, 1, 4, 2]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        cat_1: "f32[1, 1, 4, 10]" = torch.cat([in3, linear_20], dim = -1);  in3 = linear_20 = None
        return (cat_1,)
