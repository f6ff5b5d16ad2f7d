class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 16, 112, 112]", in1: "f32[96, 16, 1, 1]", in2: "f32[1, 96, 112, 112]", in3: "f32[192]", in4: "f32[192]", in5: "f32[192]", in6: "f32[192]"):
        # No stacktrace found for following nodes
        conv2d_4: "f32[1, 96, 112, 112]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        cat: "f32[1, 192, 112, 112]" = torch.cat([in2, conv2d_4], 1);  in2 = conv2d_4 = None
        batch_norm_3: "f32[1, 192, 112, 112]" = torch.nn.functional.batch_norm(cat, in3, in4, in5, in6, False, 0.1, 1e-05);  cat = in3 = in4 = in5 = in6 = None
        relu_2: "f32[1, 192, 112, 112]" = torch.nn.functional.relu(batch_norm_3, inplace = True);  batch_norm_3 = None
        split_1 = torch.functional.split(relu_2, [64, 64, 64], 1);  relu_2 = None
        getitem_2: "f32[1, 64, 112, 112]" = split_1[1]
        getitem_3: "f32[1, 64, 112, 112]" = split_1[2]
        getitem_4: "f32[1, 64, 112, 112]" = split_1[0];  split_1 = None
        return (getitem_3, getitem_4, getitem_2)
