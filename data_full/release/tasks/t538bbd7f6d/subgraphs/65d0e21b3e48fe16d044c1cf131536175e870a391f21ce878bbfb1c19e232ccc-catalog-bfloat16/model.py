class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 224, 224]", in1: "f32[128, 3, 4, 4]", in2: "f32[128]", in3: "f32[128]", in4: "f32[128]", in5: "f32[128]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 128, 56, 56]" = torch.conv2d(in0, in1, None, (4, 4), (0, 0), (1, 1), 1);  in0 = in1 = None
        batch_norm: "f32[1, 128, 56, 56]" = torch.nn.functional.batch_norm(conv2d, in2, in3, in4, in5, False, 0.1, 1e-05);  conv2d = in2 = in3 = in4 = in5 = None
        split = torch.functional.split(batch_norm, [32, 96], dim = 1)
        getitem: "f32[1, 32, 56, 56]" = split[0]
        getitem_1: "f32[1, 96, 56, 56]" = split[1];  split = None
        return (batch_norm, getitem, getitem_1)
