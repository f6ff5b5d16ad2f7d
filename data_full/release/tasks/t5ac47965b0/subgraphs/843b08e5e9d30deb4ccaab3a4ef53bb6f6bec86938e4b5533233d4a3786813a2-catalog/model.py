class GraphModule(torch.nn.Module):
    def forward(self, in0: "i32[1, 16]"):
        # No stacktrace found for following nodes
        argmax: "i64[1]" = torch.argmax(in0, dim = 1);  in0 = None
        return (argmax,)
