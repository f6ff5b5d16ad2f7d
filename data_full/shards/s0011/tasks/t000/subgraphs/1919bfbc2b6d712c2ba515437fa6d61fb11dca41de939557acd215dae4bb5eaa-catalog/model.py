class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 3, 256, 256]", in1: "f32[192, 3, 16, 16]", in2: "f32[192]", in3: "f32[1, 1, 192]", in4: "f32[1, 4, 192]"):
        # No stacktrace found for following nodes
        conv2d: "f32[1, 192, 16, 16]" = torch.conv2d(in0, in1, in2, (16, 16), (0, 0), (1, 1), 1);  in0 = in1 = in2 = None
        permute: "f32[1, 16, 16, 192]" = conv2d.permute(0, 2, 3, 1);  conv2d = None
        view: "f32[1, 256, 192]" = permute.view(1, -1, 192);  permute = None
        cat_12: "f32[1, 261, 192]" = torch.cat([in3, in4, view], dim = 1);  in3 = in4 = view = None
        dropout: "f32[1, 261, 192]" = torch.nn.functional.dropout(cat_12, 0.0, False, False);  cat_12 = None
        return (dropout,)
