"""``python -m proxy_artifacts prune``: one proxy at ``--keep-ratio`` (``proxy.prune``, ``proxy.eval``)."""

from __future__ import annotations

import argparse
import json

from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.pipeline import run_prune


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id of the base (default: proxy.model.path)")
    p.add_argument("--stats", required=True, help="folder written by the stats subcommand")
    p.add_argument("--keep-ratio", type=float, required=True, help="share of routed experts kept per layer, in (0, 1]")
    p.add_argument("--out", required=True, help="output folder (model/, kept experts, card, lineage)")
    p.add_argument("--metrics", help="JSON file for the proxy's metrics")


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)
    m = run_prune(prm, args.base or prm["model"]["path"], args.stats, args.keep_ratio, args.out, args.metrics)
    print(json.dumps({k: v for k, v in m.items() if "/" not in k}, indent=1))
    return 0
