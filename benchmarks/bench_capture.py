"""Capture throughput of the extract stage: the previous path against the current one, in
one run (printed table with ratios against the baseline; nothing asserted).

    nice -n 10 python -m benchmarks.bench_capture [--models N] [--workers W] [--repeats R] \
        [--metrics metrics/bench/bench_capture.json]

Both paths capture the same evenly spaced subset of the default catalog (``--models``; all
109 with ``--models 0``) into fresh work folders with :func:`extract.runs.scheduler.capture_all`, the
parent's meta-device warm-up on in both:

- **baseline** (the path before this benchmark's changes): models in catalog order, each
  child imports the model code it runs (the stage's parent only reads the catalog file), every
  forked child inherits an unfrozen heap (its full garbage collections walk and
  copy-on-write the parent's ~0.9 M objects), the parent polls every 50 ms for a finished
  child.
- **current**: the parent imports the model code once (:func:`extract.runs.scheduler.preload_libraries`)
  and indexes shared sources for Dynamo (:func:`extract.runs.scheduler.warm_up`), longest-first order
  (:func:`extract.runs.scheduler.longest_first`; in a fresh folder the depth prior, in a re-run the
  recorded times), ``gc.freeze()`` before forking, and a
  pidfd wake-up the moment a child ends (:func:`passnet_common.worker.run_isolated`).

Each run is a fresh process (no run inherits another's imports). With ``--repeats R`` the
runs alternate (baseline, current, current, baseline, ...) so that a drift of the machine's
load hits both. Reported per path: architectures/min (models / wall
time of the run), median and p90 wall seconds per child, summed child CPU seconds (wait4's
rusage; less sensitive to other processes than wall time), failures; whether every model got
the same status and the same graph hashes in every run; the load average before and after
each run (the machine is shared: read the ratios, not the absolute numbers). Writes it all to
``--metrics`` (a JSON record, not a DVC metric).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PATHS = {
    "baseline": {"schedule": "catalog", "preload": False, "worker_options": {"freeze_gc": False, "wake_on_exit": False}},
    "current": {"schedule": "longest_first", "preload": True, "worker_options": {"freeze_gc": True, "wake_on_exit": True}},
}


def _subset(rows: list[dict], n: int) -> list[dict]:
    if not n or n >= len(rows):
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 1]) of a non-empty list."""
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def _run(rows, ex, path: str) -> dict:
    from extract.runs.attempts import attempt_key, work_dir
    from extract.runs.scheduler import capture_all

    opts = PATHS[path]
    with tempfile.TemporaryDirectory() as tmp:
        load_before = os.getloadavg()
        t = time.perf_counter()
        counts = capture_all(rows, ex["capture"], Path(tmp), workers=int(ex["workers"]), timeout_s=float(ex["timeout_s"]),
                             mem_cap_gb=ex["mem_cap_gb"], progress=False, warm=True, schedule=opts["schedule"],
                             worker_options=opts["worker_options"], preload=opts["preload"])
        wall = time.perf_counter() - t
        load_after = os.getloadavg()
        log = [json.loads(x) for x in (Path(tmp) / "timings.jsonl").read_text().splitlines()]
        results = {}
        for r in rows:
            res = work_dir(Path(tmp), attempt_key(r, ex["capture"])) / "result.json"
            if res.exists():
                d = json.loads(res.read_text())
                results[r["model_id"]] = {"status": d["status"], "hashes": [g["graph_hash"] for g in d["graphs"]]}
            else:
                results[r["model_id"]] = {"status": "missing", "hashes": []}
    per = [e["seconds"] for e in log]
    return {"path": path, "models": len(rows), "failed": counts["failed"], "wall_s": round(wall, 1),
            "architectures_per_min": round(60 * len(rows) / wall, 2),
            "median_s_per_model": round(statistics.median(per), 2), "p90_s_per_model": round(_pct(per, 0.9), 2),
            "child_cpu_s": round(sum(e.get("cpu_s", 0.0) for e in log), 1),
            "warm_up_s": counts.get("warm_up_s", 0.0), "preload_s": counts.get("preload_s", 0.0),
            "loadavg_1min_before": round(load_before[0], 2), "loadavg_1min_after": round(load_after[0], 2),
            "order": [e["model_id"] for e in log], "results": results}


def _summary(runs: list[dict]) -> dict:
    """Per path: sums over its runs (architectures/min over the total wall time) and the
    medians of the per-model figures pooled over runs."""
    wall = sum(r["wall_s"] for r in runs)
    models = sum(r["models"] for r in runs)
    return {"runs": len(runs), "models": runs[0]["models"], "failed": runs[0]["failed"], "wall_s": round(wall, 1),
            "architectures_per_min": round(60 * models / wall, 2),
            "median_s_per_model": round(statistics.median(r["median_s_per_model"] for r in runs), 2),
            "p90_s_per_model": round(statistics.median(r["p90_s_per_model"] for r in runs), 2),
            "child_cpu_s": round(sum(r["child_cpu_s"] for r in runs) / len(runs), 1),
            "loadavg_1min": [[r["loadavg_1min_before"], r["loadavg_1min_after"]] for r in runs]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=24, help="evenly spaced models of the default catalog (0: all)")
    ap.add_argument("--workers", type=int, default=None, help="default: extract.workers")
    ap.add_argument("--repeats", type=int, default=1, help="runs per path, alternating")
    ap.add_argument("--metrics", default=str(ROOT / "metrics" / "bench" / "bench_capture.json"))
    ap.add_argument("--one", choices=sorted(PATHS), help=argparse.SUPPRESS)  # internal: one run, JSON on stdout
    ap.add_argument("--catalog", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import warnings

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    import subprocess

    import pyarrow.parquet as pq

    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params

    params = load_params(ROOT / "params.yaml")
    ex = dict(params["extract"])
    if args.workers:
        ex["workers"] = args.workers
    if args.one:  # a fresh process per run: no run inherits another's imports
        rows = _subset(pq.read_table(args.catalog).to_pylist(), args.models)
        print("RESULT " + json.dumps(_run(rows, ex, args.one)), flush=True)
        return
    # Like the extract stage, this parent only reads the catalog file (built in a
    # subprocess): it never imports the model code itself unless a path preloads it.
    with tempfile.TemporaryDirectory() as tmp:
        import yaml

        p = dict(params, catalog=dict(params["catalog"], mode="default", local_dir=None, hub_dir=None, limit=None))
        (Path(tmp) / "params.yaml").write_text(yaml.safe_dump(p))
        subprocess.run([sys.executable, "-m", "extract", "catalog", "--params", str(Path(tmp) / "params.yaml"),
                        "--out", str(Path(tmp) / "models.parquet")], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        rows = _subset(pq.read_table(Path(tmp) / "models.parquet").to_pylist(), args.models)
        order = []
        for i in range(max(1, args.repeats)):
            order += ["baseline", "current"] if i % 2 == 0 else ["current", "baseline"]
        runs = {"baseline": [], "current": []}
        for path in order:
            out = subprocess.run([sys.executable, "-m", "benchmarks.bench_capture", "--one", path, "--catalog",
                                  str(Path(tmp) / "models.parquet"), "--models", str(args.models), "--workers",
                                  str(ex["workers"])], cwd=ROOT, capture_output=True, text=True, check=True).stdout
            r = json.loads(next(ln for ln in out.splitlines() if ln.startswith("RESULT "))[7:])
            runs[path].append(r)
            print(f"  {path}: {r['wall_s']} s, {r['architectures_per_min']} architectures/min, load "
                  f"{r['loadavg_1min_before']} -> {r['loadavg_1min_after']}", flush=True)
    all_runs = runs["baseline"] + runs["current"]
    ref = all_runs[0]["results"]
    differ = sorted(m for r in all_runs for m, v in r["results"].items() if v != ref[m])
    same = not differ
    base, cur = _summary(runs["baseline"]), _summary(runs["current"])
    ratio = cur["architectures_per_min"] / base["architectures_per_min"]
    cpu_ratio = cur["child_cpu_s"] / base["child_cpu_s"] if base["child_cpu_s"] else None
    print(f"\nCapture throughput, {len(rows)} models of the default catalog, {ex['workers']} workers, "
          f"{max(1, args.repeats)} run(s) per path, nice {os.nice(0)}, {os.cpu_count()} CPUs")
    header = ["path", "models", "failed", "wall s", "architectures/min (target >= 30)", "median s/model",
              "p90 s/model", "child CPU s", "throughput ratio", "CPU ratio"]
    print(" | ".join(header))
    for name, r, q, c in (("baseline (imports per child, catalog order, unfrozen heap, 50 ms polling)", base, 1.0, 1.0),
                          ("current (preload, longest first, gc.freeze, pidfd wake-up)", cur, ratio, cpu_ratio)):
        print(" | ".join(str(v) for v in (name, r["models"], r["failed"], r["wall_s"], r["architectures_per_min"],
                                          r["median_s_per_model"], r["p90_s_per_model"], r["child_cpu_s"], f"{q:.2f}",
                                          "n/a" if c is None else f"{c:.2f}")))
    print(f"same status and graph hashes for every model in every run: {same}" + ("" if same else f" (differ: {differ})"))
    print(f"load average (1 min) before/after each run: baseline {base['loadavg_1min']}, current {cur['loadavg_1min']}")
    atomic_write_json(Path(args.metrics), {
        "models": len(rows), "model_ids": [r["model_id"] for r in rows], "workers": int(ex["workers"]),
        "repeats": max(1, args.repeats), "cpus": os.cpu_count(), "nice": os.nice(0),
        "baseline": base, "current": cur,
        "throughput_ratio": round(ratio, 3), "child_cpu_ratio": None if cpu_ratio is None else round(cpu_ratio, 3),
        "graph_hashes_identical": same, "models_differing": differ,
        "note": "machine shared with other jobs while measured (see loadavg_1min); compare the ratios",
        "current_order_first_run": runs["current"][0]["order"],
    }, indent=1)


if __name__ == "__main__":
    main()
