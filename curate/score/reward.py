"""The reward of an RL loop that generates passes: :func:`score_candidate`.

Source text in, the same isolated scoring as ``python -m curate score`` (static check, sandbox
processes, parent clock, every check), a result dict out, with the rows of the ``trajectories``
table (:mod:`curate.score.trajectories`) for that candidate.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from curate.score.config import ScoreConfig, run_config
from curate.score.defenses.revalidate import revalidate
from curate.score.evaluate import REFERENCES, reference_rows, run_candidate
from curate.score.scoring import aggregate_score, score_curve
from curate.score.spec import parse_candidate
from curate.score.trajectories import trajectory_rows

_DEFAULTS = ScoreConfig()
"""The ``score`` block at its defaults (``p``, ``b``, ``convention``)."""


def score_candidate(source: str, task_set: str = "builtin", kind: str = "module", cfg: dict | None = None,
                    p: float = _DEFAULTS.p, b: float = _DEFAULTS.b, convention: str = _DEFAULTS.convention, name: str = "candidate",
                    max_subgraphs: int | None = None, reference: str = "eager") -> dict[str, Any]:
    """Score one candidate given as source text; the reward function of an RL loop.

    Args:
        source: Python source of a ``module`` (``backend(gm, example_inputs)``) or ``pass``
            (``PATTERNS`` / ``pattern`` + ``replacement``) candidate.
        task_set: ``builtin`` or a folder of the curate stage. kind: ``module`` | ``pass``.
        cfg: run configuration (the ``score`` block's timing / limits keys); default: quick
            timing (3 trials), 120 s per subgraph.
        p, b, convention: score parameters (default: :class:`curate.score.config.ScoreConfig`'s).
        max_subgraphs: seeded sample of the task set.

        reference: ``eager`` (PassNet's) or ``dynamo`` (Dynamo-only, ``torch.compile(backend="eager")``):
            the reference the ``reward`` is computed against; both curves are returned.

    Returns:
        ``{"valid", "rejected", "ES_t": {t: value}, "S_t", "aggregate_score", "ES_t_vs_dynamo",
        "aggregate_score_vs_dynamo", "reward", "rows", "revalidation", "trajectories"}``; ``reward``
        is AS (vs ``reference``) for a valid candidate and ``log10(b)`` (the floor: every sample
        failed) for a rejected or violating one, or one that fails re-validation on held-out shapes
        and seeds (``revalidation``, :mod:`curate.score.defenses.revalidate`; run for a candidate
        valid on the task set when ``revalidate.top`` > 0, the default). ES_t / AS are None when
        nothing was scored.

    Raises:
        ValueError: unknown ``kind`` or task set.
    """
    if reference not in REFERENCES:
        raise ValueError(f"score_candidate: reference must be one of {list(REFERENCES)}, got {reference!r}")
    if kind not in ("module", "pass"):
        raise ValueError(f"score_candidate: kind must be module or pass, got {kind!r}")
    run_cfg = {"warmup": 1, "trials": 3, "min_trial_ms": 5.0, "retries": 0, "timeout_s": 120, "mem_cap_gb": 4,
               **(cfg or {})}
    if max_subgraphs is not None:
        run_cfg["max_subgraphs"] = max_subgraphs
    with tempfile.TemporaryDirectory(prefix="passnet_cand_") as tmp:
        path = Path(tmp) / "candidate.py"
        path.write_text(source)
        cand = parse_candidate(f"{name}={kind}:{path}")
        rows, rejected = run_candidate(cand, task_set, run_cfg, log=lambda *_: None)
        valid = not rejected and not any(r.get("violations") for r in rows)
        rv = None
        if valid and rows and int(run_config(run_cfg)["revalidate"]["top"]) > 0:  # held-out shapes and seeds
            rv = revalidate(cand, rows, task_set, run_cfg, log=lambda *_: None)
            valid = rv["passed"]
    curves = {}
    for ref in REFERENCES:
        scored = reference_rows(rows, ref)
        curves[ref] = (None, None, None)
        if scored:
            curve = score_curve(scored, p, b, convention)
            es = {d["t"]: d["ES_t"] for d in curve}
            curves[ref] = (es, {d["t"]: d["S_t"] for d in curve}, aggregate_score(es))
    (es, s, agg), (es_d, _, agg_d) = curves["eager"], curves["dynamo"]
    agg_r = curves[reference][2]
    reward = agg_r if (valid and agg_r is not None) else math.log10(b)
    return {"valid": valid, "rejected": rejected, "ES_t": es, "S_t": s, "aggregate_score": agg, "ES_t_vs_dynamo": es_d,
            "aggregate_score_vs_dynamo": agg_d, "reward": reward, "rows": rows, "revalidation": rv,
            "trajectories": trajectory_rows(name, kind, source, rows, rejected + (rv["failures"] if rv else []), p, b,
                                            convention)}
