"""``python -m proxy_artifacts publish``: push a proxy folder to the Hub (``--endpoint`` or ``HF_ENDPOINT``)."""

from __future__ import annotations

import argparse

from proxy_artifacts.hub import publish


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", help="a proxy model folder (config, safetensors, lineage.json, README.md card)")
    p.add_argument("repo_id", help="owner/name on the Hub")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.add_argument("--fidelity", help="metrics/fidelity.json: the card shows RL and fault figures (needs --name)")
    p.add_argument("--name", help="the proxy's name in the fidelity record (r0.5, ...); refused when it names "
                                  "another proxy than the folder's (keep ratio, parameter count)")
    p.add_argument("--base-metrics", help="metrics/proxy_base.json: the card shows the task and its chance level")
    p.add_argument("--base-model", help="the base's Hub repo id for the card's base_model metadata; for a local base "
                                        "the repo must hold the same weights (checked), else the card says why it "
                                        "has no base_model")


def run(args: argparse.Namespace) -> int:
    print(publish(args.folder, args.repo_id, endpoint=args.endpoint, private=args.private, fidelity=args.fidelity,
                  proxy_name=args.name, base_metrics=args.base_metrics, base_model=args.base_model))
    return 0
