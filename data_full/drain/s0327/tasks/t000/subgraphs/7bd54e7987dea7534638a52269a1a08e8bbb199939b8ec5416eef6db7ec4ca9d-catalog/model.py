class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 64, 80, 80]", in1: "f32[64, 64, 1, 1]", in2: "f32[64]", in3: "f32[1, 80, 80, 80]", in4: "f32[1, 144, 1600]", in5: "f32[1, 144, 400]", in6: "f32[1, 144, 100]"):
        # No stacktrace found for following nodes
        conv2d_98: "f32[1, 64, 80, 80]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        cat_23: "f32[1, 144, 80, 80]" = torch.cat((conv2d_98, in3), 1);  conv2d_98 = in3 = None
        view_7: "f32[1, 144, 6400]" = cat_23.view(1, 144, -1)
        cat_24: "f32[1, 144, 8500]" = torch.cat([view_7, in4, in5, in6], 2);  view_7 = in4 = in5 = in6 = None
        split = cat_24.split((64, 80), 1);  cat_24 = None
        getitem_12: "f32[1, 64, 8500]" = split[0]
        view_8: "f32[1, 4, 16, 8500]" = getitem_12.view(1, 4, 16, 8500);  getitem_12 = None
        getitem_13: "f32[1, 80, 8500]" = split[1];  split = None
        sigmoid: "f32[1, 80, 8500]" = getitem_13.sigmoid();  getitem_13 = None
        transpose_2: "f32[1, 16, 4, 8500]" = view_8.transpose(2, 1);  view_8 = None
        return (sigmoid, cat_23, transpose_2)
