class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 32, 1]"):
        # No stacktrace found for following nodes
        ones_like: "f32[1, 32, 1]" = torch.ones_like(in0)
        mul: "f32[1, 32, 1]" = in0 * ones_like;  in0 = None
        return (mul, ones_like)
