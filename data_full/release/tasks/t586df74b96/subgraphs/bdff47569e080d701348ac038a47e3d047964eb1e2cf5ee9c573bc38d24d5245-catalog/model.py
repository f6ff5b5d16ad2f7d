class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 128, 14, 14]", in1: "f32[128, 128, 3, 3]", in2: "f32[1, 384, 14, 14]"):
        # No stacktrace found for following nodes
        conv2d_12: "f32[1, 128, 14, 14]" = torch.conv2d(in0, in1, None, (1, 1), (1, 1), (1, 1), 1);  in0 = in1 = None
        cat_3: "f32[1, 512, 14, 14]" = torch.cat((conv2d_12, in2), 1);  conv2d_12 = in2 = None
        return (cat_3,)
