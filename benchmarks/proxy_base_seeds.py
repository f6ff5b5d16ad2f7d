"""The default base trained on several seeds: is it competent on every seed, not only the pipeline's?

For each seed the ``proxy.base`` params of ``params.yaml`` (only ``seed`` changed) are trained with
:func:`proxy_artifacts.base_model.train_base`; each seed's figures go to ``<out>/seed<N>.json`` as
soon as it is done (a shard: a rerun skips seeds whose file holds the same params and the same code,
:data:`CODE_FILES`), with the
machine, the load average before/after and the command. ``<out>.json`` summarises: per seed held-out
in-range / edge exact match and final loss; the minimum in range over the seeds against
``proxy.base.min_task_acc``; the edge's sampled reward (``task_reward_edge``: samples at T = 1, what GRPO's
rollouts start from; greedy ``task_acc_edge`` beside it) against the 20-60% band where RL has headroom.

    PYTHONPATH=$PWD nice -n 5 python -m benchmarks.proxy_base_seeds --seeds 0 1 2 \\
        --out metrics/bench/proxy_base_seeds --models data/proxy/bench_bases
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from passnet_common.io import atomic_write_json
from passnet_common.params import load_params
from proxy_artifacts.base_model import train_base
from proxy_artifacts.timing import load_average, machine

EDGE_BAND = (0.2, 0.6)  # the edge split's target: partly solved, so RL has headroom
#: the code that shapes a trained base (task definition, model, training loop): part of a shard's key
CODE_FILES = ("proxy_artifacts/corpus.py", "proxy_artifacts/base_model.py", "proxy_artifacts/metrics.py",
              "proxy_artifacts/config.py")


def code_sha256(root: Path = Path(__file__).resolve().parents[1]) -> str:
    """sha256 over :data:`CODE_FILES` (path and bytes): a shard trained by other code is rerun."""
    h = hashlib.sha256()
    for rel in CODE_FILES:
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()


def summarise(out_dir: Path, seeds: list[int], min_task_acc: float) -> dict:
    """The summary of the per-seed files present in ``out_dir``."""
    per = {}
    for s in seeds:
        f = out_dir / f"seed{s}.json"
        if f.exists():
            per[s] = json.loads(f.read_text())
    heldout = [v["task_acc_heldout"] for v in per.values()]
    edge = [v.get("task_reward_edge") for v in per.values()]
    return {"seeds": sorted(per), "missing": [s for s in seeds if s not in per],
            "task_acc_heldout": {s: v["task_acc_heldout"] for s, v in per.items()},
            "task_acc_edge": {s: v["task_acc_edge"] for s, v in per.items()},
            "task_reward_edge": {s: v.get("task_reward_edge") for s, v in per.items()},
            "task_nonzero_advantage_share_edge": {s: v.get("task_nonzero_advantage_share_edge") for s, v in per.items()},
            "final_train_loss": {s: v["final_loss"] for s, v in per.items()},
            "min_task_acc": min_task_acc, "task_acc_heldout_min": min(heldout, default=None),
            "competent_every_seed": bool(heldout) and min(heldout) >= min_task_acc and len(per) == len(seeds),
            "edge_band": list(EDGE_BAND), "edge_band_figure": "task_reward_edge (sampled at T=1: what GRPO starts from)",
            "edge_in_band_every_seed": bool(edge) and all(e is not None and EDGE_BAND[0] <= e <= EDGE_BAND[1] for e in edge)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default="metrics/bench/proxy_base_seeds", help="folder of per-seed files; <out>.json summary")
    ap.add_argument("--models", default="data/proxy/bench_bases", help="folder for the trained bases (seed<N>/)")
    a = ap.parse_args(argv)
    base = load_params(a.params, "proxy")["base"]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    code = code_sha256()
    for s in a.seeds:
        p = dict(base, seed=s)
        f = out / f"seed{s}.json"
        if f.exists() and (old := json.loads(f.read_text())).get("params") == p and old.get("code_sha256") == code:
            print(f"seed {s}: done already ({f})")
            continue
        load0 = load_average()
        summ = train_base(p, Path(a.models) / f"seed{s}")
        rec = {k: v for k, v in summ.items() if k != "log"} | {
            "params": p, "code_sha256": code, "machine": machine(), "load_average_start": load0, "load_average_end": load_average(),
            "command": "python -m benchmarks.proxy_base_seeds " + " ".join(sys.argv[1:] if argv is None else argv)}
        atomic_write_json(f, rec, indent=1)
        print(f"seed {s}: in range {summ['task_acc_heldout']}, edge {summ['task_acc_edge']} greedy, "
              f"{summ['task_reward_edge']} sampled, "
              f"{summ['train_seconds']} s")
    summary = summarise(out, a.seeds, float(base["min_task_acc"]))
    atomic_write_json(out.with_suffix(".json"), summary, indent=1)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
