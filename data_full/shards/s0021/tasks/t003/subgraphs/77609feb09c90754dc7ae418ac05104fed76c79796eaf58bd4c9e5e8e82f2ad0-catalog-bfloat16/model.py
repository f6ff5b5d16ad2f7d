class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 192, 72, 72]", in1: "f32[192, 1, 5, 5]", in2: "f32[192]", in3: "f32[192]", in4: "f32[192]", in5: "f32[192]"):
        # No stacktrace found for following nodes
        conv2d_25: "f32[1, 192, 36, 36]" = torch.conv2d(in0, in1, None, (2, 2), (2, 2), (1, 1), 192);  in0 = in1 = None
        batch_norm_15: "f32[1, 192, 36, 36]" = torch.nn.functional.batch_norm(conv2d_25, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_25 = in2 = in3 = in4 = in5 = None
        silu_15: "f32[1, 192, 36, 36]" = torch.nn.functional.silu(batch_norm_15, inplace = True);  batch_norm_15 = None
        return (silu_15,)
