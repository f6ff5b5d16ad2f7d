"""``python -m dedupe database``: the DuckDB file with a view per table (:func:`dedupe.database.build_database`)."""

from __future__ import annotations

import argparse

from dedupe.database import build_database


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="data/passnet.duckdb")


def run(args: argparse.Namespace) -> int:
    views = build_database(args.db)
    print(f"database: {args.db} with views {', '.join(views)}")
    return 0
