"""Shared fixtures of the proxy tests: tiny random models of the six MoE families.

Every model is built from its real transformers class (``AutoModelForCausalLM.from_config``),
then all parameters are re-drawn from a seeded normal so that no router ties occur.
"""

from __future__ import annotations

import torch
from transformers import AutoConfig, AutoModelForCausalLM

BASE = dict(vocab_size=97, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=48, max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)

FAMILY_KW = {
    "mixtral": dict(num_local_experts=8, num_experts_per_tok=2),
    "qwen2_moe": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24,
                      shared_expert_intermediate_size=40, norm_topk_prob=False, mlp_only_layers=[0]),
    "qwen3_moe": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24, head_dim=8, norm_topk_prob=True),
    "olmoe": dict(num_experts=8, num_experts_per_tok=2),
    "deepseek_v3": dict(n_routed_experts=16, num_key_value_heads=4, num_experts_per_tok=2, moe_intermediate_size=24, n_group=4, topk_group=2,  # noqa: E501
                        first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=16, qk_rope_head_dim=8,
                        qk_nope_head_dim=8, v_head_dim=8, n_shared_experts=1, routed_scaling_factor=2.5),
    "gpt_oss": dict(num_local_experts=8, num_experts_per_tok=2, head_dim=8, sliding_window=16),
}

FAMILIES = sorted(FAMILY_KW)


def tiny_model(family: str, seed: int = 0, **overrides):
    """A tiny random ``*ForCausalLM`` of ``family`` in eval mode, float32, eager attention."""
    kw = {**BASE, **FAMILY_KW[family], **overrides}
    cfg = AutoConfig.for_model(family, **kw)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.05 * torch.randn(b.shape, generator=g))
    return model.eval()


def random_ids(vocab: int = 97, batch: int = 2, seq: int = 12, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (batch, seq), generator=g)


def save_tiny_base(folder, num_experts: int = 4, moe_intermediate_size: int = 32) -> None:
    """Save a tiny random base of the project's own shape (:func:`proxy_artifacts.base_model.make_config`:
    2 layers, hidden 32, top-2 of ``num_experts``) with the corpus tokenizer to ``folder``
    (``from_pretrained``-loadable; seeded with ``torch.manual_seed(0)``)."""
    from proxy_artifacts import base_model, corpus

    tok = corpus.build_tokenizer()
    p = dict(hidden_size=32, moe_intermediate_size=moe_intermediate_size, num_layers=2, num_heads=4, num_kv_heads=2,
             num_experts=num_experts, top_k=2, aux_loss_coef=0.01, seq_len=32)
    cfg = base_model.make_config(p, len(tok), dict(pad_token_id=0, bos_token_id=1, eos_token_id=2))
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
