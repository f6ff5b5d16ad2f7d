"""``python -m curate curate``: long-tail labels, tasks, task folders, metrics and plots (:mod:`curate.select.stage`)."""

from __future__ import annotations

import argparse
import json

from curate.select.config import SelectConfig
from curate.select.stage import curate_stage
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--profile", default="data/profile")
    p.add_argument("--out", default="data/curate")
    p.add_argument("--metrics", default="metrics/curate.json")
    p.add_argument("--plots", default="plots")


def run(args: argparse.Namespace) -> int:
    cfg = SelectConfig.from_params(load_params(args.params, "curate").get("curate"), "curate.curate")
    metrics = curate_stage(cfg, args.decompose, args.profile, args.out, args.metrics, args.plots)
    print(f"curate: {metrics['long_tail_variants']} long-tail variants, {metrics['tasks']} tasks; {json.dumps(metrics)}")
    return 0
