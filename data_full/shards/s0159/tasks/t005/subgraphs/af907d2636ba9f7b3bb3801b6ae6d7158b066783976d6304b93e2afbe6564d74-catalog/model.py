class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1024, 14, 14]", in1: "f32[1024, 32, 3, 3]", in2: "f32[1024]", in3: "f32[1024]", in4: "f32[1024]", in5: "f32[1024]"):
        # No stacktrace found for following nodes
        conv2d_47: "f32[1, 1024, 7, 7]" = torch.conv2d(in0, in1, None, (2, 2), (1, 1), (1, 1), 32);  in0 = in1 = None
        batch_norm_47: "f32[1, 1024, 7, 7]" = torch.nn.functional.batch_norm(conv2d_47, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_47 = in2 = in3 = in4 = in5 = None
        relu_43: "f32[1, 1024, 7, 7]" = torch.nn.functional.relu(batch_norm_47, inplace = True);  batch_norm_47 = None
        return (relu_43,)
