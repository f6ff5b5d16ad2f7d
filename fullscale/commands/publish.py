"""``python -m fullscale publish --repo org/name``: the release as a Hub dataset (``HF_ENDPOINT`` honoured)."""

from __future__ import annotations

import argparse

from fullscale.commands import add_common, open_build
from fullscale.hub import publish_release


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--repo", required=True)
    p.add_argument("--private", action="store_true")


def run(args: argparse.Namespace) -> int:
    b = open_build(args, write=False)
    print(publish_release(b.out / "release", args.repo, private=args.private))
    return 0
