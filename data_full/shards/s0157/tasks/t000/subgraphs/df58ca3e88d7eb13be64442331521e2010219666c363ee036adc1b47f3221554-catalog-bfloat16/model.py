class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 96, 8, 8]", in1: "f32[1, 96, 56, 56]"):
        # No stacktrace found for following nodes
        tile: "f32[1, 96, 56, 56]" = in0.tile([1, 1, 7, 7]);  in0 = None
        add: "f32[1, 96, 56, 56]" = in1 + tile;  in1 = tile = None
        permute: "f32[1, 56, 56, 96]" = add.permute(0, 2, 3, 1);  add = None
        return (permute,)
