class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 224, 224]", in1: "f32[768, 3, 16, 16]", in2: "f32[768]", in3: "f32[1, 1, 768]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 768, 14, 14]" = torch.conv2d(in0, in1, in2, (16, 16), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        flatten: "f32[1, 768, 196]" = conv2d.flatten(2);  conv2d = None
        transpose: "f32[1, 196, 768]" = flatten.transpose(1, 2);  flatten = None
        cat: "f32[1, 197, 768]" = torch.cat((in3, transpose), dim = 1);  in3 = transpose = None
        dropout: "f32[1, 197, 768]" = torch.nn.functional.dropout(cat, 0.0, False, False);  cat = None
        return (dropout,)
