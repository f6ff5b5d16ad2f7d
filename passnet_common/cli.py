"""The one CLI pattern of every stage family (``python -m extract|dedupe|curate|proxy_artifacts``).

A family's ``__main__.py`` holds only its table of subcommands and one call::

    COMMANDS = [
        Command("decompose", "split unique graphs into subgraphs", "curate.decompose.cli"),
        ...
    ]

    if __name__ == "__main__":
        sys.exit(run_cli(lambda: cli_main("python -m curate", __doc__, COMMANDS)))

Each command names a module that defines ``add_args(parser)`` (its options) and ``run(args) -> int``
(a thin wrapper over functions of the family that tests call directly: no domain logic in
``__main__.py``); ``args.argv`` holds the command line after the program name. Only the chosen
command's module is imported: a stage's command imports its own code and nothing of its siblings',
which is what lets ``tests/test_dvc_deps.py`` check each stage's ``dvc.yaml`` deps against the
import closure of that module. Bad input ends with one clear line, not a traceback (:func:`run_cli`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable, Iterable


@dataclass(frozen=True)
class Command:
    """One subcommand: its ``name``, one-line ``help`` and the ``module`` (dotted name) that defines
    ``add_args(parser)`` and ``run(args) -> int``."""

    name: str
    help: str
    module: str


def cli_main(prog: str, doc: str | None, commands: Iterable[Command], argv: list[str] | None = None) -> int:
    """Parse ``argv`` against ``commands`` and run the chosen one (importing only its module).

    Returns:
        the subcommand's exit status (argparse exits 2 on a bad command line).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    table = {cmd.name: cmd for cmd in commands}
    ap = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="{" + ",".join(table) + "}")
    chosen = table.get(argv[0]) if argv else None
    for cmd in table.values():
        parser = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        if cmd is chosen:
            module = importlib.import_module(cmd.module)
            module.add_args(parser)
    args = ap.parse_args(argv)
    args.argv = argv  # the command line as given, for the records that name the command that wrote them
    return importlib.import_module(table[args.cmd].module).run(args)


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
