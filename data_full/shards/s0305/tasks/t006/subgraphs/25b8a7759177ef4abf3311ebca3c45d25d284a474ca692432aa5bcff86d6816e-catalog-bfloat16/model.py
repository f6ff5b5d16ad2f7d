class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 28, 28, 28]", in1: "f32[168, 28, 1, 1]", in2: "f32[1, 168, 28, 28]", in3: "f32[336]", in4: "f32[336]", in5: "f32[336]", in6: "f32[336]"):
        # No stacktrace found for following nodes
        conv2d_24: "f32[1, 168, 28, 28]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        cat_6: "f32[1, 336, 28, 28]" = torch.cat([in2, conv2d_24], 1);  in2 = conv2d_24 = None
        batch_norm_12: "f32[1, 336, 28, 28]" = torch.nn.functional.batch_norm(cat_6, in3, in4, in5, in6, False, 0.1, 1e-05);  cat_6 = in3 = in4 = in5 = in6 = None
        silu_3: "f32[1, 336, 28, 28]" = torch.nn.functional.silu(batch_norm_12, inplace = True);  batch_norm_12 = None
        split_7 = torch.functional.split(silu_3, [168, 168], 1);  silu_3 = None
        getitem_17: "f32[1, 168, 28, 28]" = split_7[1]
        getitem_18: "f32[1, 168, 28, 28]" = split_7[0];  split_7 = None
        return (getitem_18, getitem_17)
