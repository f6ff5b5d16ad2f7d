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

import contextlib
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterable

import polars as pl
import torch
import torch.fx as fx

from curate.decompose.config import DecomposeConfig
from curate.decompose.segments import (  # noqa: F401 - re-exported: the segmentation rules live in curate/decompose/segments.py
    ANCHOR_NAMES,
    EFFECT_PARTS,
    VIEW_NAMES,
    VMAP_PARTS,
    Segment,
    build_parent,
    cheap_key,
    index_bounds,
    is_effect,
    is_tensor_meta,
    is_vmap,
    meta_value,
    pattern_of,
    pattern_of_targets,
    range_param_bytes,
    segment_graph,
    segment_module,
    segment_nodes,
    short_name,
)
from passnet_common.canonical import CANONICAL_VERSION, canonicalize, hash_metadata, output_permutation
from passnet_common.io import atomic_write_json, write_parquet
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.schema import to_table
from passnet_common.store import store_path, write_graph

DECOMPOSE_VERSION = 3
"""Bump when the range rules change (stored beside every subgraph row). 2: ``vmap_fragment``.
3: outputs in canonical order and the pattern from the canonical node order (equal ranges
whose outputs were recorded in different orders no longer get different hashes)."""

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


def decompose_graph(folder: Path, out_store: Path | None, anchors_per_subgraph: int = DecomposeConfig.anchors_per_subgraph,
                    max_nodes: int = DecomposeConfig.max_nodes, max_param_bytes: int = DecomposeConfig.max_param_bytes,
                    min_graph_ops: int = DecomposeConfig.min_graph_ops,
                    cache: dict[str, dict] | None = None) -> tuple[list[dict], str | None]:
    """Decompose the stored graph in ``folder``; write new subgraphs to ``out_store``.

    Args:
        folder: a graph store folder (``graph.json``, ``input_meta.json``, ...).
        out_store: subgraph store root (None: hash only, write nothing; used to measure
            the subgraph count of other range choices).
        max_param_bytes: ranges whose parameter/buffer placeholders exceed this (bytes) are
            skipped with ``param_bytes_cap``.
        min_graph_ops: parents with fewer call ops are skipped (``trivial_graph``).
        cache: ``cheap_key -> description`` shared across calls (saves canonicalisation of
            repeated layers).

    Returns:
        ``(rows, graph_skip_reason)``: one dict per range with ``subgraph_hash`` (None for
        skipped ranges that were not hashed), ``structure_hash``, ``segment_index``,
        ``node_start``, ``node_end``, ``anchor``, ``pattern``, ``num_nodes``, ``num_ops``,
        ``num_inputs``, ``num_params``, ``param_bytes``, ``skip_reason``; and the reason the
        whole parent was skipped (then ``rows`` is empty).
    """
    folder = Path(folder)
    data = json.loads((folder / "graph.json").read_text())
    nodes = data["nodes"]
    n_ops = sum(1 for n in nodes if n["op"].startswith("call_") and not is_effect(n))
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
            "num_outputs": len(seg.outputs), "param_bytes": range_param_bytes(nodes, seg), "skip_reason": seg.skip_reason,
            "subgraph_hash": None, "structure_hash": None,
        }
        if row["skip_reason"] is None and row["param_bytes"] > max_param_bytes:
            row["skip_reason"] = "param_bytes_cap"
        if row["skip_reason"] in ("non_tensor_input", "no_compute", "too_small", "vmap_fragment"):
            rows.append(row)
            continue
        key = cheap_key(nodes, seg)
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
                    bounds = index_bounds(seg, fx_nodes)
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


def decompose_corpus(unique_graphs: Iterable[dict], store: Path, out_store: Path | None, **kw) -> tuple[list[dict], dict[str, int]]:
    """Decompose every unique graph; returns ``(range_rows, graph_skips)``.

    ``unique_graphs`` rows need ``graph_hash`` and ``store_path`` (relative to ``store``'s
    parent or absolute). Each range row gets the parent's ``graph_hash``.
    """
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


def variant_count(ug: list[dict], store: str, k: int, kw: dict) -> dict[str, int]:
    """``ranges`` / ``unique_subgraphs`` / ``unique_profilable`` of the decomposition of the
    unique graphs ``ug`` (rows of ``unique_graphs``) in the graph store ``store`` with
    ``anchors_per_subgraph`` = ``k`` and :func:`decompose_corpus` keywords ``kw``; nothing is
    written (``python -m curate decompose`` runs it in a spawned process beside its main pass)."""
    vr, _ = decompose_corpus(ug, Path(store), None, anchors_per_subgraph=k, **kw)
    vc = variant_counts(vr)
    return {kk: vc[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}


def decompose_stage(cfg: dict, unique: str | Path, store: str | Path, out: str | Path) -> tuple[dict, float]:
    """The decompose stage: every unique graph of ``unique`` (``unique_graphs.parquet``) in ``store`` cut
    into ranges (:func:`decompose_corpus`, ``cfg`` = the ``curate.decompose`` block as a mapping), the
    subgraphs written to ``out/subgraph_store`` and ``out/subgraphs.parquet``; the other
    ``anchors_per_subgraph`` values of ``cfg["variants"]`` are counted in one spawned process beside
    the main pass. Writes ``out/decompose.json`` (counts, no wall seconds: it is a dep of ``profile``).

    Returns:
        ``(stats, seconds)``: what decompose.json holds and the main pass's wall seconds.
    """
    ug = pl.read_parquet(unique).to_dicts()
    out = Path(out)
    store_out = out / "subgraph_store"
    store_out.mkdir(parents=True, exist_ok=True)
    kw = dict(max_nodes=cfg["max_nodes"], max_param_bytes=int(cfg["max_param_bytes"]), min_graph_ops=cfg["min_graph_ops"])
    t0 = time.perf_counter()
    # the other anchors_per_subgraph values (counts only) in one spawned process beside the main pass
    others = [k for k in cfg["variants"] if k != cfg["anchors_per_subgraph"]]
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))) if others else None
        futures = {k: pool.submit(variant_count, ug, str(store), k, kw) for k in others}
        ranges, graph_skips = decompose_corpus(ug, Path(store), store_out, anchors_per_subgraph=cfg["anchors_per_subgraph"], **kw)
        seconds = time.perf_counter() - t0
        rows = subgraph_table(ranges, ug, str(store_out))
        write_parquet(out / "subgraphs.parquet", to_table("subgraphs", rows, metadata=hash_metadata()))
        stats = variant_counts(ranges)
        inst = {u["graph_hash"]: int(u.get("num_instances") or 1) for u in ug}
        # no wall seconds in the output: decompose.json is a dep of `profile`, and a measured time there
        # would re-run profile's timing on every rebuild although the subgraphs are byte-identical
        stats.update(graph_skips=graph_skips, unique_graphs=len(ug),
                     instances=sum(inst.get(r["graph_hash"], 1) for r in ranges if r["subgraph_hash"]),
                     anchors_per_subgraph=cfg["anchors_per_subgraph"], decompose_version=DECOMPOSE_VERSION)
        variants = {}
        for k in cfg["variants"]:
            variants[str(k)] = ({kk: stats[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}
                                if k == cfg["anchors_per_subgraph"] else futures[k].result())
    stats["variants"] = variants
    atomic_write_json(out / "decompose.json", stats, indent=2)
    return stats, seconds
