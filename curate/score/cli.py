"""``python -m curate score``: candidates scored (S_t / ES_t) on a task set (:mod:`curate.score.evaluate`)."""

from __future__ import annotations

import argparse

from curate.score.evaluate import add_score_args, score_main


def add_args(p: argparse.ArgumentParser) -> None:
    """The ``score`` options (:func:`curate.score.evaluate.add_score_args`)."""
    add_score_args(p)


def run(args: argparse.Namespace) -> int:
    """Run the ``score`` subcommand (:func:`curate.score.evaluate.score_main`)."""
    return score_main(args)
