"""``python -m fullscale run``: every pending shard (local or Ray), resumable, optionally committed shard by shard."""

from __future__ import annotations

import argparse

from fullscale.commands import add_common, open_build
from fullscale.runner import run_build


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p, metrics=True)
    p.add_argument("--shards", default=None, help="comma-separated shard ids (default: every pending shard)")
    p.add_argument("--max-shards", type=int, default=None, help="run at most this many pending shards (the first in "
                                                                "--order)")
    p.add_argument("--order", choices=("cost", "yield", "id"), default=None, help="which pending shard runs next (default: "
                                                                         "fullscale.order; docs/full_scale.md)")
    p.add_argument("--executor", choices=("local", "ray"), default=None, help="default: fullscale.executor")
    p.add_argument("--commit", action="store_true", help="git-commit each finished shard (its folder, or its failure record and attempts "
                        "pack, with the summary, the plot and its CSV, and the catalog)")
    p.add_argument("--stop-after", default=None, help="HH:MM UTC: start no shard after it (default: fullscale.stop_after_utc)")
    p.add_argument("--workers", type=int, default=None, help="local executor: shards at once, each pinned to its "
                                                             "own cores (default: fullscale.local_workers)")
    p.add_argument("--census", action="store_true", help="census shards: capture, dedupe and decompose only, into "
                                                         "<out>/census/ (every graph and structure, no profile)")
    p.add_argument("--drain", action="store_true", help="drain shards: each committed full shard whose rate floor left "
                                                        "members of a structure nobody has profiled is run again for "
                                                        "them (quota, no floor), into <out>/drain/")
    p.add_argument("--deadline", default=None, help="HH:MM UTC: stop a running stage then; its shard is recorded as failed "
                                                    "(the phase it stopped in) and runs again next time; a time "
                                                    "that passed less than 12 h ago is refused")


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    run_build(b.params, b.cfg, b.params_path, args.metrics, b.command, plot_path=args.plot or None,
              only=[int(s) for s in args.shards.split(",")] if args.shards else None, max_shards=args.max_shards,
              executor=args.executor, commit=args.commit, stop_after_utc=args.stop_after, deadline_utc=args.deadline,
              census=args.census, drain=args.drain, workers=args.workers, order=args.order)
    return 0
