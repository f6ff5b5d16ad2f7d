"""S_t and ES_t (GraphNet / PassNet) as plain functions over per-sample results.

Definitions (the GraphNet paper and its code; PassNet uses b = 0.001). Over N samples with speedups
``s_i = T_eager / T_candidate``: M correct at level t, ``λ = M/N``; ``α`` = geometric mean of s over
correct samples; K correct samples with ``s < 1``, ``η = K/M``; ``β`` = geometric mean of s over
those; ``π_c`` the share of error code c among failed samples (1 accuracy, 2 runtime crash,
3 compile failure)::

    S_t  = α^λ · β^(λ·η·p) · b^(1-λ)
    ES_t = α^λ · β^(λ·η·p) · γ_t^(1-λ),   γ_t = b^(Σ_c π_c · 1[t < f(c)])

Both equal the geometric mean of per-sample *rectified* speedups (:func:`rectified_speedup`):
``s`` if correct and ``s >= 1``; ``s^(p+1)`` if correct and ``s < 1``; for a failed sample ``b``
(S_t), and for ES_t ``b`` while ``t < f(c)`` and ``1`` once the failure is forgiven. A speedup of
exactly 1 is "not slower" (``s^(p+1)`` would give the same 1). :func:`score_samples` computes the
geometric mean and the closed form and checks that they agree.

Conventions (:data:`CONVENTIONS`; every output names the one used):

* ``paper`` (default) — GraphNet paper: the failure of code c is forgiven from ``t = c``
  (``f = {1: 1, 2: 2, 3: 3}``) and correctness at level t is judged at tolerance t.
* ``graphnet`` — GraphNet's published scorer (``graph_net_bench/analysis_util.calculate_scores``
  with ``DefaultPositiveToleranceInterpretation``): runtime crashes are forgiven only from
  ``t = 3`` (``f = {1: 1, 2: 3, 3: 3}``) and for ``t >= 1`` correctness (and the speedup used)
  is the one judged at the tolerance of t = 1; its S_t is judged at t itself and never forgives.

Why ``paper`` is not monotone in t (e.g. ES_t 1.1678 at t = 1, 1.1472 at t = 2 on a
GraphNet-format run): an accuracy failure is forgiven from t = 1 and then counts 1, but the same
sample, once its outputs pass at t = 2, counts its rectified speedup, which is below 1 when it is
slower than eager. A slow sample that becomes correct lowers the score. This is the paper's
definition and is kept as is; GraphNet's code avoids it by judging correctness at t = 1 for every
t >= 1 (the ``graphnet`` convention, monotone from t = 1 on).

Floor (PassNet): a row with ``floor = True``, the flag ``no_match_floor`` (a pass that matched
nothing, ``score.no_match: floor``; the flag survives the ``score_samples`` table) or ``status =
violation`` (a defense of :mod:`curate.score.defenses.checks` / :mod:`curate.score.defenses.clock` caught the
candidate) counts ``b`` at every level in S_t and ES_t, in both conventions, never forgiven
(``pi_floor`` in the result). A violation is not an accuracy failure: those are forgiven from
t = 1, and a cheat must not score eager's 1 there.

Aggregate score AS (:func:`aggregate_score`): GraphNet's ``graph_net_bench/aggregate_es_scores.py``
sums ``w_t * log10(ES_t)`` over t = -10..4 with the weights :data:`AS_WEIGHTS` normalised to sum
1, i.e. AS = log10 of the weighted geometric mean of ES_t; 0 is eager's score, > 0 is faster.

Parameters (defaults: the fields ``p``, ``b`` and ``convention`` of
:class:`curate.score.config.ScoreConfig`, their one home): ``p = 0.1`` and ``b = 0.1``, the paper's
values. ``p > 0`` makes a slowdown cost more than its raw ratio (the task set is *about*
slowdowns, so a candidate that keeps them is penalised; GraphNet's code uses p = 0). ``b = 0.1``
prices a failure like a 10x slowdown; PassNet's b = 0.001 lets one failure outweigh everything
else on a task set as small as our default (one failure in 30 samples multiplies the score by
0.001^(1/30) = 0.79), so rankings would be decided by failure counts alone. Both are
parameters of every function and of ``params.yaml: score``.

Aggregation: ``scope="set"`` pools all samples with equal weight (1/N each; GraphNet's
aggregation); ``scope="task"`` scores each task's samples alone; ``scope="task_mean"`` is the
geometric mean of the per-task scores (equal weight per task, so large tasks do not dominate).

Input rows (dicts, e.g. ``score_samples`` table rows or :func:`parse_graphnet_log` output) need:
``speedup`` (float > 0 for samples that ran, else None), ``error_code`` (None, or 2/3 for a
runtime crash / compile failure; 1 = an accuracy failure at every level), and either
``min_pass_t`` (smallest passing level of the sample, None = never) or ``out_min_pass_t`` (the
per-output values, see :mod:`curate.tolerance`). Optional: ``task_id``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from curate.score.config import ScoreConfig
from curate.tolerance import (
    ERROR_ACCURACY,
    ERROR_COMPILE,
    ERROR_NAMES,
    ERROR_RUNTIME,
    EXPONENTS,
    LEVELS,
    is_exact_dtype,
    sample_min_pass_t,
)

_DEFAULTS = ScoreConfig()
"""The ``score`` block at its defaults: ``p``, ``b`` and ``convention`` of every function here."""
ERROR_FLOOR = 0
"""Pseudo error code of a floored row: never forgiven."""
AS_WEIGHTS: dict[int, float] = {-10: 0.001, -9: 0.001, -8: 0.001, -7: 0.13, -6: 0.40, **{t: 0.48 for t in range(-5, 5)}}
"""GraphNet's weights of ES_t in AS (``aggregate_es_scores.get_weights``, unnormalised; derived by
GraphNet from NLP ES metrics of A100 relative to H20)."""


def aggregate_score(es_by_t: Mapping[int, float], weights: Mapping[int, float] = AS_WEIGHTS) -> float:
    """GraphNet's aggregate score: ``sum_t w_t * log10(ES_t) / sum_t w_t`` over the weights' levels.

    Raises:
        ValueError: a level of ``weights`` missing from ``es_by_t``, or an ES_t <= 0.
    """
    missing = [t for t in weights if t not in es_by_t]
    if missing:
        raise ValueError(f"aggregate score needs ES_t at t={missing}")
    total = sum(weights.values())
    if any(es_by_t[t] <= 0 for t in weights):
        raise ValueError("aggregate score needs ES_t > 0 at every level")
    return sum(w * math.log10(es_by_t[t]) for t, w in weights.items()) / total


@dataclass(frozen=True)
class Convention:
    """When failures are forgiven and at which tolerance correctness is judged.

    Attributes:
        name: ``paper`` or ``graphnet``.
        forgive_from: error code -> first level t at which ES_t counts that failure as 1.
        judge_cap: for ``t >= judge_cap`` correctness is judged at ``judge_cap`` (None: at t).
    """

    name: str
    forgive_from: Mapping[int, int]
    judge_cap: int | None


CONVENTIONS: dict[str, Convention] = {
    "paper": Convention("paper", {ERROR_ACCURACY: 1, ERROR_RUNTIME: 2, ERROR_COMPILE: 3}, None),
    "graphnet": Convention("graphnet", {ERROR_ACCURACY: 1, ERROR_RUNTIME: 3, ERROR_COMPILE: 3}, 1),
}


def get_convention(name: str | Convention) -> Convention:
    """Look up a convention by name. Raises ValueError for an unknown name."""
    if isinstance(name, Convention):
        return name
    if name not in CONVENTIONS:
        raise ValueError(f"unknown score convention {name!r}; known: {sorted(CONVENTIONS)}")
    return CONVENTIONS[name]


def _row_min_pass_t(row: Mapping[str, Any]) -> int | None:
    if "min_pass_t" in row:
        return None if row["min_pass_t"] is None else int(row["min_pass_t"])
    outs = row.get("out_min_pass_t")
    return None if outs is None else sample_min_pass_t(outs)


def sample_state(row: Mapping[str, Any], t: int, convention: str | Convention = _DEFAULTS.convention,
                 for_es: bool = True) -> tuple[bool, int | None]:
    """``(correct, error_code)`` of one sample at level ``t`` (error_code None when correct).

    ``for_es=False`` ignores the convention's ``judge_cap``: GraphNet's scorer judges S_t at the
    tolerance of t itself and only ES_t at t = 1 for t >= 1.

    Raises:
        ValueError: unknown error code, or a sample that would be correct without a positive
            finite speedup.
    """
    conv = get_convention(convention)
    if row.get("floor") or row.get("status") == "violation" or "no_match_floor" in (row.get("flags") or ()):
        return False, ERROR_FLOOR
    code = row.get("error_code")
    if code is not None:
        code = int(code)
        if code not in ERROR_NAMES:
            raise ValueError(f"sample {row.get('sample_id')!r}: unknown error_code {code} (expected 1, 2, 3 or null)")
        if code != ERROR_ACCURACY:
            return False, code
    judge_t = t if (not for_es or conv.judge_cap is None or t < conv.judge_cap) else conv.judge_cap
    mp = _row_min_pass_t(row)
    if code == ERROR_ACCURACY or mp is None or mp > judge_t:
        return False, ERROR_ACCURACY
    s = row.get("speedup")
    if s is None or not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0):
        raise ValueError(f"sample {row.get('sample_id')!r}: correct at t={t} but speedup is {s!r} (need a finite value > 0)")
    return True, None


def rectified_speedup(speedup: float | None, correct: bool, error_code: int | None, t: int, p: float = _DEFAULTS.p,
                      b: float = _DEFAULTS.b, kind: str = "ES", convention: str | Convention = _DEFAULTS.convention) -> float:
    """Per-sample factor of S_t (``kind="S"``) or ES_t (``kind="ES"``); see module docstring."""
    if correct:
        return speedup if speedup >= 1 else speedup ** (p + 1)
    if kind == "S":
        return b
    return 1.0 if t >= get_convention(convention).forgive_from.get(error_code, math.inf) else b


def _gmean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def score_samples(rows: Sequence[Mapping[str, Any]], t: int, p: float = _DEFAULTS.p, b: float = _DEFAULTS.b,
                  convention: str | Convention = _DEFAULTS.convention) -> dict[str, Any]:
    """S_t, ES_t and their components for one set of samples at level ``t``.

    Returns a dict: ``t, n, n_correct, lambda, alpha, eta, beta, pi_1, pi_2, pi_3, S_t, ES_t,
    convention, p, b`` (alpha/beta are None when undefined: no correct / no slow sample; pi_c
    are None when nothing failed). The components are those of ES_t (under ``graphnet`` at
    t >= 1 they can differ from S_t's, which is judged at t itself).

    Raises:
        ValueError: empty sample set (a score over nothing is undefined), b <= 0, bad rows.
    """
    conv = get_convention(convention)
    if not rows:
        raise ValueError("cannot score an empty sample set (no samples given)")
    if b <= 0 or p < 0:
        raise ValueError(f"need b > 0 and p >= 0 (got b={b}, p={p})")
    states = [sample_state(r, t, conv) for r in rows]
    states_s = [sample_state(r, t, conv, for_es=False) for r in rows]
    n = len(rows)

    def parts(sts):
        correct_s = [float(r["speedup"]) for r, (ok, _) in zip(rows, sts) if ok]
        slow_s = [s for s in correct_s if s < 1]
        codes = [c for ok, c in sts if not ok]
        m, k = len(correct_s), len(slow_s)
        lam = m / n
        alpha = _gmean(correct_s) if m else None
        beta = _gmean(slow_s) if k else None
        eta = k / m if m else None
        pi = {c: (codes.count(c) / len(codes) if codes else None) for c in (ERROR_FLOOR, 1, 2, 3)}
        base = (alpha ** lam if m else 1.0) * (beta ** (lam * eta * p) if k else 1.0)
        return m, lam, alpha, eta, beta, pi, codes, base

    # closed forms (S_t from the S states, ES_t from the ES states; identical under `paper`)
    *_, base_s = parts(states_s)
    s_closed = base_s * b ** (1 - parts(states_s)[1])
    m, lam, alpha, eta, beta, pi, codes, base = parts(states)
    gamma_exp = sum(pi[c] * (1 if t < conv.forgive_from.get(c, math.inf) else 0) for c in (ERROR_FLOOR, 1, 2, 3)) if codes else 0.0
    es_closed = base * (b ** gamma_exp) ** (1 - lam)
    # per-sample geometric means
    s_gm = _gmean([rectified_speedup(r.get("speedup"), ok, c, t, p, b, "S", conv) for r, (ok, c) in zip(rows, states_s)])
    es_gm = _gmean([rectified_speedup(r.get("speedup"), ok, c, t, p, b, "ES", conv) for r, (ok, c) in zip(rows, states)])
    for name, x, y in (("S_t", s_closed, s_gm), ("ES_t", es_closed, es_gm)):
        if not math.isclose(x, y, rel_tol=1e-9):
            raise AssertionError(f"{name}: closed form {x} != per-sample geometric mean {y} (bug)")
    return {
        "t": t, "n": n, "n_correct": m, "lambda": lam, "alpha": alpha, "eta": eta, "beta": beta,
        "pi_1": pi[1], "pi_2": pi[2], "pi_3": pi[3], "pi_floor": pi[ERROR_FLOOR], "S_t": s_gm, "ES_t": es_gm,
        "convention": conv.name, "p": p, "b": b,
    }


def score_curve(rows: Sequence[Mapping[str, Any]], p: float = _DEFAULTS.p, b: float = _DEFAULTS.b,
                convention: str | Convention = _DEFAULTS.convention, levels: Iterable[int] = LEVELS) -> list[dict[str, Any]]:
    """:func:`score_samples` at every level (default t = -10..5), one dict per level."""
    return [score_samples(rows, t, p, b, convention) for t in levels]


def score_table(rows: Sequence[Mapping[str, Any]], candidate: str, p: float = _DEFAULTS.p, b: float = _DEFAULTS.b,
                conventions: Sequence[str] = tuple(_DEFAULTS.conventions), levels: Iterable[int] = LEVELS) -> list[dict[str, Any]]:
    """Rows of the ``scores`` table: every convention x scope (set, task, task_mean) x level, each
    with the aggregate score AS of its curve (``aggregate_score``; None when a level is missing).

    ``task_id`` of the input rows groups tasks (missing -> one task ``"all"``).

    Raises:
        ValueError: empty ``rows``.
    """
    if not rows:
        raise ValueError(f"candidate {candidate!r}: cannot score an empty sample set")
    levels = list(levels)
    tasks: dict[str, list] = {}
    for r in rows:
        tasks.setdefault(str(r.get("task_id") or "all"), []).append(r)
    out = []
    for conv in conventions:
        for t in levels:
            base = {"candidate": candidate}
            out.append({**base, "scope": "set", "task_id": None, **score_samples(rows, t, p, b, conv)})
            per_task = []
            for tid in sorted(tasks):
                d = score_samples(tasks[tid], t, p, b, conv)
                per_task.append(d)
                out.append({**base, "scope": "task", "task_id": tid, **d})
            out.append({**base, "scope": "task_mean", "task_id": None, "t": t, "n": len(rows),
                        "n_correct": sum(d["n_correct"] for d in per_task),
                        "S_t": _gmean([d["S_t"] for d in per_task]), "ES_t": _gmean([d["ES_t"] for d in per_task]),
                        "convention": conv, "p": p, "b": b})
    # the aggregate score AS of each (convention, scope, task) curve, on every one of its rows
    curves: dict[tuple, dict[int, float]] = {}
    for r in out:
        curves.setdefault((r["convention"], r["scope"], r["task_id"]), {})[r["t"]] = r["ES_t"]
    for r in out:
        es = curves[(r["convention"], r["scope"], r["task_id"])]
        ok = all(t in es and es[t] > 0 for t in AS_WEIGHTS)
        r["aggregate_score"] = aggregate_score(es) if ok else None
    return out


# --- GraphNet benchmark logs -------------------------------------------------------------
# Format learned from graph_net_bench/test_compiler_util.py and torch/test_compiler.py: each
# sample starts with a "[Processing] <path>" line; "[Datatype][eager]: f32 f32 ..." lists output
# dtypes; "[Correctness][equal]: 1 0 ..." and "[Correctness][all_close_atol_<.2E>_rtol_<.2E>]:"
# give per-output pass flags for every dtype formula at every level; "[Speedup][e2e]: <x>";
# "[Result] status: success|failed". A failed compiled run prints no "[Datatype][compiled]" line
# (compile failure and run-time failure of the compiled model are not told apart there; GraphNet's
# analysis calls both "compile_fail", code 3); a failed eager run, shape or dtype mismatch, or an
# "Exception:"/"Error:" line count as runtime failures (code 2), as in GraphNet's analysis.

_RE = {
    "processing": re.compile(r"\[Processing\] (.+)"),
    "config": re.compile(r"\[Config\] (\S+): (.+)"),
    "datatype": re.compile(r"\[Datatype\]\[(\w+)\]: ?(.*)"),
    "correctness": re.compile(r"\[Correctness\](\[[^\]]+\]): ?(.*)"),
    "speedup": re.compile(r"\[Speedup\]\[(\w+)\]: (\S+)"),
    "result": re.compile(r"\[Result\] status: (\w+)"),
}


def _graphnet_key(t: int, dtype: str) -> str:
    name = dtype.replace("torch.", "")
    if is_exact_dtype(name):
        return "[equal]"
    a, r = EXPONENTS[{"complex64": "float32", "complex128": "float64", "complex32": "float16"}.get(name, name)]
    return f"[all_close_atol_{10 ** (a * t):.2E}_rtol_{10 ** (r * t):.2E}]"


def _parse_block(lines: list[str]) -> dict[str, Any]:
    d: dict[str, Any] = {"model_path": None, "config": {}, "dtypes": {}, "correctness": {}, "speedup": {}, "result": None}
    flags = {"shape_ok": False, "type_ok": False, "exception": False}
    for line in lines:
        if m := _RE["processing"].search(line):
            d["model_path"] = m.group(1).strip()
        elif m := _RE["config"].search(line):
            d["config"][m.group(1)] = m.group(2).strip()
        elif m := _RE["datatype"].search(line):
            d["dtypes"][m.group(1)] = m.group(2).split()
        elif m := _RE["correctness"].search(line):
            d["correctness"][m.group(1)] = [float(v) for v in m.group(2).split()]
        elif m := _RE["speedup"].search(line):
            d["speedup"][m.group(1)] = float(m.group(2))
        elif m := _RE["result"].search(line):
            d["result"] = m.group(1)
        if "[Shape]" in line and "match:True" in line:
            flags["shape_ok"] = True
        if "[DataType]" in line and "match:True" in line:
            flags["type_ok"] = True
        if "Exception:" in line or "Error:" in line:
            flags["exception"] = True
    if any(k.startswith("[all_close") for k in d["correctness"]):
        flags["shape_ok"] = True
    d.update(flags)
    return d


def parse_graphnet_log(text: str, levels: Sequence[int] = LEVELS) -> list[dict[str, Any]]:
    """Parse a GraphNet ``test_compiler`` log into per-sample rows the scorer reads.

    Each row: ``sample_id`` (the ``[Processing]`` path), ``status`` (correct | eager_fail |
    compile_fail | shape_mismatch | type_mismatch | runtime_fail, GraphNet's names),
    ``error_code`` (None, 2 or 3), ``speedup`` (``[Speedup][e2e]``, None if absent),
    ``out_dtypes``, ``out_min_pass_t`` (per output: smallest t from which the logged flags pass at
    every higher level; None = fails at t = 5).

    Raises:
        ValueError: no ``[Processing]`` line in ``text`` (not a GraphNet log).
    """
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if "[Processing]" in line:
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    if not blocks:
        raise ValueError("not a GraphNet benchmark log: no '[Processing] <path>' line found")
    rows = []
    for lines in blocks:
        d = _parse_block(lines)
        eager_dt, comp_dt = d["dtypes"].get("eager"), d["dtypes"].get("compiled")
        has_allclose = any(k.startswith("[all_close") for k in d["correctness"])
        if eager_dt is None and not has_allclose:
            status = "eager_fail"
        elif comp_dt is None and not has_allclose:
            status = "compile_fail"
        elif not d["shape_ok"]:
            status = "shape_mismatch"
        elif not d["type_ok"]:
            status = "type_mismatch"
        elif d["exception"]:
            status = "runtime_fail"
        else:
            status = "correct"
        row: dict[str, Any] = {"sample_id": d["model_path"], "status": status, "speedup": d["speedup"].get("e2e"),
                               "out_dtypes": eager_dt or [], "out_min_pass_t": [], "error_code": None,
                               "compiler": d["config"].get("compiler")}
        if status == "compile_fail":
            row["error_code"] = ERROR_COMPILE
        elif status != "correct":
            row["error_code"] = ERROR_RUNTIME
        else:
            n_out = len(d["correctness"].get("[equal]", []))
            for i in range(n_out):
                dt = eager_dt[i] if i < len(eager_dt) else "float32"
                ok = []
                for t in levels:
                    vals = d["correctness"].get(_graphnet_key(t, dt))
                    ok.append(bool(vals[i]) if vals is not None and i < len(vals) else False)
                first = None
                for j in range(len(levels) - 1, -1, -1):  # smallest t with a pass at every t' >= t
                    if not ok[j]:
                        break
                    first = levels[j]
                row["out_min_pass_t"].append(first)
        rows.append(row)
    return rows
