"""The architecture table: everything that differs between MoE families, one row each.

Verified against the installed transformers v5 sources (``models/<family>/modeling_*.py``):

=============  ===================  =========================  ==========================================
family         expert-count key     router (module, params)    fused expert tensors (dim 0 = expert)
=============  ===================  =========================  ==========================================
mixtral        num_local_experts    mlp.gate: weight           gate_up_proj [E,2I,H] (gate first), down_proj [E,H,I]
qwen2_moe      num_experts          mlp.gate: weight           same as mixtral; shared_expert(+gate) kept
qwen3_moe      num_experts (alias   mlp.gate: weight           same as mixtral
               num_local_experts)
olmoe          num_experts (alias   mlp.gate: weight           same as mixtral
               num_local_experts)
deepseek_v3    n_routed_experts     mlp.gate: weight,          same as mixtral; shared_experts kept;
                                    e_score_correction_bias    sigmoid scores, group-limited top-k
gpt_oss        num_local_experts    mlp.router: weight, bias   gate_up_proj [E,H,2I] interleaved (gate ::2,
                                                               up 1::2) + gate_up_proj_bias [E,2I],
                                                               down_proj [E,I,H] + down_proj_bias [E,H]
=============  ===================  =========================  ==========================================

On disk, ``save_pretrained`` of transformers v5 writes the *per-module* form for all families
but gpt-oss (``...experts.<j>.{gate,up,down}_proj.weight``; Mixtral
``block_sparse_moe.experts.<j>.w{1,2,3}.weight``) and converts back to the fused form on load.

Adding a family means adding one :class:`MoEAdapter` row (and a test in
``tests/test_proxy_prune.py``); the algorithms read the row and never branch on family names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import nn

# --------------------------------------------------------------------------- routing


def _route_softmax_topk(router: nn.Module, hidden: torch.Tensor, allowed: torch.Tensor | None, *, always_norm: bool):
    """Softmax-then-top-k routing (Mixtral, Qwen2/3-MoE, OLMoE), optionally restricted.

    ``allowed`` [E] bool: experts outside it get logit -inf before the softmax, so the
    probabilities renormalise over the allowed experts exactly as in a pruned router.
    Returns (router_logits [T,E], top-k weights [T,k], top-k indices [T,k] int64).
    """
    hidden = hidden.reshape(-1, router.hidden_dim)
    logits = F.linear(hidden, router.weight)
    masked = logits if allowed is None else logits.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(masked, dtype=torch.float, dim=-1)
    top_v, top_i = torch.topk(probs, router.top_k, dim=-1)
    if always_norm or getattr(router, "norm_topk_prob", False):
        top_v = top_v / top_v.sum(dim=-1, keepdim=True)
    if not always_norm:
        top_v = top_v.to(logits.dtype)
    return logits, top_v, top_i


def _route_sigmoid_group(router: nn.Module, hidden: torch.Tensor, allowed: torch.Tensor | None):
    """DeepSeek-V3 routing: sigmoid scores + ``e_score_correction_bias``, group-limited top-k.

    Restriction masks the *choice* scores (sigmoid(logit) + bias) of disallowed experts to -inf
    (a sigmoid of -inf would be 0, not excluded). Each group must keep >= 2 allowed experts
    (the group score is the sum of its top-2 choice scores).
    """
    hidden = hidden.reshape(-1, router.hidden_dim)
    logits = F.linear(hidden.type(torch.float32), router.weight.type(torch.float32))
    scores = logits.sigmoid()
    choice = scores + router.e_score_correction_bias
    E, G = router.num_experts, router.num_group
    if allowed is not None:
        choice = choice.masked_fill(~allowed, float("-inf"))
    group_scores = choice.view(-1, G, E // G).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = torch.topk(group_scores, k=router.topk_group, dim=-1, sorted=False)[1]
    group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1)
    score_mask = group_mask.unsqueeze(-1).expand(-1, G, E // G).reshape(-1, E)
    choice = choice.masked_fill(~score_mask.bool(), float("-inf"))
    top_i = torch.topk(choice, k=router.top_k, dim=-1, sorted=False)[1]
    top_v = scores.gather(1, top_i)
    if router.norm_topk_prob:
        top_v = top_v / (top_v.sum(dim=-1, keepdim=True) + 1e-20)
    return logits, top_v * router.routed_scaling_factor, top_i


def _route_topk_softmax(router: nn.Module, hidden: torch.Tensor, allowed: torch.Tensor | None):
    """gpt-oss routing: top-k on biased logits, softmax over the k chosen logits."""
    logits = F.linear(hidden, router.weight, router.bias)
    masked = logits if allowed is None else logits.masked_fill(~allowed, float("-inf"))
    top_v, top_i = torch.topk(masked, router.top_k, dim=-1)
    return logits, torch.softmax(top_v, dim=1, dtype=top_v.dtype), top_i


# --------------------------------------------------------------------------- expert forward


def _expert_concat_gate_first(experts: nn.Module, j: int, x: torch.Tensor) -> torch.Tensor:
    """f_j(x) for fused ``gate_up_proj`` [E,2I,H] (gate first) and ``down_proj`` [E,H,I].

    x: [n, H] -> [n, H]; same arithmetic as the eager loop of ``MixtralExperts.forward``.
    """
    gate, up = F.linear(x, experts.gate_up_proj[j]).chunk(2, dim=-1)
    return F.linear(experts.act_fn(gate) * up, experts.down_proj[j])


def _expert_interleaved_transposed(experts: nn.Module, j: int, x: torch.Tensor) -> torch.Tensor:
    """f_j(x) for gpt-oss: ``gate_up_proj`` [E,H,2I] interleaved + bias, ``down_proj`` [E,I,H] + bias."""
    gate_up = x @ experts.gate_up_proj[j] + experts.gate_up_proj_bias[j]
    return experts._apply_gate(gate_up) @ experts.down_proj[j] + experts.down_proj_bias[j]


def _hidden_concat_gate_first(experts: nn.Module, j: int, x: torch.Tensor) -> torch.Tensor:
    """The input of expert j's down projection, act(gate_j x) * up_j x: x [n,H] -> [n,I]."""
    gate, up = F.linear(x, experts.gate_up_proj[j]).chunk(2, dim=-1)
    return experts.act_fn(gate) * up


def _hidden_interleaved_transposed(experts: nn.Module, j: int, x: torch.Tensor) -> torch.Tensor:
    """gpt-oss: the input of expert j's down projection, the clamped SwiGLU of the interleaved
    gate/up (``_apply_gate``): x [n,H] -> [n,I]."""
    return experts._apply_gate(x @ experts.gate_up_proj[j] + experts.gate_up_proj_bias[j])


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class MoEAdapter:
    """One row of the architecture table (see module docstring).

    Attributes:
        family: short name used in params and lineage files.
        model_types: ``config.model_type`` values served by this row.
        count_keys: config keys holding the routed expert count (set all that exist).
        router_attr / experts_attr: child names of a MoE block.
        router_params: router tensors with the expert on dim 0 (sliced on pruning).
        expert_params: fused expert tensors with the expert on dim 0.
        module_count_attrs: ``num_experts``-like attributes of router/experts modules.
        score_fn: ``softmax`` or ``sigmoid``: how router logits become probabilities (stats).
        route: routing function (router, hidden [T,H], allowed [E] bool | None) ->
            (logits [T,E], weights [T,k], indices [T,k]) identical to the family's router.
        expert_forward: (experts module, j, x [n,H]) -> f_j(x) [n,H].
        group_keys: config keys of group-limited routing (n_group, topk_group) or empty.
        disk_block_names: MoE block names in on-disk (per-module) checkpoints.
        mtp_keys: config keys counting multi-token-prediction layers (DeepSeek-V3
            ``num_mtp_layers`` = ``num_nextn_predict_layers``); transformers v5 builds no MTP
            module (``_keys_to_ignore_on_load_unexpected`` drops their weights), so a proxy sets
            them to 0.
        expert_hidden: (experts module, j, x [n,H]) -> the down projection's input h_j(x) [n,I]
            (the output merge refits the down projection on it).
        down_in_out: True when ``down_proj`` is stored [E,I,H] (input dim first, gpt-oss), False
            for [E,H,I]; ``down_bias``: the down projection's bias [E,H] or None.
        shared_experts: the family has shared (always-on) experts beside the routed ones
            (``shared_attrs`` names their modules); stated on the card.
        aux_loss: the family's transformers model has a router load-balancing loss
            (``load_balancing_loss_func``); DeepSeek-V3 has none (aux-loss-free balancing through
            ``e_score_correction_bias``), so RL trains it without one.
    """

    family: str
    model_types: tuple[str, ...]
    count_keys: tuple[str, ...]
    router_attr: str
    router_params: tuple[str, ...]
    expert_params: tuple[str, ...]
    score_fn: str
    route: Callable
    expert_forward: Callable
    experts_attr: str = "experts"
    group_keys: tuple[str, ...] = ()
    shared_attrs: tuple[str, ...] = ()
    disk_block_names: tuple[str, ...] = ("mlp",)
    module_count_attrs: tuple[str, ...] = ("num_experts",)
    mtp_keys: tuple[str, ...] = ()
    expert_hidden: Callable = _hidden_concat_gate_first
    down_in_out: bool = False
    down_bias: str | None = None
    aux_loss: bool = True

    @property
    def shared_experts(self) -> bool:
        return bool(self.shared_attrs)


def _softmax(always_norm: bool) -> Callable:
    def route(router, hidden, allowed=None):
        return _route_softmax_topk(router, hidden, allowed, always_norm=always_norm)

    return route


_CONCAT = ("gate_up_proj", "down_proj")

ADAPTERS: dict[str, MoEAdapter] = {
    a.family: a
    for a in [
        MoEAdapter("mixtral", ("mixtral",), ("num_local_experts",), "gate", ("weight",), _CONCAT, "softmax",
                   _softmax(True), _expert_concat_gate_first, disk_block_names=("block_sparse_moe", "mlp")),
        MoEAdapter("qwen2_moe", ("qwen2_moe",), ("num_experts",), "gate", ("weight",), _CONCAT, "softmax",
                   _softmax(False), _expert_concat_gate_first, shared_attrs=("shared_expert", "shared_expert_gate")),
        MoEAdapter("qwen3_moe", ("qwen3_moe",), ("num_experts", "num_local_experts"), "gate", ("weight",), _CONCAT,
                   "softmax", _softmax(False), _expert_concat_gate_first),
        MoEAdapter("olmoe", ("olmoe",), ("num_experts", "num_local_experts"), "gate", ("weight",), _CONCAT,
                   "softmax", _softmax(False), _expert_concat_gate_first),
        MoEAdapter("deepseek_v3", ("deepseek_v3",), ("n_routed_experts",), "gate",
                   ("weight", "e_score_correction_bias"), _CONCAT, "sigmoid", _route_sigmoid_group,
                   _expert_concat_gate_first, group_keys=("n_group", "topk_group"), shared_attrs=("shared_experts",),
                   mtp_keys=("num_mtp_layers",), aux_loss=False),
        MoEAdapter("gpt_oss", ("gpt_oss",), ("num_local_experts",), "router", ("weight", "bias"),
                   ("gate_up_proj", "gate_up_proj_bias", "down_proj", "down_proj_bias"), "softmax",
                   _route_topk_softmax, _expert_interleaved_transposed, expert_hidden=_hidden_interleaved_transposed,
                   down_in_out=True, down_bias="down_proj_bias"),
    ]
}


def adapter_for(config_or_family) -> MoEAdapter:
    """The table row for a config (by ``model_type``) or a family name.

    Raises:
        ValueError: unknown family / model_type (the message lists the supported ones).
    """
    key = config_or_family if isinstance(config_or_family, str) else getattr(config_or_family, "model_type", None)
    for a in ADAPTERS.values():
        if key == a.family or key in a.model_types:
            return a
    raise ValueError(f"unknown MoE family / model_type {key!r}; supported: {sorted(ADAPTERS)}")


def expert_count(config, adapter: MoEAdapter) -> int:
    """Routed experts per MoE layer read from ``config`` (first key of the row that is set).

    Raises:
        ValueError: none of the row's count keys is set.
    """
    for k in adapter.count_keys:
        v = getattr(config, k, None)
        if v:
            return int(v)
    raise ValueError(f"config of {adapter.family}: none of {adapter.count_keys} is set")


@dataclass
class MoEBlock:
    """A located MoE block: ``name`` (module path), ``layer`` (decoder layer index), modules."""

    name: str
    layer: int
    block: nn.Module
    router: nn.Module
    experts: nn.Module


_LAYER_RE = re.compile(r"layers\.(\d+)\.")


def moe_blocks(model: nn.Module, adapter: MoEAdapter, required: bool = True) -> list[MoEBlock]:
    """Every routed-expert block of ``model`` in module order (dense layers are skipped).

    Found structurally (a module with both ``router_attr`` and ``experts_attr`` children that
    carry the row's tensors), so extra blocks built from the expert count (e.g. MTP layers)
    are pruned too. ``layer`` is the index in ``layers.<i>.`` of the path (running count if absent).

    ``required`` False: a model without one (the ``dense`` control) gives [] instead.

    Raises:
        ValueError: ``required`` and the model has no MoE block of this family's layout.
    """
    out = []
    for name, mod in model.named_modules():
        r = getattr(mod, adapter.router_attr, None)
        e = getattr(mod, adapter.experts_attr, None)
        if isinstance(r, nn.Module) and isinstance(e, nn.Module) and hasattr(e, adapter.expert_params[0]) \
                and hasattr(r, adapter.router_params[0]):
            m = _LAYER_RE.search(name + ".")
            out.append(MoEBlock(name, int(m.group(1)) if m else len(out), mod, r, e))
    if not out and required:
        raise ValueError(f"no {adapter.family} MoE block found in {type(model).__name__}")
    return out


def iter_expert_tensors(experts: nn.Module, adapter: MoEAdapter) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, tensor [E, ...]) of the fused expert tensors of one block."""
    for p in adapter.expert_params:
        yield p, getattr(experts, p)


def expert_weight_features(experts: nn.Module, adapter: MoEAdapter) -> torch.Tensor:
    """All weights of each expert flattened: [E, P] float32 (the "weights" clustering view)."""
    return torch.cat([t.detach().float().reshape(t.shape[0], -1) for _, t in iter_expert_tensors(experts, adapter)], 1)
