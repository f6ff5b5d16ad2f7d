class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 224, 224]", in1: "f32[384, 3, 16, 16]", in2: "f32[384]", in3: "f32[1, 1, 384]", in4: "f32[1, 197, 384]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 384, 14, 14]" = torch.conv2d(in0, in1, in2, (16, 16), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        flatten: "f32[1, 384, 196]" = conv2d.flatten(2);  conv2d = None
        transpose: "f32[1, 196, 384]" = flatten.transpose(1, 2);  flatten = None
        cat: "f32[1, 197, 384]" = torch.cat((in3, transpose), dim = 1);  in3 = transpose = None
        add: "f32[1, 197, 384]" = cat + in4;  cat = in4 = None
        return (add,)
