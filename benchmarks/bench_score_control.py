"""The no-op control against the Dynamo-only reference: the same computation timed as a candidate
and as the reference must give a ratio of about 1.

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_control.py [--old-rev REV]
[--rounds 2] [--max-subgraphs 3] [--out metrics/bench/score_control.json]``.

The stage's own path (``python -m curate score``, each run its own process) with the ``score``
block of ``params.yaml`` (its timing; ``tasks: builtin``, the seeded sample of ``max_subgraphs``
subgraphs, a scratch Inductor cache), one candidate: ``control = backend:eager``, which is
``torch.compile(backend="eager")`` of the graph, i.e. the Dynamo-only reference itself. Its known
right value against Dynamo-only is 1. With ``--old-rev`` the code of that revision (``git
archive`` into a scratch folder) runs too, old and new alternated round by round, so both see
the same load.

Figures per code (``old`` / ``new``): every row's ``speedup_vs_dynamo`` with its paired-bootstrap
interval (``speedup_vs_dynamo_ci_low/high``, :func:`curate.score.defenses.clock.median_ratio_ci`),
the share of rows whose interval holds 1, the geometric mean over all rows of all rounds with a
95 % interval (normal approximation on the log scale: each row's standard error is its
interval's log-width / (2 x 1.96), rows independent), and each run's ES_t vs Dynamo-only at
t = -5 (``metrics`` of the run). Machine, load average (``os.getloadavg``) before and after every
run, and the command are recorded.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
Z95 = 1.959964
"""Two-sided 95 % normal quantile."""


def control_run(code_dir: Path, params: Path, out: Path) -> dict:
    """One ``python -m curate score`` of the control in ``code_dir``; its rows' vs-Dynamo figures."""
    env = {**os.environ, "PYTHONPATH": str(code_dir)}
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "curate", "score", "--params", str(params), "--tasks", "builtin",
                           "--out", str(out / "data"), "--plots", str(out / "plots"), "--metrics", str(out / "metrics.json"),
                           "--no-resume"], cwd=code_dir, env=env, capture_output=True, text=True)
    res = {"wall_s": round(time.perf_counter() - t0, 1), "load_avg_1m_start": round(load0, 2),
           "load_avg_1m_end": round(os.getloadavg()[0], 2), "returncode": proc.returncode}
    if proc.returncode != 0:
        res["stderr_tail"] = proc.stderr[-2000:]
        return res
    cols = ["subgraph_id", "status", "speedup", "speedup_vs_dynamo", "speedup_vs_dynamo_ci_low", "speedup_vs_dynamo_ci_high",
            "dynamo_ms", "candidate_ms", "eager_ms", "stable"]
    table = pq.read_table(out / "data" / "score_samples.parquet")
    rows = table.select([c for c in cols if c in table.column_names]).to_pylist()
    res["rows"] = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows]
    m = json.loads((out / "metrics.json").read_text())["candidates"]["control"]
    res["ES_t_vs_dynamo@-5"] = m.get("paper", {}).get("ES_t_vs_dynamo@t=-5")
    res["ES_t@-5"] = m.get("paper", {}).get("ES_t@t=-5")
    return res


def pooled(runs: list[dict]) -> dict:
    """Geometric mean of every timed row's vs-Dynamo speedup over ``runs`` with its 95 % interval
    (module docstring), and the share of rows whose own interval holds 1."""
    rows = [r for run in runs for r in run.get("rows", []) if r.get("status") == "ok" and r.get("speedup_vs_dynamo")
            and r.get("speedup_vs_dynamo_ci_low")]
    if not rows:
        return {"n_rows": 0}
    logs = [math.log(r["speedup_vs_dynamo"]) for r in rows]
    se = [(math.log(r["speedup_vs_dynamo_ci_high"]) - math.log(r["speedup_vs_dynamo_ci_low"])) / (2 * Z95) for r in rows]
    mean, half = sum(logs) / len(logs), Z95 * math.sqrt(sum(s * s for s in se)) / len(logs)
    holds = sum(1 for r in rows if r["speedup_vs_dynamo_ci_low"] <= 1.0 <= r["speedup_vs_dynamo_ci_high"])
    return {"n_rows": len(rows), "geomean_speedup_vs_dynamo": round(math.exp(mean), 4),
            "geomean_ci95": [round(math.exp(mean - half), 4), round(math.exp(mean + half), 4)],
            "ci_holds_1_share": round(holds / len(rows), 4),
            "ES_t_vs_dynamo@-5_per_run": [run.get("ES_t_vs_dynamo@-5") for run in runs]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-rev", default=None, help="also run the scorer of this git revision, alternated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-subgraphs", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    load0 = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="bench_score_control_"))
    codes = {"new": (ROOT, yaml.safe_load((ROOT / "params.yaml").read_text())["score"])}
    old_rev = None
    try:
        if args.old_rev:
            old_rev = subprocess.run(["git", "rev-parse", "--short", args.old_rev], cwd=ROOT, capture_output=True, text=True,
                                     check=True).stdout.strip()
            old = work / "old"
            old.mkdir()
            arch = subprocess.run(["git", "archive", old_rev], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=arch, check=True)
            block = yaml.safe_load(subprocess.run(["git", "show", f"{old_rev}:params.yaml"], cwd=ROOT, capture_output=True,
                                                  text=True, check=True).stdout)["score"]
            codes = {"old": (old, block), **codes}
        runs: dict[str, list] = {k: [] for k in codes}
        for r in range(args.rounds):
            for label, (code, block) in codes.items():
                c = {**block, "tasks": "builtin", "max_subgraphs": args.max_subgraphs,
                     "inductor_cache": str(work / "inductor_cache"), "candidates": {"control": "backend:eager"}}
                params = work / f"params_{label}.yaml"
                params.write_text(yaml.safe_dump({"score": c}))
                print(f"bench: {label} round {r}", flush=True)
                runs[label].append(control_run(code, params, work / f"{label}_{r}"))
                print(json.dumps(runs[label][-1])[:600], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"command": " ".join(["python"] + sys.argv), "machine": f"{platform.node()} {platform.machine()} cpus={os.cpu_count()}",
           "load_avg_1m_start": round(load0[0], 2), "load_avg_1m_end": round(os.getloadavg()[0], 2), "old_rev": old_rev,
           "max_subgraphs": args.max_subgraphs, "rounds": args.rounds, "candidate": "control = backend:eager",
           "known_right_value": 1.0, "pooled": {k: pooled(v) for k, v in runs.items()}, "runs": runs}
    print(json.dumps(res["pooled"], indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
