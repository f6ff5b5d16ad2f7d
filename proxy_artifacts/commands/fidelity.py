"""``python -m proxy_artifacts fidelity``: fault signatures, base-vs-proxy fidelity, cost projection (``proxy.fidelity``)."""

from __future__ import annotations

import argparse
import json

from proxy_artifacts.commands import parse_pairs
from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.fidelity import parse_control_dirs, run_fidelity


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--runs", nargs="+", required=True, help="name=folder of each model's grpo output (one is base=...)")
    p.add_argument("--report", required=True, help="markdown report path")
    p.add_argument("--metrics", required=True, help="metrics/fidelity.json")
    p.add_argument("--plots", required=True, help="folder for fidelity_*.png")
    p.add_argument("--controls", nargs="*", default=[],
                   help="proxy:name=folder of each control's grpo output (e.g. r0.5:control_reinit=...)")


def run(args: argparse.Namespace) -> int:
    dirs = parse_pairs(args.runs, "--runs", "name=folder")
    ctl = parse_control_dirs(args.controls)
    m = run_fidelity(load_proxy_params(args.params), dirs, args.report, args.metrics, args.plots, control_dirs=ctl)
    print(json.dumps({"false_positive_rate": m["false_positive_rate"], "reproduction_rate": m["reproduction_rate"],
                      "base_self_reproduction_rate": m["base_self_reproduction_rate"]}, indent=1))
    return 0
