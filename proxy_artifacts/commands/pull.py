"""``python -m proxy_artifacts pull``: fetch ``owner/name@revision`` into the Hub cache and verify its lineage."""

from __future__ import annotations

import argparse

from proxy_artifacts.hub import pull


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="owner/name@revision (a pinned commit sha)")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--cache-dir", help="Hub cache folder (default: HF_HUB_CACHE)")
    p.add_argument("--expect-base", help="fail unless lineage.json names this base model id")
    p.add_argument("--allow-unpinned", action="store_true",
                   help="accept a branch/tag or no revision (default: a 40-hex commit sha is required)")


def run(args: argparse.Namespace) -> int:
    print(pull(args.spec, endpoint=args.endpoint, cache_dir=args.cache_dir, expect_base=args.expect_base,
               allow_unpinned=args.allow_unpinned))
    return 0
