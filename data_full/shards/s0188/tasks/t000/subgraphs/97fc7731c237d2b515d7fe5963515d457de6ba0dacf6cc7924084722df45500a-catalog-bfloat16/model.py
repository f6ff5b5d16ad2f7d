class GraphModule(torch.nn.Module):
    def forward(self, in0: "i64[1, 2, 32]"):
        # No stacktrace found for following nodes
        view: "i64[2, 32]" = in0.view(-1, 32);  in0 = None
        ne: "b8[2, 32]" = view.ne(1)
        int_1: "i32[2, 32]" = ne.int();  ne = None
        return (view, int_1)
