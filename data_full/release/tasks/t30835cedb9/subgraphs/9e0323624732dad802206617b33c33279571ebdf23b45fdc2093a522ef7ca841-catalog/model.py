class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 96, 56, 56]", in1: "f32[20, 96, 1, 1]", in2: "f32[1, 20, 56, 56]", in3: "f32[40]", in4: "f32[40]", in5: "f32[40]", in6: "f32[40]"):
        # No stacktrace found for following nodes
        conv2d_9: "f32[1, 20, 56, 56]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        cat_2: "f32[1, 40, 56, 56]" = torch.cat([conv2d_9, in2], 1);  conv2d_9 = in2 = None
        batch_norm_5: "f32[1, 40, 56, 56]" = torch.nn.functional.batch_norm(cat_2, in3, in4, in5, in6, False, 0.1, 1e-05);  cat_2 = in3 = in4 = in5 = in6 = None
        split_3 = torch.functional.split(batch_norm_5, [20, 20], 1)
        getitem_7: "f32[1, 20, 56, 56]" = split_3[0]
        getitem_8: "f32[1, 20, 56, 56]" = split_3[1];  split_3 = None
        return (getitem_8, batch_norm_5, getitem_7)
