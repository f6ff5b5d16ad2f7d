"""One module per ``python -m fullscale`` subcommand (:data:`fullscale.__main__.COMMANDS`).

Each defines ``add_args(parser)`` and ``run(args) -> int`` (:mod:`passnet_common.cli`); the options
every command shares and the build they all open are here.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from fullscale.config import FullScaleConfig
from fullscale.params import merged_params, write_params


def add_common(p: argparse.ArgumentParser, metrics: bool = False) -> None:
    """``--params``, ``--full``, ``--override`` (repeatable) and, for the commands that write the build's
    summary (``metrics``), ``--metrics`` and ``--plot``."""
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--full", default="params_full.yaml", help="override file merged over --params")
    p.add_argument("--override", action="append", default=[], help="more override files, merged in order")
    if metrics:
        p.add_argument("--metrics", default="metrics/full/summary.json", help="where the build's summary is written")
        p.add_argument("--plot", default="plots/full_task_rates.png",
                       help="task-rate plot drawn from that summary, its CSV beside it ('' for none)")


@dataclass(frozen=True)
class Build:
    """The merged params of a build, its ``fullscale`` config, folders and the command line that opened it."""

    params: dict
    cfg: FullScaleConfig
    out: Path
    work: Path
    params_path: Path
    command: str


def open_build(args: argparse.Namespace, write: bool = True) -> Build:
    """Merge ``--params`` with ``--full`` and every ``--override`` and write the result to
    ``<work>/params.yaml`` (what the stage commands of a shard read); ``write`` False for the commands that
    run no stage (``fetch``, ``publish``), which then leave nothing behind.

    Raises:
        passnet_common.spec.ParamsError: an override holds an unknown key or a wrong type.
    """
    params, cfg = merged_params(args.params, *[f for f in [args.full, *args.override] if f])
    out, work = Path(cfg.out), Path(cfg.work)
    params_path = write_params(params, work / "params.yaml") if write else work / "params.yaml"
    argv = getattr(args, "argv", None)
    command = "python -m fullscale " + " ".join(sys.argv[1:] if argv is None else argv)
    return Build(params, cfg, out, work, params_path, command)
