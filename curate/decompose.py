"""Decompose unique graphs into subgraphs a compiler pass could target.

Choice: **anchor-op-bounded ranges**, not Inductor-reported fusion groups.

A subgraph starts at an *anchor* op (matmul / linear / conv / attention / normalisation that
reduces / reduction / pooling / embedding, :data:`ANCHOR_NAMES`) and holds the non-anchor ops
fed by it: walking the parent's canonical (topological) order, a non-anchor op joins the range
of its latest-started input, an anchor starts a new range. That is the anchor plus its
elementwise epilogue, the unit Inductor's scheduler fuses on CPU (an extern or reduction
kernel followed by one fused pointwise kernel). Ops fed only by placeholders start their own
(prologue) range. Inference ``batch_norm`` is pointwise (running statistics), so it is not an
anchor and ``conv -> batch_norm -> relu`` stays one range. ``anchors_per_subgraph`` = k lets
an anchor join the range of its input while that range holds 1..k-1 anchors (k = 2
gives e.g. ``matmul -> softmax`` attention cores); ``max_nodes`` splits long anchor-free runs.
Range ids grow along every edge, so running the ranges in id order is a valid schedule of the
parent (the recomposition test relies on it).

Why not fusion groups reported by Inductor: they exist only after compiling the *whole*
parent graph (Dynamo + AOTAutograd + scheduler, and on CPU a gcc build of every kernel), tens
of seconds to minutes per graph on 2 cores for a corpus of large graphs, while anchor ranges
are computed from the stored FX node list in milliseconds and without weights (parents
captured on the meta device are never materialised). GraphNet's rule (ranges whose kernel
count does not grow) is approximated by the same observation that its ranges end at the ops
that start a new kernel. The effect of the choice on the subgraph count is measured by
:func:`decompose_corpus` for every k in ``params.curate.decompose.variants`` and written to
``metrics/curate.json`` (``decompose_variants``).

Rules that keep each range a standalone, runnable graph:

* values from outside the range become placeholders (parent placeholders keep their kind and
  recorded statistics; ``get_attr`` constants become ``buffer`` placeholders; intermediate
  values become ``input`` placeholders whose metadata is the producer's recorded shape and
  dtype, from which :func:`passnet_common.store.load_graph` synthesises inputs);
* values used after the range (or by the parent's output) become the range's outputs, so
  running the ranges in order recomposes the parent's outputs (tested); they are a set, so
  the stored subgraph lists them in a canonical order
  (:func:`passnet_common.canonical.output_permutation`), not the parent's recording order;
* ``getitem`` of a multi-output node joins its producer's range (no tuple crosses a border);
* grad-mode / autocast / profiler switches are dropped (no tensor work).

Each range is canonicalised with :func:`passnet_common.canonical.canonicalize` (the corpus'
canonical form) through :func:`passnet_common.record.describe_graph` and written to a subgraph store
with :func:`passnet_common.store.write_graph` (the graph store's layout), so one subgraph shared by
32 Llama layers, or by Llama and Qwen, is stored and profiled once; ``members`` records every
(parent graph, range) it came from.

Skipped, with the reason (``skip_reason``): parents with fewer than ``min_graph_ops`` call ops
(``trivial_graph``: Dynamo's API-logging graphs between breaks), parents that cannot be
rebuilt (``unloadable``), ranges with only view/shape ops (``no_compute``), ranges holding part of a
traced ``torch.vmap`` level or reading a batched tensor (``vmap_fragment``, :data:`VMAP_PARTS`), anchor-free ranges
with a single compute op (``too_small``: a lone ``arange`` or dtype cast is no task), ranges that take
a non-tensor value from outside (``non_tensor_input``), ranges whose parameter/buffer bytes
exceed ``max_param_bytes`` (``param_bytes_cap``). Ops without a CPU kernel are found when
profiling (``no_cpu_kernel`` in ``profiles``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import torch
import torch.fx as fx

DECOMPOSE_VERSION = 3
"""Bump when the range rules change (stored beside every subgraph row). 2: ``vmap_fragment``.
3: outputs in canonical order and the pattern from the canonical node order (equal ranges
whose outputs were recorded in different orders no longer get different hashes)."""

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
    from passnet_common.store import decode_arg, resolve_target

    dev = torch.device("cpu")
    graph = fx.Graph()
    built: list[fx.Node] = []

    for i, n in enumerate(nodes):
        op = n["op"]
        if op == "placeholder":
            node = graph.placeholder(f"arg{n['position']}")
        elif op == "get_attr":
            node = graph.placeholder(f"const{i}")  # stands in for the constant
        elif op == "call_function":
            node = graph.call_function(resolve_target(n["target"]), decode_arg(n["args"], built, dev), decode_arg(n["kwargs"], built, dev))
        elif op == "call_method":
            node = graph.call_method(n["target"], decode_arg(n["args"], built, dev), decode_arg(n["kwargs"], built, dev))
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


def _is_effect(n: dict) -> bool:
    return n["op"].startswith("call_") and any(p in n["target"] for p in EFFECT_PARTS)


def _is_vmap(n: dict) -> bool:
    return n["op"] == "call_function" and any(p in n["target"] for p in VMAP_PARTS)


def segment_nodes(nodes: list[dict], anchors_per_subgraph: int = 1, max_nodes: int = 64) -> list[Segment]:
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
        if not n["op"].startswith("call_") or _is_effect(n):
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
                if j not in inside and j not in ins and not _is_effect(nodes[j]):
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
        elif any(_is_vmap(nodes[i]) for i in idx) or any(j in batched for j in ins):
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


def _cheap_key(nodes: list[dict], seg: Segment) -> str:
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


def _index_bounds(seg: Segment, fx_nodes: list[fx.Node]) -> dict[int, int]:
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


def _param_bytes(nodes: list[dict], seg: Segment) -> int:
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


def _parent_stats(folder: Path) -> tuple[dict[int, dict | None], int | None]:
    stats: dict[int, dict | None] = {}
    int_high = None
    for name in ("input_meta.json", "weight_meta.json"):
        p = folder / name
        if p.exists():
            d = json.loads(p.read_text())
            int_high = d.get("int_high", int_high) if name == "input_meta.json" else int_high
            for ph in d.get("placeholders", []):
                stats[ph["position"]] = ph.get("stats")
    return stats, int_high


def decompose_graph(folder: Path, out_store: Path | None, anchors_per_subgraph: int = 1, max_nodes: int = 64,
                    max_param_bytes: int = 64 << 20, min_graph_ops: int = 2,
                    cache: dict[str, dict] | None = None) -> tuple[list[dict], str | None]:
    """Decompose the stored graph in ``folder``; write new subgraphs to ``out_store``.

    Args:
        folder: a graph store folder (``graph.json``, ``input_meta.json``, ...).
        out_store: subgraph store root (None: hash only, write nothing; used to measure
            the subgraph count of other range choices).
        max_param_bytes: ranges whose parameter/buffer placeholders exceed this (bytes) are
            skipped with ``param_bytes_cap``.
        min_graph_ops: parents with fewer call ops are skipped (``trivial_graph``).
        cache: ``_cheap_key -> description`` shared across calls (saves canonicalisation of
            repeated layers).

    Returns:
        ``(rows, graph_skip_reason)``: one dict per range with ``subgraph_hash`` (None for
        skipped ranges that were not hashed), ``structure_hash``, ``segment_index``,
        ``node_start``, ``node_end``, ``anchor``, ``pattern``, ``num_nodes``, ``num_ops``,
        ``num_inputs``, ``num_params``, ``param_bytes``, ``skip_reason``; and the reason the
        whole parent was skipped (then ``rows`` is empty).
    """
    from passnet_common.record import CapturedGraph, describe_graph
    from passnet_common.store import write_graph
    from passnet_common.canonical import canonicalize, output_permutation

    folder = Path(folder)
    data = json.loads((folder / "graph.json").read_text())
    nodes = data["nodes"]
    n_ops = sum(1 for n in nodes if n["op"].startswith("call_") and not _is_effect(n))
    if n_ops < min_graph_ops:
        return [], "trivial_graph"
    try:
        _, fx_nodes = build_parent(nodes)
    except Exception as exc:  # noqa: BLE001 - recorded as the skip reason
        return [], f"unloadable:{type(exc).__name__}"
    stats, int_high = _parent_stats(folder)
    cache = {} if cache is None else cache
    rows = []
    for seg in segment_nodes(nodes, anchors_per_subgraph, max_nodes):
        row = {
            "segment_index": seg.index, "node_start": seg.nodes[0], "node_end": seg.nodes[-1], "anchor": seg.anchor,
            "pattern": pattern_of(nodes, seg), "num_ops": len(seg.nodes), "num_inputs": len(seg.inputs),
            "num_outputs": len(seg.outputs), "param_bytes": _param_bytes(nodes, seg), "skip_reason": seg.skip_reason,
            "subgraph_hash": None, "structure_hash": None,
        }
        if row["skip_reason"] is None and row["param_bytes"] > max_param_bytes:
            row["skip_reason"] = "param_bytes_cap"
        if row["skip_reason"] in ("non_tensor_input", "no_compute", "too_small", "vmap_fragment"):
            rows.append(row)
            continue
        key = _cheap_key(nodes, seg)
        desc = cache.get(key)
        if desc is None:
            g, kinds, examples = segment_graph(nodes, seg, fx_nodes)
            # A range's outputs are a set: order them canonically (the parent's recording
            # order differs between equal ranges and would split their hashes). One output
            # (most ranges) has one order: no labelling pass beyond canonicalize's.
            perm = output_permutation(g, kinds) if len(seg.outputs) > 1 else [0] * len(seg.outputs)
            if perm != list(range(len(perm))) and len(perm) == len(seg.outputs):
                seg.outputs = [seg.outputs[p] for p in perm]
                out_node = next(iter(reversed(g.nodes)))
                out_node.args = (tuple(out_node.args[0][p] for p in perm),)
            canon = canonicalize(g, kinds, with_wl=False)  # cheap: no code generation, no WL
            desc = cache.get("hash:" + canon.graph_hash)
            if desc is None:
                desc = {"graph_hash": canon.graph_hash, "structure_hash": canon.structure_hash, "num_nodes": len(canon.nodes),
                        "num_params": sum(1 for k in kinds if k != "input"),
                        "pattern": pattern_of_targets(n["target"] for n in canon.nodes)}
                if out_store is not None and row["skip_reason"] is None:
                    gm = fx.GraphModule(torch.nn.Module(), g)
                    rec = describe_graph(0, CapturedGraph(gm, kinds, examples, None), with_stats=False)
                    bounds = _index_bounds(seg, fx_nodes)
                    for ph, j in zip(rec["placeholders"], seg.inputs):
                        if nodes[j]["op"] == "placeholder":
                            ph["stats"] = stats.get(nodes[j]["position"])
                        if not ph.get("stats") and j in bounds:  # indices of an embedding table
                            ph["stats"] = {"min": 0, "max": bounds[j] - 1, "mean": None, "std": None}
                    write_graph(Path(out_store), rec, [{"high": int_high}] if int_high else None)
                cache["hash:" + canon.graph_hash] = desc
            cache[key] = desc
        row.update(subgraph_hash=desc["graph_hash"], structure_hash=desc["structure_hash"], num_nodes=desc["num_nodes"],
                   num_params=desc["num_params"], pattern=desc["pattern"])
        rows.append(row)
    return rows, None


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


def decompose_corpus(unique_graphs: Iterable[dict], store: Path, out_store: Path | None, **kw) -> tuple[list[dict], dict[str, int]]:
    """Decompose every unique graph; returns ``(range_rows, graph_skips)``.

    ``unique_graphs`` rows need ``graph_hash`` and ``store_path`` (relative to ``store``'s
    parent or absolute). Each range row gets the parent's ``graph_hash``.
    """
    from passnet_common.store import store_path

    out, skips = [], {}
    cache: dict[str, dict] = {}
    for ug in unique_graphs:
        folder = store_path(Path(store), ug["graph_hash"])
        rows, reason = decompose_graph(folder, out_store, cache=cache, **kw)
        if reason is not None:
            skips[reason] = skips.get(reason, 0) + 1
        for r in rows:
            r["graph_hash"] = ug["graph_hash"]
        out.extend(rows)
    return out, skips


def subgraph_table(ranges: list[dict], unique_graphs: list[dict], store_root: str) -> list[dict]:
    """One row per distinct subgraph hash (``subgraphs`` table) with its members.

    ``members`` lists every (parent graph_hash, segment_index, node_start, node_end);
    ``model_ids`` the models whose graphs hold it (from ``unique_graphs.members``).
    ``num_instances`` counts ranges weighted by the parent's instance count (a graph shared
    by two models contributes twice).
    """
    models_of = {u["graph_hash"]: sorted({m["model_id"] for m in u["members"]}) for u in unique_graphs}
    inst_of = {u["graph_hash"]: int(u.get("num_instances") or 1) for u in unique_graphs}
    by: dict[str, dict] = {}
    for r in ranges:
        h = r["subgraph_hash"]
        if h is None:
            continue
        row = by.get(h)
        if row is None:
            row = by[h] = {
                "subgraph_hash": h, "structure_hash": r["structure_hash"], "canonical_version": _canonical_version(),
                "decompose_version": DECOMPOSE_VERSION, "num_nodes": r["num_nodes"], "num_ops": r["num_ops"],
                "num_inputs": r["num_inputs"], "num_outputs": r["num_outputs"], "num_params": r["num_params"],
                "param_bytes": r["param_bytes"], "anchor": r["anchor"], "pattern": r["pattern"],
                "skip_reason": r["skip_reason"], "status": "ok" if r["skip_reason"] is None else "skipped",
                "num_instances": 0, "members": [], "_models": set(),
                "store_path": f"{store_root}/{h[:2]}/{h}",
            }
        row["members"].append({"graph_hash": r["graph_hash"], "segment_index": r["segment_index"],
                               "node_start": r["node_start"], "node_end": r["node_end"]})
        row["num_instances"] += inst_of.get(r["graph_hash"], 1)
        row["_models"].update(models_of.get(r["graph_hash"], []))
    rows = []
    for row in by.values():
        row["model_ids"] = sorted(row.pop("_models"))
        row["num_models"] = len(row["model_ids"])
        row["num_parent_graphs"] = len({m["graph_hash"] for m in row["members"]})
        rows.append(row)
    rows.sort(key=lambda r: r["subgraph_hash"])
    return rows


def _canonical_version() -> int:
    from passnet_common.canonical import CANONICAL_VERSION

    return CANONICAL_VERSION


def variant_counts(ranges: list[dict]) -> dict[str, int]:
    """Counts of one range choice: ranges, hashed ranges, distinct subgraphs, by skip reason."""
    hashed = [r for r in ranges if r["subgraph_hash"] is not None]
    ok = {r["subgraph_hash"] for r in ranges if r["skip_reason"] is None}
    skipped: dict[str, int] = {}
    for r in ranges:
        if r["skip_reason"]:
            skipped[r["skip_reason"]] = skipped.get(r["skip_reason"], 0) + 1
    return {"ranges": len(ranges), "hashed_ranges": len(hashed), "unique_subgraphs": len({r["subgraph_hash"] for r in hashed}),
            "unique_profilable": len(ok), "skipped_ranges": skipped}
