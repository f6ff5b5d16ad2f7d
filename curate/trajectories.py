"""Scored candidates as training data: the ``trajectories`` table and a reward function.

PassNet fine-tunes a small model on ~4K scored trajectories of pass generation. Every candidate
the scorer runs becomes one row per (candidate, task) of the ``trajectories`` table
(:data:`TRAJECTORY_SCHEMA`): the candidate's source text and its sha256, the task, per subgraph
its status, speedup, violations and smallest passing level, the task's ES_t at t = -5, 0 and 1
and its AS (default convention), the candidate's validity and the environment (torch, Python,
CPU, scorer code version). The table holds no inputs or weights, so it can be published with
the dataset.

:func:`score_candidate` is the reward of an RL loop: source text in, the same isolated scoring
as ``python -m curate score`` (static check, spawned child, parent clock, every check), a result
dict out.
"""

from __future__ import annotations

import json
import platform
import tempfile
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

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
    import torch

    from curate.score_checks import SCORE_CODE_VERSION

    return {"torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpu": platform.processor() or platform.machine(), "score_code_version": str(SCORE_CODE_VERSION)}


def trajectory_rows(name: str, kind: str, source: str, rows: Sequence[dict], rejected: Sequence[str], p: float, b: float,
                    convention: str = "paper") -> list[dict[str, Any]]:
    """``trajectories`` rows of one candidate from its ``score_samples`` rows."""
    from curate.score_spec import source_hash
    from curate.scoring import aggregate_score, score_curve

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


def score_candidate(source: str, task_set: str = "builtin", kind: str = "module", cfg: dict | None = None,
                    p: float = 0.1, b: float = 0.1, convention: str = "paper", name: str = "candidate",
                    max_subgraphs: int | None = None) -> dict[str, Any]:
    """Score one candidate given as source text; the reward function of an RL loop.

    Args:
        source: Python source of a ``module`` (``backend(gm, example_inputs)``) or ``pass``
            (``PATTERNS`` / ``pattern`` + ``replacement``) candidate.
        task_set: ``builtin`` or a folder of the curate stage. kind: ``module`` | ``pass``.
        cfg: run configuration (the ``score`` block's timing / limits keys); default: quick
            timing (3 trials), 120 s per subgraph.
        p, b, convention: score parameters. max_subgraphs: seeded sample of the task set.

    Returns:
        ``{"valid", "rejected", "ES_t": {t: value}, "S_t", "aggregate_score", "reward",
        "rows", "trajectories"}``; ``reward`` is AS for a valid candidate and ``log10(b)`` (the
        floor: every sample failed) for a rejected or violating one. ES_t / AS are None when
        nothing was scored.

    Raises:
        ValueError: unknown ``kind`` or task set.
    """
    import math

    from curate.evaluate import run_candidate
    from curate.score_spec import parse_candidate
    from curate.scoring import aggregate_score, score_curve

    if kind not in ("module", "pass"):
        raise ValueError(f"score_candidate: kind must be module or pass, got {kind!r}")
    run_cfg = {"warmup": 1, "trials": 3, "min_trial_ms": 5.0, "retries": 0, "timeout_s": 120, "mem_cap_gb": 4,
               "retime_above": 10.0, **(cfg or {})}
    if max_subgraphs is not None:
        run_cfg["max_subgraphs"] = max_subgraphs
    with tempfile.TemporaryDirectory(prefix="passnet_cand_") as tmp:
        path = Path(tmp) / "candidate.py"
        path.write_text(source)
        rows, rejected = run_candidate(parse_candidate(f"{name}={kind}:{path}"), task_set, run_cfg, log=lambda *_: None)
    scored = [r for r in rows if r.get("scored", True)]
    valid = not rejected and not any(r.get("violations") for r in rows)
    es = s = agg = None
    if scored:
        curve = score_curve(scored, p, b, convention)
        es, s = {d["t"]: d["ES_t"] for d in curve}, {d["t"]: d["S_t"] for d in curve}
        agg = aggregate_score(es)
    reward = agg if (valid and agg is not None) else math.log10(b)
    return {"valid": valid, "rejected": rejected, "ES_t": es, "S_t": s, "aggregate_score": agg, "reward": reward,
            "rows": rows, "trajectories": trajectory_rows(name, kind, source, rows, rejected, p, b, convention)}
