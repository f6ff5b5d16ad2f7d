class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 336, 336]", in1: "f32[1280, 3, 14, 14]", in2: "f32[1, 1, 1280]", in3: "f32[1, 577, 1280]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 1280, 24, 24]" = torch.conv2d(in0, in1, None, (14, 14), (0, 0), (1, 1), 1);  in0 = in1 = None
        flatten: "f32[1, 1280, 576]" = conv2d.flatten(2);  conv2d = None
        transpose: "f32[1, 576, 1280]" = flatten.transpose(1, 2);  flatten = None
        cat: "f32[1, 577, 1280]" = torch.cat([in2, transpose], dim = 1);  in2 = transpose = None
        add: "f32[1, 577, 1280]" = cat + in3;  cat = in3 = None
        dropout: "f32[1, 577, 1280]" = torch.nn.functional.dropout(add, 0.0, False, False);  add = None
        return (dropout,)
