"""Benchmarks of the graph dataset (printed tables, never asserted).

    python -m benchmarks.bench_graphs [--throughput-limit N] [--skip-throughput]

1. capture cost vs model size: one Llama-family config at ~1B and ~70B parameters, each
   captured on the meta device in an isolated child; seconds per 1,000 FX nodes and the
   child's peak RSS next to the weight bytes a real build would need (target: s/kNode
   within 1.5x, no weight memory).
2. canonical hashing throughput (FX nodes/s on one core) against the GraphNet-style
   baseline (generate the graph's Python code, sha256 it) measured on the same graphs.
3. dedupe of 100K graph rows (Polars group-by) against a plain-Python dict grouping.
4. capture throughput on the default catalog (architectures/min with the configured
   workers), unless skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LLAMA_1B = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "intermediate_size": 8192,
            "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
            "max_position_embeddings": 8192, "tie_word_embeddings": True}
LLAMA_70B = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 8192, "intermediate_size": 28672,
             "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256,
             "max_position_embeddings": 8192}


def _table(title, header, rows):
    print(f"\n## {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


def bench_size() -> None:
    from extract.runs.scheduler import capture_task
    from extract.sources.rows import row_from_hf_config
    from passnet_common.worker import run_isolated

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        res = {}
        for name, cfg in (("llama-1B", LLAMA_1B), ("llama-70B", LLAMA_70B)):
            row = row_from_hf_config(cfg, f"local:{name}", name, "local")
            out = Path(tmp) / name
            o = run_isolated([(name, (row, {"seq_len": 32}), out)], capture_task, workers=1, timeout_s=1200, mem_cap_bytes=None)[0]
            if not o.ok:
                print(f"{name}: failed {o.error_class} {o.error_message[:300]}")
                continue
            result = json.loads((out / "result.json").read_text())
            nodes = sum(g["num_nodes"] for g in result["graphs"])
            res[name] = (o.seconds, nodes, o.peak_rss_bytes, result["param_count"], result["mode"])
        for name, (sec, nodes, rss, params, mode) in res.items():
            rows.append([name, mode, f"{params / 1e9:.2f}B", f"{params * 4 / 2**30:.1f}", nodes, f"{sec:.1f}",
                         f"{1000 * sec / nodes:.2f}", f"{rss / 2**30:.2f}"])
        if len(res) == 2:
            a, b = res["llama-1B"], res["llama-70B"]
            ratio = (b[0] / b[1]) / (a[0] / a[1])
            rows.append(["ratio 70B/1B (s per kNode)", "", "", "", "", "", f"{ratio:.2f}x (target <= 1.5x)", ""])
    _table("Capture cost vs size (meta device, one isolated child each, incl. fork + canonical hashing)",
           ["config", "mode", "params", "fp32 weights GiB", "FX nodes", "seconds", "s / 1k nodes", "peak RSS GiB"], rows)


def bench_hash() -> None:
    import torch

    from extract.capture import capture_row
    from extract.sources.rows import row_from_hf_config
    from passnet_common.canonical import canonicalize

    torch.set_num_threads(1)
    graphs = []
    for cfg in (LLAMA_1B, dict(LLAMA_1B, model_type="qwen2", architectures=["Qwen2ForCausalLM"])):
        res = capture_row(row_from_hf_config(cfg, "local:x", "x", "local"), {"seq_len": 32})
        graphs += [(g.gm, g.kinds) for g in res.graphs]
    n_nodes = sum(len(gm.graph.nodes) for gm, _ in graphs)

    def timeit(fn, reps=3):
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    # GraphNet hashes the generated model.py text: generate it (GraphModule.code is cached).
    base = timeit(lambda: [hashlib.sha256(gm.graph.python_code("self").src.encode()).hexdigest() for gm, _ in graphs])
    full = timeit(lambda: [canonicalize(gm, k) for gm, k in graphs])
    nowl = timeit(lambda: [canonicalize(gm, k, with_wl=False) for gm, k in graphs])
    rows = [
        ["GraphNet-style: generate model.py code + sha256 (baseline)", n_nodes, f"{base:.3f}", f"{n_nodes / base:,.0f}", "1.00"],
        ["canonical graph_hash + structure_hash", n_nodes, f"{nowl:.3f}", f"{n_nodes / nowl:,.0f}", f"{nowl / base:.2f}"],
        ["canonical + WL bucket (networkx)", n_nodes, f"{full:.3f}", f"{n_nodes / full:,.0f}", f"{full / base:.2f}"],
    ]
    _table("Canonical hashing throughput (1 core, best of 3; target >= 200K nodes/s)",
           ["method", "FX nodes", "seconds", "nodes/s", "time vs baseline"], rows)


def bench_dedupe(n: int = 100_000) -> None:
    import polars as pl

    from dedupe.group import unique_graphs

    rng = random.Random(0)
    pool = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(n // 5)]
    rows = {"model_id": [f"hf:org/m{i // 3}@abc" for i in range(n)], "graph_index": [i % 3 for i in range(n)]}
    rows["graph_hash"] = [rng.choice(pool) for _ in range(n)]
    rows["structure_hash"] = [h[:8] for h in rows["graph_hash"]]
    rows["wl_hash"] = [h[:6] for h in rows["graph_hash"]]
    rows["canonical_version"] = [1] * n
    rows["num_nodes"] = [100] * n
    df = pl.DataFrame(rows)
    t = time.perf_counter()
    u = unique_graphs(df)
    polars_s = time.perf_counter() - t
    t = time.perf_counter()
    groups: dict = {}
    for mid, gi, h in zip(rows["model_id"], rows["graph_index"], rows["graph_hash"]):
        groups.setdefault(h, []).append((mid, gi))
    py_s = time.perf_counter() - t
    assert u.height == len(groups)
    _table(f"Dedupe of {n:,} graph rows (target < 5 s)", ["method", "unique graphs", "seconds", "ratio"], [
        ["plain-Python dict grouping (baseline, no table output)", len(groups), f"{py_s:.3f}", "1.00"],
        ["dedupe.group.unique_graphs (Polars, full table)", u.height, f"{polars_s:.3f}", f"{polars_s / py_s:.2f}"],
    ])


def bench_throughput(limit: int | None) -> None:

    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog
    from passnet_common.params import load_params

    params = load_params(ROOT / "params.yaml")
    rows = build_catalog(dict(params["catalog"], mode="default", local_dir=None, limit=limit))
    ex = params["extract"]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        counts = capture_all(rows, ex["capture"], Path(tmp), workers=int(ex["workers"]), timeout_s=float(ex["timeout_s"]),
                             mem_cap_gb=ex["mem_cap_gb"], progress=False)
        wall = time.perf_counter() - t
        log = [json.loads(x) for x in (Path(tmp) / "timings.jsonl").read_text().splitlines()]
    per = sorted(e["seconds"] for e in log)
    _table(f"Capture throughput, default catalog ({len(rows)} models, {ex['workers']} workers)",
           ["models", "failed", "wall s", "architectures/min (target >= 30)", "median s/model", "p90 s/model"],
           [[len(rows), counts["failed"], f"{wall:.0f}", f"{60 * len(rows) / wall:.1f}", f"{per[len(per) // 2]:.1f}",
             f"{per[int(len(per) * 0.9)]:.1f}"]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--throughput-limit", type=int, default=None, help="models of the default catalog to time")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    import warnings

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    bench_dedupe()
    bench_hash()
    bench_size()
    if not args.skip_throughput:
        bench_throughput(args.throughput_limit)


if __name__ == "__main__":
    main()
