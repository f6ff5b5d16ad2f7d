"""Scored candidates as training data: the ``trajectories`` table and a reward function.

PassNet fine-tunes a small model on ~4K scored trajectories of pass generation. Every candidate
the scorer runs becomes one row per (candidate, task) of the ``trajectories`` table
(:data:`TRAJECTORY_SCHEMA`): the candidate's source text and its sha256, the task, per subgraph
its status, speedup, violations and smallest passing level, the task's ES_t at t = -5, 0 and 1
and its AS (default convention), the candidate's validity and the environment (torch, Python,
CPU, scorer code version). The table holds no inputs or weights, so it can be published with
the dataset.

:func:`curate.score.reward.score_candidate` (the reward of an RL loop) returns these rows too.
"""

from __future__ import annotations

import json
import platform
from typing import Any, Sequence

import pyarrow as pa
import torch

from curate.score.config import ScoreConfig
from curate.score.defenses.checks import SCORE_CODE_VERSION
from curate.score.scoring import aggregate_score, score_curve
from curate.score.spec import source_hash

TRAJECTORY_SCHEMA = pa.schema([
    pa.field("source_sha256", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("candidate", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),  # module | pass | backend | eager
    pa.field("task_id", pa.string()),  # null: the candidate was rejected statically (not run)
    pa.field("subgraph_ids", pa.list_(pa.string())),
    pa.field("statuses", pa.list_(pa.string())),
    pa.field("speedups", pa.list_(pa.float64())),
    pa.field("min_pass_t", pa.list_(pa.int32())),
    pa.field("violations", pa.list_(pa.string())),
    pa.field("rejected", pa.list_(pa.string())),
    pa.field("es_t_m5", pa.float64()),
    pa.field("es_t_0", pa.float64()),
    pa.field("es_t_1", pa.float64()),
    pa.field("aggregate_score", pa.float64()),
    pa.field("convention", pa.string(), nullable=False),
    pa.field("valid", pa.bool_(), nullable=False),
    pa.field("environment", pa.string(), nullable=False),  # JSON
])
"""One row per candidate x task (a statically rejected candidate: one row, task_id null)."""


def environment() -> dict[str, str]:
    """What a trajectory's figures depend on besides the candidate: torch, Python, CPU, scorer code."""
    return {"torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpu": platform.processor() or platform.machine(), "score_code_version": str(SCORE_CODE_VERSION)}


def trajectory_rows(name: str, kind: str, source: str, rows: Sequence[dict], rejected: Sequence[str], p: float, b: float,
                    convention: str = ScoreConfig().convention) -> list[dict[str, Any]]:
    """``trajectories`` rows of one candidate from its ``score_samples`` rows."""
    env = json.dumps(environment(), sort_keys=True)
    base = {"source_sha256": source_hash(source), "source": source, "candidate": name, "kind": kind,
            "rejected": list(rejected), "convention": convention, "environment": env}
    valid = not rejected and not any(r.get("violations") for r in rows)
    if not rows:
        return [{**base, "task_id": None, "valid": False}]
    out = []
    for tid in sorted({str(r["task_id"]) for r in rows}):
        rs = [r for r in rows if str(r["task_id"]) == tid]
        scored = [r for r in rs if r.get("scored", True)]
        d: dict[str, Any] = {**base, "task_id": tid, "valid": valid, "subgraph_ids": [r["subgraph_id"] for r in rs],
                             "statuses": [r.get("status") for r in rs], "speedups": [r.get("speedup") for r in rs],
                             "min_pass_t": [r.get("min_pass_t") for r in rs],
                             "violations": [v for r in rs for v in (r.get("violations") or [])]}
        if scored:
            es = {c["t"]: c["ES_t"] for c in score_curve(scored, p, b, convention)}
            d.update(es_t_m5=es[-5], es_t_0=es[0], es_t_1=es[1], aggregate_score=aggregate_score(es))
        out.append(d)
    return out


def trajectories_table(rows: Sequence[dict]) -> pa.Table:
    """Typed ``trajectories`` table (missing keys null). Raises pyarrow errors naming the column."""
    cols = {}
    for f in TRAJECTORY_SCHEMA:
        cols[f.name] = pa.array([r.get(f.name) for r in rows], type=f.type)
    return pa.Table.from_pydict(cols, schema=TRAJECTORY_SCHEMA)
