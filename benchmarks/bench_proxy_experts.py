"""Benchmark: what a routed-experts block costs on CPU as the expert count falls at fixed top-k.

One Qwen3-MoE sparse block (``Qwen3MoeSparseMoeBlock``, the base's shape from ``proxy.base``: hidden
128, experts of width 64, top-4) with E = 64, 32, 16, 8 experts (the base and its keep 0.5 / 0.25 /
0.125 proxies) takes a forward + backward on T tokens (default 16 x 32 = 512, the ``proxy_cost``
step's batch), with each of transformers' experts forwards: ``eager`` (the modeling code's loop, one
Python iteration per expert that got a token) and ``grouped_mm`` (one
``torch.nn.functional.grouped_mm`` call per projection). Forward FLOPs per token are the same for
every E except the router's 2 x H x E (printed). Configurations alternate within each round and the
figure is the median over rounds, so a shared machine's load drifts over all of them alike; ratios
are to E = 64 of the same forward. Writes ``metrics/bench/bench_proxy_experts.json`` with the
machine, the load average and the command. Nothing is asserted.

Usage::

    PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_proxy_experts.py [--rounds 30] [--tokens 512]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def block(E: int, impl: str, hidden: int, inter: int, top_k: int, seed: int = 0):
    import torch
    from transformers import Qwen3MoeConfig
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock

    cfg = Qwen3MoeConfig(hidden_size=hidden, moe_intermediate_size=inter, num_experts=E, num_experts_per_tok=top_k,
                         norm_topk_prob=True)
    cfg._experts_implementation = impl
    torch.manual_seed(seed)
    b = Qwen3MoeSparseMoeBlock(cfg)
    with torch.no_grad():
        for p in b.parameters():
            p.normal_(0.0, 0.05)
    return b


def main(argv: list[str] | None = None) -> int:
    import torch

    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params
    from proxy_artifacts.timing import machine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--experts", type=int, nargs="+", default=[64, 32, 16, 8])
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "bench_proxy_experts.json"))
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    bp = load_params(ROOT / "params.yaml", "proxy")["base"]
    H, inter, k = int(bp["hidden_size"]), int(bp["moe_intermediate_size"]), int(bp["top_k"])
    impls = ("eager", "grouped_mm")
    blocks = {(E, i): block(E, i, H, inter, k) for E in a.experts for i in impls}
    x = torch.randn(a.tokens // 32, 32, H, generator=torch.Generator().manual_seed(1))
    times: dict = {key: [] for key in blocks}
    hit = {}
    load0 = os.getloadavg()
    for rnd in range(a.rounds + 1):  # round 0: warm-up, not counted
        keys = list(blocks)
        keys = keys[rnd % len(keys):] + keys[: rnd % len(keys)]
        for key in keys:
            b = blocks[key]
            xi = x.clone().requires_grad_(True)
            t = time.perf_counter()
            out = b(xi)
            y = out[0] if isinstance(out, tuple) else out
            y.sum().backward()
            dt = (time.perf_counter() - t) * 1e3
            b.zero_grad(set_to_none=True)
            if rnd:
                times[key].append(dt)
            if key not in hit:
                with torch.no_grad():
                    logits = b.gate(x.reshape(-1, H))
                    idx = (logits[2] if isinstance(logits, tuple) else logits.topk(k, -1).indices)
                    hit[key] = int(idx.unique().numel())
    med = {f"E{E}/{i}": round(statistics.median(times[(E, i)]), 3) for E, i in blocks}
    res = {"command": "python benchmarks/bench_proxy_experts.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "machine": machine(), "load_average_start": [round(v, 2) for v in load0],
           "load_average_end": [round(v, 2) for v in os.getloadavg()], "torch_threads": 1,
           "shape": {"hidden": H, "moe_intermediate": inter, "top_k": k, "tokens": a.tokens}, "rounds": a.rounds,
           "ms_fwd_bwd_median": med,
           "ratio_to_E64": {f"E{E}/{i}": round(med[f"E{E}/{i}"] / med[f"E{a.experts[0]}/{i}"], 4)
                            for E, i in blocks},
           "experts_hit": {f"E{E}/{i}": hit[(E, i)] for E, i in blocks},
           "forward_flops_per_token": {f"E{E}": 2 * (3 * H * inter * k + H * E) for E in a.experts}}
    atomic_write_json(a.out, res, indent=1)
    for key in med:
        print(f"{key:16s} {med[key]:9.3f} ms  ratio {res['ratio_to_E64'][key]:.3f}  experts hit {res['experts_hit'][key]}")
    print(f"load {res['load_average_start']} -> {res['load_average_end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
