"""The ``check_params`` DVC stage: validate every params block before any stage runs.

    python -m passnet_common.check_params params.yaml --families extract curate proxy_artifacts \
        --out data/params_check.txt

Each family registers its blocks from ``<family>/config.py`` (:mod:`passnet_common.config`); the
families are named on the command line and imported by name, so the core never imports a stage family
(``dedupe`` has no params block, hence no ``config`` module and no place in that list).
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import passnet_common.summary  # noqa: F401  (registers the core's own `summary` block)
from passnet_common.params import load_params


def main(argv: list[str] | None = None) -> int:
    """``python -m passnet_common.check_params PARAMS [--out FILE]``: validate every registered block
    of a params file (the ``check_params`` stage every DVC stage family depends on, so that a
    typo fails before DVC removes any stage's outputs); ``--out`` gets one line on success."""
    ap = argparse.ArgumentParser(prog="python -m passnet_common.check_params", description=main.__doc__)
    ap.add_argument("params", nargs="?", default="params.yaml")
    ap.add_argument("--families", nargs="*", default=[],
                    help="stage families whose <family>.config module registers params blocks")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    for family in args.families:
        importlib.import_module(f"{family}.config")  # registers the family's params blocks
    load_params(args.params)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(f"{Path(args.params).name}: every registered block valid\n", encoding="utf-8")
    print(f"params: {args.params} valid")
    return 0


if __name__ == "__main__":
    import sys

    from passnet_common.cli import run_cli

    sys.exit(run_cli(main))
