"""``python -m fullscale fetch [--repo org/name@sha]``: verify the committed release, or download one."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from fullscale.commands import add_common, open_build
from fullscale.hub import fetch_release
from fullscale.pipeline import ROOT
from fullscale.release import describe_check, verify_release


def add_args(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--repo", default=None, help="org/name[@revision]: download instead of verifying")


def against_commit(release: Path, root: Path = ROOT) -> str | None:
    """One line on whether ``release`` is the one committed at ``HEAD`` of the git work tree ``root``
    (``git status`` of the folder: a release edited together with its ``manifest.json`` passes the manifest
    check, and is named here), or None where ``root`` is no git work tree or ``release`` lies outside it."""
    try:
        rel = release.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    # --ignored: a file .gitignore hides (``__pycache__/`` of a task run) is still not the committed release
    got = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored", "--", str(rel)], cwd=root,
                         capture_output=True, text=True)
    if got.returncode != 0:
        return None
    changed = [line[3:] for line in got.stdout.splitlines()]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    if not changed:
        return f"git: as committed at HEAD ({head})"
    return (f"git: {len(changed)} file(s) differ from the release committed at HEAD ({head}), e.g. {changed[:3]} "
            "(a release rebuilt and not yet committed, or edited: `git status` names them)")


def run(args: argparse.Namespace) -> int:
    b = open_build(args, write=False)
    release = (ROOT / b.out if not b.out.is_absolute() else b.out) / "release"
    if args.repo:
        v = fetch_release(args.repo, release)
    else:
        v = verify_release(release)
    print(f"release at {release}: {v['files']} files, {v['tasks']} tasks ({v['task_folders']} task folders), "
          f"{v['total_bytes'] / 1e6:.1f} MB; {describe_check(v)}")
    if not args.repo and (line := against_commit(release)):
        print(line)
    return 1 if v["bad"] else 0
