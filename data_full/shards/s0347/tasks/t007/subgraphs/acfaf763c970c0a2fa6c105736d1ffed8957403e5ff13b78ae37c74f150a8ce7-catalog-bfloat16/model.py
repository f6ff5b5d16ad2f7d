class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 512, 16, 16]", in1: "f32[640, 512, 1, 1]"):
        # No stacktrace found for following nodes
        conv2d_26: "f32[1, 640, 16, 16]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        split_1 = torch.functional.split(conv2d_26, [64, 64, 512], dim = 1);  conv2d_26 = None
        getitem_5: "f32[1, 64, 16, 16]" = split_1[0]
        getitem_6: "f32[1, 512, 16, 16]" = split_1[2]
        getitem_7: "f32[1, 64, 16, 16]" = split_1[1];  split_1 = None
        reshape_12: "f32[4, 128, 256]" = getitem_6.reshape(4, 128, -1);  getitem_6 = None
        transpose_10: "f32[4, 256, 128]" = reshape_12.transpose(-1, -2);  reshape_12 = None
        reshape_13: "f32[4, 16, 256]" = getitem_7.reshape(4, 16, -1);  getitem_7 = None
        reshape_14: "f32[4, 16, 256]" = getitem_5.reshape(4, 16, -1);  getitem_5 = None
        transpose_11: "f32[4, 256, 16]" = reshape_14.transpose(-1, -2);  reshape_14 = None
        reshape_15: "f32[4, 16, 16, 16]" = transpose_11.reshape(4, 16, 16, -1)
        transpose_12: "f32[4, 16, 16, 16]" = reshape_15.transpose(1, 2)
        return (transpose_11, reshape_13, reshape_15, transpose_12, transpose_10)
