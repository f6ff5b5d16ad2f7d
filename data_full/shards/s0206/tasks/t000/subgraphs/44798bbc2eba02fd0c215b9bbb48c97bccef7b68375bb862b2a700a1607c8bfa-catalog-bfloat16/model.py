class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 528, 4, 14, 14]"):
        # No stacktrace found for following nodes
        max_pool3d_9: "f32[1, 528, 4, 14, 14]" = torch.nn.functional.max_pool3d(in0, (3, 3, 3), 1, 1, 1, ceil_mode = False, return_indices = False);  in0 = None
        return (max_pool3d_9,)
