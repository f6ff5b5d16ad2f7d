"""CLI of the dedupe stages.

    python -m dedupe group --extract data/extract --store data/graph_store --out data/dedupe \
        --metrics metrics/dataset.json
    python -m dedupe database --db data/passnet.duckdb
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dedupe", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("group", help="unique graphs, nodes table, dataset metrics")
    g.add_argument("--extract", default="data/extract")
    g.add_argument("--store", default="data/graph_store")
    g.add_argument("--out", default="data/dedupe")
    g.add_argument("--metrics", default="metrics/dataset.json")
    g.add_argument("--plots", default="plots", help="folder for the DVC plot data (CSV)")
    d = sub.add_parser("database", help="DuckDB file with a view per table")
    d.add_argument("--db", default="data/passnet.duckdb")
    args = ap.parse_args(argv)

    if args.cmd == "database":
        from dedupe.database import build_database

        views = build_database(args.db)
        print(f"database: {args.db} with views {', '.join(views)}")
        return 0

    import polars as pl
    from tqdm import tqdm

    from dedupe.group import dataset_metrics, unique_graphs, write_plot_data
    from dedupe.nodes import node_rows
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.schema import to_table

    ex = Path(args.extract)
    graphs = pl.read_parquet(ex / "graphs.parquet")
    extractions = pl.read_parquet(ex / "extractions.parquet")
    uniq = unique_graphs(graphs, args.store)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from passnet_common.canonical import hash_metadata

    write_parquet(out / "unique_graphs.parquet", to_table("unique_graphs", uniq.to_dicts(), metadata=hash_metadata()))
    rows = []
    for h in tqdm(uniq.get_column("graph_hash").to_list(), desc="nodes", unit="graph"):
        gpath = Path(args.store) / h[:2] / h / "graph.json"
        if not gpath.exists():
            raise FileNotFoundError(f"graph store has no {gpath} (store and graphs table out of step)")
        rows.extend(node_rows(h, json.loads(gpath.read_text())["nodes"]))
    write_parquet(out / "nodes.parquet", to_table("nodes", rows))
    write_plot_data(Path(args.plots), rows, graphs)
    metrics = dataset_metrics(extractions, graphs, uniq)
    atomic_write_json(args.metrics, metrics, indent=2)
    print(f"dedupe: {metrics['graphs']} graphs -> {metrics['unique_graphs']} unique "
          f"({metrics['unique_structures']} structures), {len(rows)} node rows")
    return 0


if __name__ == "__main__":
    from passnet_common.cli import run_cli

    sys.exit(run_cli(main))
