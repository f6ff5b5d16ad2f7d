"""What the scorer's second reference (Dynamo-only) costs, and what the control scores.

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_reference.py [--tasks builtin]
[--max-subgraphs 6] [--out metrics/bench/score_reference.json]``.

The stage's own path (:func:`curate.score.evaluate.run_candidate`: static check, spawned children,
parent clock) with the ``score`` block's timing of ``params.yaml``, on a seeded sample of the task
set, for the candidates ``eager``, ``control`` (``backend:eager``: the Dynamo-only reference as
candidate, which compiles nothing), ``fusion_pass`` and ``inductor``. Each candidate runs with
``dynamo_reference: false`` (the old two-sided timing; for ``eager`` and passes that match
nothing: no timing at all) and ``true`` (Dynamo-only as a third side, eager-only rows timed
against it), alternating, after one untimed warm-up run of Inductor that fills a fresh Inductor
cache (so both measured runs compile warm). Figures (flat keys): wall seconds per candidate and
reference setting, their ratio, the total ratio, and for the control its vs-Dynamo geometric mean
and the share of rows whose vs-Dynamo interval holds 1 (known right value: 1), with the machine's
load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

CANDIDATES = {"eager": "eager", "control": "backend:eager", "fusion_pass": "pass:curate/score/candidates/fusion_pass.py",
              "inductor": "backend:inductor"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="builtin")
    ap.add_argument("--max-subgraphs", type=int, default=6)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--out", default=None, help="write the figures as flat JSON here")
    args = ap.parse_args()

    from curate.score.evaluate import run_candidate, vs_dynamo_metrics
    from curate.score.spec import parse_candidate
    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params

    p = load_params(args.params, "score")
    cache = tempfile.mkdtemp(prefix="bench_score_ref_cache_")
    base = {**p.get("timing", {}), **{k: p[k] for k in ("timeout_s", "mem_cap_gb", "threads", "clock_rel_tol", "clock_abs_ms",
                                                        "clock_rate_tol", "no_match") if k in p},
            "max_subgraphs": args.max_subgraphs, "sample_seed": 0, "inductor_cache": cache, "retime_above": 1e9}
    res: dict = {"tasks": args.tasks, "max_subgraphs": args.max_subgraphs, "cpu_count": os.cpu_count(),
                 "machine": platform.processor() or platform.machine(), "load_before": round(os.getloadavg()[0], 2),
                 "command": f"PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_reference.py --tasks {args.tasks} "
                            f"--max-subgraphs {args.max_subgraphs}"}
    run_candidate(parse_candidate("inductor=backend:inductor"), args.tasks, {**base, "dynamo_reference": False},
                  log=lambda *_: None)  # warm-up: fills the Inductor cache
    tot = {False: 0.0, True: 0.0}
    for name, spec in CANDIDATES.items():
        for on in (False, True):
            t0 = time.perf_counter()
            rows, _ = run_candidate(parse_candidate(f"{name}={spec}"), args.tasks, {**base, "dynamo_reference": on},
                                    log=lambda *_: None)
            wall = time.perf_counter() - t0
            tot[on] += wall
            res[f"wall_s_{'on' if on else 'off'}_{name}"] = round(wall, 2)
            if on:
                m = vs_dynamo_metrics(rows)
                res[f"geomean_speedup_vs_dynamo_{name}"] = m["geomean_speedup_vs_dynamo_ok"]
                res[f"vs_dynamo_ci_holds_1_share_{name}"] = m["vs_dynamo_ci_holds_1_share"]
                ok = [r for r in rows if r.get("status") == "ok" and r.get("speedup")]
                if ok:
                    import math

                    res[f"geomean_speedup_vs_eager_{name}"] = round(math.exp(sum(math.log(r["speedup"]) for r in ok) / len(ok)), 4)
        res[f"ratio_{name}"] = round(res[f"wall_s_on_{name}"] / res[f"wall_s_off_{name}"], 3)
        print(f"{name:12s} off {res[f'wall_s_off_{name}']:7.1f} s   on {res[f'wall_s_on_{name}']:7.1f} s   ratio {res[f'ratio_{name}']:.2f}",  # noqa: E501
              flush=True)
    res["wall_s_off_total"], res["wall_s_on_total"] = round(tot[False], 1), round(tot[True], 1)
    res["ratio_total"] = round(tot[True] / tot[False], 3)
    res["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(res, indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, res, indent=1)


if __name__ == "__main__":
    main()
