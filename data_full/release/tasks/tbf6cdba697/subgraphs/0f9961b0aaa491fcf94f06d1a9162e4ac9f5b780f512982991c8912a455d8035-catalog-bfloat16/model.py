class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 12, 64, 448]", in1: "f32[1, 12, 768, 768]"):
        # No stacktrace found for following nodes
        softmax_1: "f32[1, 12, 64, 448]" = torch.nn.functional.softmax(in0, dim = -1);  in0 = None
        getitem_71: "f32[1, 12, 64, 64]" = softmax_1[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, 64, None))]
        in1[(slice(None, None, None), slice(None, None, None), slice(-128, -64, None), slice(None, 64, None))] = getitem_71;  setitem_6 = in1;  getitem_71 = setitem_6 = None
        getitem_72: "f32[1, 12, 64, 192]" = softmax_1[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(64, 256, None))]
        in1[(slice(None, None, None), slice(None, None, None), slice(-128, -64, None), slice(-192, None, None))] = getitem_72;  setitem_7 = in1;  in1 = getitem_72 = setitem_7 = None
        getitem_80: "f32[1, 12, 64, 192]" = softmax_1[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(256, None, None))]
        view_19: "f32[1, 12, 64, 3, 64]" = getitem_80.view(1, 12, 64, 3, 64);  getitem_80 = None
        return (view_19, softmax_1)
