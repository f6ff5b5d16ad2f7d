class GraphModule(torch.nn.Module):
    def forward(self, in0: "f16[1, 19, 2560]", in1: "f16[2560]", in2: "f16[2560]"):
        # No stacktrace found for following nodes
        layer_norm: "f16[1, 19, 2560]" = torch.nn.functional.layer_norm(in0, (2560,), in1, in2, 1e-05);  in0 = in1 = in2 = None
        return (layer_norm,)
