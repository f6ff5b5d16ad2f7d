"""Curation benchmark: profile throughput cold and warm, label agreement quiet and under the
stated stress, and the projected cost of ``profile.all``, measured in one run.

    python -m benchmarks.bench_curate [--decompose data/decompose] [--params params.yaml]
        [--sample 150] [--agreement 40] [--work /tmp/bench_curate] [--out metrics/bench/bench_curate.json]

Runs the ``profile`` and ``curate`` commands (the stage code, unchanged) on ``--decompose``;
without one it builds the synthetic corpus of ``tests/curate_corpus.py`` (8 structure families
x 2 hidden sizes + the 2 captured fixtures; no capture needed). The Inductor cache starts
empty, so the compile phase and timing run 0 are the *cold* pass; timing runs 1 (quiet) and 2
(one hog pinned to the timing core, one to the others) re-meet a warm cache: the *warm* rate
and the two label agreements. Rates are variant-runs per core-hour (compile phase: one core per
worker; timing: one core). ``profile_all_hours_2_cores`` projects ``profile.all`` from
``--all-subgraphs`` (default: the committed decompose count, 2,271) x variants per subgraph at
the cold rate on 2 cores. Wall times come from a shared machine: the load averages are
recorded beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path


def control_run(work: Path, dec: Path, n: int) -> dict:
    """Profile ``n`` subgraphs with ``torch.compile(backend="eager")`` in Inductor's place (run 0
    only) and label them: the share of timed control rows whose speedup_compiler interval holds
    1 within ``min_effect``, and how many enter the long tail (right value: 0)."""
    if n <= 0:
        return {}
    import polars as pl
    import yaml

    from curate.__main__ import main as curate_main
    from curate.select.longtail import label_row

    params = yaml.safe_load((work / "params.yaml").read_text())
    params["curate"]["profile"].update(sample_size=n, runs=1, stress_run=False)
    (work / "params_control.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    curate_main(["profile", "--params", str(work / "params_control.yaml"), "--decompose", str(dec), "--out",
                 str(work / "profile_control"), "--cache", str(work / "inductor_cache"), "--candidate", "eager"])
    rows = [r for r in pl.read_parquet(work / "profile_control" / "profiles.parquet").to_dicts() if r.get("speedup_compiler")]
    holds = [r["speedup_compiler_ci_low"] <= 1 + r["min_effect"] and r["speedup_compiler_ci_high"] >= 1 - r["min_effect"]
             for r in rows]
    lt = [label_row(r, int(params["curate"]["curate"]["tolerance_t"]))["long_tail"] for r in rows]
    return {"control_rows": len(rows), "control_compiler_holds_1_share": round(sum(holds) / len(rows), 3) if rows else None,
            "control_long_tail": sum(1 for x in lt if x), "control_overhead_bound_share":
            round(sum(1 for r in rows if r["overhead_bound"]) / len(rows), 3) if rows else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--decompose", default=None)
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--agreement", type=int, default=40)
    ap.add_argument("--all-subgraphs", type=int, default=2271)
    ap.add_argument("--work", default="/tmp/bench_curate")
    ap.add_argument("--keep", action="store_true", help="reuse --work (resume) instead of starting cold")
    ap.add_argument("--summarize-only", action="store_true",
                    help="skip the profile / curate runs: summarise the finished ones in --work (wall_s is then null)")
    ap.add_argument("--out", default="metrics/bench/bench_curate.json")
    ap.add_argument("--control", type=int, default=10, help="subgraphs profiled with the no-op control (0: none)")
    args = ap.parse_args(argv)

    import yaml

    from curate.__main__ import main as curate_main
    from passnet_common.io import atomic_write_json

    work = Path(args.work)
    if work.exists() and not (args.keep or args.summarize_only):
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    corpus = "tests/curate_corpus.py (synthetic: 8 families x 2 sizes + 2 captured fixtures)"
    dec = Path(args.decompose) if args.decompose else None
    if dec is None and args.summarize_only:
        dec = work / "decompose"
    elif dec is None:
        from tests.curate_corpus import build_corpus

        dec = build_corpus(work)
    else:
        corpus = str(dec)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    rc, wall = 0, None
    if not args.summarize_only:
        params = yaml.safe_load(Path(args.params).read_text())
        params["curate"]["profile"].update(sample_size=args.sample, agreement_sample=args.agreement, runs=2, stress_run=True)
        (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        rc = curate_main(["profile", "--params", str(work / "params.yaml"), "--decompose", str(dec), "--out", str(work / "profile"),
                      "--cache", str(work / "inductor_cache")])
        rc = rc or curate_main(["curate", "--params", str(work / "params.yaml"), "--decompose", str(dec), "--profile",
                            str(work / "profile"), "--out", str(work / "curate"), "--metrics", str(work / "curate.json"),
                                "--plots", str(work / "plots")])
        wall = round(time.perf_counter() - t0, 1)
    if rc:
        return rc
    control = control_run(work, dec, args.control)
    m = json.loads((work / "curate.json").read_text())
    p = json.loads((work / "profile" / "profile.json").read_text())["cpu"]
    per_sub = p["variants"] / max(1, m["subgraphs_profiled"])
    cold = m["profile_rate_per_core_hour_cold"]
    result = {
        "corpus": corpus, "subgraphs": m["subgraphs_profiled"], "variants": p["variants"],
        "compile_phase_s": round(p["compile_seconds"], 1), "compile_workers": p["compile_workers"],
        "timing_s": {f"run{x['run']}{'_stress' if x['stress'] else ''}": round(x["seconds"], 1) for x in p["timing"]},
        "wall_s": wall, "load_avg_1min": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "rate_per_core_hour_cold": cold, "rate_per_core_hour_warm": m["profile_rate_per_core_hour_warm"],
        "warm_over_cold": round(m["profile_rate_per_core_hour_warm"] / cold, 2) if cold and m["profile_rate_per_core_hour_warm"] else None,
        "label_agreement": m["label_agreement"], "label_agreement_pinned": m["label_agreement_pinned"],
        "unstable_share": m["unstable_share"], "overhead_bound_share": m["overhead_bound_share"],
        "slowdown_share_e2e": m["slowdown_share_e2e"], "slowdown_share_compiler": m["slowdown_share_compiler"],
        "long_tail": m["long_tail"], "tasks": m["tasks"],
        "profile_all_hours_2_cores": round(args.all_subgraphs * per_sub / cold / 2, 1) if cold else None,
        "cpu_count": os.cpu_count(), "hardware": m["hardware"], **control,
    }
    atomic_write_json(args.out, result, indent=2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
