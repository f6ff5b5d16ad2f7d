"""CLI of the proxy stages: ``python -m proxy_artifacts <subcommand>``.

Subcommands (each a thin wrapper over a function in this package):

- ``train-base``  train the default tiny MoE base (``proxy.base`` params)
- ``stats``       expert-activation statistics per calibration category (``proxy.model``, ``proxy.stats``)
- ``prune``       one proxy at ``--keep-ratio`` (``proxy.prune``, ``proxy.eval``)
- ``compare``     clustering vs frequency / REAP / random selection at every ratio (``proxy.compare``)
- ``publish``     push a proxy folder to the Hub (``--endpoint`` or ``HF_ENDPOINT``; token from env / login)
- ``pull``        fetch ``owner/name@revision`` into the Hub cache and verify its lineage
"""

from __future__ import annotations

import argparse
import json
import sys

from passnet_common.cli import run_cli
from passnet_common.io import atomic_write_json
from passnet_common.params import load_params


def _params(path: str) -> dict:
    return load_params(path, "proxy")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proxy_artifacts", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("train-base", help="train the default base model")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--out", required=True)
    p.add_argument("--metrics", help="JSON with training and specialisation numbers")

    p = sub.add_parser("stats", help="collect expert statistics")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id (default: proxy.model.path)")
    p.add_argument("--out", required=True)
    p.add_argument("--plot", help="PNG expert-load heatmap")

    p = sub.add_parser("prune", help="write one proxy")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id of the base (default: proxy.model.path)")
    p.add_argument("--stats", required=True, help="folder written by the stats subcommand")
    p.add_argument("--keep-ratio", type=float, required=True, help="share of routed experts kept per layer, in (0, 1]")
    p.add_argument("--out", required=True, help="output folder (model/, kept experts, card, lineage)")
    p.add_argument("--metrics", help="JSON file for the proxy's metrics")

    p = sub.add_parser("compare", help="compare selection methods")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base")
    p.add_argument("--stats", required=True)
    p.add_argument("--out", required=True, help="Parquet table of the proxies table")
    p.add_argument("--metrics", required=True)

    p = sub.add_parser("publish", help="push a proxy folder to the Hub")
    p.add_argument("folder", help="a proxy model folder (config, safetensors, lineage.json, README.md card)")
    p.add_argument("repo_id", help="owner/name on the Hub")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--private", action="store_true", help="create the repository as private")

    p = sub.add_parser("pull", help="download and verify owner/name@revision")
    p.add_argument("spec", help="owner/name@revision (a pinned commit sha)")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--cache-dir", help="Hub cache folder (default: HF_HUB_CACHE)")
    p.add_argument("--expect-base", help="fail unless lineage.json names this base model id")
    p.add_argument("--allow-unpinned", action="store_true",
                   help="accept a branch/tag or no revision (default: a 40-hex commit sha is required)")

    a = ap.parse_args(argv)
    if a.cmd == "train-base":
        from .base_model import train_base

        prm = _params(a.params)["base"]
        summary = train_base(prm, a.out)
        print(f"train-base: {summary['steps']} steps in {summary['train_seconds']} s, final loss {summary['final_loss']:.4f}")
        if a.metrics:
            spec = json.loads((__import__("pathlib").Path(a.out) / "specialisation.json").read_text())
            atomic_write_json(a.metrics, {
                "final_train_loss": summary["final_loss"],
                "num_parameters": summary["num_parameters"],
                "routing_entropy_by_category": {c: sum(v) / len(v) for c, v in spec["entropy"].items()},
                "routing_entropy_max": spec["max_entropy"],
                "js_divergence_between_categories": sum(spec["js_divergence"]) / len(spec["js_divergence"]),
            }, indent=1)
    elif a.cmd == "stats":
        from .pipeline import run_stats

        prm = _params(a.params)
        run_stats(prm, a.base or prm["model"]["path"], a.out, a.plot)
    elif a.cmd == "prune":
        from .pipeline import run_prune

        prm = _params(a.params)
        m = run_prune(prm, a.base or prm["model"]["path"], a.stats, a.keep_ratio, a.out, a.metrics)
        print(json.dumps({k: v for k, v in m.items() if "/" not in k}, indent=1))
    elif a.cmd == "compare":
        from .pipeline import run_compare

        prm = _params(a.params)
        run_compare(prm, a.base or prm["model"]["path"], a.stats, a.out, a.metrics)
    elif a.cmd == "publish":
        from .hub import publish

        print(publish(a.folder, a.repo_id, endpoint=a.endpoint, private=a.private))
    elif a.cmd == "pull":
        from .hub import pull

        print(pull(a.spec, endpoint=a.endpoint, cache_dir=a.cache_dir, expect_base=a.expect_base,
                   allow_unpinned=a.allow_unpinned))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
