"""The screen against the full protocol, and label agreement under a hog pinned to the timing core,
measured in one profile run of the stage code.

    python -m benchmarks.screen_audit [--decompose data/decompose] [--params params.yaml] [--sample 6]
        [--agreement 6] [--audit-share 0.5] [--work /tmp/screen_audit] [--out metrics/bench/screen_audit.json]

Runs ``python -m curate profile`` and ``curate`` (unchanged stage code) on ``--decompose``, or on
the synthetic corpus of ``tests/curate_corpus.py`` without one, with the params file's profile
block except: ``sample_size`` / ``agreement_sample`` / ``audit_share`` from the arguments, runs 0, 1
and 2. Run 0 screens every variant and times the screen's candidates plus a seeded audit sample of
the rest with the full protocol (:mod:`curate.profile.run`); runs 1 (quiet) and 2 (one hog pinned to
the timing core, one to the others) time the agreement subset with the full protocol.

Writes ``screened_per_core_hour`` (run 0's screen on the timing core, wall time) beside
``protocol_per_core_hour`` (run 0's full protocol, same run, same core), the same two rates from the
timing children's CPU seconds (``*_per_cpu_hour``: what a variant costs a core whatever the load), ``screen_miss_rate`` with its counts
(:func:`curate.select.longtail.screen_figures`), ``audit_sample``, ``label_agreement_pinned`` /
``labelled_both_share_pinned`` (runs 1 / 2), ``label_agreement`` (runs 0 / 1), the task figures,
the machine, the 1-minute load average at the start and end and the median over the timed rows,
and the command. The machine is shared: every rate is per core-hour of wall time on a core other
processes also used, so it understates a quiet machine's rate by about the load / cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--decompose", default=None)
    ap.add_argument("--sample", type=int, default=6)
    ap.add_argument("--agreement", type=int, default=6)
    ap.add_argument("--audit-share", type=float, default=0.5)
    ap.add_argument("--work", default="/tmp/screen_audit")
    ap.add_argument("--keep", action="store_true", help="reuse --work (resume) instead of starting cold")
    ap.add_argument("--out", default="metrics/bench/screen_audit.json")
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
    if args.decompose:
        dec, corpus = Path(args.decompose), args.decompose
    else:
        from tests.curate_corpus import build_corpus

        dec, corpus = build_corpus(work), "tests/curate_corpus.py (synthetic)"
    params = yaml.safe_load(Path(args.params).read_text())
    params["curate"]["profile"].update(sample_size=args.sample, agreement_sample=args.agreement, audit_share=args.audit_share,
                                       runs=2, stress_run=True, screen=True)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    load0, t0 = os.getloadavg(), time.perf_counter()
    rc = curate_main(["profile", "--params", str(work / "params.yaml"), "--decompose", str(dec), "--out", str(work / "profile"),
                      "--cache", str(work / "inductor_cache")])
    rc = rc or curate_main(["curate", "--params", str(work / "params.yaml"), "--decompose", str(dec), "--profile",
                            str(work / "profile"), "--out", str(work / "curate"), "--metrics", str(work / "curate.json"),
                            "--plots", str(work / "plots")])
    if rc:
        return rc
    wall, load1 = time.perf_counter() - t0, os.getloadavg()
    m = json.loads((work / "curate.json").read_text())
    p = json.loads((work / "profile" / "profile.json").read_text())["cpu"]
    rows = pl.read_parquet(work / "profile" / "profiles.parquet").to_dicts()
    loads = [r["load_avg_start"] for r in rows if r.get("load_avg_start") is not None]
    fp = host_fingerprint()
    keys = ("screened_per_core_hour", "protocol_per_core_hour", "screened_per_cpu_hour", "protocol_per_cpu_hour",
            "screen_miss_rate", "audit_sample", "audit_long_tail",
            "screen_candidates", "screen_non_candidates", "screen_long_tail_found", "label_agreement_pinned",
            "labelled_both_share_pinned", "label_agreement_pinned_decided", "label_agreement", "labelled_both_share",
            "tasks", "variants_per_task_median", "dtypes", "degenerate_filtered", "degenerate_by_reason",
            "no_cpu_kernel_by_dtype", "long_tail_variants", "clock_flag_share", "unstable_share",
            "overhead_bound_share", "overhead_explains_share", "profile_rate_per_core_hour_cold")
    result = {
        "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.screen_audit", *(argv if argv is not None else sys.argv[1:])]),
        "corpus": corpus, "subgraphs": m["subgraphs_profiled"], "variants": p["variants"],
        **{k: m.get(k) for k in keys},
        "agreement_variants_pinned": m.get("agreement_variants_pinned"),
        "screen_stats": p.get("screen"), "timing_runs": p.get("timing"), "compile_seconds": round(p["compile_seconds"], 1),
        "wall_s": round(wall, 1),
        "machine": {"cpu_model": fp["cpu_model"], "logical_cores": fp["cpu_logical_cores"], "usable_cores": fp["cpu_usable_cores"],
                    "torch": fp["torch_version"]},
        "load_avg_1min": {"start": round(load0[0], 2), "end": round(load1[0], 2),
                          "rows_median": round(statistics.median(loads), 2) if loads else None},
    }
    atomic_write_json(args.out, result, indent=2)
    print(json.dumps({k: result[k] for k in ("screened_per_core_hour", "protocol_per_core_hour", "screen_miss_rate",
                                             "label_agreement_pinned", "labelled_both_share_pinned", "load_avg_1min")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
