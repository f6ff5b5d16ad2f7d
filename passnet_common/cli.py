"""The one CLI pattern of every stage family (``python -m extract|dedupe|curate|proxy_artifacts``).

A family's ``__main__.py`` holds only its table of subcommands and one call::

    COMMANDS = [
        Command("decompose", "split unique graphs into subgraphs", decompose_args, decompose_run),
        ...
    ]

    if __name__ == "__main__":
        sys.exit(run_cli(lambda: cli_main("python -m curate", __doc__, COMMANDS)))

``add_args(parser)`` declares a subcommand's options; ``run(args) -> exit code`` is a thin wrapper
over a function of the family that tests call directly (no domain logic in ``__main__.py``).
Bad input ends with one clear line, not a traceback (:func:`run_cli`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable, Iterable


@dataclass(frozen=True)
class Command:
    """One subcommand: its ``name``, one-line ``help``, ``add_args(parser)`` and ``run(args) -> int``."""

    name: str
    help: str
    add_args: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def cli_main(prog: str, doc: str | None, commands: Iterable[Command], argv: list[str] | None = None) -> int:
    """Parse ``argv`` against ``commands`` (one subparser each) and run the chosen one.

    Returns:
        the subcommand's exit status.
    """
    ap = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    table = {}
    for cmd in commands:
        cmd.add_args(sub.add_parser(cmd.name, help=cmd.help, description=cmd.help))
        table[cmd.name] = cmd
    args = ap.parse_args(argv)
    return table[args.cmd].run(args)


def run_cli(main: Callable[[], int]) -> int:
    """Run ``main``; ValueError / FileNotFoundError / KeyError (bad input: the message names
    it) print ``error: ...`` on stderr and return exit status 2."""
    try:
        return main()
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        stage = os.environ.get("DVC_STAGE")  # set by DVC for every stage command
        if stage:
            print(f"hint: DVC removed the outputs of stage {stage!r} before running it; "
                  f"`dvc checkout {stage}` restores them from the cache", file=sys.stderr)
        return 2
