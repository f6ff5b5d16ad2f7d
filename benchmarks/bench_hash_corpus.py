"""Canonical hashing throughput over a corpus: every graph of a graph store hashed once, one after
another, in one process -- what dedupe pays -- in FX nodes per CPU second on one core.

``bench_hash`` times one graph per call (fresh: the label cache emptied first; cold: after one other
graph). A pipeline hashes many graphs per process, and the compiled label pass keeps its cache
across graphs (``_cform.labels``: a miss is labelled by the definition's rule, for a call by its compiled
copy), so the graphs after the first meet most of their op kinds already labelled. This benchmark measures that:
per round, the label cache is emptied, then every stored graph (rebuilt from its node list, as
dedupe re-hashes it) is canonicalized once, in the store's order (by graph hash: families mixed);
the figure is the corpus's nodes over the round's summed process CPU seconds. ``--reference REV``
times git revision ``REV``'s form in the same rounds (alternated, who goes first alternating by
round; :func:`benchmarks.bench_hash.reference_canonical`) and records the median per-round ratio
and whether every graph gets the same ``graph_hash``. A printed table and a record, never asserted.

    nice -n 10 python -m benchmarks.bench_hash_corpus --store <a build's data/graph_store> [STORE ...]
        [--sample N [--seed S]] [--rounds 5] [--reference REV] [--out metrics/bench/bench_hash_corpus.json]

``--store`` takes several stores or quoted glob patterns (the census's shard stores,
``'data/work/full/shards/*/graph_store'``) and
``--sample N`` a seeded draw of N distinct graphs from them; a graph that does not rebuild is printed and
left out (``graphs`` counts those timed).
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from benchmarks.bench_hash import _commit_of, label_cache_clear, reference_canonical, stored_graphs

ROOT = Path(__file__).resolve().parents[1]


def corpus_pass(cases: list, canon, clear) -> tuple[float, list[float]]:
    """Empty the label cache (``clear``), then ``canon`` every graph of ``cases`` once, in order.
    Returns the summed process CPU seconds and each graph's."""
    clear()
    each = []
    for _, gm, kinds in cases:
        t = time.process_time()
        canon(gm, kinds, with_wl=False)
        each.append(time.process_time() - t)
    return sum(each), each


def main(argv=None) -> dict:
    from passnet_common.canonical import CANONICAL_VERSION, canonicalize, compiled, graph_hashes
    from passnet_common.io import atomic_write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", nargs="+", default=[str(ROOT / "data" / "graph_store")],
                    help="one or more graph stores or glob patterns of them, quoted (a graph hash in several is read once)")
    ap.add_argument("--sample", type=int, default=0, help="draw this many graph hashes (seeded) instead of all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reference", default="", help="git revision timed in the same rounds, alternated")
    ap.add_argument("--out", type=Path, default=ROOT / "metrics" / "bench" / "bench_hash_corpus.json")
    args = ap.parse_args(argv)
    stores = [Path(p) for pat in args.store for p in (sorted(glob.glob(pat)) if "*" in pat else [pat])]
    cases = sorted(stored_graphs(stores, 10**9, args.sample, args.seed), key=lambda c: c[0])
    if not cases:
        raise SystemExit(f"no graph.json under {[str(p) for p in args.store]}: give a build's graph store (--store)")
    nodes = [len(gm.graph.nodes) for _, gm, _ in cases]
    ref = reference_canonical(args.reference) if args.reference else None
    sides = [("current", canonicalize, label_cache_clear(sys.modules["passnet_common.canonical"]))]
    if ref is not None:
        sides.append(("reference", ref.canonicalize, label_cache_clear(ref)))
    load_start = os.getloadavg()
    got: dict[str, list] = {s[0]: [] for s in sides}
    for rnd in range(args.rounds):
        for name, canon, clear in (sides[::-1] if rnd % 2 else sides):
            total, each = corpus_pass(cases, canon, clear)
            got[name].append((total, each))
            print(f"round {rnd + 1}/{args.rounds}: {name}: {sum(nodes) / total:,.0f} nodes/s over {len(cases)} graphs",
                  flush=True)
    load_end = os.getloadavg()
    rec: dict = {"canonical_version": CANONICAL_VERSION, "compiled": compiled.status, "graphs": len(cases),
                 "nodes": sum(nodes), "nodes_max": max(nodes), "nodes_median": int(statistics.median(nodes)),
                 "rounds": args.rounds, "sample": args.sample, "seed": args.seed,
                 "loadavg_start": list(load_start), "loadavg_end": list(load_end),
                 "machine": platform.platform(), "cpus": os.cpu_count(),
                 "command": " ".join(["python -m benchmarks.bench_hash_corpus", *(argv if argv is not None else sys.argv[1:])]),
                 "timing": "per round: label cache emptied, every stored graph canonicalized once in store order; "
                           "nodes over summed process CPU seconds; medians over rounds"}
    for name in got:
        rates = [sum(nodes) / t for t, _ in got[name]]
        rec[f"{name}_nodes_per_s"] = round(statistics.median(rates))
        rec[f"{name}_nodes_per_s_rounds"] = [round(r) for r in rates]
        # the corpus without its first graph: what a long pipeline's steady state is closer to
        rest = [sum(nodes[1:]) / (t - e[0]) for t, e in got[name]]
        rec[f"{name}_nodes_per_s_after_first"] = round(statistics.median(rest))
        slow = [sum(1 for n, s in zip(nodes, e) if n / max(s, 1e-9) < 200_000) for _, e in got[name]]
        rec[f"{name}_graphs_below_200k_median"] = int(statistics.median(slow))
    if ref is not None:
        rec["reference_revision"] = args.reference
        rec["reference_commit"] = _commit_of(args.reference)
        rec["current_vs_reference"] = round(statistics.median(
            o[0] / c[0] for c, o in zip(got["current"], got["reference"])), 3)
        rec["same_graph_hash_as_reference"] = all(graph_hashes(gm, k)[0] == ref.graph_hashes(gm, k)[0]
                                                  for _, gm, k in cases)
    print(f"\n## Corpus hashing throughput (v{CANONICAL_VERSION}; {len(cases)} stored graphs, {sum(nodes):,} FX nodes; "
          f"1 core, process CPU seconds, median of {args.rounds} rounds; load average {load_start[0]:.1f} -> "
          f"{load_end[0]:.1f})\n")
    print("| form | corpus nodes/s | after the first graph | graphs below 200K (median) |\n|---|---|---|---|")
    for name in got:
        print(f"| {name} | {rec[f'{name}_nodes_per_s']:,} | {rec[f'{name}_nodes_per_s_after_first']:,} | "
              f"{rec[f'{name}_graphs_below_200k_median']} |")
    if ref is not None:
        print(f"\ncurrent / reference (median of same-round ratios): {rec['current_vs_reference']:.2f}x; same graph_hash "
              f"on every graph: {rec['same_graph_hash_as_reference']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, rec)
    print(f"\nwrote {args.out}")
    return rec


if __name__ == "__main__":
    main()
