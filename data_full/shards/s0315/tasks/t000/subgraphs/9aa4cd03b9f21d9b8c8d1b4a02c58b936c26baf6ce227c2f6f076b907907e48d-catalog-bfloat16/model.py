class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[1, 8]"):
        # No stacktrace found for following nodes
        argmax: "i64[1]" = in0.argmax(dim = -1);  in0 = None
        return (argmax,)
