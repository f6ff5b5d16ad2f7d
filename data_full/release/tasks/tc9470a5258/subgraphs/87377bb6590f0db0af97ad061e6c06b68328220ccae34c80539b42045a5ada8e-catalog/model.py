class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 256, 256]", in1: "f32[896, 3, 16, 16]", in2: "f32[896]", in3: "f32[1, 4, 896]", in4: "f32[1, 260, 896]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 896, 16, 16]" = torch.conv2d(in0, in1, in2, (16, 16), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        flatten: "f32[1, 896, 256]" = conv2d.flatten(2);  conv2d = None
        transpose: "f32[1, 256, 896]" = flatten.transpose(1, 2);  flatten = None
        cat: "f32[1, 260, 896]" = torch.cat([in3, transpose], dim = 1);  in3 = transpose = None
        add: "f32[1, 260, 896]" = cat + in4;  cat = in4 = None
        dropout: "f32[1, 260, 896]" = torch.nn.functional.dropout(add, 0.0, False, False);  add = None
        return (dropout,)
