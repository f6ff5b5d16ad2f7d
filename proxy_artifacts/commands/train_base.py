"""``python -m proxy_artifacts train-base``: train the default base (``proxy.base``)."""

from __future__ import annotations

import argparse

from proxy_artifacts.base_model import check_competent, train_base, write_base_metrics
from proxy_artifacts.config import load_proxy_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--out", required=True)
    p.add_argument("--metrics", help="JSON with training and specialisation numbers")


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)["base"]
    summary = train_base(prm, args.out)
    print(f"train-base: {summary['steps']} steps in {summary['train_seconds']} s, final loss "
          f"{summary['final_loss']:.4f}, held-out {summary['task']} exact match {summary['task_acc_heldout']} "
          f"in range, {summary['task_acc_edge']} at the edge")
    if args.metrics:
        write_base_metrics(summary, prm, args.out, args.metrics)
    check_competent(summary, prm["min_task_acc"])
    return 0
