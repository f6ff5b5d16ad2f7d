"""Structure-preserving expert pruning: slice every expert-indexed tensor consistently.

What is sliced (per MoE block, the expert on dim 0): the fused expert tensors of the
adapter row (incl. gpt-oss biases), the router weight, router bias and DeepSeek's
``e_score_correction_bias``; module attributes ``num_experts``; config keys of the row
(``num_experts`` / ``num_local_experts`` / ``n_routed_experts``) and optionally
``num_experts_per_tok``. Backbone, shared experts and dense layers are untouched.
Known faults of existing pruning tools (REAP, HC-SMoE, MC-SMoE issue trackers) are guarded here: ratios that floor to zero,
counts below top-k, group counts that no longer divide, groups too small for
``ceil(top_k / topk_group)``, unsliced biases, MTP layers declared but absent.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Mapping, Sequence

import torch
from torch import nn

from .adapters import MoEAdapter, adapter_for, expert_count, moe_blocks


def min_per_group(top_k: int, topk_group: int | None) -> int:
    """Least kept experts per group under group-limited routing: ``max(2, ceil(top_k / topk_group))``.

    DeepSeek-V3 scores a group by the sum of its top-2 choice scores (so >= 2 per group), then
    takes ``top_k`` experts from the ``topk_group`` chosen groups only: with fewer than
    ``ceil(top_k / topk_group)`` experts per group, top-k would have to pick masked (-inf)
    experts outside the chosen groups (DeepSeek-V3 ``DeepseekV3TopkRouter.get_topk_indices``).
    ``topk_group`` None (not known): only the top-2 floor.
    """
    if topk_group is None:
        return 2
    return max(2, int(math.ceil(top_k / max(1, int(topk_group)))))


def keep_count(num_experts: int, ratio: float, top_k: int, n_group: int = 1, new_top_k: int | None = None,
               topk_group: int | None = None) -> int:
    """Experts kept in one layer: ``max(floor(E * ratio), top_k)``; with group-limited routing
    (``n_group > 1``) rounded up to a multiple of ``n_group`` with at least
    :func:`min_per_group` (``max(2, ceil(top_k / topk_group))``) experts in every group.

    ``new_top_k`` (an explicit top-k reduction) replaces ``top_k`` as the lower bound. The result
    can exceed ``E * ratio`` (record it as the effective ratio ``k / E``).

    Raises:
        ValueError: ratio outside (0, 1]; non-positive counts; the result exceeds ``num_experts``
            (the group or top-k floor cannot be met; the message names the floor).
    """
    if not (isinstance(ratio, (int, float)) and 0.0 < ratio <= 1.0):
        raise ValueError(f"keep ratio must be in (0, 1], got {ratio!r}")
    if num_experts <= 0 or top_k <= 0 or n_group <= 0:
        raise ValueError(f"num_experts={num_experts}, top_k={top_k}, n_group={n_group} must be positive")
    floor_k = new_top_k if new_top_k is not None else top_k
    if new_top_k is not None and not (0 < new_top_k <= top_k):
        raise ValueError(f"new_top_k must be in [1, {top_k}], got {new_top_k}")
    k = max(int(math.floor(num_experts * ratio + 1e-9)), floor_k, 1)
    if n_group > 1:
        per = min_per_group(floor_k, topk_group)
        k = max(k, per * n_group)
        k = int(math.ceil(k / n_group) * n_group)
        if k > num_experts:
            raise ValueError(
                f"group-limited routing needs >= {per} kept experts in each of {n_group} groups "
                f"(max(2, ceil(top_k={floor_k} / topk_group={topk_group}))) = {per * n_group}, "
                f"but the layer has only {num_experts}")
    if k > num_experts:
        raise ValueError(
            f"cannot keep {k} of {num_experts} experts (ratio {ratio}, top_k {floor_k}, n_group {n_group})"
        )
    return k


def _check_kept(kept: Sequence[int], num_experts: int, n_group: int, name: str, top_k: int,
                topk_group: int | None = None) -> list[int]:
    kept = sorted(int(i) for i in kept)
    if len(set(kept)) != len(kept) or not kept or kept[0] < 0 or kept[-1] >= num_experts:
        raise ValueError(f"{name}: kept experts {kept} are not distinct indices in [0, {num_experts})")
    if n_group > 1:
        size = num_experts // n_group
        per_group = [sum(1 for i in kept if i // size == g) for g in range(n_group)]
        need = min_per_group(top_k, topk_group)
        if len(set(per_group)) != 1 or per_group[0] < need:
            raise ValueError(
                f"{name}: group-limited routing needs the same number (>= {need} = max(2, ceil(top_k={top_k} / "
                f"topk_group={topk_group}))) of kept experts in each of {n_group} groups, got {per_group}"
            )
    return kept


def _n_group(config, adapter: MoEAdapter) -> int:
    return int(getattr(config, adapter.group_keys[0], 1) or 1) if adapter.group_keys else 1


def _topk_group(config, adapter: MoEAdapter) -> int | None:
    return int(getattr(config, adapter.group_keys[1], 1) or 1) if len(adapter.group_keys) > 1 else None


@torch.no_grad()
def prune_model(
    model: nn.Module,
    kept: Mapping[str, Sequence[int]],
    new_top_k: int | None = None,
    merge: Mapping[str, Sequence[Sequence[tuple[int, float]]]] | None = None,
) -> nn.Module:
    """Prune ``model`` in place to the experts ``kept[block_name]`` (original indices).

    Args:
        model: a transformers ``*ForCausalLM`` of a family in the adapter table.
        kept: block module path (as in :func:`adapters.moe_blocks`) -> kept expert indices.
            Every MoE block must be listed; indices are sorted (order of experts is preserved,
            which keeps group membership for group-limited routing).
        new_top_k: explicit reduction of ``num_experts_per_tok`` (None: unchanged).
        merge: optional block -> for each kept expert (sorted order) a list of
            (member index, weight): the kept slot becomes the weight-normalised average of its
            members' expert tensors (frequency-weighted merge, HC-SMoE §3.3); routers keep the
            representative's row. A slot whose weights sum to 0 (no member routed a calibration
            token: no frequency evidence) keeps the kept expert's own tensors.

    Returns the same model, with ``config`` updated (expert count, top-k, and the row's MTP keys
    set to 0: transformers v5 builds no MTP module, so the proxy holds none; the lineage records
    the base's count as ``mtp_layers_base``). Raises ValueError on a missing block,
    bad indices, unequal counts across blocks (transformers builds every layer from one
    config count), or a broken group partition.
    """
    adapter = adapter_for(model.config)
    cfg = model.config
    E = expert_count(cfg, adapter)
    n_group = _n_group(cfg, adapter)
    blocks = moe_blocks(model, adapter)
    missing = [b.name for b in blocks if b.name not in kept]
    if missing:
        raise ValueError(f"kept experts missing for MoE blocks {missing}")
    counts = {b.name: len(kept[b.name]) for b in blocks}
    if len(set(counts.values())) != 1:
        raise ValueError(f"per-block kept counts differ {counts}; transformers classes need one expert count")
    k = next(iter(counts.values()))
    top_k = int(cfg.num_experts_per_tok)
    if new_top_k is not None:
        if not 0 < new_top_k <= top_k:
            raise ValueError(f"new_top_k must be in [1, {top_k}], got {new_top_k}")
        top_k = new_top_k
    if k < top_k:
        raise ValueError(f"keeping {k} experts per layer is below num_experts_per_tok={top_k}")
    for b in blocks:
        idx_list = _check_kept(kept[b.name], E, n_group, b.name, top_k, _topk_group(cfg, adapter))
        idx = torch.tensor(idx_list, dtype=torch.long)
        for pname in adapter.expert_params:
            old = getattr(b.experts, pname)
            new = old.data.index_select(0, idx.to(old.device)).clone()
            if merge is not None and b.name in merge:
                for slot, members in enumerate(merge[b.name]):
                    w = torch.tensor([m[1] for m in members], dtype=torch.float32)
                    if not float(w.sum()) > 0:  # no routed calibration token: 0/0, keep the slot as sliced
                        continue
                    w = w / w.sum()
                    src = old.data[torch.tensor([m[0] for m in members], device=old.device)].float()
                    new[slot] = torch.einsum("m,m...->...", w.to(src.device), src).to(old.dtype)
            setattr(b.experts, pname, nn.Parameter(new, requires_grad=old.requires_grad))
        for pname in adapter.router_params:
            old = getattr(b.router, pname)
            new = old.data.index_select(0, idx.to(old.device)).clone()
            if isinstance(old, nn.Parameter):
                setattr(b.router, pname, nn.Parameter(new, requires_grad=old.requires_grad))
            else:  # buffer (e_score_correction_bias)
                b.router.register_buffer(pname, new)
        for mod in (b.router, b.experts):
            for attr in adapter.module_count_attrs:
                if hasattr(mod, attr):
                    setattr(mod, attr, k)
        if hasattr(b.router, "top_k"):
            b.router.top_k = top_k
        if hasattr(b.block, "top_k"):
            b.block.top_k = top_k
    for key in adapter.count_keys:
        if getattr(cfg, key, None) is not None:
            setattr(cfg, key, k)
    cfg.num_experts_per_tok = top_k
    for key in adapter.mtp_keys:  # transformers builds no MTP module: the proxy has none
        if getattr(cfg, key, None):
            setattr(cfg, key, 0)
    if hasattr(model, "num_experts"):
        model.num_experts = k
    if hasattr(model, "num_experts_per_tok"):
        model.num_experts_per_tok = top_k
    return model


_EXPERT_KEY = re.compile(r"^(?P<block>.+)\.experts\.(?P<j>\d+)\.(?P<rest>.+)$")


def slice_state_dict(
    state: Mapping[str, torch.Tensor], adapter: MoEAdapter, kept: Mapping[str, Sequence[int]]
) -> dict[str, torch.Tensor]:
    """Prune a raw checkpoint state dict (on-disk names) without building the model.

    Handles both forms: per-module experts (``<block>.experts.<j>.<...>``: kept modules are
    renumbered 0..k-1, others dropped) and fused tensors (``<block>.experts.<param>`` with the
    expert on dim 0, sliced). Router tensors ``<block>.<router_attr>.<param>`` are sliced.

    Args:
        kept: block path *as on disk* (e.g. ``model.layers.1.block_sparse_moe``) -> indices.

    Raises:
        ValueError: a block that holds experts has no entry in ``kept``.
    """
    out: dict[str, torch.Tensor] = {}
    remap = {b: {old: new for new, old in enumerate(sorted(int(i) for i in ks))} for b, ks in kept.items()}
    router_suffixes = tuple(f".{adapter.router_attr}.{p}" for p in adapter.router_params)
    fused_suffixes = tuple(f".{adapter.experts_attr}.{p}" for p in adapter.expert_params)
    for key, t in state.items():
        m = _EXPERT_KEY.match(key)
        if m and m.group("j").isdigit() and "." in m.group("rest"):
            block = m.group("block")
            if block not in remap:
                raise ValueError(f"state dict key {key!r}: block {block!r} has no kept experts")
            j = int(m.group("j"))
            if j in remap[block]:
                out[f"{block}.experts.{remap[block][j]}.{m.group('rest')}"] = t
            continue
        suffix = next((s for s in router_suffixes + fused_suffixes if key.endswith(s)), None)
        if suffix is not None:
            block = key[: -len(suffix)]
            if block not in remap:
                raise ValueError(f"state dict key {key!r}: block {block!r} has no kept experts")
            out[key] = t.index_select(0, torch.tensor(sorted(remap[block]), dtype=torch.long)).contiguous()
            continue
        out[key] = t
    return out


@contextlib.contextmanager
def restricted_routing(model: nn.Module, allowed: Mapping[str, Sequence[int]]):
    """Context: each block's router only chooses among ``allowed[block]`` (original indices).

    Implemented by the family's routing function of the adapter row with the disallowed
    experts' scores at -inf before top-k (softmax routers: logits, so probabilities renormalise
    over the allowed set; DeepSeek: the biased choice scores). This is the reference a pruned
    model must reproduce exactly.
    """
    adapter = adapter_for(model.config)
    saved = []
    try:
        for b in moe_blocks(model, adapter):
            if b.name not in allowed:
                continue
            mask = torch.zeros(b.router.num_experts, dtype=torch.bool)
            mask[list(allowed[b.name])] = True
            router = b.router

            def fwd(hidden, _r=router, _m=mask):
                return adapter.route(_r, hidden, _m.to(hidden.device))

            saved.append((router, router.__dict__.get("forward")))
            router.forward = fwd
        yield model
    finally:
        for router, old in saved:
            if old is None:
                del router.forward
            else:
                router.forward = old


def param_count(model: nn.Module) -> int:
    """Number of parameters actually held by ``model`` (tied weights counted once)."""
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def param_bytes(model: nn.Module) -> int:
    """Bytes of parameters and persistent buffers of ``model``."""
    return sum(p.numel() * p.element_size() for p in {id(p): p for p in model.parameters()}.values()) + sum(
        b.numel() * b.element_size() for b in model.buffers()
    )


@torch.no_grad()
def _block_inputs(model: nn.Module, block: nn.Module, ids: torch.Tensor, batch_size: int) -> torch.Tensor:
    """Hidden states entering ``block`` (a MoE block of ``model``) on ``ids`` [N,S]: [N*S, H] float32."""
    xs: list[torch.Tensor] = []
    h = block.register_forward_pre_hook(lambda mod, args: xs.append(args[0].reshape(-1, args[0].shape[-1]).float()))
    try:
        for s in range(0, len(ids), batch_size):
            model(input_ids=ids[s: s + batch_size], use_cache=False)
    finally:
        h.remove()
    return torch.cat(xs)


@torch.no_grad()
def routed_output(adapter: MoEAdapter, router: nn.Module, experts: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Routed-expert part of a MoE block on tokens ``x`` [T,H]: sum_k w_k f_{i_k}(x) [T,H]
    (shared experts excluded), with the family's routing function of the adapter row."""
    _, w, idx = adapter.route(router, x, None)
    y = torch.zeros_like(x)
    for e in idx.unique().tolist():
        t, s = (idx == e).nonzero(as_tuple=True)
        y.index_add_(0, t, w[t, s, None].to(x.dtype) * adapter.expert_forward(experts, e, x[t]))
    return y


@torch.no_grad()
def output_merge(base: nn.Module, proxy: nn.Module, ids: torch.Tensor, ridge: float,
                 batch_size: int = 16) -> dict:
    """Output-space merge: refit the kept experts' down projections so each pruned MoE block
    reproduces the base block's routed output on calibration tokens (in place on ``proxy``).

    The experts that were dropped still shape the result: their share of the base block's output,
    now routed by the pruned router to the kept experts, is folded into the kept experts' weights
    (merging in output space rather than parameter space, as MergeMoE, Miao et al. 2025,
    "Efficient Compression of MoE Models via Expert Output Merging"; the sequential layer-by-layer
    least-squares reconstruction is the one of GPTQ / SparseGPT, Frantar & Alistarh 2023: block l is
    fitted on the hidden states the already-fitted proxy gives it). For block l with inputs x_t
    [T,H] (from the proxy), target y_t = base block l's routed output on x_t, pruned routing
    (weights w_te, kept experts e) and intermediate activations h_e(x) = act(gate_e x) * up_e x [I]:
    the features F[t, e*I:(e+1)*I] = w_te h_e(x_t) (0 for experts not routed to t) make the block
    output linear in D = [down_0^T; ...; down_{k-1}^T] [k*I, H], solved as ridge regression
    towards the pruned weights D0: D = (F^T F + lam I)^-1 (F^T Y + lam D0), lam = ``ridge`` x
    mean(diag F^T F) (an expert routed no calibration token keeps its weights). Gate/up projections
    and routers are unchanged, so the proxy keeps the base's structure and routing mechanism.

    gpt-oss (``down_proj`` [E,I,H] with a bias [E,H], interleaved clamped SwiGLU) is the same
    regression with h_e(x) = ``_apply_gate(x gate_up_e + b_e)`` and one more feature column w_te per
    expert whose row is the down bias (the adapter row's ``expert_hidden`` / ``down_in_out`` /
    ``down_bias``).

    Args:
        base: the base model (unchanged). proxy: the pruned model (``prune_model`` output).
        ids: calibration windows int64 [N, S] (training split, disjoint from evaluation).
        ridge: relative ridge strength (> 0).

    Returns {block name: {"tokens", "rel_err_before", "rel_err_after"}} (relative squared error
    ||Y - block(x)||^2 / ||Y||^2 on the calibration tokens, before / after the fit).

    Raises:
        ValueError: ``ridge`` <= 0.
    """
    a = adapter_for(base.config)
    if not ridge > 0:
        raise ValueError(f"output merge ridge must be > 0, got {ridge}")
    bb, pb = moe_blocks(base, a), moe_blocks(proxy, a)
    report = {}
    for b_base, b_prox in zip(bb, pb):
        x = _block_inputs(proxy, b_prox.block, ids, batch_size)
        y = routed_output(a, b_base.router, b_base.experts, x)
        ex = b_prox.experts
        _, w, idx = a.route(b_prox.router, x, None)
        dn = ex.down_proj.data.float()
        d_io = dn if a.down_in_out else dn.transpose(1, 2)  # [k, I, H]: row i of expert e multiplies h_e[i]
        k, n_in, H = d_io.shape
        nb = 1 if a.down_bias else 0
        W = n_in + nb  # feature columns per expert: h_e(x) (and 1 for the bias)
        feats = torch.zeros(len(x), k * W, dtype=torch.float32)
        for e in idx.unique().tolist():
            t, s = (idx == e).nonzero(as_tuple=True)
            we = w[t, s, None].float()
            feats[t, e * W:e * W + n_in] = we * a.expert_hidden(ex, e, x[t]).float()
            if nb:
                feats[t, e * W + n_in] = we[:, 0]
        # normal equations: products in float32 (the features are block-sparse: top-k blocks per token),
        # the solve and the error quadratic forms in float64
        gram, fty = (feats.T @ feats).double(), (feats.T @ y).double()
        yy = float((y.double() ** 2).sum().clamp_min(1e-300))
        d0 = d_io
        if nb:
            d0 = torch.cat([d_io, getattr(ex, a.down_bias).data.float()[:, None, :]], dim=1)  # [k, n_in+1, H]
        d0 = d0.reshape(k * W, H).double()
        lam = float(ridge) * float(gram.diagonal().mean().clamp_min(1e-12))
        d = torch.linalg.solve(gram + lam * torch.eye(k * W, dtype=torch.float64), fty + lam * d0)

        def err(m):  # ||F m - Y||^2 / ||Y||^2 = (tr(m^T G m) - 2 tr(m^T F^T Y) + ||Y||^2) / ||Y||^2
            return max(0.0, float((m * (gram @ m)).sum() - 2 * (m * fty).sum() + yy)) / yy

        before, after = err(d0), err(d)
        d = d.reshape(k, W, H)
        new_io = d[:, :n_in, :]
        ex.down_proj.data.copy_((new_io if a.down_in_out else new_io.transpose(1, 2)).to(ex.down_proj.dtype))
        if nb:
            bias = getattr(ex, a.down_bias)
            bias.data.copy_(d[:, n_in, :].to(bias.dtype))
        report[b_prox.name] = {"tokens": int(len(x)), "rel_err_before": round(before, 6),
                               "rel_err_after": round(after, 6)}
    return report
