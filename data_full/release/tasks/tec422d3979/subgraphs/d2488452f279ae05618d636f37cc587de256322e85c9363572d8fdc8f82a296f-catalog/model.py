class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 12, 64, 768]"):
        # No stacktrace found for following nodes
        softmax_50: "f32[1, 12, 64, 768]" = torch.nn.functional.softmax(in0, dim = -1);  in0 = None
        return (softmax_50,)
