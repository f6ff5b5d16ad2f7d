class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 256, 56, 56]", in1: "f32[256, 8, 3, 3]", in2: "f32[256]", in3: "f32[256]", in4: "f32[256]", in5: "f32[256]"):
        # No stacktrace found for following nodes
        conv2d_15: "f32[1, 256, 28, 28]" = torch.conv2d(in0, in1, None, (2, 2), (1, 1), (1, 1), 32);  in0 = in1 = None
        batch_norm_15: "f32[1, 256, 28, 28]" = torch.nn.functional.batch_norm(conv2d_15, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_15 = in2 = in3 = in4 = in5 = None
        relu_13: "f32[1, 256, 28, 28]" = torch.nn.functional.relu(batch_norm_15, inplace = True);  batch_norm_15 = None
        return (relu_13,)
