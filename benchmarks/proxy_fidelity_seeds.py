"""The keep-0.5 proxy against its controls with more fault seeds than the pipeline's three.

The pipeline judges each fault on ``proxy.grpo.fault_seeds`` (3 seeds), so a proxy beats a control
"with an interval" only when the difference is large. This study reruns the same GRPO plan with
``--seeds`` fault seeds (everything else from ``params.yaml``) for the base, the keep-0.5 proxy and
the controls named by ``--controls`` (their models as the pipeline built them under
``data/proxy``), then the pipeline's own fidelity command on those runs, so the rule, the tolerances
(from the base's seed-to-seed spread) and the control comparison are the stage's, only with more
seeds. Every model's runs go to ``<work>/grpo/<name>`` and are skipped on a rerun when that folder
holds a ``summary.json`` made from the same GRPO params (:func:`grpo_digest` of ``<work>/params.yaml``,
the override written first).

    PYTHONPATH=$PWD nice -n 5 python -m benchmarks.proxy_fidelity_seeds [--seeds 10] \\
        [--controls random_output_merge random_experts] [--work /tmp/proxy_fidelity_seeds] \\
        [--out metrics/bench/proxy_fidelity_seeds.json]

Needs the proxy line's outputs (``dvc repro proxy_fidelity`` or a checkout that has them).
Writes per fault the base's self-reproduction rate, the magnitude tolerances (``sd_factor`` x the
base's seed-to-seed standard deviation), the proxy's rate and verdict, per control its
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
    """``src`` with ``proxy.grpo.fault_seeds`` and ``reference_fault_seeds`` (the base's) both ``[0 .. seeds-1]``:
    every model of the study on the same seeds, written to ``dst``."""
    p = yaml.safe_load(src.read_text())
    p["proxy"]["grpo"]["fault_seeds"] = list(range(seeds))
    p["proxy"]["grpo"]["reference_fault_seeds"] = list(range(seeds))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(yaml.safe_dump(p, sort_keys=False))


def grpo_digest(params: Path) -> str:
    """sha256 of the params a GRPO run reads: the ``proxy`` block without ``proxy.fidelity`` (read only by
    the fidelity command) and without ``proxy.grpo.reference_fault_seeds`` (read only by ``grpo --reference``,
    which the study does not run: it sets every model's fault seeds itself), as sorted JSON; a change to the
    fidelity rule reuses the runs."""
    p = yaml.safe_load(params.read_text())["proxy"]
    p = {k: v for k, v in p.items() if k != "fidelity"}
    p["grpo"] = {k: v for k, v in (p.get("grpo") or {}).items() if k != "reference_fault_seeds"}
    return hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest()


def run_grpo(params: Path, model: str, name: str, out: Path, control: bool) -> float:
    """One model's GRPO runs (the stage's CLI); returns the wall seconds (of the run that made them,
    when reused: the folder's ``.params_sha`` holds :func:`grpo_digest` and those seconds)."""
    stamp = out / ".params_sha"
    digest = grpo_digest(params)
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


def tolerance_by_seed_count(base_dir: Path, cp: dict, seeds: int, subset: int = 3) -> dict:
    """How the base's tolerances move with the seed count, on the study's own base runs: per fault run on
    exactly ``seeds`` seeds (the healthy ensemble and the fix runs have their own counts) and per quantity
    (:data:`proxy_artifacts.controls.QUANTITIES`, floors set to 0 so the spread shows), the tolerance
    from all seeds over the mean tolerance from every ``subset``-seed subset, under the stage's rule
    (``sd_factor`` x the sample SD) and under the range rule it replaced (2 x the range). For normal draws
    the expected ratios at 10 seeds vs 3 are c4(10) / c4(3) = 1.098 (SD) and d2(10) / d2(3) = 1.818 (range).
    Returns ``{"subset": 3, "seeds": seeds, "cells": k, "median_ratio_sd": .., "median_ratio_range": ..,
    "per_fault": {fault: {quantity: [ratio_sd, ratio_range]}}}``."""
    import itertools
    import statistics

    from proxy_artifacts import controls
    from proxy_artifacts.fidelity import _load_runs

    cp0 = dict(cp, abs_floor=0.0, log_floor=0.0)

    def sd_tol(vals, scale):
        return controls.tolerance(vals, scale, cp0)

    def range_tol(vals, scale):
        xs = controls.spread_values(vals, scale)
        return 2.0 * (max(xs) - min(xs)) if len(xs) > 1 else 0.0

    per, rs, rr = {}, [], []
    for fault, q in sorted(controls.quantities_of(_load_runs(base_dir)).items()):
        if len(q) != seeds or seeds <= subset:
            continue
        for name, scale in controls.QUANTITIES.items():
            vals = {sd: q[sd].get(name) for sd in sorted(q)}
            if any(v is None for v in vals.values()):
                continue
            subs = list(itertools.combinations(sorted(q), subset))
            ratios = []
            for rule in (sd_tol, range_tol):
                full = rule(list(vals.values()), scale)
                part = statistics.mean(rule([vals[sd] for sd in c], scale) for c in subs)
                ratios.append(round(full / part, 4) if part > 0 else None)
            if None in ratios:
                continue
            per.setdefault(fault, {})[name] = ratios
            rs.append(ratios[0])
            rr.append(ratios[1])
    return {"subset": subset, "seeds": seeds, "cells": len(rs),
            "median_ratio_sd": round(statistics.median(rs), 4) if rs else None,
            "median_ratio_range": round(statistics.median(rr), 4) if rr else None, "per_fault": per}


def quantities(grpo: Path, models: list[str]) -> dict:
    """{model: {fault: {seed: run quantities}}} of the study's runs under ``grpo`` (``base`` and ``models``)."""
    from proxy_artifacts import controls
    from proxy_artifacts.fidelity import _load_runs

    return {m: controls.quantities_of(_load_runs(grpo / m)) for m in ["base", *models]}


def verdict_stability(q: dict, models: list[str], cp: dict, seeds: int, sizes: tuple[int, ...] = (3, 9)) -> dict:
    """How often the magnitude half of the pass rule (score >= ``min_score``) holds on seed subsets of the
    study's runs (``q``: :func:`quantities`): per subset size k, per fault run on exactly ``seeds`` seeds and
    per model, the share of the C(seeds, k) subsets on which :func:`proxy_artifacts.controls.magnitude_score` (base tolerances from the
    subset's own base seeds, as the stage would have them with k seeds) reaches ``min_score``. At k = 3 this
    is what the pipeline's 3-seed verdict would be on another draw of seeds. Returns ``{str(k): {fault:
    {model: share, or None when the model has no run of the fault}}}``."""
    import itertools

    from proxy_artifacts import controls

    out: dict = {}
    for k in sizes:
        per: dict = {}
        for fault, bq in sorted(q["base"].items()):
            if len(bq) != seeds or k >= seeds:
                continue
            subs = list(itertools.combinations(sorted(bq), k))
            for m in models:
                mq = q[m].get(fault) or {}
                if not mq:  # not run for this model (controls run no fix runs)
                    per.setdefault(fault, {})[m] = None
                    continue
                ok = sum(1 for c in subs if (r := controls.magnitude_score({s: bq[s] for s in c},
                                                                           {s: mq[s] for s in c if s in mq}, cp)["rate"])
                         is not None and r >= float(cp["min_score"]))
                per.setdefault(fault, {})[m] = round(ok / len(subs), 4)
        out[str(k)] = per
    return out


def verdict_by_reference_seeds(q: dict, models: list[str], cp: dict, seeds: int, judged: int = 3,
                               references: tuple[int, ...] = (3, 5, 6, 8, 10), draws: int = 3, seed: int = 0) -> dict:
    """The magnitude half of the pass rule when a model is judged on ``judged`` seeds and the base's tolerance
    comes from ``n`` seeds (the pipeline's ``fault_seeds`` vs ``reference_fault_seeds``), on the study's runs
    (``q``: {model: {fault: {seed: run quantities}}}, ``base`` among them, :func:`quantities`): per n, per
    fault run on exactly ``seeds`` seeds (fix runs left out) and per model, the share of
    (judged-seed subset, base superset) pairs on which :func:`proxy_artifacts.controls.magnitude_score` (the
    base's values on the superset, the model's cells on the judged subset) reaches ``min_score``; every
    C(seeds, judged) subset, each with ``draws`` seeded supersets of n seeds holding it (one where n is
    ``judged`` or ``seeds``). Returns ``{str(n): {"faults": {fault: {model: share}}, "models": {model: [min,
    mean] over faults]}}}``."""
    import itertools
    import random

    from proxy_artifacts import controls

    rng = random.Random(seed)
    out: dict = {}
    for n in references:
        if not judged <= n <= seeds:
            continue
        per: dict = {}
        for fault, bq in sorted(q["base"].items()):
            if len(bq) != seeds or "+fix" in fault:
                continue
            all_seeds = sorted(bq)
            for m in models:
                mq = q[m].get(fault) or {}
                if len(mq) < seeds:
                    continue
                ok = tot = 0
                for sub in itertools.combinations(all_seeds, judged):
                    rest = [s for s in all_seeds if s not in sub]
                    for _ in range(1 if n in (judged, seeds) else draws):
                        sup = [*sub, *rng.sample(rest, n - judged)]
                        r = controls.magnitude_score({s: bq[s] for s in sup}, {s: mq[s] for s in sub}, cp)["rate"]
                        ok, tot = ok + int(r is not None and r >= float(cp["min_score"])), tot + 1
                per.setdefault(fault, {})[m] = round(ok / tot, 4)
        out[str(n)] = {"faults": per, "models": {m: [min(v[m] for v in per.values() if m in v),
                                                     round(sum(v[m] for v in per.values() if m in v)
                                                           / sum(1 for v in per.values() if m in v), 4)]
                                                 for m in models if any(m in v for v in per.values())}}
    return out


def perfect_proxy_pass_probability(cp: dict, seed_counts: tuple[int, ...] = (3, 5, 10), quantities: int = 4,
                                   draws: int = 20000, seed: int = 0) -> dict:
    """Power of the magnitude rule for a proxy whose runs come from the base's own distribution: per seed
    count n, the share of ``draws`` simulated faults (``quantities`` independent normal quantities, n base
    seeds and n proxy seeds each, tolerance ``sd_factor`` x the base's sample SD, floors left out) on which the
    share of matching cells reaches ``min_score``. ``{str(n): probability}``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = {}
    for n in seed_counts:
        base = rng.normal(size=(draws, quantities, n))
        prox = rng.normal(size=(draws, quantities, n))
        tol = float(cp["sd_factor"]) * base.std(axis=2, ddof=1, keepdims=True)
        share = (np.abs(prox - base) <= tol).mean(axis=(1, 2))
        out[str(n)] = round(float((share >= float(cp["min_score"])).mean()), 4)
    return out


def summarise(fid: dict, controls: list[str]) -> dict:
    """Per fault: the base's self rate, the proxy's rate, distance and verdict, each control's rate,
    distance, verdict and ``beaten`` with the interval of the paired distance difference; per control the
    difference pooled over the faults (``overall``); from the fidelity metrics' ``controls.r0.5`` block."""
    block = fid["controls"]["r0.5"]
    out = {}
    for fault, v in block["faults"].items():
        if "+fix" in fault:
            continue
        out[fault] = {"base_self_rate": v["base_self"]["rate"], "base_self_n": v["base_self"]["n"],
                      "tolerance": v["base_self"].get("tolerance"),
                      "proxy_rate": v["proxy"]["score"]["rate"], "proxy_passes": v["passes"],
                      "proxy_distance": (v["proxy"].get("distance") or {}).get("distance"),
                      "controls": {c: {"rate": v["controls"][f"control_{c}"]["score"]["rate"],
                                       "distance": (v["controls"][f"control_{c}"].get("distance") or {}).get("distance"),
                                       "passes": v["controls"][f"control_{c}"]["passes"],
                                       "beaten": v["controls"][f"control_{c}"]["beaten"],
                                       "diff_ci95": v["controls"][f"control_{c}"].get("diff_ci95")}
                                   for c in controls if f"control_{c}" in v["controls"]}}
    return {"faults": out, "reproduces": block["reproduces"], "rule": block["rule"],
            "overall": {c: (block.get("overall") or {}).get(f"control_{c}") for c in controls}}


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
    cp = yaml.safe_load(params.read_text())["proxy"]["fidelity"]["controls"]
    judged_models = ["r0.5", *(f"control_{c}" for c in args.controls)]
    q = quantities(args.work / "grpo", judged_models)  # every run's magnitudes, loaded once for both studies
    by_n = tolerance_by_seed_count(args.work / "grpo" / "base", cp, args.seeds)
    rec = {"fault_seeds": args.seeds, "controls": args.controls, **summarise(json.loads(metrics.read_text()), args.controls),
           "tolerance_by_seed_count": by_n,
           "verdict_stability": verdict_stability(q, judged_models, cp, args.seeds),
           "perfect_proxy_pass_probability": perfect_proxy_pass_probability(cp),
           "verdict_by_reference_seeds": verdict_by_reference_seeds(q, judged_models, cp, args.seeds),
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
    for c, o in rec["overall"].items():
        if o:
            print(f"pooled distance difference, {c} - proxy: {o['mean']:+.3f} [{o['ci95'][0]:+.3f}, {o['ci95'][1]:+.3f}] "
                  f"over {o['n']} runs")
    for k, per in rec["verdict_stability"].items():
        print(f"share of {k}-seed subsets where the magnitude score reaches min_score: "
              + ", ".join(f"{f} {v['r0.5']:.2f}" for f, v in per.items() if v.get("r0.5") is not None))
    print("a proxy drawn from the base's own distribution passes the magnitude rule with probability",
          rec["perfect_proxy_pass_probability"])
    for n, v in rec["verdict_by_reference_seeds"].items():
        print(f"judged on 3 seeds, base tolerance from {n} seeds: share of draws passing [min, mean over faults] "
              + ", ".join(f"{m} {x}" for m, x in v["models"].items()))
    print(f"tolerance from {by_n['seeds']} seeds / mean over {by_n['subset']}-seed subsets, median over {by_n['cells']} "
          f"(fault, quantity) cells: SD rule {by_n['median_ratio_sd']}, range rule {by_n['median_ratio_range']}")
    from passnet_common.io import atomic_write_json

    atomic_write_json(args.out, rec, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
