"""The ``check_params`` DVC stage: validate every params block before any stage runs.

    python -m passnet_common.check_params params.yaml --out data/params_check.txt
"""

from __future__ import annotations

from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """``python -m passnet_common.check_params PARAMS [--out FILE]``: validate every registered block
    of a params file (the ``check_params`` stage every DVC stage family depends on, so that a
    typo fails before DVC removes any stage's outputs); ``--out`` gets one line on success."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m passnet_common.check_params", description=main.__doc__)
    ap.add_argument("params", nargs="?", default="params.yaml")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from passnet_common.params import load_params

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
