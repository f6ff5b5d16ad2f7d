class GraphModule(torch.nn.Module):
    def forward(self, in0: "f64[]", in1: "f32[1, 3, 600, 600]"):
        # No stacktrace found for following nodes
        item_19 = in0.item();  in0 = None
        pad: "f32[1, 3, 601, 601]" = torch._C._nn.pad(in1, (0, 1, 0, 1), 'constant', item_19);  in1 = item_19 = None
        return (pad,)
