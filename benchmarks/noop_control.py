"""The no-op control on real subgraphs: quiet, and under a hog pinned to the timing core, labelled by
the compiler-interval rule alone.

    python -m benchmarks.noop_control [--decompose data/decompose] [--params params.yaml] [--sample 8]
        [--seed <profile.sample_seed>] [--work /tmp/noop_control] [--out metrics/bench/noop_control.json]

Runs ``python -m curate profile --candidate eager`` (the stage code, unchanged: Dynamo-only,
``torch.compile(backend="eager")``, in Inductor's place, so the "compiled" side compiles nothing) on
a seeded stratified sample of ``--sample`` subgraphs of ``--decompose`` (the stage's
``select_sample``, seed ``--seed``), every shape x dtype variant the stage builds of each. The
params file's profile block is kept (protocol, clock, screen, re-measurement) except ``sample_size``,
``agreement_sample`` (= ``--sample``: every subgraph is in the stressed run), ``runs: 1`` and
``stress_run: true``: run 0 is quiet, run 2 times every variant again with the stage's stress (one
CPU-bound hog pinned to the timing core, one to the other cores: ``curate.profile.run.stress``).

Labels come from :func:`control_figures` per run: ``control_rows`` (rows of the run),
``timed`` (rows with timings), ``labelled`` (stable), ``compiler_holds_1`` (timed rows whose
``speedup_compiler`` interval contains 1), ``compiler_slower`` (interval below ``1 - min_effect``)
and ``long_tail`` (stable, correct and ``compiler_slower``) counted with every row's
``overhead_bound`` set to False, i.e. what the compiler-interval rule alone decides
(right value 0); ``long_tail_stage_rule`` is the same count from the rows as they are, which must
equal it (the stage's rule never lets ``overhead_bound`` exclude a row). ``overhead_bound`` counts the
rows whose Dynamo-only side loses to eager with confidence (the exclusion an older rule relied on).
``long_tail_variants`` are the variants whose run-0 row is long tail (the stage's rule: runs >= 1 do not vote).

Writes ``metrics/bench/noop_control.json`` with the machine, the 1-minute load average at the start
and end and the median over the timed rows, per run the load median, the clock-flag count and the
median wall / CPU gap (the hog's preemption shows there, not in the CPU clock), and the command.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from curate.select.longtail import TIMED, label_row, long_tail_variants


def holds_one(row: dict) -> bool:
    """The row's ``speedup_compiler`` interval contains 1 (``ci_low <= 1 <= ci_high``)."""
    lo, hi = row.get("speedup_compiler_ci_low"), row.get("speedup_compiler_ci_high")
    return lo is not None and hi is not None and float(lo) <= 1.0 <= float(hi)


def control_figures(rows: list[dict], t: int, build_spread: float = 0.0) -> dict[str, Any]:
    """Figures of the no-op control over ``profiles`` rows (any runs) at tolerance level ``t``, every
    upper end widened by ``build_spread`` as the curate stage does (``curate.curate.build_spread``).

    Per run (``by_run[str(run)]``) and in total: ``control_rows``, ``timed`` (status in
    :data:`curate.select.longtail.TIMED` with a ``speedup_compiler``), ``labelled`` (timed and not
    ``unstable``), ``compiler_holds_1`` (:func:`holds_one`, over timed rows), ``compiler_slower``
    (timed rows whose widened compiler interval's upper end lies below ``1 - min_effect``), ``long_tail``
    (rows labelled long tail by :func:`curate.select.longtail.label_row`, rule ``compiler``, with
    ``overhead_bound`` forced to False), ``long_tail_stage_rule`` (the same on the rows as they
    are), ``overhead_bound`` (timed rows with it True), ``clock_flag``. ``long_tail_variants``:
    variants whose run-0 row is long tail (:func:`curate.select.longtail.long_tail_variants`; overhead_bound forced False), as
    ``subgraph_hash:size:dtype``. Right values for a backend that compiles nothing:
    ``long_tail`` = ``long_tail_stage_rule`` = 0, ``long_tail_variants`` empty.
    """
    out: dict[str, Any] = {"by_run": {}}
    labelled_all = []
    for run in sorted({int(r["run"]) for r in rows}) + [None]:
        rs = [r for r in rows if run is None or int(r["run"]) == run]
        timed = [r for r in rs if r.get("status") in TIMED and r.get("speedup_compiler") is not None]
        alone = [{**r, **label_row({**r, "overhead_bound": False}, t, "compiler", build_spread)} for r in timed]
        stage = [label_row(r, t, "compiler", build_spread) for r in timed]
        if run is not None:
            labelled_all += alone
        fig = {"control_rows": len(rs), "timed": len(timed), "labelled": sum(1 for r in alone if r["long_tail"] is not None),
               "compiler_holds_1": sum(1 for r in timed if holds_one(r)),
               "compiler_slower": sum(1 for r in alone if r["slower_compiler"]),
               "long_tail": sum(1 for r in alone if r["long_tail"]),
               "long_tail_stage_rule": sum(1 for r in stage if r["long_tail"]),
               "overhead_bound": sum(1 for r in timed if r.get("overhead_bound")),
               "clock_flag": sum(1 for r in timed if r.get("clock_flag"))}
        if run is None:
            out.update(fig)
        else:
            out["by_run"][str(run)] = {"stress": bool(rs[0].get("stress")) if rs else None, **fig}
    out["long_tail_variants"] = sorted(":".join(k) for k in long_tail_variants(labelled_all))
    return out


def _slowest(rows: list[dict], n: int = 3) -> list[dict]:
    """The ``n`` timed rows with the lowest ``speedup_compiler`` upper end (the closest calls)."""
    timed = [r for r in rows if r.get("status") in TIMED and r.get("speedup_compiler_ci_high") is not None]
    timed.sort(key=lambda r: r["speedup_compiler_ci_high"])
    return [{"variant": f"{r['subgraph_hash'][:12]}:{r['size']}:{r['dtype']}", "run": r["run"], "status": r["status"],
             "speedup_compiler": [round(r[c], 3) for c in ("speedup_compiler", "speedup_compiler_ci_low", "speedup_compiler_ci_high")],
             "overhead_bound": r.get("overhead_bound"), "clock_gap": r.get("clock_gap")} for r in timed[:n]]


def _run_summary(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for run in sorted({int(r["run"]) for r in rows}):
        rs = [r for r in rows if int(r["run"]) == run and r.get("clock_gap") is not None]
        loads = [r["load_avg_start"] for r in rs if r.get("load_avg_start") is not None]
        out[str(run)] = {"load_avg_median": round(statistics.median(loads), 2) if loads else None,
                         "clock_gap_median": round(statistics.median(r["clock_gap"] for r in rs), 3) if rs else None,
                         "eager_wall_over_cpu_median": round(statistics.median(
                             r["eager_wall_median_ms"] / r["eager_median_ms"] for r in rs
                             if r.get("eager_wall_median_ms") and r.get("eager_median_ms")), 3) if rs else None,
                         "closest_to_slower": _slowest([r for r in rows if int(r["run"]) == run])}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--decompose", default="data/decompose")
    ap.add_argument("--sample", type=int, default=8, help="subgraphs (every shape x dtype variant of each)")
    ap.add_argument("--seed", type=int, default=None, help="sample seed (default: curate.profile.sample_seed)")
    ap.add_argument("--work", default="/tmp/noop_control")
    ap.add_argument("--keep", action="store_true", help="reuse --work (resume) instead of starting afresh")
    ap.add_argument("--out", default="metrics/bench/noop_control.json")
    args = ap.parse_args(argv)

    import polars as pl
    import yaml

    from curate.__main__ import main as curate_main
    from passnet_common.io import atomic_write_json
    from passnet_common.machine import host_fingerprint

    work = Path(args.work)
    if work.exists() and not args.keep:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    dec = Path(args.decompose)
    params = yaml.safe_load(Path(args.params).read_text())
    prof = params["curate"]["profile"]
    prof.update(sample_size=args.sample, agreement_sample=args.sample, runs=1, stress_run=True)
    if args.seed is not None:
        prof["sample_seed"] = args.seed
    t = int(params["curate"]["curate"]["tolerance_t"])
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    load0, t0 = os.getloadavg(), time.perf_counter()
    rc = curate_main(["profile", "--params", str(work / "params.yaml"), "--decompose", str(dec), "--out", str(work / "profile"),
                      "--cache", str(work / "inductor_cache"), "--candidate", "eager"])
    if rc:
        return rc
    wall, load1 = time.perf_counter() - t0, os.getloadavg()
    rows = [r for r in pl.read_parquet(work / "profile" / "profiles.parquet").to_dicts() if r["device"] == "cpu"]
    loads = [r["load_avg_start"] for r in rows if r.get("load_avg_start") is not None]
    fp = host_fingerprint()
    figs = control_figures(rows, t, float(params["curate"]["curate"].get("build_spread", 0.0)))
    result = {
        "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.noop_control",
                             *(argv if argv is not None else sys.argv[1:])]),
        "candidate": "eager (torch.compile(backend='eager') in Inductor's place: the no-op control)",
        "corpus": str(dec),
        "corpus_subgraphs_sha256": hashlib.sha256((dec / "subgraphs.parquet").read_bytes()).hexdigest()[:16],
        "sample_seed": prof["sample_seed"], "subgraphs": len({r["subgraph_hash"] for r in rows}),
        "variants": len({(r["subgraph_hash"], r["size"], r["dtype"]) for r in rows}),
        "patterns": None,
        "tolerance_t": t, "rule": "compiler (overhead_bound forced False)",
        "stress": "run 2: curate.profile.variant.stress_plan (one hog pinned to the timing core, one to the others)",
        **figs,
        "runs": _run_summary(rows),
        "status_counts": {str(run): dict(sorted({s: sum(1 for r in rows if int(r["run"]) == run and r["status"] == s)
                                                 for s in {r["status"] for r in rows}}.items()))
                          for run in sorted({int(r["run"]) for r in rows})},
        "wall_s": round(wall, 1),
        "machine": {"cpu_model": fp["cpu_model"], "logical_cores": fp["cpu_logical_cores"], "usable_cores": fp["cpu_usable_cores"],
                    "torch": fp["torch_version"]},
        "load_avg_1min": {"start": round(load0[0], 2), "end": round(load1[0], 2),
                          "rows_median": round(statistics.median(loads), 2) if loads else None},
    }
    subs = {r["subgraph_hash"]: r.get("pattern") for r in pl.read_parquet(dec / "subgraphs.parquet").to_dicts()}
    result["patterns"] = sorted({subs.get(r["subgraph_hash"]) or "" for r in rows})
    atomic_write_json(args.out, result, indent=2)
    print(json.dumps({k: result[k] for k in ("control_rows", "timed", "compiler_holds_1", "compiler_slower", "long_tail",
                                             "long_tail_stage_rule", "overhead_bound", "load_avg_1min")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
