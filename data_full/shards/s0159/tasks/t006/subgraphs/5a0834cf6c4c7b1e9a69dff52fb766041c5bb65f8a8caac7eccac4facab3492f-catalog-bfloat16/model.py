class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 7, 7]", in1: "f32[256, 256, 3, 3]", in2: "f32[1, 768, 7, 7]"):
        # No stacktrace found for following nodes
        conv2d_52: "f32[1, 256, 7, 7]" = torch.conv2d(in0, in1, None, (1, 1), (1, 1), (1, 1), 1);  in0 = in1 = None
        cat_16: "f32[1, 1024, 7, 7]" = torch.cat((conv2d_52, in2), 1);  conv2d_52 = in2 = None
        return (cat_16,)
