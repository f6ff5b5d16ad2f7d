class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 224, 224]", in1: "f32[24, 3, 3, 3]", in2: "f32[24]", in3: "f32[24]", in4: "f32[24]", in5: "f32[24]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 24, 112, 112]" = torch.conv2d(in0, in1, None, (2, 2), (1, 1), (1, 1), 1);  in0 = in1 = None
        batch_norm: "f32[1, 24, 112, 112]" = torch.nn.functional.batch_norm(conv2d, in2, in3, in4, in5, False, 0.1, 0.001);  conv2d = in2 = in3 = in4 = in5 = None
        silu: "f32[1, 24, 112, 112]" = torch.nn.functional.silu(batch_norm, inplace = True);  batch_norm = None
        return (silu,)
