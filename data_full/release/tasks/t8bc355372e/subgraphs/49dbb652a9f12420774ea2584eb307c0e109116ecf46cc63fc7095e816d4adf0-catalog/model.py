class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 7, 7]", in1: "f32[1, 256, 28, 28]"):
        # No stacktrace found for following nodes
        interpolate_1: "f32[1, 256, 28, 28]" = torch.nn.functional.interpolate(in0, align_corners = False, mode = 'bilinear', scale_factor = 4);  in0 = None
        cat_1: "f32[1, 512, 28, 28]" = torch.cat([in1, interpolate_1], dim = 1);  in1 = interpolate_1 = None
        permute_12: "f32[1, 28, 28, 512]" = cat_1.permute(0, 2, 3, 1);  cat_1 = None
        return (permute_12,)
