"""What the trust boundary costs: a scoring run of the built-in set, the in-process code of the
previous commit vs this tree, and each defense's own cost.

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_defenses.py [--old-rev HEAD~1]
[--max-subgraphs 6] [--out metrics/bench/score_defenses.json]``.

* **runs**: ``python -m curate score --tasks builtin`` with the ``score`` block of params.yaml
  (its candidates and timing; ``lanes`` = ``--lanes``, 1 by default, for the new code: one
  candidate at a time, as the old code scores; ``max_subgraphs`` of the seeded sample, ``inductor_cache`` a scratch
  folder warmed first by one untimed-as-possible run of Inductor alone under each code, so neither
  pays the public subgraphs' cold compiles; re-validation's held-out shapes stay cold for the new
  code), the code of ``--old-rev`` (``git archive`` into a
  scratch folder: the in-process child of the earlier scorer) and of this tree, old and new
  alternated, each its own process; wall seconds and CPU seconds of the process and its children
  (``getrusage``), and every candidate's ES_t at t = -5 / AS vs eager and vs Dynamo-only from the
  run's own metrics file (the honest control's and Inductor's scores under both);
* **defenses**: the static check of every fixture of ``tests/score_candidates`` (ms per file; the
  import of the zygote's modules its chain resolution needs, once per parent,
  ``static_check_resolver_import_s``); the stop of a sandbox for a checked timed call's copy
  (``Sandbox.hold`` + ``release``: ``SIGSTOP``, the kernel reporting every thread stopped, ``SIGCONT``;
  ms, median and p90 of 200 on a trusted sandbox, median on an untrusted one with its cgroup);
  one sandbox start: forked from the zygote (``sandbox_start_s``, what every sandbox but the first
  costs), spawned (``sandbox_spawn_s``: interpreter start, torch import, set-up), and the zygote's
  own start with its first fork (``zygote_start_and_first_fork_s``, once per parent); one request round trip with a one-call
  run on a small graph (ms, median of 50) and one call of a timed trial on it (``timed_call_ms_median``: the
  parent's go byte to the sandbox's done byte, the input set's delivery outside; median of 50) against the same call
  in-process; the ``/proc`` reads
  of the thread and CPU accounting per trial (us); the host bandwidth measurement of the roofline
  (s, once per parent).

Machine, load (``os.getloadavg`` before and after) and the command are recorded with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def score_run(code_dir: Path, params: Path, out: Path) -> dict:
    """One ``python -m curate score`` in ``code_dir``; wall / CPU seconds and the metrics it wrote."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(code_dir)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "curate", "score", "--params", str(params), "--tasks", "builtin",
                           "--out", str(out / "data"), "--plots", str(out / "plots"), "--metrics", str(out / "metrics.json"),
                           "--no-resume"], cwd=code_dir, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = {"wall_s": round(wall, 1), "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
           "returncode": proc.returncode}
    if proc.returncode != 0:
        res["stderr_tail"] = proc.stderr[-2000:]
        return res
    m = json.loads((out / "metrics.json").read_text())
    res["scores"] = {name: {"valid": c.get("valid"), "ES_t@-5": c.get("paper", {}).get("ES_t@t=-5"),
                            "AS": c.get("paper", {}).get("AS"), "ES_t_vs_dynamo@-5": c.get("paper", {}).get("ES_t_vs_dynamo@t=-5"),
                            "status_counts": c.get("status_counts")} for name, c in m["candidates"].items()}
    return res


def defense_costs() -> dict:
    """The per-defense figures (module docstring)."""
    import torch

    from curate.score.boundary.parent import (
        Sandbox,
        SharedSlots,
        bind,
        close_sandboxes,
        graph_payload,
        host_copy_bandwidth,
        isolation_level,
        leaf_specs,
        zygote,
    )
    from curate.score.defenses.integrity import check_source, resolve_chain
    from curate.score.synthetic_tasks import builtin_task_set

    torch.set_num_threads(1)
    files = sorted((ROOT / "tests" / "score_candidates").glob("*.py"))
    t0 = time.perf_counter()
    resolve_chain(["torch"])  # once per parent: the zygote's modules imported for the static check's resolution
    resolver_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for f in files:
        check_source(f.read_text())
    static_ms = (time.perf_counter() - t0) * 1e3 / len(files)
    t0 = time.perf_counter()
    bw = host_copy_bandwidth()
    bw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    spawned = Sandbox("reference", 8 << 30, 1)  # an interpreter start, torch's import, the set-up
    spawn_s = time.perf_counter() - t0
    spawned.close()
    cfg = {"threads": 1, "mem_cap_gb": 8, "inductor_cache": None}
    t0 = time.perf_counter()
    zyg = zygote(cfg)  # once per parent: torch and the Dynamo / Inductor machinery imported
    Sandbox("reference", 8 << 30, 1, zygote=zyg).close()
    zygote_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    box = Sandbox("reference", 8 << 30, 1, zygote=zyg)  # what every later sandbox costs
    start_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    Sandbox("candidate", 8 << 30, 1, zygote=zyg, untrusted=True).close()  # + the privilege drop and the kill of what it left
    untrusted_s = time.perf_counter() - t0
    try:
        sub = next(s for s in builtin_task_set() if s.subgraph_id == "gelu_tanh:0")
        gm, ins = sub.build(), sub.make_inputs(0)
        dl = time.monotonic() + 300
        i_slots, o_slots = SharedSlots(leaf_specs(ins), 1), SharedSlots(leaf_specs([gm(*ins)]), 1)
        i_slots.write(0, ins)
        bind(box, dl, i_slots, o_slots, None)
        box.request({"op": "load", "graph": graph_payload(gm), "dynamo": False}, dl)
        rt = [box.timed({"op": "run", "side": "eager", "sets": [0]}, dl)[1] for _ in range(50)]
        _, per_call, _ = box.stream({"op": "run", "side": "eager", "sets": [0] * 50, "stream": True},
                                    lambda i: i_slots.write(0, ins), dl)  # a timed trial's calls: go byte to done byte
        local = []
        for _ in range(50):
            t0 = time.perf_counter()
            gm(*ins)
            local.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        for _ in range(200):
            box.tasks()
            box.cpu_ms()
        proc_us = (time.perf_counter() - t0) * 1e6 / 200
        hold = []
        for _ in range(200):  # a checked timed call's copy: the sandbox stopped (kernel reports it) and continued
            t0 = time.perf_counter()
            box.hold(dl)
            box.release()
            hold.append((time.perf_counter() - t0) * 1e3)
        cand = Sandbox("candidate", 8 << 30, 1, zygote=zyg, untrusted=True)
        hold_u = []
        for _ in range(200):
            t0 = time.perf_counter()
            cand.hold(dl)
            cand.release()
            hold_u.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        for _ in range(200):
            cand.strays()
        strays_us = (time.perf_counter() - t0) * 1e6 / 200
        t0 = time.perf_counter()
        for _ in range(20):
            cand.strays(full=True)
        strays_full_ms = (time.perf_counter() - t0) * 1e3 / 20
        cand.close()
        i_slots.close()
        o_slots.close()
    finally:
        box.close()
        close_sandboxes()
    return {"static_check_ms_per_file": round(static_ms, 3), "static_check_files": len(files),
            "static_check_resolver_import_s": round(resolver_s, 2),
            "checked_call_hold_ms_median": round(statistics.median(hold), 3),
            "checked_call_hold_ms_p90": round(sorted(hold)[int(0.9 * len(hold))], 3),
            "checked_call_hold_untrusted_ms_median": round(statistics.median(hold_u), 3),
            "sandbox_start_s": round(start_s, 2), "sandbox_spawn_s": round(spawn_s, 2),
            "untrusted_sandbox_start_and_close_s": round(untrusted_s, 2), "isolation": isolation_level(),
            "orphan_check_us_per_trial": round(strays_us, 1), "stray_scan_ms_per_checkpoint": round(strays_full_ms, 2),
            "zygote_start_and_first_fork_s": round(zygote_s, 2), "request_round_trip_ms_median": round(statistics.median(rt), 3),
            "timed_call_ms_median": round(statistics.median(per_call), 3),
            "same_call_in_process_ms_median": round(statistics.median(local), 3),
            "proc_accounting_us_per_trial": round(2 * proc_us, 1), "roofline_bandwidth_measure_s": round(bw_s, 3),
            "host_copy_bandwidth_gb_s": round(bw / 1e9, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-rev", default="HEAD", help="git revision of the previous scorer (in-process child)")
    ap.add_argument("--max-subgraphs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=1, help="old/new pairs, alternated")
    ap.add_argument("--out", default=None)
    ap.add_argument("--lanes", type=int, default=1,
                    help="score.lanes of the new code's runs (1: one candidate at a time, as the old code; "
                         "benchmarks/bench_score_lanes.py measures lanes)")
    args = ap.parse_args()
    import yaml

    load0 = os.getloadavg()
    old_rev = subprocess.run(["git", "rev-parse", "--short", args.old_rev], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()  # resolved now: the archive below is of this commit
    work = Path(tempfile.mkdtemp(prefix="bench_score_defenses_"))
    try:
        old = work / "old"
        old.mkdir()
        arch = subprocess.run(["git", "archive", old_rev], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=arch, check=True)
        blocks = {"old": yaml.safe_load(subprocess.run(["git", "show", f"{old_rev}:params.yaml"], cwd=ROOT, capture_output=True,
                                                        text=True, check=True).stdout)["score"],
                  "new": yaml.safe_load((ROOT / "params.yaml").read_text())["score"]}  # each code's own schema
        warm_runs = {}
        for label, code in (("old", old), ("new", ROOT)):  # each code's Inductor configuration has its own cache keys
            warm = dict(blocks[label])
            if label == "new":
                warm["lanes"] = 1
            warm.update(max_subgraphs=args.max_subgraphs, inductor_cache=str(work / "inductor_cache"), tasks="builtin",
                        candidates={"inductor": "backend:inductor"}, dynamo_reference=False,
                        timing={**warm["timing"], "warmup": 0, "trials": 1, "retries": 0})
            if "revalidate" in warm:
                warm["revalidate"] = {**warm["revalidate"], "top": 0}
            (work / f"params_warm_{label}.yaml").write_text(yaml.safe_dump({"score": warm}))
            print(f"bench: warming the Inductor cache ({label})", flush=True)
            warm_runs[label] = score_run(code, work / f"params_warm_{label}.yaml", work / f"warm_{label}")
        runs: dict[str, list] = {"old": [], "new": []}
        for r in range(args.rounds):
            for label, code in (("old", old), ("new", ROOT)):
                c = dict(blocks[label])
                c.update(max_subgraphs=args.max_subgraphs, inductor_cache=str(work / "inductor_cache"), tasks="builtin")
                if label == "new":  # the old code has no lanes: one candidate at a time
                    c["lanes"] = args.lanes
                cands = {}
                for name, spec in c["candidates"].items():
                    kind, _, target = spec.partition(":")
                    cands[name] = f"{kind}:{ROOT / target}" if kind in ("module", "pass") else spec
                cands["control"] = "backend:eager"
                c["candidates"] = cands
                params = work / f"params_{label}.yaml"
                params.write_text(yaml.safe_dump({"score": c}))
                out = work / f"{label}_{r}"
                print(f"bench: {label} round {r}", flush=True)
                runs[label].append(score_run(code, params, out))
                print(json.dumps(runs[label][-1])[:400], flush=True)
        costs = defense_costs()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    wall_old = sum(x["wall_s"] for x in runs["old"])
    wall_new = sum(x["wall_s"] for x in runs["new"])
    res = {"command": " ".join(["python"] + sys.argv), "machine": f"{platform.node()} {platform.machine()} cpus={os.cpu_count()}",
           "load_avg_1m_start": round(load0[0], 2), "load_avg_1m_end": round(os.getloadavg()[0], 2),
           "old_rev": old_rev, "lanes_new": args.lanes,
           "max_subgraphs": args.max_subgraphs, "warm_up": {label: {k: w.get(k) for k in ("wall_s", "cpu_s", "returncode")}
                                                              for label, w in warm_runs.items()},
           "runs": runs, "wall_ratio_new_over_old": round(wall_new / wall_old, 3)
           if wall_old else None, "cpu_ratio_new_over_old": round(sum(x["cpu_s"] for x in runs["new"]) /
                                                               sum(x["cpu_s"] for x in runs["old"]), 3)
           if sum(x["cpu_s"] for x in runs["old"]) else None, "defenses": costs}
    print(json.dumps(res, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
