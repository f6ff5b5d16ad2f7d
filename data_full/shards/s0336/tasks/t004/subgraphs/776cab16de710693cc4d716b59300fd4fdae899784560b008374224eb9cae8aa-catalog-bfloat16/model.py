class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 12, 27, 27]"):
        # No stacktrace found for following nodes
        interpolate: "f32[1, 12, 27, 27]" = torch.nn.functional.interpolate(in0, mode = 'bilinear', size = (27, 27));  in0 = None
        permute_12: "f32[1, 27, 27, 12]" = interpolate.permute(0, 2, 3, 1);  interpolate = None
        reshape_20: "f32[729, 12]" = permute_12.reshape(729, -1);  permute_12 = None
        return (reshape_20,)
