class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[1, 1, 32, 1]", in1: "b8[]"):
        # No stacktrace found for following nodes
        arange_6: "i64[32]" = torch.arange(32, device = device(type='cpu'))
        add_109: "i64[32]" = arange_6 + 0;  arange_6 = None
        getitem_10: "i64[1, 1, 1, 32]" = add_109[(None, None, None, slice(None, None, None))];  add_109 = None
        le: "b8[1, 1, 32, 32]" = getitem_10 <= in0;  in0 = None
        to_6: "b8[1, 1, 32, 32]" = le.to(device(type='cpu'));  le = None
        and_: "b8[1, 1, 32, 32]" = in1 & to_6;  in1 = to_6 = None
        return (getitem_10, and_)
