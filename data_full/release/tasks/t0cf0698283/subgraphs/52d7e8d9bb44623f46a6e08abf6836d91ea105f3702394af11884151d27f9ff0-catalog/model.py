class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 120, 14, 14]", in1: "f32[120, 1, 3, 3]", in2: "f32[1, 120, 14, 14]", in3: "f32[1, 120, 14, 14]", in4: "f32[1, 120, 14, 14]", in5: "f32[480]", in6: "f32[480]", in7: "f32[480]", in8: "f32[480]"):
        # No stacktrace found for following nodes
        conv2d_114: "f32[1, 120, 14, 14]" = torch.conv2d(in0, in1, None, (1, 1), (1, 1), (1, 1), 120);  in0 = in1 = None
        cat_32: "f32[1, 480, 14, 14]" = torch.cat([conv2d_114, in2, in3, in4], 1);  conv2d_114 = in2 = in3 = in4 = None
        batch_norm_43: "f32[1, 480, 14, 14]" = torch.nn.functional.batch_norm(cat_32, in5, in6, in7, in8, False, 0.1, 1e-05);  cat_32 = in5 = in6 = in7 = in8 = None
        silu_34: "f32[1, 480, 14, 14]" = torch.nn.functional.silu(batch_norm_43, inplace = True);  batch_norm_43 = None
        return (silu_34,)
