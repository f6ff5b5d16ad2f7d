"""Shape variants of a stored subgraph: the catalog's size and two larger sizes users compile for.

Choice: **literal substitution, checked by shape propagation** (not a second capture). The
catalog captures text models at ``batch 1 x catalog_seq`` tokens (``params.extract``:
``seq_len`` 32); a second meta capture at workload size would double the capture stage (the
largest stage, ~8 min), and a dynamic capture changes the graphs Dynamo records (symbolic
shapes, guards), i.e. the dataset. Instead a variant folder is derived from the stored
subgraph:

* ``seq`` variants: every occurrence of the catalog sequence length ``catalog_seq`` becomes
  ``workload_seq`` in the shapes of ``input``-kind placeholders (activations; parameters and
  buffers keep their shapes) and in every integer literal of the node arguments (``view`` /
  ``reshape`` / ``expand`` sizes, ``arange`` ends, slice bounds), and in the recorded output
  metadata of every node (the *expected* shapes);
* ``batch`` variants (graphs without the sequence length, e.g. vision): dim 0 of ``input``
  placeholders equal to ``catalog_batch`` becomes ``workload_batch``, and the first element
  of ``view`` / ``reshape`` / ``expand`` / ``repeat`` sizes when it equals ``catalog_batch``.

A variant is kept only when the rewritten graph, run on real inputs, gives every node the
expected shape (``seq``: the recorded shape with the same substitution) or, for ``batch``,
its outputs keep their rank (checked in the profile's compile phase: :func:`check_shapes`);
otherwise its row says ``skipped / size_inconsistent`` (a literal that coincides with the
sequence length but means something else, e.g. 32 heads, is caught here). Variants are
identified by ``(subgraph_hash, size)``; the hash stays the catalog subgraph's.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import torch
from torch.fx.passes.shape_prop import ShapeProp

from passnet_common.io import atomic_write_json

SHAPE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full"})
SHAPE_FUNCTIONS = ("reshape", "view", "expand", "zeros", "ones", "empty", "full", "randn", "rand")


def _sub_ints(value: Any, frm: int, to: int) -> Any:
    """Every int ``frm`` in a stored (tagged) argument replaced by ``to`` (tags and node
    references ``["%", i]`` untouched)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return to if value == frm else value
    if isinstance(value, list) and value:
        if value[0] == "%" or value[0] in ("dtype", "device", "memory_format", "layout", "fn", "float"):
            return value
        return [value[0]] + [_sub_ints(v, frm, to) for v in value[1:]] if isinstance(value[0], str) else \
            [_sub_ints(v, frm, to) for v in value]
    return value


def _sub_meta(meta: Any, frm: int, to: int) -> Any:
    if isinstance(meta, list) and meta and meta[0] == "T":
        return ["T", meta[1], [to if d == frm else d for d in meta[2]]]
    if isinstance(meta, list):
        return [_sub_meta(m, frm, to) for m in meta]
    return meta


def _has_int(value: Any, x: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value == x
    if isinstance(value, list) and value and value[0] != "%":
        return any(_has_int(v, x) for v in value[1:] if not isinstance(v, str))
    return False


def _is_shape_call(n: dict) -> bool:
    t = str(n.get("target", ""))
    return (n["op"] == "call_method" and t in SHAPE_METHODS) or \
        (n["op"] == "call_function" and t.rsplit(".", 1)[-1] in SHAPE_FUNCTIONS)


def scale_graph(data: dict, imeta: dict, kind: str, frm: int, to: int) -> tuple[dict, dict]:
    """``(graph.json, input_meta.json)`` dicts of the ``kind`` (``seq`` | ``batch``) variant.

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in ("seq", "batch"):
        raise ValueError(f"size variant kind must be 'seq' or 'batch', got {kind!r}")
    data, imeta = copy.deepcopy(data), copy.deepcopy(imeta)
    for n in data["nodes"]:
        if n["op"] == "placeholder":
            if n.get("kind", "input") != "input":
                continue
            m = n.get("meta")
            if isinstance(m, list) and m and m[0] == "T":
                shape = list(m[2])
                if kind == "seq":
                    shape = [to if d == frm else d for d in shape]
                elif shape and shape[0] == frm:
                    shape[0] = to
                n["meta"] = ["T", m[1], shape]
            continue
        if kind == "seq":
            n["args"] = _sub_ints(n["args"], frm, to)
            n["kwargs"] = _sub_ints(n["kwargs"], frm, to)
            n["meta"] = _sub_meta(n.get("meta"), frm, to)
        elif _is_shape_call(n):
            args = n["args"]  # ["tuple", self, *sizes] or ["tuple", self, ["tuple"/"size", ...]]
            i = 2 if n["op"] == "call_method" else 1
            if len(args) > i:
                if isinstance(args[i], list) and args[i] and args[i][0] in ("tuple", "list", "size") and len(args[i]) > 1:
                    if args[i][1] == frm:
                        args[i][1] = to
                elif args[i] == frm:
                    args[i] = to
    shapes = {n["position"]: n["meta"][2] for n in data["nodes"] if n["op"] == "placeholder"
              and isinstance(n.get("meta"), list) and n["meta"] and n["meta"][0] == "T"}
    for p in imeta.get("placeholders", []):
        if p.get("position") in shapes and p.get("kind", "input") == "input":
            p["shape"] = shapes[p["position"]]
    return data, imeta


def size_kind(data: dict, catalog_seq: int) -> str:
    """``seq`` when an ``input`` placeholder has a dim equal to ``catalog_seq`` (text), else ``batch``."""
    for n in data["nodes"]:
        if n["op"] == "placeholder" and n.get("kind", "input") == "input":
            m = n.get("meta")
            if isinstance(m, list) and m and m[0] == "T" and catalog_seq in m[2]:
                return "seq"
    return "batch"


SIZES = ("catalog", "mid", "workload")
"""The shapes of every subgraph: the catalog's and two larger ones (``sizes.mid_*``, ``sizes.workload_*``)."""


def write_variants(folder: Path, out: Path, sizes: dict) -> list[dict]:
    """Variant folders of one subgraph, one per shape of :data:`SIZES`: ``catalog`` (the store
    folder itself), ``mid`` and ``workload`` (written to ``out/<size>``: graph.json,
    input_meta.json, weight_meta.json, expected.json).

    ``sizes``: ``catalog_seq``, ``mid_seq``, ``workload_seq``, ``catalog_batch``, ``mid_batch``,
    ``workload_batch`` (:class:`curate.profile.config.SizesConfig`).

    Returns:
        ``[{size, folder, size_kind, scale}]``; a graph without the sequence length and
        without a batch dim equal to ``catalog_batch`` gets, per larger size,
        ``{size, folder: None, skip_reason: no_size_dim}``.
    """
    folder, out = Path(folder), Path(out)
    data = json.loads((folder / "graph.json").read_text())
    ip = folder / "input_meta.json"
    imeta = json.loads(ip.read_text()) if ip.exists() else {}
    rows = [{"size": "catalog", "folder": str(folder), "size_kind": None, "scale": 1.0}]
    kind = size_kind(data, int(sizes["catalog_seq"]))
    frm = int(sizes["catalog_seq"]) if kind == "seq" else int(sizes["catalog_batch"])
    has_dim = kind == "seq" or any(
        n["op"] == "placeholder" and n.get("kind", "input") == "input" and isinstance(n.get("meta"), list)
        and n["meta"] and n["meta"][0] == "T" and n["meta"][2] and n["meta"][2][0] == frm for n in data["nodes"])
    for size in SIZES[1:]:
        to = int(sizes[f"{size}_seq"]) if kind == "seq" else int(sizes[f"{size}_batch"])
        if not has_dim:
            rows.append({"size": size, "folder": None, "size_kind": kind, "scale": None, "skip_reason": "no_size_dim"})
            continue
        g2, i2 = scale_graph(data, imeta, kind, frm, to)
        d = out / size
        d.mkdir(parents=True, exist_ok=True)
        atomic_write_json(d / "graph.json", g2)
        atomic_write_json(d / "input_meta.json", i2)
        wp = folder / "weight_meta.json"
        if wp.exists():
            (d / "weight_meta.json").write_text(wp.read_text())
        expected = {str(i): n.get("meta") for i, n in enumerate(g2["nodes"]) if n["op"] not in ("placeholder", "output", "get_attr")}
        atomic_write_json(d / "expected.json", {"kind": kind, "from": frm, "to": to, "node_meta": expected})
        rows.append({"size": size, "folder": str(d), "size_kind": kind, "scale": to / frm})
    return rows


def check_shapes(gm, inputs: list, folder: Path) -> str | None:
    """None when the variant's graph gives the expected shapes (module docstring), else a
    reason. Runs the graph once (``torch.fx.passes.shape_prop.ShapeProp``)."""
    p = Path(folder) / "expected.json"
    if not p.exists():
        return None
    exp = json.loads(p.read_text())
    ShapeProp(gm).propagate(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    calls = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    metas = [m for i, m in sorted(((int(k), v) for k, v in exp["node_meta"].items()))]
    if len(calls) != len(metas):
        return f"node count {len(calls)} != {len(metas)}"
    for n, m in zip(calls, metas):
        tm = n.meta.get("tensor_meta")
        if not (isinstance(m, list) and m and m[0] == "T") or tm is None or not hasattr(tm, "shape"):
            continue
        got = list(tm.shape)
        if exp["kind"] == "seq" and got != list(m[2]):
            return f"{n.name}: shape {got}, expected {m[2]}"
        if exp["kind"] == "batch" and len(got) != len(m[2]):
            return f"{n.name}: rank {len(got)}, expected {len(m[2])}"
    return None
