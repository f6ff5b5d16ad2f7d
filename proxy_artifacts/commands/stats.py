"""``python -m proxy_artifacts stats``: expert statistics per calibration category (``proxy.model``, ``proxy.stats``)."""

from __future__ import annotations

import argparse

from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.pipeline import run_stats


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id (default: proxy.model.path)")
    p.add_argument("--out", required=True)
    p.add_argument("--plot", help="PNG expert-load heatmap")


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)
    run_stats(prm, args.base or prm["model"]["path"], args.out, args.plot)
    return 0
