"""``python -m dedupe group``: unique graphs, the nodes table and the dataset metrics (:func:`dedupe.group.group_stage`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dedupe.group import group_stage


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extract", default="data/extract")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/dedupe")
    p.add_argument("--metrics", default="metrics/dataset.json")
    p.add_argument("--plots", default="plots", help="folder for the DVC plot data (CSV)")


def run(args: argparse.Namespace) -> int:
    m = group_stage(Path(args.extract), args.store, Path(args.out), Path(args.metrics), Path(args.plots))
    print(f"dedupe: {m['graphs']} graphs -> {m['unique_graphs']} unique "
          f"({m['unique_structures']} structures), {m['node_rows']} node rows")
    return 0
