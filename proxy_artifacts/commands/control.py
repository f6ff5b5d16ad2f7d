"""``python -m proxy_artifacts control``: one negative control of a proxy (``proxy.fidelity.controls``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from proxy_artifacts.commands import model_folder
from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.pipeline import build_control


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--kind", required=True, help="random_experts | random_output_merge | reinit | dense")
    p.add_argument("--base", help="local folder or Hub id of the base (default: proxy.model.path)")
    p.add_argument("--stats", required=True, help="folder written by the stats subcommand")
    p.add_argument("--proxy", required=True, help="the proxy's model folder (reinit takes its architecture, dense its weights)")
    p.add_argument("--out", required=True, help="output folder (model/, control.json)")


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)
    if not Path(args.stats).is_dir():
        raise FileNotFoundError(f"--stats {args.stats}: no such folder (written by the stats subcommand)")
    build_control(prm, args.kind, args.base or prm["model"]["path"], args.stats, model_folder(args.proxy, "--proxy"),
                  float(prm["fidelity"]["controls"]["keep_ratio"]), args.out)
    return 0
