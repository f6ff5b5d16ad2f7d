"""Render the figures of the documentation from the data, so text and numbers cannot drift.

``python -m passnet_common.docs README.md docs/*.md [--db data/passnet.duckdb] [--check]``
rewrites two kinds of marked blocks in place:

* a ```` ```sql ```` block preceded by the line ``<!-- query -->``: the query is run against the
  DuckDB database (read-only, from the repository root) and its printed result replaces the plain
  ```` ``` ```` block that follows the SQL (one is inserted when there is none);
* ``<!-- metrics path/to/file.json [key ...] -->`` ... ``<!-- /metrics -->``: the lines between
  become a two-column Markdown table of the file's top-level scalar figures (or of the named
  keys, dotted paths allowed), with the file named under it.

``--check`` writes nothing and exits 1 when a file would change (for CI or a pre-commit hook).

Raises:
    FileNotFoundError: the database or a metrics file does not exist (named in the message).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import duckdb

from passnet_common.io import atomic_write_text
from passnet_common.summary import read_figure

QUERY = re.compile(r"(<!-- query -->\n```sql\n(?P<sql>.*?)\n```\n)(?:```\n.*?\n```\n)?", re.S)
METRICS = re.compile(r"(<!-- metrics (?P<args>[^>]*?) -->\n)(?P<body>.*?)(<!-- /metrics -->)", re.S)


def run_query(con, sql: str) -> str:
    """The DuckDB box rendering of ``sql``'s result (what the CLI prints), without a trailing newline.

    Raises:
        ValueError: the query failed (the message names its first line and DuckDB's error; views
            read paths relative to the repository root, so run from there).
    """

    try:
        return str(con.sql(sql)).rstrip("\n")
    except duckdb.Error as exc:
        raise ValueError(f"query {sql.splitlines()[0]!r} failed: {exc} (run from the repository root)") from exc


def metrics_table(args: str) -> str:
    """Markdown table of a metrics file's figures: ``args`` = ``"<file> [key ...]"``."""

    path, *keys = args.split()
    data = json.loads(Path(path).read_text())
    if not keys:
        keys = [k for k, v in data.items() if not isinstance(v, (dict, list))]
    rows = ["| figure | value |", "|---|---|"]
    for k in keys:
        value, why = read_figure(f"{path}:{k}")
        if why:
            raise KeyError(why)
        rows.append(f"| `{k}` | {value if not isinstance(value, float) else round(value, 4)} |")
    return "\n".join(rows) + f"\n\n(from `{path}`)\n"


def render(text: str, con) -> str:
    """``text`` with every marked block re-rendered (see the module docstring)."""
    if con is not None:
        text = QUERY.sub(lambda m: m.group(1) + "```\n" + run_query(con, m.group("sql")) + "\n```\n", text)
    return METRICS.sub(lambda m: m.group(1) + metrics_table(m.group("args")) + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m passnet_common.docs", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--db", default="data/passnet.duckdb")
    ap.add_argument("--check", action="store_true", help="exit 1 when a file would change; write nothing")
    args = ap.parse_args(argv)
    con = None
    if any("<!-- query -->" in f.read_text() for f in args.files):
        if not Path(args.db).exists():
            raise FileNotFoundError(f"{args.db} does not exist (run `dvc repro database` first)")

        con = duckdb.connect(args.db, read_only=True)

    stale = []
    for f in args.files:
        old = f.read_text()
        new = render(old, con)
        if new != old:
            stale.append(str(f))
            if not args.check:
                atomic_write_text(f, new)
    print(("stale: " if args.check else "rendered: ") + (", ".join(stale) or "nothing changed"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    from passnet_common.cli import run_cli

    sys.exit(run_cli(lambda: main()))
