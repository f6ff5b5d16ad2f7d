"""Benchmark: the ``proxy_cost`` side-by-side measurement, previous path vs forked children, in one run.

``old``: :func:`proxy_artifacts.cost.measure_side_by_side` as of ``--old-rev`` (a fresh
``python -m proxy_artifacts.cost`` interpreter per (round, model) child, peak = ``ru_maxrss`` minus the
resident set before loading), run from that revision's ``proxy_artifacts/{__init__,cost,timing}.py``
extracted into a temporary folder. ``new``: the working tree's default (``isolation="fork"``: the
parent imports torch/transformers/the modeling code once and forks one child per (round, model);
peak = ``VmHWM`` after a high-water reset, minus the same baseline).

Each side runs as its own process (its own imports included in its wall time, as in the stage),
alternating old/new ``--repeat`` times; wall seconds (``time.perf_counter``) and CPU seconds (user +
system of that process and all its children, ``RUSAGE_CHILDREN``) per side are the median over
repeats; per model the peak memory (bytes, largest over rounds) and median step time (ms) of each
side. Then, with ``--interleave N`` (default 2), step times of the two kinds of child under the
same load: per model N pairs of one fresh-interpreter child and one forked child of the working
tree's code (the same step loop), run back to back, order alternating; median step ms of each kind
(``step_ms_interleaved_exec`` / ``_fork``). Prints tables; writes ``--out`` (flat keys). Nothing is asserted; step times move with the
machine's load (recorded at start and end).

Usage: ``PYTHONPATH=$PWD python benchmarks/bench_proxy_cost.py [--models base=data/proxy/base
r0.5=data/proxy/proxies/r0.5/model ...] [--rounds 2] [--steps 4] [--repeat 1]
[--out metrics/bench/bench_proxy_cost.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_REV = "ce4899abd59cef6fa50afde3008a3d3ceb6f9ab7"  # last commit with exec'd children only
DEFAULT_MODELS = ["base=data/proxy/base", "r0.5=data/proxy/proxies/r0.5/model",
                  "r0.25=data/proxy/proxies/r0.25/model", "r0.125=data/proxy/proxies/r0.125/model"]


def _one(models: dict, rounds: int, steps: int, batch: int, seq_len: int) -> None:
    from proxy_artifacts.cost import measure_side_by_side

    r = measure_side_by_side(models, batch=batch, seq_len=seq_len, steps=steps, rounds=rounds, threads=1)
    print(json.dumps({k: r[k] for k in ("step_ms_median", "peak_memory_bytes", "memory_kind", "device")}))


def _old_tree(rev: str, dest: Path) -> Path:
    pkg = dest / "proxy_artifacts"
    pkg.mkdir(parents=True)
    for f in ("__init__.py", "cost.py", "timing.py"):
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:proxy_artifacts/{f}"], capture_output=True,
                             text=True, check=True).stdout
        (pkg / f).write_text(src)
    return dest


def _side(kind: str, models: list[str], a, old_path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(([str(old_path)] if kind == "old" else []) + [str(ROOT)]))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", "--rounds", str(a.rounds), "--steps", str(a.steps),
           "--batch", str(a.batch), "--seq-len", str(a.seq_len), "--models", *models]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(ROOT))
    wall = time.perf_counter() - t
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} side failed: {p.stderr[-1500:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall_s"] = round(wall, 2)
    r["cpu_s"] = round((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), 2)
    return r


def _interleaved(models: dict, a) -> dict:
    import gc

    from proxy_artifacts import cost

    cost.preimport(models)
    runs = cost.resident_file_runs()
    gc.collect()
    gc.freeze()
    steps: dict = {"exec": {n: [] for n in models}, "fork": {n: [] for n in models}}
    with tempfile.TemporaryDirectory(prefix="bench_proxy_cost_fork_") as work:
        for i in range(a.interleave):
            for n, d in models.items():
                for kind in (("exec", "fork") if i % 2 == 0 else ("fork", "exec")):
                    args = (str(ROOT / d), a.batch, a.seq_len, a.steps, 1, n)
                    r = cost._run_fork(*args, Path(work), runs) if kind == "fork" else cost._run_exec(*args)
                    steps[kind][n] += r["step_ms"]
    gc.unfreeze()
    return {k: {n: round(statistics.median(v), 2) for n, v in m.items()} for k, m in steps.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)  # params.yaml proxy.grpo prompts_per_step x num_generations
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--old-rev", default=OLD_REV)
    ap.add_argument("--out", default="metrics/bench/bench_proxy_cost.json")
    ap.add_argument("--interleave", type=int, default=2)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    models = dict(m.split("=", 1) for m in a.models)
    if a.one:
        _one(models, a.rounds, a.steps, a.batch, a.seq_len)
        return 0
    from passnet_common.io import atomic_write_json
    from proxy_artifacts.timing import load_average

    load0 = load_average()
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="bench_proxy_cost_") as tmp:
        old_path = _old_tree(a.old_rev, Path(tmp))
        for i in range(a.repeat):
            for kind in (("old", "new") if i % 2 == 0 else ("new", "old")):
                runs[kind].append(_side(kind, a.models, a, old_path))
                print(f"{kind}: wall {runs[kind][-1]['wall_s']} s, cpu {runs[kind][-1]['cpu_s']} s", file=sys.stderr)
    inter = _interleaved(models, a) if a.interleave else {}
    load1 = load_average()

    def med(kind, key):
        return round(statistics.median(r[key] for r in runs[kind]), 2)

    def per_model(kind, key):  # peak: largest over repeats (as over rounds); step: median over repeats
        agg = max if key == "peak_memory_bytes" else statistics.median
        return {n: round(agg([r[key][n] for r in runs[kind]]), 3) for n in models}

    out = {"wall_s_old": med("old", "wall_s"), "wall_s_new": med("new", "wall_s"),
           "cpu_s_old": med("old", "cpu_s"), "cpu_s_new": med("new", "cpu_s")}
    out["wall_ratio_new_to_old"] = round(out["wall_s_new"] / out["wall_s_old"], 3)
    out["cpu_ratio_new_to_old"] = round(out["cpu_s_new"] / out["cpu_s_old"], 3)
    out |= {"peak_memory_bytes_old": per_model("old", "peak_memory_bytes"),
            "peak_memory_bytes_new": per_model("new", "peak_memory_bytes"),
            "step_ms_old": per_model("old", "step_ms_median"), "step_ms_new": per_model("new", "step_ms_median")}
    out["peak_memory_ratio_new_to_old"] = {n: round(out["peak_memory_bytes_new"][n] / out["peak_memory_bytes_old"][n], 4)
                                           for n in models}
    out["step_ms_ratio_new_to_old"] = {n: round(out["step_ms_new"][n] / out["step_ms_old"][n], 4) for n in models}
    if inter:
        out |= {"step_ms_interleaved_exec": inter["exec"], "step_ms_interleaved_fork": inter["fork"],
                "step_ms_interleaved_ratio_fork_to_exec": {n: round(inter["fork"][n] / inter["exec"][n], 4) for n in models},
                "interleave_pairs": a.interleave}
    out |= {"load_average_start": load0, "load_average_end": load1, "repeat": a.repeat, "rounds": a.rounds,
            "steps": a.steps, "batch": a.batch, "seq_len": a.seq_len, "old_rev": a.old_rev,
            "memory_kind": runs["new"][0]["memory_kind"], "device": runs["new"][0]["device"],
            "runs": {k: [{"wall_s": r["wall_s"], "cpu_s": r["cpu_s"]} for r in v] for k, v in runs.items()},
            "command": "python benchmarks/bench_proxy_cost.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    print(f"{'':10s} {'old':>10s} {'new':>10s} {'new/old':>8s}")
    print(f"{'wall s':10s} {out['wall_s_old']:10.1f} {out['wall_s_new']:10.1f} {out['wall_ratio_new_to_old']:8.3f}")
    print(f"{'cpu s':10s} {out['cpu_s_old']:10.1f} {out['cpu_s_new']:10.1f} {out['cpu_ratio_new_to_old']:8.3f}")
    print(f"\n{'model':8s} {'peak MB old':>12s} {'peak MB new':>12s} {'new/old':>8s} {'step ms old':>12s} "
          f"{'step ms new':>12s} {'new/old':>8s}")
    for n in models:
        print(f"{n:8s} {out['peak_memory_bytes_old'][n] / 1e6:12.1f} {out['peak_memory_bytes_new'][n] / 1e6:12.1f} "
              f"{out['peak_memory_ratio_new_to_old'][n]:8.4f} {out['step_ms_old'][n]:12.1f} {out['step_ms_new'][n]:12.1f} "
              f"{out['step_ms_ratio_new_to_old'][n]:8.4f}")
    if inter:
        print(f"\n{'model':8s} {'step ms exec':>13s} {'step ms fork':>13s} {'fork/exec':>9s}  (interleaved children)")
        for n in models:
            print(f"{n:8s} {inter['exec'][n]:13.1f} {inter['fork'][n]:13.1f} "
                  f"{out['step_ms_interleaved_ratio_fork_to_exec'][n]:9.4f}")
    print(f"\nload average (1/5/15 min) {load0} -> {load1}; {a.repeat} repeat(s), {a.rounds} rounds x {a.steps} steps")
    atomic_write_json(a.out, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
