class GraphModule(torch.nn.Module):
    def forward(self, in0: "f32[1, 8, 1, 64]", in1: "f32[1, 8, 35, 64]", in2: "f32[1, 8, 35, 64]", in3: "f32[1, 1, 1, 35]"):
        # No stacktrace found for following nodes
        scaled_dot_product_attention_7: "f32[1, 8, 1, 64]" = torch._C._nn.scaled_dot_product_attention(in0, in1, in2, attn_mask = in3, dropout_p = 0.0, is_causal = False, scale = 0.125);  in0 = in1 = in2 = in3 = None
        transpose_38: "f32[1, 1, 8, 64]" = scaled_dot_product_attention_7.transpose(1, 2);  scaled_dot_product_attention_7 = None
        contiguous_45: "f32[1, 1, 8, 64]" = transpose_38.contiguous();  transpose_38 = None
        reshape_8: "f32[1, 1, 512]" = contiguous_45.reshape(1, 1, -1);  contiguous_45 = None
        contiguous_46: "f32[1, 1, 512]" = reshape_8.contiguous();  reshape_8 = None
        return (contiguous_46,)
