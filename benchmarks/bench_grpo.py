"""CPU seconds per GRPO run of the ``proxy_grpo*`` stages, the committed code vs this checkout, and
whether both write the same bytes.

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_grpo.py [--model data/proxy/base]
[--ref data/proxy/grpo/base] [--rev HEAD] [--out metrics/bench/bench_grpo.json]``.

Each side runs the same plan of runs (healthy, fault and held-out runs, ``--runs``) one after
another in one fresh process, as one worker of ``run_grpo_all`` does, the two sides taking turns run by
run (both see the same machine load) (``proxy.grpo`` params of
``params.yaml``): "before" imports ``proxy_artifacts`` / ``passnet_common`` exported from git
``--rev`` (``git archive``), "after" this checkout. Measured per side: the process's CPU seconds
(user + system, ``resource.getrusage``) of the imports, of the first run and of the later runs;
``cpu_s_per_run`` is the later runs' mean (the steady state of a worker that does ~86 runs),
``ratio`` before / after. Every file each side writes is compared byte for byte with the other
side's and, with ``--ref``, with the committed stage output of the same name (``identical_*``).
Nothing is asserted; the machine is shared, so compare the two sides of one invocation only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PLAN = ["none.s0", "lr_spike.s1", "no_load_balancing.s2", "fp16_no_loss_scaling.s0", "none.s7",
        "swapped_operator.s1", "logprob_bf16.s2", "skip_actor_update.s0", "none.s1"]

_CHILD = r"""
import json, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0 = cpu()
import yaml
from proxy_artifacts import rl
try:  # a worker-like process, as the stage's pool workers (the code before the reuse has no rl_reuse)
    from proxy_artifacts import rl_reuse
    rl_reuse.mark_worker()
except ImportError:
    pass
import datasets, transformers, trl  # what run_grpo imports
print(json.dumps({"imports_cpu_s": round(cpu() - t0, 3), "code": rl.__file__}), flush=True)
model, out = sys.argv[1], sys.argv[2]
gp = yaml.safe_load(open(sys.argv[3]))["proxy"]["grpo"]
for line in sys.stdin:
    key = line.strip()
    fault, seed = key.rsplit(".s", 1)
    seed = int(seed)
    g = dict(gp, seed=seed, eval_after=(fault == "none" and seed in gp["healthy_seeds"]) or bool(gp.get("eval_fault_runs")))
    t = cpu()
    rl.run_grpo(model, fault, g, out, stem=key)
    print(json.dumps({"run_cpu_s": round(cpu() - t, 3)}), flush=True)
"""


class _Side:
    """One worker-like child process (``_CHILD``) running the runs it is sent, one at a time."""

    def __init__(self, pythonpath: str, model: str, out: Path):
        env = dict(os.environ, PYTHONPATH=pythonpath, TQDM_DISABLE="1", TRANSFORMERS_VERBOSITY="error")
        # -P and cwd=out's parent: the code imported is PYTHONPATH's, never the current folder's
        self.p = subprocess.Popen([sys.executable, "-P", "-c", _CHILD, model, str(out), os.path.abspath("params.yaml")],
                                  env=env, cwd=str(out.parent),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = self._reply()
        self.imports, self.code = first["imports_cpu_s"], first["code"]
        self.runs: list[float] = []

    def _reply(self) -> dict:
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"benchmark child died (rc {self.p.wait()})")
        return json.loads(line)

    def run(self, key: str) -> None:
        self.p.stdin.write(key + "\n")
        self.p.stdin.flush()
        self.runs.append(self._reply()["run_cpu_s"])

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()


def _same(a: Path, b: Path, names: list[str]) -> tuple[int, list[str]]:
    diff = [n for n in names if not (b / n).exists() or (a / n).read_bytes() != (b / n).read_bytes()]
    return len(names) - len(diff), diff


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="data/proxy/base")
    ap.add_argument("--ref", default=None, help="committed stage output folder to compare with (data/proxy/grpo/base)")
    ap.add_argument("--rev", default="HEAD", help="git revision of the 'before' code")
    ap.add_argument("--runs", default=",".join(PLAN), help="comma-separated <fault>.s<seed> plan")
    ap.add_argument("--out", default=None, help="write the figures as flat JSON here")
    args = ap.parse_args()
    plan = args.runs.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-grpo-") as tmp:
        tmp = Path(tmp)
        old_src = tmp / "src"
        old_src.mkdir()
        arc = subprocess.run(["git", "archive", args.rev, "proxy_artifacts", "passnet_common"], capture_output=True,
                             check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=arc, check=True)
        model = os.path.abspath(args.model)
        sides = {"before": _Side(str(old_src), model, tmp / "before"),
                 "after": _Side(os.getcwd(), model, tmp / "after")}
        for k, v in sides.items():
            print(f"{k}: {v.code}")
        for key in plan:  # interleaved: both sides see the same machine load
            for side in sides.values():
                side.run(key)
        for side in sides.values():
            side.close()
        res = {k: {"imports_cpu_s": v.imports, "run_cpu_s": v.runs} for k, v in sides.items()}
        names = sorted(p.name for p in (tmp / "before").iterdir())
        n_same, diff = _same(tmp / "before", tmp / "after", names)
        fig = {"model": args.model, "rev_before": args.rev, "runs": len(plan), "files": len(names),
               "identical_before_after": n_same, "differing_before_after": diff}
        if args.ref:
            for side in ("before", "after"):
                k, d = _same(tmp / side, Path(args.ref), names)
                fig[f"identical_{side}_vs_ref"], fig[f"differing_{side}_vs_ref"] = k, d
    for side in ("before", "after"):
        r = res[side]["run_cpu_s"]
        fig[f"{side}_imports_cpu_s"] = res[side]["imports_cpu_s"]
        fig[f"{side}_first_run_cpu_s"] = r[0]
        fig[f"{side}_cpu_s_per_run"] = round(sum(r[1:]) / max(1, len(r) - 1), 3)
    fig["ratio"] = round(fig["before_cpu_s_per_run"] / fig["after_cpu_s_per_run"], 3)
    fig["cpu_count"] = os.cpu_count()
    fig["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(f"{'':8} {'imports':>9} {'first run':>10} {'per run':>9}   (CPU s; {len(plan)} runs of {args.model})")
    for side in ("before", "after"):
        print(f"{side:8} {fig[side + '_imports_cpu_s']:9.2f} {fig[side + '_first_run_cpu_s']:10.2f} "
              f"{fig[side + '_cpu_s_per_run']:9.3f}")
    print(f"ratio before/after per run: {fig['ratio']:.2f}x; files identical before/after: "
          f"{fig['identical_before_after']}/{fig['files']}" +
          (f"; vs {args.ref}: before {fig['identical_before_vs_ref']}, after {fig['identical_after_vs_ref']}"
           if args.ref else ""))
    for side in ("before", "after"):
        print(side, "run CPU s:", res[side]["run_cpu_s"])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(fig, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
