class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 480, 8, 28, 28]"):
        # No stacktrace found for following nodes
        max_pool3d_4: "f32[1, 480, 4, 14, 14]" = torch.nn.functional.max_pool3d(in0, (3, 3, 3), (2, 2, 2), (1, 1, 1), 1, ceil_mode = False, return_indices = False);  in0 = None
        return (max_pool3d_4,)
