"""The graph record: what one captured FX graph becomes before it is stored.

:class:`CapturedGraph` is what a capture hands on (the GraphModule, the kind of each
placeholder, the example inputs); :func:`describe_graph` turns it into the JSON record the
graph store keeps (:mod:`passnet_common.store`): canonical hashes and node list
(:mod:`passnet_common.canonical`), readable code, and placeholder metadata with summary
statistics (:func:`tensor_stats`), never weights. Shared by the capture (``extract``) and the
decomposition (``curate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor

from passnet_common.canonical import CANONICAL_VERSION, canonicalize


@dataclass
class CapturedGraph:
    """One graph handed to the backend.

    Attributes:
        gm: the GraphModule (parameters lifted to placeholders).
        kinds: kind of each placeholder: ``input``, ``parameter`` or ``buffer``.
        example_inputs: the tensors Dynamo passed (meta tensors in meta mode).
        break_reason: Dynamo's reason for ending this graph, None at a normal return.
    """

    gm: fx.GraphModule
    kinds: list[str]
    example_inputs: list[Any]
    break_reason: str | None
    sources: list[str | None] = field(default_factory=list)
    output_mismatch: list[str] = field(default_factory=list)
    buffer_info: dict[int, dict] = field(default_factory=dict)


# Integer/bool buffers up to this many elements are stored value by value (position ids,
# token type ids, index tables), so a stored graph replays them exactly.
EXACT_VALUES_MAX_NUMEL = 4096


def tensor_stats(t: Any) -> dict | None:
    """Summary statistics of a real tensor (min, max, mean, std), None on meta/fake.

    Integer and bool tensors: ``min``/``max`` are exact Python ints (an int64 buffer
    holding the int64 maximum round-trips); floats are Python floats. ``std`` is None for
    tensors with fewer than 2 elements (GraphNet recorded NaN there); non-finite values
    are reported as None.
    """
    if not isinstance(t, torch.Tensor) or t.device.type == "meta" or t.numel() == 0:
        return None
    try:
        if isinstance(t, FakeTensor):
            return None
    except ImportError:
        pass
    try:
        x = t.detach()
        if x.is_complex() or x.is_quantized or x.layout != torch.strided:
            return None

        def f(v):
            v = float(v)
            return v if math.isfinite(v) else None

        if x.dtype == torch.bool or not x.dtype.is_floating_point:
            xi = x.to(torch.int64) if x.dtype != torch.uint64 else x
            xf = x.double()
            return {"min": int(xi.min()), "max": int(xi.max()), "mean": f(xf.mean()),
                    "std": f(xf.std()) if x.numel() >= 2 else None}
        xf = x.double()
        return {
            "min": f(xf.min()), "max": f(xf.max()), "mean": f(xf.mean()),
            "std": f(xf.std()) if x.numel() >= 2 else None,
        }
    except Exception:  # noqa: BLE001 - statistics are optional
        return None


def buffer_stats(t: torch.Tensor) -> dict | None:
    """:func:`tensor_stats` of a buffer, plus ``values`` (flat list of exact ints) for
    integer/bool buffers of at most :data:`EXACT_VALUES_MAX_NUMEL` elements."""
    stats = tensor_stats(t)
    if stats is None:
        return None
    if (t.dtype == torch.bool or not (t.dtype.is_floating_point or t.dtype.is_complex)) \
            and t.numel() <= EXACT_VALUES_MAX_NUMEL:
        stats["values"] = [int(v) for v in t.detach().reshape(-1).to(torch.int64).tolist()]
    return stats


def describe_graph(index: int, g: CapturedGraph, with_stats: bool) -> dict:
    """Canonicalise one captured graph into the JSON record the worker stores.

    The record holds hashes, counts, the canonical node list (see
    :class:`passnet_common.canonical.CanonicalGraph`), readable code and placeholder metadata,
    never tensor values.
    """
    canon = canonicalize(g.gm, g.kinds, placeholder_values=g.example_inputs)  # small buffers by value
    phs = [n for n in g.gm.graph.nodes if n.op == "placeholder"]
    placeholders = []
    param_bytes = 0
    for pos, (node, kind) in enumerate(zip(phs, g.kinds)):
        t = g.example_inputs[pos] if pos < len(g.example_inputs) else None
        entry = {"position": pos, "name": node.name, "kind": kind}
        if isinstance(t, torch.Tensor):
            entry["shape"] = list(t.shape)
            entry["dtype"] = str(t.dtype).replace("torch.", "")
            if kind != "input":
                param_bytes += t.numel() * t.element_size()
            if pos in g.buffer_info:
                entry["buffer"] = g.buffer_info[pos]["name"]
                entry["stats"] = g.buffer_info[pos]["stats"]
            elif with_stats:
                entry["stats"] = buffer_stats(t) if kind == "buffer" else tensor_stats(t)
        else:
            entry["python_type"] = type(t).__name__
        placeholders.append(entry)
    ops = sum(1 for n in canon.nodes if n["op"].startswith("call_"))
    return {
        "graph_index": index,
        "graph_hash": canon.graph_hash,
        "structure_hash": canon.structure_hash,
        "wl_hash": canon.wl_hash,
        "canonical_version": CANONICAL_VERSION,
        "num_nodes": len(canon.nodes),
        "num_ops": ops,
        "num_inputs": sum(1 for k in g.kinds if k == "input"),
        "num_params": sum(1 for k in g.kinds if k != "input"),
        "param_bytes": int(param_bytes),
        "break_reason": g.break_reason,
        "output_mismatch": list(g.output_mismatch),
        "nodes": canon.nodes,
        "subgraphs": canon.subgraph_json(),
        "placeholder_permutation": canon.placeholder_order,
        "code": g.gm.print_readable(print_output=False),
        "placeholders": placeholders,
    }
