class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[1, 1, 96, 1]", in1: "i64[1, 1, 96, 1]", in2: "b8[]", in3: "b8[]"):
        # No stacktrace found for following nodes
        arange_13: "i64[96]" = torch.arange(96, device = device(type='cpu'))
        add_29: "i64[96]" = arange_13 + 0;  arange_13 = None
        getitem_26: "i64[1, 1, 1, 96]" = add_29[(None, None, None, slice(None, None, None))];  add_29 = None
        gt_1: "b8[1, 1, 96, 96]" = getitem_26 > in0;  in0 = None
        le_3: "b8[1, 1, 96, 96]" = getitem_26 <= in1;  in1 = None
        to_34: "b8[1, 1, 96, 96]" = le_3.to(device(type='cpu'));  le_3 = None
        to_35: "b8[1, 1, 96, 96]" = gt_1.to(device(type='cpu'));  gt_1 = None
        and__4: "b8[1, 1, 96, 96]" = in2 & to_35;  in2 = to_35 = None
        and__5: "b8[1, 1, 96, 96]" = and__4 & to_34;  and__4 = to_34 = None
        to_38: "b8[1, 1, 96, 96]" = and__5.to(device(type='cpu'));  and__5 = None
        and__6: "b8[1, 1, 96, 96]" = in3 & to_38;  in3 = to_38 = None
        return (getitem_26, and__6)
