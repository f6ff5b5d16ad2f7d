"""Does healthy GRPO raise the held-out edge reward, for the base and a proxy, over seeds?

Healthy GRPO runs (:func:`proxy_artifacts.rl.run_grpo`, fault ``none``) of each model on each seed,
with the ``proxy.grpo`` params of ``params.yaml`` and a longer plan than the pipeline's
(``--steps``, ``--eval-problems``, ``--eval-samples``). Before and after each run: the mean reward of
``eval_samples`` samples at T=1 on the held-out edge set (what GRPO optimises) and greedy exact match
on the held-out in-range set. Every run is a shard, ``<out>/<model>.s<seed>.json`` (run summary and
per-step reward, KL, entropy, non-zero-advantage share), skipped on a rerun when it holds the same
plan and the same model weights (``model_sha256``). ``<out>.json``: per model the gain in points (after - before) with a 95% t interval over
seeds (:func:`proxy_artifacts.fidelity.mean_ci95`), the non-zero-advantage share, machine, load and
command.

Controls (``--reinit NAME=MODEL_DIR``): the model's architecture with freshly initialised weights
(``torch.manual_seed(0)``), saved beside the shards' models; a model that cannot do the task gets
no reward, so its gain says whether the learning belongs to the trained weights.

    PYTHONPATH=$PWD nice -n 5 python -m benchmarks.proxy_rl_study \\
        --models base=data/proxy/base r0.5=data/proxy/proxies/r0.5/model --reinit reinit_r0.5=data/proxy/proxies/r0.5/model
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from passnet_common.io import atomic_write_json
from passnet_common.params import load_params
from proxy_artifacts.checkpoint import weights_sha256
from proxy_artifacts.fidelity import mean_ci95
from proxy_artifacts.rl import run_grpo
from proxy_artifacts.timing import load_average, machine

#: the study's plan, fixed before its runs and read by docs/proxies.md: GRPO seeds and optimizer steps per run
#: (the defaults of --seeds / --steps; a run with other values is another study)
PLAN = {"seeds": (0, 1, 2, 3, 4), "steps": 60}
STEP_KEYS = ("step", "reward", "kl", "entropy", "nonzero_advantage_share", "grad_norm_trl", "update_norm")


def reinit_copy(model_dir: str, out_dir: Path) -> str:
    """Save ``model_dir``'s architecture with fresh weights (seed 0) and its tokenizer to ``out_dir``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if not (out_dir / "config.json").exists():
        torch.manual_seed(0)
        AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model_dir)).save_pretrained(out_dir)
        AutoTokenizer.from_pretrained(model_dir).save_pretrained(out_dir)
    return out_dir.as_posix()


def summarise(out: Path, names: list[str], seeds: list[int]) -> dict:
    """Gain and share per model from the shards present."""
    res = {}
    for n in names:
        runs = [json.loads(f.read_text()) for s in seeds if (f := out / f"{n}.s{s}.json").exists()]
        gains = [100 * (r["summary"]["edge_reward_after"] - r["summary"]["edge_reward_before"]) for r in runs]
        share = [sum(v) / len(v) for r in runs
                 if (v := [x["nonzero_advantage_share"] for x in r["steps"] if x.get("nonzero_advantage_share") is not None])]
        res[n] = {"seeds": [r["seed"] for r in runs],
                  "edge_reward_before": [r["summary"]["edge_reward_before"] for r in runs],
                  "edge_reward_after": [r["summary"]["edge_reward_after"] for r in runs],
                  "rl_gain_edge": mean_ci95(gains),
                  "heldout_acc_before": [r["summary"]["heldout_acc_before"] for r in runs],
                  "heldout_acc_after": [r["summary"]["heldout_acc_after"] for r in runs],
                  "nonzero_advantage_share": mean_ci95(share)}
        ci = res[n]["rl_gain_edge"]["ci95"]
        res[n]["gain_excludes_zero"] = bool(ci) and ci[0] > 0
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--models", nargs="+", default=[], help="name=model folder")
    ap.add_argument("--reinit", nargs="*", default=[], help="name=model folder: a re-initialised copy is the control")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(PLAN["seeds"]))
    ap.add_argument("--steps", type=int, default=PLAN["steps"])
    ap.add_argument("--eval-problems", type=int, default=128)
    ap.add_argument("--eval-samples", type=int, default=8)
    ap.add_argument("--out", default="metrics/bench/proxy_rl_study")
    ap.add_argument("--controls-dir", default="data/proxy/bench_controls")
    ap.add_argument("--summary-only", action="store_true", help="write <out>.json from the shards present, run nothing")
    a = ap.parse_args(argv)
    gp = dict(load_params(a.params, "proxy")["grpo"], steps=a.steps, eval_problems=a.eval_problems,
              eval_samples=a.eval_samples)
    models = dict(m.split("=", 1) for m in a.models)
    for item in a.reinit:
        name, src = item.split("=", 1)
        models[name] = (Path(a.controls_dir) / name).as_posix() if a.summary_only else \
            reinit_copy(src, Path(a.controls_dir) / name)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cmd = "python -m benchmarks.proxy_rl_study " + " ".join(sys.argv[1:] if argv is None else argv)
    for seed in a.seeds:
        for name, d in models.items():
            f = out / f"{name}.s{seed}.json"
            g = dict(gp, seed=seed)
            if a.summary_only:
                continue
            sha = weights_sha256(d)
            if f.exists() and (old := json.loads(f.read_text())).get("grpo") == g and old.get("model_sha256") == sha:
                continue
            load0 = load_average()
            r = run_grpo(d, "none", g)
            rec = {"model": name, "model_dir": d, "model_sha256": sha, "seed": seed, "grpo": g,
                   "summary": {k: v for k, v in r.items() if k not in ("steps", "timing")},
                   "steps": [{k: x[k] for k in STEP_KEYS if k in x} for x in r["steps"]],
                   "wall_s": sum(t["step_time_ms"] for t in r["timing"]["steps"]) / 1000 + r["timing"]["setup_s"],
                   "machine": machine(), "load_average_start": load0, "load_average_end": load_average(), "command": cmd}
            atomic_write_json(f, rec, indent=1)
            print(f"{name} s{seed}: edge reward {r['edge_reward_before']} -> {r['edge_reward_after']}, "
                  f"in range {r['heldout_acc_before']} -> {r['heldout_acc_after']}", flush=True)
    res = summarise(out, list(models), a.seeds)
    # headline figures keyed by model last (a model name may hold a dot: r0.5), for the docs' dotted keys
    summary = {"plan": {"steps": a.steps, "eval_problems": a.eval_problems, "eval_samples": a.eval_samples,
                        "seeds": a.seeds}, "models": models, "results": res,
               **{f"{k}_{part}": {n: r[k][part] for n, r in res.items()}
                  for k in ("rl_gain_edge", "nonzero_advantage_share") for part in ("mean", "ci95")},
               "edge_reward_before": {n: r["edge_reward_before"][0] if r["edge_reward_before"] else None
                                      for n, r in res.items()},
               "gain_excludes_zero": {n: r["gain_excludes_zero"] for n, r in res.items()},
               "machine": machine(), "load_average": load_average(), "command": cmd}
    atomic_write_json(out.with_suffix(".json"), summary, indent=1)
    print(json.dumps(summary["results"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
