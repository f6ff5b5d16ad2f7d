class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1024, 14, 14]", in1: "f32[512, 1024, 1, 1]", in2: "f32[512]", in3: "f32[512]", in4: "f32[512]", in5: "f32[512]"):
        # No stacktrace found for following nodes
        conv2d_30: "f32[1, 512, 14, 14]" = torch.conv2d(in0, in1, None, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = None
        batch_norm_30: "f32[1, 512, 14, 14]" = torch.nn.functional.batch_norm(conv2d_30, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_30 = in2 = in3 = in4 = in5 = None
        relu_27: "f32[1, 512, 14, 14]" = torch.nn.functional.relu(batch_norm_30, inplace = True);  batch_norm_30 = None
        return (relu_27,)
