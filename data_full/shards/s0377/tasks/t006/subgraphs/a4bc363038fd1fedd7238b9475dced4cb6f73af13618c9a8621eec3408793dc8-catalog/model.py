class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 192, 8, 6]", in1: "f32[1, 192, 8, 6]", in2: "f32[1, 192, 8, 6]"):
        # No stacktrace found for following nodes
        max_pool2d_2: "f32[1, 192, 8, 6]" = torch.nn.functional.max_pool2d(in0, 13, 1, 6, 1, ceil_mode = False, return_indices = False)
        cat_3: "f32[1, 768, 8, 6]" = torch.cat([in0, in1, in2, max_pool2d_2], dim = 1);  in0 = in1 = in2 = max_pool2d_2 = None
        return (cat_3,)
