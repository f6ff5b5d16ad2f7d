"""Does the controls verdict hold on real GRPO runs? Base, keep-0.5 proxy and a re-initialised control.

A reduced plan of ``proxy.grpo`` (healthy seeds 0-2; faults ``lr_spike`` and ``skip_actor_update`` on
seeds 0-2; no held-out seeds, no fix runs; one process) for the base, its keep-0.5 proxy and the
``reinit`` control of the proxy (:func:`proxy_artifacts.pipeline.build_control`), then
:func:`proxy_artifacts.fidelity.run_fidelity` with that control: per fault the proxy's and the control's
magnitude score (k of n cells), pass / fail, the control's kinds reproduction and whether the proxy
reproduces the fault beyond the control. Written to ``--out`` with machine, load and command.

    PYTHONPATH=$PWD nice -n 10 python -m benchmarks.proxy_controls_check \\
        --base data/proxy/bench_bases/seed0 --proxy data/proxy/bench_proxies/r0.5/model
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from passnet_common.io import atomic_write_json
from passnet_common.params import load_params
from proxy_artifacts import fidelity
from proxy_artifacts.config import proxy_params
from proxy_artifacts.pipeline import build_control
from proxy_artifacts.rl import run_grpo_all
from proxy_artifacts.timing import load_average, machine


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--base", default="data/proxy/bench_bases/seed0")
    ap.add_argument("--proxy", default="data/proxy/bench_proxies/r0.5/model")
    ap.add_argument("--work", default="data/proxy/bench_controls_check")
    ap.add_argument("--out", default="metrics/bench/proxy_controls_check.json")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    prm = proxy_params(load_params(a.params, "proxy"))
    t, l0 = time.time(), load_average()
    build_control(prm, "reinit", a.base, "unused", a.proxy, 0.5, f"{a.work}/ctl_reinit")
    gp = dict(prm["grpo"], healthy_seeds=[0, 1, 2], heldout_healthy_seeds=[], fault_seeds=[0, 1, 2],
              faults=["lr_spike", "skip_actor_update"], fix_runs=[], workers=1)
    models = {"base": a.base, "r0.5": a.proxy, "control_reinit": f"{a.work}/ctl_reinit/model"}
    for n, d in models.items():
        run_grpo_all(d, n, gp, f"{a.work}/grpo_{n}", progress=False)
    fidelity.full_size_counts = lambda: {}  # no projection needed here
    m = fidelity.run_fidelity(prm, {"base": f"{a.work}/grpo_base", "r0.5": f"{a.work}/grpo_r0.5"}, f"{a.work}/r.md",
                              f"{a.work}/m.json", a.work,
                              control_dirs={"r0.5": {"control_reinit": f"{a.work}/grpo_control_reinit"}})
    c = m["controls"]["r0.5"]
    res = {"plan": {k: gp[k] for k in ("steps", "healthy_seeds", "fault_seeds", "faults", "prompts_per_step",
                                       "num_generations")},
           "faults": {f: {"proxy_score": r["proxy"]["score"], "proxy_passes": r["proxy"]["passes"],
                          "control_reinit_score": r["controls"]["control_reinit"]["score"],
                          "control_reinit_passes": r["controls"]["control_reinit"]["passes"],
                          "control_reinit_kinds": r["controls"]["control_reinit"]["kinds"],
                          "control_reinit_beaten": r["controls"]["control_reinit"]["beaten"],
                          "base_self": r["base_self"], "reproduces": r["reproduces"]} for f, r in c["faults"].items()},
           "seconds": round(time.time() - t), "machine": machine(), "load_average_start": l0,
           "load_average_end": load_average(),
           "command": "python -m benchmarks.proxy_controls_check " + " ".join(sys.argv[1:] if argv is None else argv)}
    atomic_write_json(a.out, res, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
