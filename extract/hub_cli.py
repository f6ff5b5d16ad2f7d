"""Subcommands of ``python -m extract`` for the Hub: ``crawl`` (the ``hub`` catalog source),
``publish`` (tables + graph store to a Hub dataset repo)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_hub_commands(sub) -> None:
    """Register the Hub subcommands on an argparse subparsers object."""
    c = sub.add_parser("crawl", help="list Hub models and download their config.json (resumable)")
    c.add_argument("--params", default="params.yaml")
    c.add_argument("--work", default="data/hub")
    c.add_argument("--cache", default=None, help="Hub cache dir (default: huggingface_hub's)")
    c.add_argument("--endpoint", default=None, help="Hub endpoint (default: params hub.endpoint, then HF_ENDPOINT)")
    c.add_argument("--offline", action="store_true", help="crawl from the stored listing and the cache alone")
    p = sub.add_parser("publish", help="upload tables and graph store to a Hub dataset repo (not in dvc repro)")
    p.add_argument("--repo", required=True, help="dataset repo id, e.g. org/passnet-graphs")
    p.add_argument("--tables", nargs="+", default=["data/extract"], help="folders of Parquet tables")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/publish", help="local staging folder (the dataset as uploaded)")
    p.add_argument("--endpoint", default=None)
    p.add_argument("--private", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="write the staging folder only, upload nothing")


def run_hub_command(args: argparse.Namespace) -> int:
    """Run a subcommand registered by :func:`add_hub_commands`; returns the exit status."""
    if args.cmd == "crawl":
        from extract.sources.hub_crawl import crawl
        from passnet_common.params import load_params

        params = load_params(args.params, "hub")
        summary = crawl(params, Path(args.work), cache_dir=args.cache, endpoint=args.endpoint,
                        offline=True if args.offline else None)
        print(f"crawl: {json.dumps(summary, sort_keys=True)}")
        return 0
    if args.cmd == "publish":
        from extract.publish.dataset import publish

        res = publish(args.repo, [Path(t) for t in args.tables], Path(args.store), Path(args.out),
                      endpoint=args.endpoint, private=args.private, upload=not args.dry_run)
        print(f"publish: {json.dumps(res, sort_keys=True)}")
        return 0
    raise ValueError(f"unknown hub command {args.cmd!r}")
