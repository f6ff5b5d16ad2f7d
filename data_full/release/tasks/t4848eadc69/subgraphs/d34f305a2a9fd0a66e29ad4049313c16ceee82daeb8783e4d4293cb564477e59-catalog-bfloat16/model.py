class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 320, 14, 14]"):
        # No stacktrace found for following nodes
        interpolate_2: "f32[1, 320, 14, 14]" = torch.nn.functional.interpolate(in0, mode = 'bilinear', size = (14, 14));  in0 = None
        reshape_10: "f32[1, 320, 196]" = interpolate_2.reshape(1, -1, 196);  interpolate_2 = None
        permute_18: "f32[1, 196, 320]" = reshape_10.permute(0, 2, 1);  reshape_10 = None
        return (permute_18,)
