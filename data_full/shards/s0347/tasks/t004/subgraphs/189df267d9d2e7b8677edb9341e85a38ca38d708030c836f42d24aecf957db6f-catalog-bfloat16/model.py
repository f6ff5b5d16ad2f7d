class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 64, 40, 40]", in1: "f32[64, 64, 1, 1]", in2: "f32[64]", in3: "f32[1, 80, 40, 40]"):
        # No stacktrace found for following nodes
        conv2d_103: "f32[1, 64, 40, 40]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        cat_22: "f32[1, 144, 40, 40]" = torch.cat((conv2d_103, in3), 1);  conv2d_103 = in3 = None
        view_8: "f32[1, 144, 1600]" = cat_22.view(1, 144, -1)
        return (view_8, cat_22)
