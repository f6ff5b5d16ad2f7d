class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 64, 112, 112]", in1: "f32[64, 1, 3, 3]", in2: "f32[1, 64, 56, 56]", in3: "f32[1, 64, 56, 56]", in4: "f32[192]", in5: "f32[192]", in6: "f32[192]", in7: "f32[192]"):
        # No stacktrace found for following nodes
        conv2d_7: "f32[1, 64, 56, 56]" = torch.conv2d(in0, in1, None, (2, 2), (1, 1), (1, 1), 64);  in0 = in1 = None
        cat_1: "f32[1, 192, 56, 56]" = torch.cat([conv2d_7, in2, in3], 1);  conv2d_7 = in2 = in3 = None
        batch_norm_4: "f32[1, 192, 56, 56]" = torch.nn.functional.batch_norm(cat_1, in4, in5, in6, in7, False, 0.1, 1e-05);  cat_1 = in4 = in5 = in6 = in7 = None
        relu_3: "f32[1, 192, 56, 56]" = torch.nn.functional.relu(batch_norm_4, inplace = True);  batch_norm_4 = None
        split_2 = torch.functional.split(relu_3, [96, 96], 1);  relu_3 = None
        getitem_5: "f32[1, 96, 56, 56]" = split_2[1]
        getitem_6: "f32[1, 96, 56, 56]" = split_2[0];  split_2 = None
        return (getitem_6, getitem_5)
