"""Anchor-bounded ranges of a stored graph: the segmentation rules of :mod:`curate.decompose.ranges`.

What an anchor is (:data:`ANCHOR_NAMES`), which ops are views or effects, how a parent's node
list is cut into ranges (:func:`segment_nodes`), how a range becomes a standalone graph
(:func:`segment_graph` / :func:`segment_module`) and its structure family
(:func:`pattern_of`). The rules and their reasons are stated in :mod:`curate.decompose.ranges`'s
docstring; a change here bumps ``curate.decompose.ranges.DECOMPOSE_VERSION``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import torch
import torch.fx as fx

from curate.decompose.config import DecomposeConfig
from passnet_common.store import check_fields, decode_arg, rebuild_call

ANCHOR_NAMES = frozenset({
    # matmul family
    "linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "einsum", "bilinear", "mv", "dot",
    # convolution
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
    # attention
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # normalisation (reductions)
    "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize",
    # reductions
    "softmax", "log_softmax", "sum", "mean", "var", "std", "var_mean", "amax", "amin", "max", "min", "argmax",
    "argmin", "prod", "norm", "cumsum", "cumprod", "logsumexp", "topk", "sort", "argsort", "all", "any",
    # pooling / resampling / gather
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "max_pool2d_with_indices", "interpolate",
    "upsample", "grid_sample", "embedding", "index_select", "gather", "scatter", "scatter_add", "index_put",
})
"""Short op names (last component of the target) that start a new range."""

VIEW_NAMES = frozenset({
    "view", "reshape", "permute", "transpose", "t", "contiguous", "getitem", "unsqueeze", "squeeze", "expand",
    "expand_as", "flatten", "unflatten", "size", "split", "chunk", "unbind", "narrow", "select", "movedim",
    "view_as", "stride", "dim", "numel", "detach", "clone", "alias",
})
"""Ops that only re-index memory (a range of these alone has no compute)."""

VMAP_PARTS = ("_add_batch_dim", "_remove_batch_dim", "_vmap_increment_nesting", "_vmap_decrement_nesting")
"""Ops of a traced ``torch.vmap`` level (``torch._functorch.predispatch``): the level lives in
global functorch state between ``_vmap_increment_nesting`` and ``_vmap_decrement_nesting``, so
a range holding part of it, or reading a batched tensor from outside, cannot run alone."""

EFFECT_PARTS = ("_log_api_usage_once", "_enter_autocast", "_exit_autocast", "set_grad_enabled", "_record_function", "profiler", "_assert")


def short_name(target: str) -> str:
    """``torch._C._nn.linear`` -> ``linear``; ``_operator.getitem`` -> ``getitem``; methods as is."""
    return target.rsplit(".", 1)[-1].rstrip("_") if target else target


# ---------------------------------------------------------------------------------------
# Rebuilding a parent graph from its stored canonical node list (no tensors allocated;
# arguments decoded by the store's own decoder, passnet_common.store.decode_arg)


def meta_value(meta: Any) -> Any:
    """Stored metadata -> a value for ``node.meta['val']`` (meta-device tensors, no memory)."""
    if not isinstance(meta, list) or not meta:
        return None
    tag = meta[0]
    if tag == "T":
        shape = meta[2] if isinstance(meta[2], list) else []
        if not all(isinstance(s, int) for s in shape):
            return None
        return torch.empty(shape, dtype=getattr(torch, meta[1]), device="meta")
    if tag in ("tuple", "list"):
        items = [meta_value(m) for m in meta[1:]]
        return tuple(items) if tag == "tuple" else items
    return {"int": 1, "float": 1.0, "bool": True}.get(tag)


def is_tensor_meta(meta: Any) -> bool:
    """True when stored metadata describes one tensor with a static shape."""
    return isinstance(meta, list) and len(meta) == 3 and meta[0] == "T" and isinstance(meta[2], list) \
        and all(isinstance(s, int) for s in meta[2])


def build_parent(nodes: list[dict]) -> tuple[fx.Graph, list[fx.Node]]:
    """FX graph of a stored canonical node list, with ``meta['val']`` on the meta device.

    Returns ``(graph, fx_nodes)`` where ``fx_nodes[i]`` is stored node ``i``.

    Raises:
        passnet_common.store.UnsafeTarget: a target outside the store's allowlist.
        ValueError: ops the store cannot rebuild (``call_module``) or unknown argument tags.
    """
    dev = torch.device("cpu")
    graph = fx.Graph()
    built: list[fx.Node] = []
    check_fields(nodes)

    for i, n in enumerate(nodes):
        op = n["op"]
        if op == "placeholder":
            node = graph.placeholder(f"arg{n['position']}")
        elif op == "get_attr":
            node = graph.placeholder(f"const{i}")  # stands in for the constant
        elif op in ("call_function", "call_method"):
            node = rebuild_call(graph, n, built, dev, f"node {i}")
        elif op == "output":
            node = graph.output(decode_arg(n["args"], built, dev)[0])
        else:
            raise ValueError(f"node {i} has op {op!r}, which cannot be rebuilt")
        node.meta["val"] = meta_value(n.get("meta"))
        built.append(node)
    return graph, built


# ---------------------------------------------------------------------------------------
# Ranges


@dataclass
class Segment:
    """One range of a parent graph (see the module docstring; not necessarily contiguous).

    Attributes:
        index: position of the range in the parent's schedule (0 = first).
        nodes: stored node indexes in the range (canonical order).
        inputs: stored node indexes the range reads from outside (placeholder order).
        outputs: stored node indexes the range produces for later use (output order).
        anchor: short name of the range's first anchor op (``""`` for a prologue).
        skip_reason: None, or why the range is not a profiling candidate.
    """

    index: int
    nodes: list[int]
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    anchor: str = ""
    skip_reason: str | None = None


def is_effect(n: dict) -> bool:
    return n["op"].startswith("call_") and any(p in n["target"] for p in EFFECT_PARTS)


def is_vmap(n: dict) -> bool:
    return n["op"] == "call_function" and any(p in n["target"] for p in VMAP_PARTS)


def segment_nodes(nodes: list[dict], anchors_per_subgraph: int = DecomposeConfig.anchors_per_subgraph,
                  max_nodes: int = DecomposeConfig.max_nodes) -> list[Segment]:
    """Split a stored canonical node list into anchor-bounded ranges (module docstring).

    Args:
        nodes: the ``nodes`` list of a store ``graph.json`` (canonical, topological order).
        anchors_per_subgraph: anchors per range (k >= 1).
        max_nodes: most call nodes in a range; longer anchor-free runs are split.

    Returns:
        Ranges in order, with inputs, outputs and anchor filled; ``skip_reason`` set for
        ``no_compute`` and ``non_tensor_input`` ranges.
    """
    if anchors_per_subgraph < 1:
        raise ValueError(f"anchors_per_subgraph must be >= 1, got {anchors_per_subgraph}")
    seg_of: dict[int, int] = {}
    anchors_in: dict[int, int] = {}
    size: dict[int, int] = {}
    next_id = 0
    for i, n in enumerate(nodes):
        if not n["op"].startswith("call_") or is_effect(n):
            continue
        name = short_name(n["target"])
        src = [seg_of[j] for j in n["inputs"] if j in seg_of]
        s = max(src) if src else None
        is_anchor = name in ANCHOR_NAMES
        new = s is None or size[s] >= max_nodes or (is_anchor and not 1 <= anchors_in.get(s, 0) < anchors_per_subgraph)
        if new and name == "getitem" and s is not None:
            new = False  # a getitem stays with its producer: no tuple crosses a border
        if new:
            s, next_id = next_id, next_id + 1
            size[s] = 0
        seg_of[i] = s
        size[s] += 1
        if is_anchor:
            anchors_in[s] = anchors_in.get(s, 0) + 1
    members: dict[int, list[int]] = {}
    for i in sorted(seg_of):
        members.setdefault(seg_of[i], []).append(i)
    users: dict[int, set[int]] = {}
    for i, n in enumerate(nodes):
        for j in n["inputs"]:
            users.setdefault(j, set()).add(i)
    batched: set[int] = set()  # values inside a vmap level: from _add_batch_dim up to _remove_batch_dim
    for i, n in enumerate(nodes):
        t = n["target"] if n["op"] == "call_function" else ""
        if "_add_batch_dim" in t or ("_remove_batch_dim" not in t and any(j in batched for j in n["inputs"])):
            batched.add(i)
    segments = []
    for k, sid in enumerate(sorted(members)):
        idx = members[sid]
        inside = set(idx)
        ins: list[int] = []
        for i in idx:
            for j in nodes[i]["inputs"]:
                if j not in inside and j not in ins and not is_effect(nodes[j]):
                    ins.append(j)
        outs = [i for i in idx if any(u not in inside for u in users.get(i, ()))]
        anchor = next((short_name(nodes[i]["target"]) for i in idx if short_name(nodes[i]["target"]) in ANCHOR_NAMES), "")
        seg = Segment(k, idx, ins, outs, anchor)
        compute = [i for i in idx if short_name(nodes[i]["target"]) not in VIEW_NAMES]
        if not compute:
            seg.skip_reason = "no_compute"
        elif not anchor and len(compute) < 2:
            seg.skip_reason = "too_small"
        elif any(not is_tensor_meta(nodes[j].get("meta")) for j in ins):
            seg.skip_reason = "non_tensor_input"
        elif any(is_vmap(nodes[i]) for i in idx) or any(j in batched for j in ins):
            seg.skip_reason = "vmap_fragment"
        segments.append(seg)
    return segments


def segment_module(nodes: list[dict], seg: Segment, fx_nodes: list[fx.Node] | None = None) -> tuple[fx.GraphModule, list[str], list]:
    """Standalone GraphModule of one range, its placeholder kinds and meta example inputs.

    Placeholders follow ``seg.inputs``; the output is the tuple of ``seg.outputs``.
    ``fx_nodes`` (from :func:`build_parent`) is built when not given.
    """
    g, kinds, examples = segment_graph(nodes, seg, fx_nodes)
    return fx.GraphModule(torch.nn.Module(), g), kinds, examples


def segment_graph(nodes: list[dict], seg: Segment, fx_nodes: list[fx.Node] | None = None) -> tuple[fx.Graph, list[str], list]:
    """:func:`segment_module` without the module (no Python code generated: cheap to hash)."""
    if fx_nodes is None:
        _, fx_nodes = build_parent(nodes)
    g = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    kinds, examples = [], []
    for p, j in enumerate(seg.inputs):
        src = fx_nodes[j]
        ph = g.placeholder(f"in{p}")
        ph.meta["val"] = src.meta.get("val")
        env[src] = ph
        sn = nodes[j]
        kinds.append(sn.get("kind", "input") if sn["op"] == "placeholder" else ("buffer" if sn["op"] == "get_attr" else "input"))
        examples.append(src.meta.get("val"))
    for i in seg.nodes:
        src = fx_nodes[i]
        new = g.node_copy(src, lambda a: env[a])
        new.meta["val"] = src.meta.get("val")
        env[src] = new
    g.output(tuple(env[fx_nodes[i]] for i in seg.outputs))
    return g, kinds, examples


def cheap_key(nodes: list[dict], seg: Segment) -> str:
    """Hash of a range's stored text with local indexes (equal ranges of one parent order
    -- the repeated layers of a model -- share it; only a shortcut before canonicalisation)."""
    local = {j: p for p, j in enumerate(seg.inputs)}
    local.update({i: len(seg.inputs) + q for q, i in enumerate(seg.nodes)})
    items = [[nodes[j].get("kind", nodes[j]["op"]), nodes[j].get("meta")] for j in seg.inputs]
    for i in seg.nodes:
        n = nodes[i]
        items.append([n["op"], n["target"], json.dumps([n["args"], n["kwargs"]]), [local[j] for j in n["inputs"]], n.get("meta")])
    items.append([local[i] for i in seg.outputs])
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()


def index_bounds(seg: Segment, fx_nodes: list[fx.Node]) -> dict[int, int]:
    """Stored input index -> number of rows of the ``embedding`` table it indexes (so that
    synthesised indices stay in range; the parent's vocabulary bound is too loose for e.g.
    position tables)."""
    pos = {n: k for k, n in enumerate(fx_nodes)}
    inside = set(seg.inputs)
    out: dict[int, int] = {}
    for i in seg.nodes:
        n = fx_nodes[i]
        if n.op == "call_function" and short_name(getattr(n.target, "__name__", str(n.target))) == "embedding" and len(n.args) >= 2:
            idx, w = n.args[0], n.args[1]
            wv = w.meta.get("val") if isinstance(w, fx.Node) else None
            if isinstance(idx, fx.Node) and pos.get(idx) in inside and wv is not None and wv.dim() == 2:
                out[pos[idx]] = int(wv.shape[0])
    return out


def range_param_bytes(nodes: list[dict], seg: Segment) -> int:
    total = 0
    for j in seg.inputs:
        n = nodes[j]
        if n["op"] == "get_attr" or n.get("kind") in ("parameter", "buffer"):
            m = n.get("meta")
            if is_tensor_meta(m):
                numel = 1
                for s in m[2]:
                    numel *= s
                total += numel * torch.empty(0, dtype=getattr(torch, m[1])).element_size()
    return total


def pattern_of(nodes: list[dict], seg: Segment) -> str:
    """Structure family of a range: its op names in order, runs of one op collapsed, views
    dropped (e.g. ``linear>add>gelu``). Long-tail subgraphs are grouped into tasks by it.
    :func:`decompose_graph` takes it from the subgraph's canonical node order
    (:func:`pattern_of_targets`), so equal subgraphs get one pattern."""
    return pattern_of_targets(nodes[i]["target"] for i in seg.nodes)


def pattern_of_targets(targets: Iterable[str]) -> str:
    """:func:`pattern_of` from a sequence of stored node targets (placeholders and the
    output node are skipped)."""
    names: list[str] = []
    for t in targets:
        if t in ("placeholder", "output", "get_attr"):
            continue
        s = short_name(t)
        if s in VIEW_NAMES:
            continue
        if not names or names[-1] != s:
            names.append(s)
    return ">".join(names) or "view"
