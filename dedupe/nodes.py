"""The ``nodes`` table: one row per FX node of each unique graph, in canonical order."""

from __future__ import annotations

import json
from typing import Any, Iterator


def _tensor_metas(meta: Any) -> Iterator[tuple[list[int], str]]:
    """(shape, dtype) of every tensor in an encoded meta value (``["T", dtype, shape]``)."""
    if not isinstance(meta, list) or not meta:
        return
    if meta[0] == "T":
        shape = meta[2] if isinstance(meta[2], list) else []
        yield [int(s) if isinstance(s, int) else -1 for s in shape], meta[1]
    elif meta[0] in ("tuple", "list"):
        for m in meta[1:]:
            yield from _tensor_metas(m)
    elif meta[0] == "dict":
        for _, m in meta[1:]:
            yield from _tensor_metas(m)


def _strip_refs(value: Any) -> Any:
    """Literal arguments with node references replaced by ``"%j"`` strings (for display)."""
    if isinstance(value, list) and value:
        if value[0] == "%":
            return f"%{value[1]}"
        return [value[0], *[_strip_refs(v) for v in value[1:]]]
    return value


def node_rows(graph_hash: str, nodes: list[dict]) -> list[dict]:
    """Rows of the ``nodes`` table for one canonical node list (from ``graph.json``)."""
    outs = [list(_tensor_metas(n.get("meta"))) for n in nodes]
    rows = []
    for i, n in enumerate(nodes):
        ins = n.get("inputs", [])
        in_metas = [m for j in ins for m in outs[j]]
        rows.append({
            "graph_hash": graph_hash,
            "node_index": i,
            "op": n["op"],
            "target": n["target"],
            "placeholder_kind": n.get("kind"),
            "input_nodes": ins,
            "in_shapes": [m[0] for m in in_metas],
            "in_dtypes": [m[1] for m in in_metas],
            "out_shapes": [m[0] for m in outs[i]],
            "out_dtypes": [m[1] for m in outs[i]],
            "literal_args": json.dumps({"args": _strip_refs(n.get("args")), "kwargs": _strip_refs(n.get("kwargs"))},
                                       separators=(",", ":"), ensure_ascii=False),
        })
    return rows
