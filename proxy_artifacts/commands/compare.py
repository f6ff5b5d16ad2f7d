"""``python -m proxy_artifacts compare``: every selection method at every keep ratio (``proxy.compare``)."""

from __future__ import annotations

import argparse

from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.pipeline import run_compare


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base")
    p.add_argument("--stats", required=True)
    p.add_argument("--out", required=True, help="Parquet table of the proxies table")
    p.add_argument("--metrics", required=True)


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)
    run_compare(prm, args.base or prm["model"]["path"], args.stats, args.out, args.metrics)
    return 0
