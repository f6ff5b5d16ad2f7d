r"""CLI of the dedupe stages (one module per command, :mod:`passnet_common.cli`).

    python -m dedupe group --extract data/extract --store data/graph_store --out data/dedupe \
        --metrics metrics/dataset.json
    python -m dedupe database --db data/passnet.duckdb
"""

from __future__ import annotations

import sys

from passnet_common.cli import Command, cli_main, run_cli

COMMANDS = [
    Command("group", "unique graphs, nodes table, dataset metrics", "dedupe.group_cli"),
    Command("database", "DuckDB file with a view per table", "dedupe.database_cli"),
]


def main(argv: list[str] | None = None) -> int:
    """``python -m dedupe COMMAND ...`` (:data:`COMMANDS`)."""
    return cli_main("python -m dedupe", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
