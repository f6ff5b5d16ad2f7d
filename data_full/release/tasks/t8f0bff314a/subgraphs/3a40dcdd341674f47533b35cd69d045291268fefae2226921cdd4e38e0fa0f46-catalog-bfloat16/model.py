class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 38, 28, 28]", in1: "f32[38, 1, 3, 3]", in2: "f32[38]", in3: "f32[1, 57, 28, 28]", in4: "f32[1, 57, 28, 28]", in5: "f32[1, 8, 784, 19]"):
        # No stacktrace found for following nodes
        conv2d_76: "f32[1, 38, 28, 28]" = torch.conv2d(in0, in1, in2, (1, 1), (1, 1), (1, 1), 38);  in0 = in1 = in2 = None
        cat_57: "f32[1, 152, 28, 28]" = torch.cat([conv2d_76, in3, in4], dim = 1);  conv2d_76 = in3 = in4 = None
        reshape_110: "f32[1, 8, 19, 784]" = cat_57.reshape(1, 8, 19, 784);  cat_57 = None
        transpose_148: "f32[1, 8, 784, 19]" = reshape_110.transpose(-1, -2);  reshape_110 = None
        mul_34: "f32[1, 8, 784, 19]" = in5 * transpose_148;  in5 = transpose_148 = None
        pad_17: "f32[1, 8, 785, 19]" = torch._C._nn.pad(mul_34, (0, 0, 1, 0, 0, 0), 'constant', None);  mul_34 = None
        return (pad_17,)
