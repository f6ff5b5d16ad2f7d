class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 64, 56, 56]", in1: "f32[156, 64, 1, 1]", in2: "f32[156]", in3: "f32[156]", in4: "f32[156]", in5: "f32[156]"):
        # No stacktrace found for following nodes
        conv2d_2: "f32[1, 156, 56, 56]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        batch_norm_2: "f32[1, 156, 56, 56]" = torch.nn.functional.batch_norm(conv2d_2, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_2 = in2 = in3 = in4 = in5 = None
        relu_1: "f32[1, 156, 56, 56]" = torch.nn.functional.relu(batch_norm_2, inplace = True);  batch_norm_2 = None
        split = torch.functional.split(relu_1, 26, 1);  relu_1 = None
        getitem: "f32[1, 26, 56, 56]" = split[1]
        getitem_1: "f32[1, 26, 56, 56]" = split[2]
        getitem_2: "f32[1, 26, 56, 56]" = split[4]
        getitem_3: "f32[1, 26, 56, 56]" = split[3]
        getitem_4: "f32[1, 26, 56, 56]" = split[5]
        getitem_5: "f32[1, 26, 56, 56]" = split[0];  split = None
        return (getitem_2, getitem_5, getitem, getitem_4, getitem_1, getitem_3)
