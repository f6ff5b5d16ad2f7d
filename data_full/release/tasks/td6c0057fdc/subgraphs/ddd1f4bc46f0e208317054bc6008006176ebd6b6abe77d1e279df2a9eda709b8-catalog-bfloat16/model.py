class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[1, 1, 1, 32]", in1: "b8[1, 1, 1, 32]"):
        # No stacktrace found for following nodes
        arange_4: "i64[32]" = torch.arange(32, device = device(type='cpu'))
        add_3: "i64[32]" = arange_4 + 0;  arange_4 = None
        getitem_8: "i64[1, 1, 32, 1]" = add_3[(None, None, slice(None, None, None), None)];  add_3 = None
        le: "b8[1, 1, 32, 32]" = in0 <= getitem_8;  in0 = None
        new_ones: "b8[]" = getitem_8.new_ones((), dtype = torch.bool);  getitem_8 = None
        to_6: "b8[1, 1, 32, 32]" = le.to(device(type='cpu'));  le = None
        and_: "b8[1, 1, 32, 32]" = new_ones & to_6;  new_ones = to_6 = None
        and__1: "b8[1, 1, 32, 32]" = and_ & in1;  and_ = in1 = None
        expand: "b8[1, 1, 32, 32]" = and__1.expand(1, -1, 32, 32);  and__1 = None
        return (expand,)
