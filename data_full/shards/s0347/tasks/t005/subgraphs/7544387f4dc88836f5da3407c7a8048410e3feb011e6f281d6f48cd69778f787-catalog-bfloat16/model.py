class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 16, 4, 8400]"):
        # No stacktrace found for following nodes
        softmax_1: "f32[1, 16, 4, 8400]" = in0.softmax(1);  in0 = None
        return (softmax_1,)
