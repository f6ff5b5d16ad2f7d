"""Score lanes: the ``score`` stage's candidates one at a time (``score.lanes: 1``) vs side by side in
two lanes pinned to their own cores (``score.lanes: 2``, :func:`curate.score.evaluate.lane_plan`).

Run: ``PYTHONPATH=$PWD python benchmarks/bench_score_lanes.py [--tasks data/curate/tasks]
[--rounds 1] [--out metrics/bench/score_lanes.json]``.

Each run is the stage's own command (``python -m curate score --no-resume``) with the ``score``
block of ``params.yaml`` and only ``lanes`` changed, lanes 1 and 2 alternated round by round so
both see the same machine; the Inductor cache is the stage's (warm after a build). Figures per
run: wall seconds, every candidate's ES_t at t = -5 vs eager and vs Dynamo-only (``metrics`` of
the run), its valid flag, and the per-subgraph ``speedup`` of both runs side by side (the ratio
lanes 2 / lanes 1 per candidate, geometric mean over the subgraphs both timed: what timing beside
another lane does to a candidate's figure). Machine, load average (``os.getloadavg``) before and after
every run and the command are recorded. Speedups are timings: two runs differ even at equal lanes;
the record says how much lanes move them next to that.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from passnet_common.io import atomic_write_json


def run_once(lanes: int, tasks: str, work: Path) -> dict:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["score"].update(lanes=lanes, tasks=tasks)
    work.mkdir(parents=True, exist_ok=True)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    cmd = [sys.executable, "-m", "curate", "score", "--params", str(work / "params.yaml"), "--out", str(work / "out"),
           "--plots", str(work / "plots"), "--metrics", str(work / "score.json"), "--no-resume"]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"score lanes={lanes} failed: {proc.stderr[-2000:]}")
    m = json.loads((work / "score.json").read_text())
    rows = pq.read_table(work / "out" / "score_samples.parquet").to_pylist()
    return {"lanes": lanes, "wall_s": round(wall, 1), "load_before": [round(x, 2) for x in load0],
            "load_after": [round(x, 2) for x in os.getloadavg()], "plan": m.get("lanes"), "isolation": m.get("isolation"),
            "wall_s_per_candidate": m.get("wall_s_per_candidate"),
            "es_t_m5": {c: e.get("paper", {}).get("ES_t@t=-5") for c, e in m["candidates"].items()},
            "es_t_m5_vs_dynamo": {c: e.get("paper", {}).get("ES_t_vs_dynamo@t=-5") for c, e in m["candidates"].items()},
            "valid": {c: e["valid"] for c, e in m["candidates"].items()},
            "speedups": {f"{r['candidate']}|{r['subgraph_id']}": r.get("speedup") for r in rows if r.get("status") == "ok"}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="data/curate/tasks")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default="metrics/bench/score_lanes.json")
    a = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as tmp:
        for r in range(a.rounds):
            for lanes in ((1, 2) if r % 2 == 0 else (2, 1)):
                res = run_once(lanes, a.tasks, Path(tmp) / f"r{r}l{lanes}")
                print(f"round {r} lanes {lanes}: {res['wall_s']} s, ES_t@-5 {res['es_t_m5']} (load {res['load_before'][0]})",
                      flush=True)
                runs.append({"round": r, **res})
    one = [x for x in runs if x["lanes"] == 1]
    two = [x for x in runs if x["lanes"] == 2]
    ratio = {}
    for c in sorted({k.split("|")[0] for x in runs for k in x["speedups"]}):
        logs = [math.log(b["speedups"][k] / a1["speedups"][k]) for a1, b in zip(one, two) for k in a1["speedups"]
                if k.startswith(c + "|") and k in b["speedups"] and a1["speedups"][k] and b["speedups"][k]]
        ratio[c] = {"geomean_lanes2_over_lanes1": round(math.exp(sum(logs) / len(logs)), 4) if logs else None, "n": len(logs)}
    out = {"command": "PYTHONPATH=$PWD python benchmarks/bench_score_lanes.py " + " ".join(sys.argv[1:]),
           "machine": {"cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
                       "python": platform.python_version()},
           "tasks": a.tasks, "rounds": a.rounds,
           "wall_s": {"lanes1": [x["wall_s"] for x in one], "lanes2": [x["wall_s"] for x in two]},
           "wall_ratio_lanes2_over_lanes1": round(sum(x["wall_s"] for x in two) / sum(x["wall_s"] for x in one), 3),
           "speedup_ratio_per_candidate": ratio,
           "runs": [{k: v for k, v in x.items() if k != "speedups"} for x in runs]}
    atomic_write_json(Path(a.out), out, indent=1)
    print(json.dumps({k: out[k] for k in ("wall_s", "wall_ratio_lanes2_over_lanes1", "speedup_ratio_per_candidate")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
