"""The canonical form against the form of another git revision on the real graphs, the two
alternated in one process: per graph ``--rounds`` rounds of (current, reference), each one
``canonicalize`` (full form, no WL bucket) in process CPU seconds; the medians of both and their
ratio. Alternating puts both under the same host conditions, so the ratio holds on a loaded
machine where absolute figures do not (``benchmarks/bench_hash.py`` times each form best of 3,
one after the other).

    python -m benchmarks.bench_hash_ab --reference REV [--rounds 5] [--out metrics/bench/bench_hash_v4_ab.json]

Graphs: :func:`benchmarks.bench_hash.real_graphs` up to 12K nodes (Llama-3.3-70B cut to 14 layers,
the true-size Llama-3.3-70B and Qwen3-Next-80B-A3B, captured by Dynamo on the meta device). The
record holds the machine, the load average at start and end and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "bench_hash_v4_ab.json"))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    from benchmarks.bench_hash import cpu_time, real_graphs, reference_canonical
    from passnet_common.canonical import CANONICAL_VERSION, canonicalize

    torch.set_num_threads(1)
    ref = reference_canonical(a.reference)
    load_start = os.getloadavg()
    rec: dict = {"command": " ".join(["python -m benchmarks.bench_hash_ab", *(argv if argv is not None else sys.argv[1:])]),
                 "machine": platform.platform(), "canonical_version": CANONICAL_VERSION, "reference_revision": a.reference,
                 "rounds": a.rounds, "graphs": {}}
    for name, gm, kinds in real_graphs(("llama70b", "qwen3next80b"), max_nodes=12_000):
        n = len(gm.graph.nodes)
        cur, old = [], []
        for _ in range(a.rounds):
            cur.append(n / cpu_time(lambda: canonicalize(gm, kinds, with_wl=False), 1))
            old.append(n / cpu_time(lambda: ref.canonicalize(gm, kinds, with_wl=False), 1))
        c, o = statistics.median(cur), statistics.median(old)
        rec["graphs"][name] = {"nodes": n, "canonicalize_nodes_per_s": round(c), "reference_nodes_per_s": round(o),
                               "ratio": round(c / o, 2), "per_round": [round(x) for x in cur],
                               "reference_per_round": [round(x) for x in old]}
        print(f"{name}: {n} nodes, {c:,.0f} vs {o:,.0f} nodes/s ({c / o:.2f}x)", flush=True)
    ratios = [g["ratio"] for g in rec["graphs"].values()]
    rec["ratio_min"], rec["ratio_max"] = (min(ratios), max(ratios)) if ratios else (None, None)
    rec["loadavg_start"], rec["loadavg_end"] = list(load_start), list(os.getloadavg())
    if a.out:
        Path(a.out).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return rec


if __name__ == "__main__":
    main()
