class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 12, 8, 64, 512]", in1: "f32[1, 12, 768, 768]"):
        # No stacktrace found for following nodes
        softmax_2: "f32[1, 12, 8, 64, 512]" = torch.nn.functional.softmax(in0, dim = -1);  in0 = None
        getitem_59: "f32[1, 12, 8, 64, 64]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(-64, None, None))]
        getitem_60: "f32[1, 12, 8, 64, 64]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, 64, None))]
        getitem_61: "f32[1, 12, 8, 64, 192]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(256, -64, None))]
        getitem_62: "f32[1, 12, 8, 64, 192]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(64, 256, None))]
        getitem_69: "f32[1, 12, 8, 64, 64]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, 64, None))]
        view_13: "f32[1, 12, 512, 64]" = getitem_69.view(1, 12, -1, 64);  getitem_69 = None
        in1[(slice(None, None, None), slice(None, None, None), slice(128, -128, None), slice(None, 64, None))] = view_13;  setitem_4 = in1;  view_13 = setitem_4 = None
        getitem_70: "f32[1, 12, 8, 64, 64]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(-64, None, None))]
        view_14: "f32[1, 12, 512, 64]" = getitem_70.view(1, 12, -1, 64);  getitem_70 = None
        in1[(slice(None, None, None), slice(None, None, None), slice(128, -128, None), slice(-64, None, None))] = view_14;  setitem_5 = in1;  in1 = view_14 = setitem_5 = None
        getitem_76: "f32[1, 12, 8, 64, 192]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(64, 256, None))]
        view_17: "f32[1, 12, 8, 64, 3, 64]" = getitem_76.view(1, 12, 8, 64, 3, 64);  getitem_76 = None
        getitem_78: "f32[1, 12, 8, 64, 192]" = softmax_2[(slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(None, None, None), slice(256, -64, None))];  softmax_2 = None
        view_18: "f32[1, 12, 8, 64, 3, 64]" = getitem_78.view(1, 12, 8, 64, 3, 64);  getitem_78 = None
        return (getitem_62, getitem_61, getitem_59, view_18, view_17, getitem_60)
