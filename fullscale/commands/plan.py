"""``python -m fullscale plan``: the committed catalog and how it is cut into shards."""

from __future__ import annotations

import argparse
import json

from fullscale.commands import add_common, open_build
from fullscale.runner import build_plan


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p)


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    print(json.dumps(build_plan(b.params_path, b.out, b.cfg, b.params), indent=1))
    return 0
