class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 10, 10]", in1: "f32[15, 256, 1, 1]", in2: "f32[15]", in3: "f32[1, 1500, 1]", in4: "f32[1, 375, 1]"):
        # No stacktrace found for following nodes
        conv2d_7: "f32[1, 15, 10, 10]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        view_7: "f32[1, 15, 1, 10, 10]" = conv2d_7.view(1, -1, 1, 10, 10);  conv2d_7 = None
        permute_4: "f32[1, 10, 10, 15, 1]" = view_7.permute(0, 3, 4, 1, 2);  view_7 = None
        reshape_4: "f32[1, 1500, 1]" = permute_4.reshape(1, -1, 1);  permute_4 = None
        cat: "f32[1, 3375, 1]" = torch.cat([reshape_4, in3, in4], dim = 1);  reshape_4 = in3 = in4 = None
        flatten: "f32[3375, 1]" = cat.flatten(0, -2);  cat = None
        return (flatten,)
