"""Where the canonical form's time goes: CPU time per FX node of each pass of ``canonicalize``, as
``form._core`` and ``stored.stored_nodes`` run them (node list and index, label pass with the stored
entries, input rows, side effects, the fused Merkle keys and order, texts and sha256, the stored node
list, freeing everything), on a 10K-node synthetic chain and the true-size Llama-3.3-70B /
Qwen3-Next-80B-A3B meta captures of ``benchmarks.bench_hash``. Before each timed form the other
graphs' hashes are computed (so the form starts with the caches holding something else, as in
``bench_hash`` and in a pipeline), and each figure is the median of ``--reps`` forms. ``--compare``
also times every pass with the compiled parts' prefetching switched off, alternated with it on.
Per graph it also counts the label cache's misses of one label pass and the CPU time they add (the
pass with the cache emptied less the same pass again, every key then a hit). A printed table, never
asserted; ``--out`` also writes it as a record (figures in microseconds of CPU time per FX node,
with the load average at start and end, the machine and the command).

    nice -n 10 taskset -c 0 python -m benchmarks.bench_hash_phases [--reps 9] [--compare] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from benchmarks.bench_hash import real_graphs, short_name, synthetic_chain

pt = time.process_time
PASSES = ("nodes and index", "labels", "input rows", "side effects", "Merkle keys and order", "texts", "node list",
          "free")


def phases(gm, kinds) -> list[float]:
    """CPU seconds of each pass of one ``canonicalize(gm, kinds, with_wl=False)`` (:data:`PASSES`)."""
    from passnet_common.canonical import form as F
    from passnet_common.canonical import order as O
    from passnet_common.canonical import stored as S
    from passnet_common.canonical.effects import ordering_deps

    with F._NoGC():
        t = [pt()]
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        t.append(pt())
        exact, struct, inputs, subs, store = F._labels(nodes, gm, kinds, False, index, want_store=True)
        t.append(pt())
        rows = O.input_rows(inputs)
        t.append(pt())
        extra, _ = ordering_deps(nodes, inputs, gm, index, rows)
        t.append(pt())
        ops = [m.op for m in nodes]
        ints = list(index.values())
        order = O.order_of_labels(O.label_ids(struct), exact, inputs, extra, ops, False, ints, rows)
        t.append(pt())
        pos, canon_inputs, _, _, text = F._texts(order, inputs, exact, struct, True, ints, rows)
        t.append(pt())
        out = S.stored_nodes(nodes, ops, order, pos, canon_inputs, subs, store, index, gm, kinds)
        t.append(pt())
        del nodes, index, exact, struct, inputs, subs, store, rows, extra, ops, ints, order, pos, canon_inputs, text, out
        t.append(pt())
    return [b - a for a, b in zip(t, t[1:])]


def label_misses(gm, kinds) -> tuple[int, float]:
    """``(misses, CPU seconds they add)`` of one label pass over ``gm`` as ``canonicalize`` runs it on a
    process's first graph: with the compiled pass, its misses (``_cform.last_misses``, the label cache
    emptied first) and the CPU time of that pass less the time of the same pass at once again (every
    key then a hit); with the Python definition every node is a miss and the whole pass counts."""
    from passnet_common.canonical import compiled
    from passnet_common.canonical import form as F

    nodes = list(gm.graph.nodes)
    index = {m: i for i, m in enumerate(nodes)}
    with F._NoGC():
        if compiled.cform is None:
            t0 = pt()
            F.labels_plain(nodes, gm, kinds, False, index, True)
            return len(nodes), pt() - t0
        compiled.cform.clear_label_cache()  # this graph's own misses (the cache outlives a pass)
        t0 = pt()
        compiled.cform.labels(nodes, gm, kinds, False, index, True, F._slow_label)
        t1 = pt()
        count = compiled.cform.last_misses()
        compiled.cform.labels(nodes, gm, kinds, False, index, True, F._slow_label)
        t2 = pt()
    return count, max((t1 - t0) - (t2 - t1), 0.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--compare", action="store_true", help="also with the prefetching off, alternated")
    ap.add_argument("--out", type=Path, default=None, help="also write the figures here (JSON)")
    args = ap.parse_args(argv)

    import torch

    from passnet_common.canonical import graph_hashes

    try:
        from passnet_common.canonical import _cform
    except ImportError:
        _cform = None
    torch.set_num_threads(1)
    cases = [("synthetic chain 10K", synthetic_chain(10_000), None)]
    cases += real_graphs(("llama70b", "qwen3next80b"), max_nodes=20_000)
    modes = [True, False] if args.compare and _cform is not None else [None]
    load_start = os.getloadavg()
    rec: dict = {"command": " ".join(["python -m benchmarks.bench_hash_phases", *(argv if argv is not None else sys.argv[1:])]),
                 "machine": platform.platform(), "reps": args.reps, "unit": "us of process CPU time per FX node",
                 "passes": list(PASSES), "graphs": {}}
    print("graph | FX nodes | prefetch | " + " | ".join(PASSES) + " | total (us per node)")
    for name, gm, kinds in cases:
        n = len(gm.graph.nodes)
        others = [(g, k) for nm, g, k in cases if nm != name]
        got: dict = {m: [] for m in modes}
        for _ in range(args.reps):
            for mode in modes:
                if mode is not None:
                    _cform.prefetch_enabled(mode)
                for g, k in others:
                    graph_hashes(g, k)
                got[mode].append(phases(gm, kinds))
        if _cform is not None:
            _cform.prefetch_enabled(True)
        for mode in modes:
            med = [statistics.median(col) / n * 1e6 for col in zip(*got[mode])]
            label = "as built" if mode is None else ("on" if mode else "off")
            print(f"{name} | {n} | {label} | " + " | ".join(f"{v:.2f}" for v in med) + f" | {sum(med):.2f}",
                  flush=True)
            rec["graphs"].setdefault(name, {"nodes": n})[label] = dict(
                zip(PASSES, (round(v, 3) for v in med)), total=round(sum(med), 3))
        miss = [label_misses(gm, kinds) for _ in range(3)]
        count, secs = miss[0][0], statistics.median(m[1] for m in miss)
        rec["graphs"][name].update({"label_misses": count, "label_miss_us_per_node": round(secs / n * 1e6, 3),
                                    "us_per_miss": round(secs / max(count, 1) * 1e6, 1)})
        print(f"{name}: {count} label cache misses, {secs / n * 1e6:.2f} us per node in them", flush=True)
        g, key = rec["graphs"][name], short_name(name)  # top-level figures per graph, for the docs' tables
        built = g["as built" if "as built" in g else "on"]
        rec.update({f"{key}_total_us": built["total"], f"{key}_labels_us": built["labels"],
                    f"{key}_label_misses_us": g["label_miss_us_per_node"], f"{key}_label_misses": count,
                    f"{key}_side_effects_us": built["side effects"],
                    f"{key}_node_list_and_free_us": round(built["node list"] + built["free"], 3)})
    rec["loadavg_start"], rec["loadavg_end"] = list(load_start), list(os.getloadavg())
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
