"""``python -m extract crawl``: list Hub models and download their config.json (the ``hub`` source)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from extract.config import HubConfig
from extract.sources.hub_crawl import crawl
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--work", default="data/hub")
    p.add_argument("--cache", default=None, help="Hub cache dir (default: huggingface_hub's)")
    p.add_argument("--endpoint", default=None, help="Hub endpoint (default: params hub.endpoint, then HF_ENDPOINT)")
    p.add_argument("--offline", action="store_true", help="crawl from the stored listing and the cache alone")


def run(args: argparse.Namespace) -> int:
    cfg = HubConfig.from_params(load_params(args.params, "hub"), "hub")
    summary = crawl(cfg, Path(args.work), cache_dir=args.cache, endpoint=args.endpoint,
                    offline=True if args.offline else None)
    print(f"crawl: {json.dumps(summary, sort_keys=True)}")
    return 0
