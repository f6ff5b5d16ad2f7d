class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 52, 14, 14]", in1: "f32[312, 52, 1, 1]", in2: "f32[1, 312, 14, 14]", in3: "f32[624]", in4: "f32[624]", in5: "f32[624]", in6: "f32[624]"):
        # No stacktrace found for following nodes
        conv2d_65: "f32[1, 312, 14, 14]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        cat_19: "f32[1, 624, 14, 14]" = torch.cat([conv2d_65, in2], 1);  conv2d_65 = in2 = None
        batch_norm_27: "f32[1, 624, 14, 14]" = torch.nn.functional.batch_norm(cat_19, in3, in4, in5, in6, False, 0.1, 1e-05);  cat_19 = in3 = in4 = in5 = in6 = None
        silu_18: "f32[1, 624, 14, 14]" = torch.nn.functional.silu(batch_norm_27, inplace = True);  batch_norm_27 = None
        split_20 = torch.functional.split(silu_18, [156, 156, 156, 156], 1);  silu_18 = None
        getitem_46: "f32[1, 156, 14, 14]" = split_20[1]
        getitem_47: "f32[1, 156, 14, 14]" = split_20[2]
        getitem_48: "f32[1, 156, 14, 14]" = split_20[3]
        getitem_49: "f32[1, 156, 14, 14]" = split_20[0];  split_20 = None
        return (getitem_46, getitem_47, getitem_48, getitem_49)
