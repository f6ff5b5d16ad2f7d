"""A small decompose-stage output built from traced functions (no capture): subgraphs of
eight structure families at catalog text size (1 x 32 tokens) or vision batch 1, each family at
a few hidden sizes, plus the two captured fixtures of tests/fixtures/curate. Used by the
curate tests and by benchmarks/bench_curate.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from curate.score.synthetic_tasks import gelu_tanh, softmax, swiglu  # the written-out forms the built-in tasks use
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.store import store_path, write_graph

FIXTURES = Path(__file__).parent / "fixtures" / "curate"
SEQ = 32


def rmsnorm(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def linear_relu(x, w, b):
    return F.relu(F.linear(x, w, b))


def heads(x):  # attention-head split: the reshape literal is the sequence length
    return x.view(1, SEQ, 4, -1).transpose(1, 2).contiguous()


def layernorm_add(x, r, w, b):  # residual add + layer norm written out (as decomposed graphs record it)
    y = x + r
    c = y - y.mean(-1, keepdim=True)
    return c * torch.rsqrt(c.pow(2).mean(-1, keepdim=True) + 1e-5) * w + b


def conv_relu(x, w):
    return F.relu(F.conv2d(x, w, None, 1, 1))


def _families(hidden: int) -> list[tuple]:
    h = hidden
    return [
        (rmsnorm, [torch.randn(1, SEQ, h), torch.ones(h)], ["input", "parameter"]),
        (gelu_tanh, [torch.randn(1, SEQ, h)], ["input"]),
        (swiglu, [torch.randn(1, SEQ, h), torch.randn(1, SEQ, h)], ["input", "input"]),
        (softmax, [torch.randn(1, 4, SEQ, SEQ * h // 256)], ["input"]),
        (linear_relu, [torch.randn(1, SEQ, h), torch.randn(h, h) * 0.02, torch.zeros(h)], ["input", "parameter", "parameter"]),
        (heads, [torch.randn(1, SEQ, h)], ["input"]),
        (layernorm_add, [torch.randn(1, SEQ, h), torch.randn(1, SEQ, h), torch.ones(h), torch.zeros(h)],
         ["input", "input", "parameter", "parameter"]),
        (conv_relu, [torch.randn(1, h // 32, 28, 28), torch.randn(h // 32, h // 32, 3, 3) * 0.1], ["input", "parameter"]),
    ]


def _row(rec: dict, model: str) -> dict:
    from curate.decompose.ranges import DECOMPOSE_VERSION, pattern_of_targets

    nodes = rec["nodes"]
    pattern = pattern_of_targets(n["target"] for n in nodes)
    return {"subgraph_hash": rec["graph_hash"], "structure_hash": rec.get("structure_hash") or rec["graph_hash"],
            "canonical_version": rec.get("canonical_version", 1), "decompose_version": DECOMPOSE_VERSION,
            "num_nodes": len(nodes), "num_ops": sum(1 for n in nodes if n["op"].startswith("call")),
            "num_inputs": sum(1 for n in nodes if n["op"] == "placeholder"), "num_outputs": 1, "num_params": 0,
            "param_bytes": 0, "anchor": pattern.split(">")[0], "pattern": pattern, "status": "ok", "skip_reason": None,
            "num_instances": 1, "num_parent_graphs": 1, "num_models": 1, "model_ids": [model], "members": [],
            "store_path": ""}


def build_corpus(root: Path, hidden: tuple[int, ...] = (64, 256), fixtures: bool = True) -> Path:
    """Write ``root/decompose/{subgraph_store, subgraphs.parquet}``; returns ``root/decompose``."""
    from passnet_common.io import write_parquet
    from passnet_common.schema import to_table

    out = Path(root) / "decompose"
    store = out / "subgraph_store"
    store.mkdir(parents=True, exist_ok=True)
    rows = []
    torch.manual_seed(0)
    for h in hidden:
        for fn, inputs, kinds in _families(h):
            gm = fx.symbolic_trace(fn)
            ShapeProp(gm).propagate(*inputs)
            rec = describe_graph(0, CapturedGraph(gm, kinds, inputs, None), with_stats=True)
            write_graph(store, rec)
            rows.append(_row(rec, f"synthetic:{fn.__name__}"))
    if fixtures:
        import json

        for d in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
            dst = store_path(store, d.name)
            if not dst.exists():
                shutil.copytree(d, dst)
            rows.append(_row(json.loads((d / "graph.json").read_text()), "fixture"))
    rows = list({r["subgraph_hash"]: r for r in rows}.values())
    write_parquet(out / "subgraphs.parquet", to_table("subgraphs", rows))
    return out
