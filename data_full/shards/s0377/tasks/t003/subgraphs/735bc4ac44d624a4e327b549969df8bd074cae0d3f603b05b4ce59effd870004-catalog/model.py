class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 16, 1, 64]", in1: "f32[1, 16, 1, 64]", in2: "f32[1, 16, 1, 64]", in3: "f32[1, 1, 1, 1]"):
        # No stacktrace found for following nodes
        scaled_dot_product_attention: "f32[1, 16, 1, 64]" = torch._C._nn.scaled_dot_product_attention(in0, in1, in2, attn_mask = in3, dropout_p = 0.0, is_causal = False, scale = 0.125);  in0 = in1 = in2 = in3 = None
        transpose_6: "f32[1, 1, 16, 64]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        contiguous_3: "f32[1, 1, 16, 64]" = transpose_6.contiguous();  transpose_6 = None
        reshape_1: "f32[1, 1, 1024]" = contiguous_3.reshape(1, 1, -1);  contiguous_3 = None
        contiguous_4: "f32[1, 1, 1024]" = reshape_1.contiguous();  reshape_1 = None
        return (contiguous_4,)
