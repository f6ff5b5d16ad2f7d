"""``python -m fullscale release``: ``<out>/release/`` from the committed shards (no build), the summary made
again from the release's task count (``--metrics``) and the task-rate plot drawn from it (``--plot``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fullscale.commands import add_common, open_build
from fullscale.plots import write_task_rate_plot
from fullscale.release import release_with_summary


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p, metrics=True)


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    man = release_with_summary(b.out, b.cfg, args.metrics, b.command)
    if args.plot:  # from the summary the release just wrote, so the plot counts the tasks the release holds
        write_task_rate_plot(json.loads(Path(args.metrics).read_text()), args.plot)
    print(f"release: {man['tasks']} tasks ({man['held_out_variants']} variants held out), "
          f"{len(man['files'])} files, {man['total_bytes'] / 1e6:.1f} MB ({man['unique_bytes'] / 1e6:.1f} MB of distinct "
          f"contents{', OVER the size budget' if man.get('over_size_budget') else ''}) -> {b.out / 'release'}")
    return 0
