"""The keep-0.5 proxy against its controls with more fault seeds than the pipeline's three.

The pipeline judges each fault on ``proxy.grpo.fault_seeds`` (3 seeds), so a proxy beats a control
"with an interval" only when the difference is large. This study reruns the same GRPO plan with
``--seeds`` fault seeds (everything else from ``params.yaml``) for the base, the keep-0.5 proxy and
the controls named by ``--controls`` (their models as the pipeline built them under
``data/proxy``), then the pipeline's own fidelity command on those runs, so the rule, the tolerances
(from the base's seed-to-seed spread) and the control comparison are the stage's, only with more
seeds. Every model's runs go to ``<work>/grpo/<name>`` and are skipped on a rerun when that folder
holds a ``summary.json`` made from the same params file (``<work>/params.yaml``: the override
written first).

    PYTHONPATH=$PWD nice -n 5 python -m benchmarks.proxy_fidelity_seeds [--seeds 10] \\
        [--controls random_output_merge random_experts] [--work /tmp/proxy_fidelity_seeds] \\
        [--out metrics/bench/proxy_fidelity_seeds.json]

Needs the proxy line's outputs (``dvc repro proxy_fidelity`` or a checkout that has them).
Writes per fault the base's self-reproduction rate, the magnitude tolerances (``spread_factor`` x the
base's seed range: wider with more seeds, as a range grows with the sample), the proxy's rate and verdict, per control its
rate, verdict, whether the proxy beats it (the stage's ``beaten``, with the interval of the
difference), and ``reproduces`` (faults the proxy passes and every control either fails or is beaten
on); plus the seeds, the machine, the load, the wall time and the command. Prints a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import yaml

MODELS = {"base": "data/proxy/base", "r0.5": "data/proxy/proxies/r0.5/model"}


def write_params(src: Path, dst: Path, seeds: int) -> None:
    """``src`` with ``proxy.grpo.fault_seeds = [0 .. seeds-1]``, written to ``dst``."""
    p = yaml.safe_load(src.read_text())
    p["proxy"]["grpo"]["fault_seeds"] = list(range(seeds))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(yaml.safe_dump(p, sort_keys=False))


def run_grpo(params: Path, model: str, name: str, out: Path, control: bool) -> float:
    """One model's GRPO runs (the stage's CLI); returns the wall seconds (of the run that made them,
    when reused)."""
    stamp = out / ".params_sha"
    digest = hashlib.sha256(params.read_bytes()).hexdigest()
    kept = stamp.read_text().split() if stamp.is_file() else []
    if (out / "summary.json").is_file() and kept[:1] == [digest]:
        return float(kept[1])  # the wall seconds of the run that made them
    t0 = time.time()
    cmd = [sys.executable, "-m", "proxy_artifacts", "grpo", "--params", str(params), "--model", model, "--name", name,
           "--out", str(out), "--timing", str(out.parent.parent / "timing" / f"{name}.json")] + (["--control"] if control else [])
    subprocess.run(cmd, check=True)
    wall = time.time() - t0
    stamp.write_text(f"{digest} {wall:.1f}")
    return wall


def summarise(fid: dict, controls: list[str]) -> dict:
    """Per fault: the base's self rate, the proxy's rate and verdict, each control's rate, verdict and
    ``beaten`` (from the fidelity metrics' ``controls.r0.5`` block)."""
    block = fid["controls"]["r0.5"]
    out = {}
    for fault, v in block["faults"].items():
        if "+fix" in fault:
            continue
        out[fault] = {"base_self_rate": v["base_self"]["rate"], "base_self_n": v["base_self"]["n"],
                      "tolerance": v["base_self"].get("tolerance"),
                      "proxy_rate": v["proxy"]["score"]["rate"], "proxy_passes": v["passes"],
                      "controls": {c: {"rate": v["controls"][f"control_{c}"]["score"]["rate"],
                                       "passes": v["controls"][f"control_{c}"]["passes"],
                                       "beaten": v["controls"][f"control_{c}"]["beaten"],
                                       "diff_ci95": v["controls"][f"control_{c}"].get("diff_ci95")}
                                   for c in controls if f"control_{c}" in v["controls"]}}
    return {"faults": out, "reproduces": block["reproduces"], "rule": block["rule"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--controls", nargs="*", default=["random_output_merge", "random_experts"])
    ap.add_argument("--params", type=Path, default=Path("params.yaml"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/proxy_fidelity_seeds"))
    ap.add_argument("--out", type=Path, default=Path("metrics/bench/proxy_fidelity_seeds.json"))
    args = ap.parse_args(argv)
    for c in args.controls:
        if not Path(f"data/proxy/controls/{c}/model").is_dir():
            raise SystemExit(f"proxy_fidelity_seeds: data/proxy/controls/{c}/model not found (run the proxy line first)")
    params = args.work / "params.yaml"
    write_params(args.params, params, args.seeds)
    load0, t0 = os.getloadavg()[0], time.time()
    walls = {}
    for name, model in MODELS.items():
        walls[name] = run_grpo(params, model, name, args.work / "grpo" / name, control=False)
    for c in args.controls:
        walls[f"control_{c}"] = run_grpo(params, f"data/proxy/controls/{c}/model", f"control_{c}",
                                         args.work / "grpo" / f"control_{c}", control=True)
    metrics = args.work / "fidelity.json"
    subprocess.run([sys.executable, "-m", "proxy_artifacts", "fidelity", "--params", str(params),
                    "--runs", *(f"{n}={args.work / 'grpo' / n}" for n in MODELS),
                    "--controls", *(f"r0.5:control_{c}={args.work / 'grpo' / f'control_{c}'}" for c in args.controls),
                    "--report", str(args.work / "fidelity_report.md"), "--metrics", str(metrics),
                    "--plots", str(args.work / "plots")], check=True)
    rec = {"fault_seeds": args.seeds, "controls": args.controls, **summarise(json.loads(metrics.read_text()), args.controls),
           "grpo_wall_s": {k: round(v, 1) for k, v in walls.items()}, "wall_s": round(time.time() - t0, 1),
           "load_avg_1min": [round(load0, 2), round(os.getloadavg()[0], 2)],
           "machine": {"cpu": platform.processor() or platform.machine(), "logical_cores": os.cpu_count()},
           "command": "python -m benchmarks.proxy_fidelity_seeds " + " ".join(argv if argv is not None else sys.argv[1:])}
    print(f"{'fault':22s} {'base':>6s} {'proxy':>6s} " + " ".join(f"{c[:18]:>20s}" for c in args.controls))
    for fault, v in rec["faults"].items():
        cells = " ".join(f"{'%.2f' % x['rate'] if x['rate'] is not None else '-':>6s} {'P' if x['passes'] else '-'}"
                         f"{'B' if x['beaten'] else '-':>12s}" for x in v["controls"].values())
        br, pr = v["base_self_rate"], v["proxy_rate"]
        print(f"{fault:22s} {br if br is None else round(br, 2)!s:>6s} {pr if pr is None else round(pr, 2)!s:>6s}"
              f"{'P' if v['proxy_passes'] else '-'} {cells}")
    print("reproduces:", rec["reproduces"])
    from passnet_common.io import atomic_write_json

    atomic_write_json(args.out, rec, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
