class GraphModule(torch.nn.Module):
    def forward(self, in0: "bf16[1, 1024]", in1: "bf16[1024, 1024]", in2: "bf16[1024]"):
        # No stacktrace found for following nodes
        linear_144: "bf16[1, 1024]" = torch._C._nn.linear(in0, in1, in2);  in0 = in1 = in2 = None
        tanh: "bf16[1, 1024]" = torch.tanh(linear_144);  linear_144 = None
        return (tanh,)
