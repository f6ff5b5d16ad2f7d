"""``python -m extract export``: stored graphs as GraphNet sample folders (:func:`extract.publish.graphnet_export.export_graphs`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from extract.publish.graphnet_export import export_graphs


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", required=True, help="folder of samples, one <graph_hash>/ each")
    p.add_argument("--graph-hash", action="append", default=None, metavar="H",
                   help="a graph to export (repeatable); default: every stored graph")
    p.add_argument("--graphs", default="data/extract/graphs.parquet",
                   help="graphs table naming each graph's models (model_name); skipped when absent")


def run(args: argparse.Namespace) -> int:
    res = export_graphs(Path(args.store), Path(args.out), args.graph_hash, Path(args.graphs))
    print(f"export: {len(res['exported'])} written, {len(res['kept'])} already complete, "
          f"{len(res['failed'])} not representable -> {args.out}")
    for h, msg in res["failed"].items():
        print(f"  {h}: {msg}")
    return 0
