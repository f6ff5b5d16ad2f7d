class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 2592, 28, 28]", in1: "f32[192, 2592, 1, 1]", in2: "f32[192]", in3: "f32[1, 192, 1, 1]", in4: "f32[1, 264, 28, 28]", in5: "f32[1, 192, 28, 28]", in6: "f32[1, 192, 28, 28]"):
        # No stacktrace found for following nodes
        conv2d_19: "f32[1, 192, 28, 28]" = torch.conv2d(in0, in1, in2, (1, 1), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        mul_5: "f32[1, 192, 28, 28]" = conv2d_19.mul(in3);  conv2d_19 = in3 = None
        cat_7: "f32[1, 840, 28, 28]" = torch.cat([in4, in5, in6, mul_5], 1);  in4 = in5 = in6 = mul_5 = None
        permute_16: "f32[1, 28, 28, 840]" = cat_7.permute(0, 2, 3, 1);  cat_7 = None
        return (permute_16,)
