"""Shared helpers of the scoring tests: the fixture candidates of ``tests/score_candidates`` by name,
the violation kinds of a row, and whether a row scores the floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from curate.score.scoring import score_curve
from curate.score.spec import parse_candidate

HERE = Path(__file__).parent / "score_candidates"


def cand(name: str, kind: str = "module"):
    """The candidate ``tests/score_candidates/<name>.py`` as ``kind`` (module | pass)."""
    return parse_candidate(f"{name}={kind}:{HERE / (name + '.py')}")


def kinds(row: dict) -> set[str]:
    """The violation kinds of a scored row (the part of each violation before ``:``)."""
    return {v.split(":")[0] for v in row["violations"]}


def floored(row: dict) -> bool:
    """The row scores b (0.1) at every level in both conventions, S_t and ES_t."""
    return all(d["ES_t"] == pytest.approx(0.1) and d["S_t"] == pytest.approx(0.1)
               for conv in ("paper", "graphnet") for d in score_curve([row], 0.1, 0.1, conv))
