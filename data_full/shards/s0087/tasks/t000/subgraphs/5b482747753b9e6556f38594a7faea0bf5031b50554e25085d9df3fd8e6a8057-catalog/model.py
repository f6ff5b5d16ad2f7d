class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 224, 224]", in1: "f32[768, 3, 7, 7]", in2: "f32[768]", in3: "f32[768]", in4: "f32[768]", in5: "f32[768]", in6: "f32[768]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 768, 32, 32]" = torch.conv2d(in0, in1, in2, (7, 7), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        relu: "f32[1, 768, 32, 32]" = torch.nn.functional.relu(conv2d, inplace = False);  conv2d = None
        batch_norm: "f32[1, 768, 32, 32]" = torch.nn.functional.batch_norm(relu, in3, in4, in5, in6, False, 0.1, 1e-05);  relu = in3 = in4 = in5 = in6 = None
        return (batch_norm,)
