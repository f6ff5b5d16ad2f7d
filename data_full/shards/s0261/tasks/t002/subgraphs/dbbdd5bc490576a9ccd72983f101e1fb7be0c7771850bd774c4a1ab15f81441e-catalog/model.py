class GraphModule(torch.nn.Module):
    def forward(self, in0: "bf16[1, 3, 1152]"):
        # No stacktrace found for following nodes
        float_9: "f32[1, 3, 1152]" = in0.float();  in0 = None
        pow_1: "f32[1, 3, 1152]" = float_9.pow(2)
        return (float_9, pow_1)
