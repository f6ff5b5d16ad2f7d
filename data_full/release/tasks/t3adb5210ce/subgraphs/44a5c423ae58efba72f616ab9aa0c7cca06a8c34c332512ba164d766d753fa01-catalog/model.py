class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 768, 112, 112]", in1: "f32[768, 1, 3, 3]", in2: "f32[768]", in3: "f32[768]", in4: "f32[768]", in5: "f32[768]"):
        # No stacktrace found for following nodes
        conv2d_3: "f32[1, 768, 56, 56]" = torch.conv2d(in0, in1, None, (2, 2), (1, 1), (1, 1), 768);  in0 = in1 = None
        batch_norm_3: "f32[1, 768, 56, 56]" = torch.nn.functional.batch_norm(conv2d_3, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d_3 = in2 = in3 = in4 = in5 = None
        gelu_2: "f32[1, 768, 56, 56]" = torch._C._nn.gelu(batch_norm_3);  batch_norm_3 = None
        return (gelu_2,)
