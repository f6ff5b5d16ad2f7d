"""Canonical hashing throughput: graph_hash + structure_hash in FX nodes/s on one core,
against the GraphNet-style baseline (generate the graph's Python code, sha256 it) measured
on the same graphs in the same run. A printed table, never asserted.

    python -m benchmarks.bench_hash [--max-nodes 100000] [--out metrics/bench/bench_hash.json]

Graphs: synthetic transformer-block chains (linear / view / transpose / matmul / softmax /
add, with output metadata, as Dynamo records them) from 1K to 100K nodes -- the scaling
curve -- and real graphs: tiny Llama / Qwen2 configs captured on the meta device with more
layers, plus the graphs of the store at ``--store`` (read-only) when it exists.
Times are process CPU seconds (``time.process_time``, best of ``--reps``): the machine is
shared, CPU time is what one core spends.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic_chain(n_nodes: int, width: int = 64):
    """An FX GraphModule of ~``n_nodes`` nodes: repeated attention-like blocks with
    parameters as placeholders and meta-tensor ``example_value`` metadata."""
    import operator

    import torch
    import torch.fx as fx

    g = fx.Graph()
    meta = torch.device("meta")

    def mk(op, target, args, shape, kwargs=None):
        nd = g.create_node(op, target, args, kwargs or {})
        nd.meta["example_value"] = torch.empty(shape, device=meta)
        return nd

    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 16, width, device=meta)
    h = x
    count = 1
    layer = 0
    while count < n_nodes - 1:
        ws = []
        for k in range(4):
            w = g.placeholder(f"w{layer}_{k}")
            w.meta["example_value"] = torch.empty(width, width, device=meta)
            ws.append(w)
        q = mk("call_function", torch._C._nn.linear, (h, ws[0]), (2, 16, width))
        kk = mk("call_function", torch._C._nn.linear, (h, ws[1]), (2, 16, width))
        v = mk("call_function", torch._C._nn.linear, (h, ws[2]), (2, 16, width))
        qv = mk("call_method", "view", (q, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        kv = mk("call_method", "view", (kk, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        qt = mk("call_method", "transpose", (qv, 1, 2), (2, 4, 16, width // 4))
        kt = mk("call_method", "transpose", (kv, 1, 2), (2, 4, 16, width // 4))
        s = mk("call_function", torch.matmul, (qt, mk("call_method", "transpose", (kt, -2, -1), (2, 4, width // 4, 16))), (2, 4, 16, 16))
        p = mk("call_function", torch.softmax, (s,), (2, 4, 16, 16), {"dim": -1})
        vv = mk("call_method", "view", (v, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        o = mk("call_function", torch.matmul, (p, mk("call_method", "transpose", (vv, 1, 2), (2, 4, 16, width // 4))), (2, 4, 16, width // 4))
        o2 = mk("call_method", "reshape", (mk("call_method", "transpose", (o, 1, 2), (2, 16, 4, width // 4)), 2, 16, width), (2, 16, width))
        h = mk("call_function", operator.add, (h, mk("call_function", torch._C._nn.linear, (o2, ws[3]), (2, 16, width))), (2, 16, width))
        count += 4 + 17
        layer += 1
    g.output((h,))
    return fx.GraphModule(torch.nn.Module(), g)


def real_graphs(store: Path | None, layers: int = 16):
    """(name, GraphModule, kinds) of tiny real configs with ``layers`` layers, and of the
    store's graphs (rebuilt with ``passnet_common.store.load_graph``; no code is executed)."""
    from extract.capture import capture_row
    from extract.sources.rows import row_from_hf_config

    out = []
    for name, mt, arch in (("llama", "llama", "LlamaForCausalLM"), ("qwen2", "qwen2", "Qwen2ForCausalLM")):
        cfg = {"model_type": mt, "architectures": [arch], "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}
        res = capture_row(row_from_hf_config(cfg, f"local:{name}", name, "local"), {"seq_len": 16})
        for k, g in enumerate(res.graphs):
            out.append((f"{name} x{layers} (Dynamo, meta) #{k}", g.gm, g.kinds))
    if store is not None and store.exists():
        from passnet_common.store import load_graph

        folders = sorted(p.parent for p in store.glob("*/*/graph.json"))
        sizes = sorted(((len(json.loads((f / "graph.json").read_text())["nodes"]), f) for f in folders), reverse=True)
        for n, f in sizes[:3]:
            try:
                gm, _ = load_graph(f)
                out.append((f"store {f.name[:12]}", gm, None))
            except Exception as exc:  # noqa: BLE001 - older store formats may not reload
                print(f"skipping store graph {f.name[:12]}: {type(exc).__name__}: {exc}")
    return out


def cpu_time(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return max(best, 1e-9)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nodes", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--store", type=Path, default=ROOT / "data" / "graph_store")
    ap.add_argument("--out", type=Path, default=ROOT / "metrics" / "bench" / "bench_hash.json")
    args = ap.parse_args(argv)

    import torch

    from passnet_common.canonical import CANONICAL_VERSION, canonicalize, graph_hashes
    from passnet_common.io import atomic_write_json

    torch.set_num_threads(1)
    cases = []
    for n in (1_000, 3_000, 10_000, 30_000, 100_000):
        if n <= args.max_nodes:
            cases.append((f"synthetic chain {n // 1000}K", synthetic_chain(n), None))
    cases += real_graphs(args.store)

    rows, results = [], []
    for name, gm, kinds in cases:
        n = len(gm.graph.nodes)
        reps = args.reps if n <= 30_000 else 1
        base = cpu_time(lambda: hashlib.sha256(gm.graph.python_code("self").src.encode()).hexdigest(), reps)
        ours = cpu_time(lambda: graph_hashes(gm, kinds), reps)
        full = cpu_time(lambda: canonicalize(gm, kinds, with_wl=False), 1) if n <= 30_000 else float("nan")
        results.append({"graph": name, "nodes": n, "baseline_nodes_per_s": n / base, "nodes_per_s": n / ours})
        rows.append([name, n, f"{n / base:,.0f}", f"{n / ours:,.0f}", f"{base / ours:.2f}x",
                     f"{n / full:,.0f}" if full == full else "-"])
    print(f"\n## Canonical hashing throughput (v{CANONICAL_VERSION}; 1 core, CPU seconds, best of {args.reps}; "
          "target >= 200K nodes/s)\n")
    header = ["graph", "FX nodes", "baseline nodes/s (code text sha256)", "graph+structure hash nodes/s",
              "speed vs baseline", "canonicalize (incl. node list) nodes/s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    small = [r for r in results if r["nodes"] <= 3_000]
    largest = max(results, key=lambda r: r["nodes"])
    metrics = {
        "canonical_version": CANONICAL_VERSION,
        "nodes_per_s_small": round(sum(r["nodes"] for r in small) / sum(r["nodes"] / r["nodes_per_s"] for r in small)),
        "baseline_nodes_per_s_small": round(sum(r["nodes"] for r in small) / sum(r["nodes"] / r["baseline_nodes_per_s"] for r in small)),
        "nodes_per_s_largest": round(largest["nodes_per_s"]),
        "baseline_nodes_per_s_largest": round(largest["baseline_nodes_per_s"]),
        "largest_nodes": largest["nodes"],
        "graphs": [{k: (round(v) if isinstance(v, float) else v) for k, v in r.items()} for r in results],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, metrics)
    print(f"\nwrote {args.out}: nodes_per_s_small={metrics['nodes_per_s_small']:,} "
          f"nodes_per_s_largest={metrics['nodes_per_s_largest']:,} (largest_nodes={metrics['largest_nodes']:,})")
    return metrics


if __name__ == "__main__":
    main()
