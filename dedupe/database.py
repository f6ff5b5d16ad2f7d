"""The DuckDB database: one file exposing every Parquet table as a view.

Views (not copies) keep the database small and always in step with the Parquet files;
paths are stored relative to the repository root, so open the database from there
(``duckdb data/passnet.duckdb`` or ``duckdb.connect("data/passnet.duckdb", read_only=True)``).

The file is written with :data:`STORAGE_COMPATIBILITY` so that the DuckDB CLI that the project
installs (the ``duckdb-cli`` package, which trails the Python package's storage format) opens it.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

# Oldest storage format the file is written in (a DuckDB setting): readable by the installed
# ``duckdb`` CLI as well as the Python package.
STORAGE_COMPATIBILITY = "v1.2.0"

TABLES = {
    "models": "data/extract/models.parquet",
    "extractions": "data/extract/extractions.parquet",
    "graphs": "data/extract/graphs.parquet",
    "unique_graphs": "data/dedupe/unique_graphs.parquet",
    "nodes": "data/dedupe/nodes.parquet",
}


def build_database(db_path: str | Path, tables: dict[str, str] | None = None) -> list[str]:
    """(Re)create ``db_path`` with one view per table; returns the view names.

    Raises:
        FileNotFoundError: a table's Parquet file is missing (named in the message).
    """
    tables = tables or TABLES
    for name, path in tables.items():
        if not Path(path).exists():
            raise FileNotFoundError(f"table {name}: {path} does not exist (run the earlier stages)")
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(db_path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp), config={"storage_compatibility_version": STORAGE_COMPATIBILITY})
    try:
        for name, path in sorted(tables.items()):
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{path}')")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, db_path)
    return sorted(tables)
