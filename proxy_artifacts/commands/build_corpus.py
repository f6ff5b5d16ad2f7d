"""``python -m proxy_artifacts build-corpus``: rewrite the committed stdlib corpus file."""

from __future__ import annotations

import argparse

from proxy_artifacts import corpus


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", help="output file (default: proxy_artifacts/corpus_files/stdlib_py311.json.gz)")
    p.add_argument("--stdlib", help="stdlib folder (default: this interpreter's)")


def run(args: argparse.Namespace) -> int:
    print(corpus.build_corpus_file(args.out or corpus.CORPUS_FILE, args.stdlib))
    return 0
