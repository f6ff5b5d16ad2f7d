class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[]", in1: "i64[1, 32]"):
        # No stacktrace found for following nodes
        min_1: "i64[1, 32]" = torch.min(in0, in1);  in0 = in1 = None
        return (min_1,)
