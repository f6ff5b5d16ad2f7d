"""``python -m extract publish``: tables and graph store to a Hub dataset repo (not in ``dvc repro``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from extract.publish.dataset import publish


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", required=True, help="dataset repo id, e.g. org/passnet-graphs")
    p.add_argument("--tables", nargs="+", default=["data/extract"], help="folders of Parquet tables")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/publish", help="local staging folder (the dataset as uploaded)")
    p.add_argument("--endpoint", default=None)
    p.add_argument("--private", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="write the staging folder only, upload nothing")


def run(args: argparse.Namespace) -> int:
    res = publish(args.repo, [Path(t) for t in args.tables], Path(args.store), Path(args.out),
                  endpoint=args.endpoint, private=args.private, upload=not args.dry_run)
    print(f"publish: {json.dumps(res, sort_keys=True)}")
    return 0
