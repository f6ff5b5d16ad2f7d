"""``python -m fullscale fetch [--repo org/name@sha]``: verify the committed release, or download one."""

from __future__ import annotations

import argparse

from fullscale.commands import add_common, open_build
from fullscale.hub import fetch_release
from fullscale.pipeline import ROOT
from fullscale.release import describe_check, verify_release


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--repo", default=None, help="org/name[@revision]: download instead of verifying")


def run(args: argparse.Namespace) -> int:
    b = open_build(args)
    if args.repo:
        v = fetch_release(args.repo, b.out / "release")
    else:
        v = verify_release(ROOT / b.out / "release" if not b.out.is_absolute() else b.out / "release")
    print(f"release: {v['files']} files, {v['tasks']} tasks ({v['task_folders']} task folders), "
          f"{v['total_bytes'] / 1e6:.1f} MB; {describe_check(v)}")
    return 1 if v["bad"] else 0
