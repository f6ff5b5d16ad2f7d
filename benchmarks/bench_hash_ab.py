"""The canonical form against the form of another git revision on the real graphs, the two
alternated in one process: per graph ``--rounds`` rounds of (current, reference), each round one
``canonicalize`` (full form, no WL bucket) and one ``graph_hashes`` (the hashes only, what dedupe
pays) of each, in process CPU seconds; the medians and their ratios. Alternating puts both under
the same host conditions, so the ratio holds on a loaded machine where absolute figures do not
(``benchmarks/bench_hash.py`` times each form best of 3, one after the other). Each graph's
``graph_hash`` is compared between the two (``same_graph_hash``).

    python -m benchmarks.bench_hash_ab --reference REV [--rounds 5] [--max-nodes 12000]
        [--out metrics/bench/bench_hash_v4_ab.json]

Graphs: :func:`benchmarks.bench_hash.real_graphs` up to ``--max-nodes`` nodes (Llama-3.3-70B cut
to 14 layers, the true-size Llama-3.3-70B and Qwen3-Next-80B-A3B, captured by Dynamo on the meta
device; with ``--max-nodes 100000`` also their disjoint copies to 100K nodes). The record holds
the machine, the load average at start and end and the command; ``loadavg_per_graph`` the load
average when each graph's rounds started.
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


def _short(name: str) -> str:
    """A graph's key in the record's top-level figures: ``llama70b_14_layers``, ``llama70b``,
    ``qwen3next80b``, ``copies_100k`` (the names of :func:`benchmarks.bench_hash.real_graphs`)."""
    if "disjoint copies" in name:
        return "copies_100k"
    if name.startswith("Qwen3-Next"):
        return "qwen3next80b"
    return "llama70b_14_layers" if "14 of 80" in name else "llama70b"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-nodes", type=int, default=12_000)
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "bench_hash_v4_ab.json"))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    from benchmarks.bench_hash import cpu_time, real_graphs, reference_canonical
    from passnet_common.canonical import CANONICAL_VERSION, canonicalize, graph_hashes

    torch.set_num_threads(1)
    ref = reference_canonical(a.reference)
    load_start = os.getloadavg()
    rec: dict = {"command": " ".join(["python -m benchmarks.bench_hash_ab", *(argv if argv is not None else sys.argv[1:])]),
                 "machine": platform.platform(), "canonical_version": CANONICAL_VERSION, "reference_revision": a.reference,
                 "rounds": a.rounds, "graphs": {}}
    for name, gm, kinds in real_graphs(("llama70b", "qwen3next80b"), max_nodes=a.max_nodes):
        n = len(gm.graph.nodes)
        load = list(os.getloadavg())
        cur, old, cur_h, old_h = [], [], [], []
        for _ in range(a.rounds):
            cur.append(n / cpu_time(lambda: canonicalize(gm, kinds, with_wl=False), 1))
            old.append(n / cpu_time(lambda: ref.canonicalize(gm, kinds, with_wl=False), 1))
            cur_h.append(n / cpu_time(lambda: graph_hashes(gm, kinds), 1))
            old_h.append(n / cpu_time(lambda: ref.graph_hashes(gm, kinds), 1))
        c, o = statistics.median(cur), statistics.median(old)
        ch, oh = statistics.median(cur_h), statistics.median(old_h)
        rec["graphs"][name] = {"nodes": n, "canonicalize_nodes_per_s": round(c), "reference_nodes_per_s": round(o),
                               "ratio": round(c / o, 2), "per_round": [round(x) for x in cur],
                               "reference_per_round": [round(x) for x in old],
                               "graph_hashes_nodes_per_s": round(ch), "reference_graph_hashes_nodes_per_s": round(oh),
                               "graph_hashes_ratio": round(ch / oh, 2),
                               "graph_hashes_per_round": [round(x) for x in cur_h],
                               "reference_graph_hashes_per_round": [round(x) for x in old_h],
                               "same_graph_hash": graph_hashes(gm, kinds)[0] == ref.graph_hashes(gm, kinds)[0],
                               "loadavg_start": load}
        print(f"{name}: {n} nodes, canonicalize {c:,.0f} vs {o:,.0f} nodes/s ({c / o:.2f}x), "
              f"graph_hashes {ch:,.0f} vs {oh:,.0f} ({ch / oh:.2f}x), load {load[0]:.1f}", flush=True)
    ratios = [g["ratio"] for g in rec["graphs"].values()]
    rec["ratio_min"], rec["ratio_max"] = (min(ratios), max(ratios)) if ratios else (None, None)
    h_ratios = [g["graph_hashes_ratio"] for g in rec["graphs"].values()]
    rec["graph_hashes_ratio_min"], rec["graph_hashes_ratio_max"] = (min(h_ratios), max(h_ratios)) if h_ratios \
        else (None, None)
    rates = [g["graph_hashes_nodes_per_s"] for g in rec["graphs"].values()]
    rec["graph_hashes_nodes_per_s_min"] = min(rates) if rates else None
    for name, g in rec["graphs"].items():  # top-level figures per graph, for the docs' tables
        short = _short(name)
        for k in ("graph_hashes_nodes_per_s", "graph_hashes_ratio", "canonicalize_nodes_per_s", "ratio"):
            rec[f"{short}_{'canonicalize_ratio' if k == 'ratio' else k}"] = g[k]
    rec["loadavg_start"], rec["loadavg_end"] = list(load_start), list(os.getloadavg())
    if a.out:
        Path(a.out).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return rec


if __name__ == "__main__":
    main()
