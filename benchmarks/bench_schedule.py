"""Makespan of the extract stage's capture schedule on a clean clone: the depth prior against the
committed prior (:mod:`extract.runs.priors`), replayed from one run's measured per-model seconds
(printed table with ratios against the baseline; nothing asserted).

    python -m benchmarks.bench_schedule [--timings data/work/extract/timings.jsonl] \
        [--catalog data/catalog/models.parquet] [--workers 2] [--metrics metrics/bench/bench_schedule.json]

Each model's wall seconds (latest entry of ``--timings``) are laid onto ``--workers`` workers in
the order :func:`extract.runs.scheduler.longest_first` gives it -- a worker takes the next model the
moment it is free, as the local executor does -- with (baseline) the depth prior only (a fresh work
folder before the committed prior) and (current) :func:`extract.runs.priors.schedule_history`
of an empty work folder. The replay ignores the parent's time before the first fork and after
the last child (the same in both) and assumes a model takes the same time wherever it runs
(on the run the default timings come from, the depth-prior replay gives 705.6 s against a measured
707.6 s from the first child's start to the last child's end). ``lower_bound_s``: sum / workers.
"""

from __future__ import annotations

import argparse
import heapq
import tempfile
from pathlib import Path


def makespan(order: list[str], seconds: dict[str, float], workers: int) -> float:
    """Finish time (s) of the last model when ``workers`` workers take ``order`` greedily."""
    free = [0.0] * workers
    for mid in order:
        heapq.heappush(free, heapq.heappop(free) + seconds[mid])
    return max(free)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timings", default="data/work/extract/timings.jsonl")
    ap.add_argument("--catalog", default="data/catalog/models.parquet")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--metrics", default="metrics/bench/bench_schedule.json")
    a = ap.parse_args(argv)
    import pyarrow.parquet as pq

    from extract.runs.priors import schedule_history, timing_history
    from extract.runs.scheduler import longest_first
    from passnet_common.io import atomic_write_json

    timings = Path(a.timings)
    if timings.name != "timings.jsonl" or not timings.exists():
        raise SystemExit(f"--timings: {timings} is not an existing timings.jsonl")
    seconds = timing_history(timings.parent)
    rows = [r for r in pq.read_table(a.catalog).to_pylist() if r["model_id"] in seconds]
    todo = [(r["model_id"], (r, {}), None) for r in rows]
    with tempfile.TemporaryDirectory() as empty:
        current = [t[0] for t in longest_first(todo, schedule_history(Path(empty)))]
    baseline = [t[0] for t in longest_first(todo, {})]
    total = sum(seconds[r["model_id"]] for r in rows)
    res = {"models": len(rows), "workers": a.workers, "sum_s": round(total, 1),
           "lower_bound_s": round(total / a.workers, 1),
           "baseline_makespan_s": round(makespan(baseline, seconds, a.workers), 1),
           "current_makespan_s": round(makespan(current, seconds, a.workers), 1)}
    res["saved_s"] = round(res["baseline_makespan_s"] - res["current_makespan_s"], 1)
    res["ratio"] = round(res["current_makespan_s"] / res["baseline_makespan_s"], 4)
    print(f"{'schedule':<28}{'makespan s':>12}{'ratio':>8}")
    print(f"{'baseline (depth prior)':<28}{res['baseline_makespan_s']:>12.1f}{1.0:>8.3f}")
    print(f"{'current (committed prior)':<28}{res['current_makespan_s']:>12.1f}{res['ratio']:>8.3f}")
    print(f"{'lower bound (sum/workers)':<28}{res['lower_bound_s']:>12.1f}")
    if a.metrics:
        atomic_write_json(a.metrics, {**res, "timings": str(a.timings)}, indent=1)
    return res


if __name__ == "__main__":
    main()
