class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 16, 49, 128]", in1: "f32[512, 128]", in2: "f32[512]"):
        # No stacktrace found for following nodes
        linear_18: "f32[1, 16, 49, 512]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        gelu_11: "f32[1, 16, 49, 512]" = torch._C._nn.gelu(linear_18, approximate = 'none');  linear_18 = None
        return (gelu_11,)
