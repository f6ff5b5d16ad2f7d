class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 12, 16, 32]"):
        # No stacktrace found for following nodes
        softmax_4: "f32[1, 12, 16, 32]" = torch.softmax(in0, dim = -1, dtype = torch.float32);  in0 = None
        dropout_21: "f32[1, 12, 16, 32]" = torch.nn.functional.dropout(softmax_4, 0.1, False, False);  softmax_4 = None
        return (dropout_21,)
