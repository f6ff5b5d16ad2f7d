"""``python -m fullscale release``: ``<out>/release/`` from the committed shards (no build)."""

from __future__ import annotations

import argparse

from fullscale.commands import add_common, open_build
from fullscale.release import release_with_summary


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p, metrics=True)


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    man = release_with_summary(b.out, b.cfg, args.metrics, b.command)
    print(f"release: {man['tasks']} tasks ({man['held_out_variants']} variants held out), "
          f"{len(man['files'])} files, {man['total_bytes'] / 1e6:.1f} MB ({man['unique_bytes'] / 1e6:.1f} MB of distinct "
          f"contents{', OVER the size budget' if man.get('over_size_budget') else ''}) -> {b.out / 'release'}")
    return 0
