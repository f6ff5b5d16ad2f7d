class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 80]"):
        # No stacktrace found for following nodes
        softmax_16: "f32[1, 80]" = in0.softmax(1);  in0 = None
        return (softmax_16,)
