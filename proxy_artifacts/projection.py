"""The accelerator projection of a GRPO run at full size.

Cost (:func:`projection`; measured: :mod:`cost`): training-state bytes of a GRPO run in mixed
precision (per parameter: 2 B bf16 weights + 4 B fp32 master + 4 + 4 B Adam moments + 2 B
bf16 gradients + 2 B bf16 reference = 18 B, the ZeRO paper's 16 B/param mixed-precision Adam
plus a frozen bf16 reference), accelerators = ceil(bytes / (device memory x usable share)).
No per-step cost ratio is derived from the accelerator ratio: pruning keeps top-k, so FLOPs per
token are unchanged and fewer accelerators carry the same compute.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import torch
from transformers import AutoModelForCausalLM, DeepseekV3Config, Qwen3MoeConfig

from .adapters import adapter_for, expert_count, moe_blocks
from .prune import keep_count

BYTES_PER_PARAM = 18


def assumptions(device_memory_gb: float | None = None, usable_share: float | None = None) -> list[str]:
    """Every assumption of :func:`projection` and of reading it as a cost, one sentence each (nothing
    of it is measured: no accelerator step was run for it). None: the memory figures are named by
    their params keys (``proxy.fidelity.device_memory_gb`` / ``usable_share``)."""
    mem = f"{device_memory_gb:g}" if device_memory_gb is not None else "`proxy.fidelity.device_memory_gb`"
    share = f"{usable_share:g}" if usable_share is not None else "`proxy.fidelity.usable_share`"
    return [
        f"training state is {BYTES_PER_PARAM} B per parameter: bf16 weights 2 + fp32 master 4 + Adam moments 4 + 4 "
        "+ bf16 gradients 2 + a frozen bf16 reference copy 2 (ZeRO's 16 B/param mixed-precision Adam, Rajbhandari "
        "et al. 2020, plus the reference)",
        f"each accelerator holds {mem} GB of which a share {share} is usable for that state",
        "the state is sharded evenly over accelerators (ZeRO-3 / FSDP): accelerators = ceil(bytes / usable bytes)",
        "not counted: the rollout engine's weights and KV cache, activations at the RL sequence length, "
        "communication buffers, and rounding to whole nodes",
        "parameter counts: the families' full-size configs built on the meta device (Qwen3-30B-A3B from its "
        "published config.json sizes, DeepSeek-V3 from transformers' default config, one MTP layer counted as a "
        "decoder layer); the proxy removes (E - k) routed experts in every MoE layer and keeps everything else",
        "compute: FLOPs per token are unchanged by pruning at equal top-k (the active experts per token are the "
        "same number of the same size), so fewer accelerators carry the same FLOPs; no per-step time ratio "
        "follows from the accelerator ratio",
        "no accelerator step time was measured for this projection",
    ]


def accelerators(params: int, device_memory_gb: float, usable_share: float) -> int:
    """Accelerators holding the GRPO training state of ``params`` parameters (18 B/param, see module doc)."""
    return max(1, math.ceil(params * BYTES_PER_PARAM / (device_memory_gb * 1e9 * usable_share)))


def projection(family_configs: Mapping[str, Mapping], keep_ratios: Sequence[float], device_memory_gb: float,
               usable_share: float) -> dict:
    """Parameters and accelerators of real families' full-size configs at each keep ratio.

    Args:
        family_configs: name -> {"total": parameters of the full model, "expert": parameters of
            one routed expert, "moe_layers": MoE layers (incl. MTP), "experts": routed experts per
            layer, "top_k": experts per token, "n_group"/"topk_group" (optional)}.

    Proxy parameters = total - moe_layers x (E - k) x expert, k from :func:`prune.keep_count`.
    Memory only (training state); rollout-engine weights, KV cache, activations and node
    rounding are not modelled.
    """
    out = {}
    for name, c in family_configs.items():
        base_acc = accelerators(c["total"], device_memory_gb, usable_share)
        rows = {"params": c["total"], "accelerators": base_acc}
        for r in keep_ratios:
            k = keep_count(c["experts"], r, c["top_k"], c.get("n_group", 1), None, c.get("topk_group"))
            p = c["total"] - c["moe_layers"] * (c["experts"] - k) * c["expert"]
            acc = accelerators(p, device_memory_gb, usable_share)
            rows[f"r{r}"] = {"experts_kept": k, "params": p, "accelerators": acc,
                             "accelerators_saved_share": round(1 - acc / base_acc, 4)}
        out[name] = rows
    return out


def full_size_counts() -> dict:
    """Parameter counts of Qwen3-30B-A3B and DeepSeek-V3, built on the meta device.

    DeepSeek-V3: transformers' default ``DeepseekV3Config`` (61 layers, 256 routed experts, top-8,
    8 groups / top-4 groups, 1 MTP layer, counted as one more decoder layer). Qwen3-30B-A3B: the
    sizes of its published config.json (48 layers, hidden 2048, 32/4 heads of 128, 128 experts
    of 768, top-8, vocab 151936, untied embeddings).
    """
    out = {}
    for name, cfg in (("Qwen3-30B-A3B", Qwen3MoeConfig(
            hidden_size=2048, num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
            intermediate_size=6144, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
            vocab_size=151936, tie_word_embeddings=False)), ("DeepSeek-V3", DeepseekV3Config())):
        with torch.device("meta"):
            m = AutoModelForCausalLM.from_config(cfg)
        a = adapter_for(cfg)
        blocks = moe_blocks(m, a)
        E = expert_count(cfg, a)
        per_expert = sum(getattr(blocks[0].experts, p).numel() for p in a.expert_params) // E
        mtp = max([int(getattr(cfg, k, 0) or 0) for k in a.mtp_keys], default=0)
        total = sum(p.numel() for p in m.parameters()) + mtp * (len(blocks) and (
            sum(p.numel() for p in m.model.layers[-1].parameters())))
        out[name] = {"total": int(total), "expert": int(per_expert), "moe_layers": len(blocks) + mtp, "experts": E,
                     "top_k": int(cfg.num_experts_per_tok),
                     **({"n_group": int(cfg.n_group), "topk_group": int(cfg.topk_group)} if a.group_keys else {})}
        del m
    return out
