class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 1984, 14, 14]", in1: "f32[2304, 1984, 1, 1]"):
        # No stacktrace found for following nodes
        conv2d_124: "f32[1, 2304, 7, 7]" = torch.conv2d(in0, in1, None, (2, 2), (0, 0), (1, 1), 1);  in0 = in1 = None
        getitem_86: "f32[1, 256, 7, 7]" = conv2d_124[(slice(None, None, None), slice(2048, None, None), slice(None, None, None), slice(None, None, None))]
        getitem_87: "f32[1, 2048, 7, 7]" = conv2d_124[(slice(None, None, None), slice(None, 2048, None), slice(None, None, None), slice(None, None, None))];  conv2d_124 = None
        return (getitem_87, getitem_86)
