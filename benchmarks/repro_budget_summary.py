"""Summarise a stage-by-stage default rebuild recorded by ``benchmarks/repro_budget.sh``.

Reads the TSV (one row per stage: wall s, user s, sys s, peak RSS kB of the stage's process
tree from GNU time, 1-minute load average before/after, exit code), prints the table and
writes ``metrics/bench/repro_budget.json``: per stage ``wall_s``, ``cpu_s`` (user + sys),
``maxrss_kb``, loads; ``total_wall_min`` and ``cpu_bound_wall_min_on_cores`` (total CPU
seconds / cores: the wall time a perfectly parallel run would need on this machine, a
load-independent floor). Usage: ``python -m benchmarks.repro_budget_summary metrics/bench/repro_budget.tsv``;
``REPRO_BUDGET_NOTE`` (environment) is stored as ``measured_on`` (say how the record was made when
it is not one quiet run).
"""
import csv
import json
import os
import platform
import sys

import torch  # noqa: E402  (version of the pinned torch)

from passnet_common.machine import cpu_model as _cpu_model

tsv = sys.argv[1]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
for r in rows:
    for k in ("wall_s", "user_s", "sys_s", "load1_before", "load1_after"):
        r[k] = float(r[k])
    r["maxrss_kb"], r["rc"] = int(r["maxrss_kb"]), int(r["rc"])
    r["cpu_s"] = round(r["user_s"] + r["sys_s"], 1)
wall = sum(r["wall_s"] for r in rows)
cpu = sum(r["cpu_s"] for r in rows)
cpu_model = _cpu_model()
out = {"stages": {r["stage"]: {k: r[k] for k in ("wall_s", "cpu_s", "maxrss_kb", "load1_before", "load1_after", "rc")} for r in rows},
       "total_wall_s": round(wall, 1), "total_wall_min": round(wall / 60, 1), "total_cpu_s": round(cpu, 1),
       "cpu_bound_wall_min_on_cores": round(cpu / 60 / (os.cpu_count() or 1), 1),
       "complete": all(r["rc"] == 0 for r in rows),
       "machine": {"cpu": cpu_model, "cores": os.cpu_count(), "torch": torch.__version__, "python": platform.python_version()},
       "command": os.environ.get("REPRO_BUDGET_COMMAND",
                                 "bash benchmarks/repro_budget.sh (clean clone, stage by stage, dvc.yaml order)")}
total_file = tsv + ".total.json"
if os.environ.get("REPRO_BUDGET_COMMAND") and os.path.exists(total_file):  # single mode: the whole run's peak RSS
    out["whole_run"] = json.load(open(total_file))
if os.environ.get("REPRO_BUDGET_NOTE"):  # how the record was made when it is not one quiet run (segments, load)
    out["measured_on"] = os.environ["REPRO_BUDGET_NOTE"]
tmp = tsv[:-4] + ".json.part"
json.dump(out, open(tmp, "w"), indent=1, sort_keys=True)
os.replace(tmp, tsv[:-4] + ".json")
print(f"{'stage':18s} {'wall s':>8s} {'cpu s':>8s} {'load':>10s}")
for r in rows:
    print(f"{r['stage']:18s} {r['wall_s']:8.1f} {r['cpu_s']:8.1f} {r['load1_before']:4.1f}-{r['load1_after']:<4.1f}")
print(f"{'total':18s} {wall:8.1f} {cpu:8.1f}   ({wall/60:.1f} min wall)")
