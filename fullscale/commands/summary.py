"""``python -m fullscale summary``: ``metrics/full/summary.json`` from the committed shards, and the task-rate
plot drawn from it (``--plot``, :mod:`fullscale.plots`)."""

from __future__ import annotations

import argparse
import json

from fullscale.commands import add_common, open_build
from fullscale.plots import write_task_rate_plot
from fullscale.shards import build_shards
from fullscale.summary import committed_release_tasks, write_summary


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p, metrics=True)


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    total = build_shards(b.out, b.cfg.num_shards, b.cfg.graphnet_shards)
    # the committed release's task count where it was built from the shards committed now (what release writes)
    s = write_summary(b.out, total, args.metrics, command=b.command, release_tasks=committed_release_tasks(b.out),
                      rate_floor=b.cfg.rate_floor)
    if args.plot:
        write_task_rate_plot(s, args.plot)
    print(json.dumps({k: s[k] for k in ("complete", "shards_done", "shards_total", "models", "captured",
                                          "unique_graphs", "families", "tasks")}))
    return 0
