"""Canonical hashing in a process whose heap is frozen (``gc.freeze``), as in the pipeline's forked
workers (:func:`passnet_common.worker.run_isolated` freezes its parent's heap before forking): FX nodes
per CPU second of ``canonicalize`` on the 14-layer Llama-3.3-70B cut of ``benchmarks.bench_hash``, with
the heap (a) not frozen, (b) frozen through :mod:`passnet_common.gcfreeze` (the pipeline's freezers),
(c) frozen by plain ``gc.freeze()`` (other code: the permanent generation is walked to find it).
``--reference REV`` also times git revision ``REV``'s form in the same rounds, alternated
(:func:`benchmarks.bench_hash.reference_canonical`). Median of ``--reps`` calls per state and form (the
label cache warm: the freeze check is what differs); a printed table and a record, never asserted.

    nice -n 10 python -m benchmarks.bench_hash_frozen [--reps 21] [--reference REV]
        [--out metrics/bench/bench_hash_frozen.json]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_hash import LLAMA_70B, _capture, _commit_of, once, reference_canonical  # noqa: E402

STATES = ("not frozen", "frozen by gcfreeze", "frozen by gc.freeze")


def _enter(state: str) -> None:
    from passnet_common import gcfreeze

    if state == "frozen by gcfreeze":
        gcfreeze.freeze()
    elif state == "frozen by gc.freeze":
        gc.collect()
        gc.freeze()


def _leave(state: str) -> None:
    from passnet_common import gcfreeze

    if state == "frozen by gcfreeze":
        gcfreeze.unfreeze()
    elif state == "frozen by gc.freeze":
        gc.unfreeze()


def main(argv=None) -> dict:
    from passnet_common.canonical import canonicalize, compiled
    from passnet_common.io import atomic_write_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--reference", default="", help="git revision timed in the same rounds, alternated")
    ap.add_argument("--out", type=Path, default=ROOT / "metrics" / "bench" / "bench_hash_frozen.json")
    args = ap.parse_args(argv)
    got = _capture("llama70b-14-layers", dict(LLAMA_70B, num_hidden_layers=14), 16)
    if got is None:
        raise SystemExit("the 14-layer Llama cut could not be captured")
    gm, kinds = got
    n = len(gm.graph.nodes)
    forms = [("current", canonicalize)]
    if args.reference:
        forms.append(("reference", reference_canonical(args.reference).canonicalize))
    for _, canon in forms:  # the label caches warm
        canon(gm, kinds, with_wl=False)
    load_start = os.getloadavg()
    rates: dict = {}
    for state in STATES:
        _enter(state)
        try:
            frozen = gc.get_freeze_count()
            secs: dict = {name: [] for name, _ in forms}
            for rep in range(args.reps):
                for name, canon in (forms[::-1] if rep % 2 else forms):
                    secs[name].append(once(lambda canon=canon: canon(gm, kinds, with_wl=False)))
        finally:
            _leave(state)
        rates[state] = {"frozen_objects": frozen, **{name: round(n / statistics.median(s)) for name, s in secs.items()}}
        print(f"{state}: " + ", ".join(f"{k} {v:,}" for k, v in rates[state].items()), flush=True)
    rec = {"graph": "Llama-3.3-70B, 14 of 80 layers (Dynamo, meta)", "nodes": n, "reps": args.reps, "states": rates,
           "compiled": compiled.status, "loadavg_start": list(load_start), "loadavg_end": list(os.getloadavg()),
           "machine": platform.platform(), "cpus": os.cpu_count(),
           "command": " ".join(["python -m benchmarks.bench_hash_frozen", *(argv if argv is not None else sys.argv[1:])]),
           "timing": "process CPU seconds of one canonicalize call (label cache warm), median over reps; forms alternated"}
    for state in STATES:
        rec[f"{state.replace(' ', '_').replace('.', '_')}_nodes_per_s"] = rates[state]["current"]
        if args.reference:
            rec[f"{state.replace(' ', '_').replace('.', '_')}_vs_reference"] = round(
                rates[state]["current"] / rates[state]["reference"], 2)
    if args.reference:
        rec["reference_revision"], rec["reference_commit"] = args.reference, _commit_of(args.reference)
    print()
    print("| heap | frozen objects | current nodes/s" + (f" | {args.reference} nodes/s | ratio |" if args.reference else " |"))
    print("|---|---|---|" + ("---|---|" if args.reference else ""))
    for state in STATES:
        r = rates[state]
        print(f"| {state} | {r['frozen_objects']:,} | {r['current']:,}"
              + (f" | {r['reference']:,} | {r['current'] / r['reference']:.2f}x |" if args.reference else " |"))
    atomic_write_json(args.out, rec)
    print(f"\nwrote {args.out}")
    return rec


if __name__ == "__main__":
    main()
