class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 192, 80, 80]", in1: "f32[15, 192, 1, 1]", in2: "f32[15]", in3: "f32[1, 64, 80, 80]", in4: "f32[1, 79, 1600]", in5: "f32[1, 79, 400]"):
        # No stacktrace found for following nodes
        conv2d_91: "f32[1, 15, 80, 80]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        cat_18: "f32[1, 79, 80, 80]" = torch.cat((in3, conv2d_91), 1);  in3 = conv2d_91 = None
        view_8: "f32[1, 79, 6400]" = cat_18.view(1, 79, -1)
        cat_19: "f32[1, 79, 8400]" = torch.cat([view_8, in4, in5], 2);  view_8 = in4 = in5 = None
        split = cat_19.split((64, 15), 1);  cat_19 = None
        getitem_25: "f32[1, 64, 8400]" = split[0]
        view_9: "f32[1, 4, 16, 8400]" = getitem_25.view(1, 4, 16, 8400);  getitem_25 = None
        transpose_2: "f32[1, 16, 4, 8400]" = view_9.transpose(2, 1);  view_9 = None
        getitem_26: "f32[1, 15, 8400]" = split[1];  split = None
        sigmoid_1: "f32[1, 15, 8400]" = getitem_26.sigmoid();  getitem_26 = None
        return (cat_18, sigmoid_1, transpose_2)
