"""Replicate timings of one variant, pooled into one ratio and interval (random effects).

Why: one timing child's paired bootstrap interval holds the noise of its own trials only. Two
children of the same variant -- forked from one warm parent or started afresh, minutes apart --
disagree by far more than those intervals allow (on the 2-core default machine a 3 ms memory-bound
variant read 0.87-1.21 across eight children whose intervals were +-3 %), and two builds of the
same code then disagreed on which variants are slower. The child is the unit of replication: each
replicate is a separate child (fresh inputs, fresh allocations, another moment of the machine's
load) and the between-child spread enters the interval.

Model (per ratio, on the log scale): replicate ``i`` reports ``x_i = ln(ratio_i)`` with a within-child
standard error ``s_i`` read from its interval (``(ln hi - ln lo) / (2 z)``, ``z`` the normal quantile
of the interval's level); ``x_i = mu + b_i + e_i`` with a between-child effect ``b_i ~ N(0, tau^2)``.
``tau^2`` by DerSimonian and Laird (1986), the pooled ``mu`` with weights ``1 / (s_i^2 + tau^2)``, and
the interval by Hartung and Knapp (2001) / Sidik and Jonkman (2002): ``mu +- t_{k-1} * SE`` with
``SE^2 = sum w_i (x_i - mu)^2 / ((k - 1) sum w_i)``, never below the plain random-effects ``SE^2 =
1 / sum w_i`` (the "modified" rule of Roever et al. 2015, BMC Med Res Methodol 15:99: with few
replicates that agree by chance the plain HKSJ interval can be narrower than either child's).
IntHout et al. (2014, BMC Med Res Methodol 14:25) show the HKSJ interval keeps its coverage with
as few as 2-5 studies where the DerSimonian-Laird normal interval does not.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from scipy.stats import t as student_t

RATIO_COLUMNS = ("speedup_e2e", "speedup_compiler", "speedup_dynamo")
"""The row's ratios (eager / Inductor, Dynamo-only / Inductor, eager / Dynamo-only)."""
MIN_REPLICATES = 2
"""Fewer stable replicates than this give no between-child spread: the pooled row is unstable."""


def log_se(ratio: float, lo: float, hi: float, level: float) -> tuple[float, float]:
    """``(ln ratio, within-child standard error)`` of one replicate from its interval at ``level``.

    Raises:
        ValueError: a ratio or interval end that is not positive, or ``lo > hi``.
    """
    if min(ratio, lo, hi) <= 0 or lo > hi:
        raise ValueError(f"replicate ratio {ratio} with interval [{lo}, {hi}]: need 0 < lo <= hi and ratio > 0")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return math.log(ratio), (math.log(hi) - math.log(lo)) / (2 * z)


def pool(xs: list[float], ses: list[float], level: float) -> dict[str, float]:
    """Random-effects pool of ``k >= 2`` log ratios ``xs`` with within-child standard errors ``ses``
    (module docstring). A zero standard error is floored at 1e-6 (a child whose trials all agree).

    Returns:
        ``mu`` (pooled log ratio), ``lo`` / ``hi`` (log interval at ``level``), ``tau`` (between-child
        standard deviation, log scale), ``se`` (the interval's standard error).

    Raises:
        ValueError: fewer than 2 replicates, or ``xs`` and ``ses`` of different lengths.
    """
    k = len(xs)
    if k < MIN_REPLICATES or len(ses) != k:
        raise ValueError(f"pool needs >= {MIN_REPLICATES} replicates with one standard error each, got {k} and {len(ses)}")
    v = [max(s, 1e-6) ** 2 for s in ses]
    w = [1 / vi for vi in v]
    sw = sum(w)
    mu_fe = sum(wi * x for wi, x in zip(w, xs)) / sw
    q = sum(wi * (x - mu_fe) ** 2 for wi, x in zip(w, xs))
    c = sw - sum(wi * wi for wi in w) / sw
    tau2 = max(0.0, (q - (k - 1)) / c) if c > 0 else 0.0
    ws = [1 / (vi + tau2) for vi in v]
    sws = sum(ws)
    mu = sum(wi * x for wi, x in zip(ws, xs)) / sws
    se_re = math.sqrt(1 / sws)
    se_hk = math.sqrt(sum(wi * (x - mu) ** 2 for wi, x in zip(ws, xs)) / ((k - 1) * sws))
    se = max(se_re, se_hk)
    half = float(student_t.ppf(0.5 + level / 2, k - 1)) * se
    return {"mu": mu, "lo": mu - half, "hi": mu + half, "tau": math.sqrt(tau2), "se": se}


def pool_replicates(rows: list[dict[str, Any]], level: float, min_effect: float) -> dict[str, Any]:
    """Pool the timed rows of one variant's replicates (each a separate timing child).

    Only stable rows with a ratio and interval enter (status ``ok`` / ``accuracy_error``, ``stable``
    true). With fewer than :data:`MIN_REPLICATES` of them the result says so (``stable`` False) and
    carries no ratio: one child's interval does not hold the between-child spread.

    Returns:
        ``replicates`` (children pooled), ``replicates_timed`` (children that ran), per ratio of
        :data:`RATIO_COLUMNS` the pooled ``<ratio>`` / ``_ci_low`` / ``_ci_high`` (ratio scale) and
        ``<ratio>_replicates`` (each child's ratio), ``speedup_compiler_tau`` (between-child
        standard deviation of ``ln speedup_compiler``), ``overhead_bound`` (pooled
        ``speedup_dynamo`` interval below ``1 - min_effect``) and ``stable``.
    """
    ok = [r for r in rows if r.get("status") in (None, "ok", "accuracy_error") and r.get("stable")
          and all(r.get(f"{c}{s}") for c in RATIO_COLUMNS for s in ("", "_ci_low", "_ci_high"))]
    out: dict[str, Any] = {"replicates": len(ok), "replicates_timed": len(rows)}
    for c in RATIO_COLUMNS:
        out[f"{c}_replicates"] = [r[c] for r in ok]
    if len(ok) < MIN_REPLICATES:
        return {**out, "stable": False, **{f"{c}{s}": None for c in RATIO_COLUMNS for s in ("", "_ci_low", "_ci_high")},
                "speedup_compiler_tau": None}
    for c in RATIO_COLUMNS:
        xs, ses = zip(*(log_se(r[c], r[f"{c}_ci_low"], r[f"{c}_ci_high"], level) for r in ok))
        p = pool(list(xs), list(ses), level)
        out[c], out[f"{c}_ci_low"], out[f"{c}_ci_high"] = math.exp(p["mu"]), math.exp(p["lo"]), math.exp(p["hi"])
        if c == "speedup_compiler":
            out["speedup_compiler_tau"] = p["tau"]
    out["overhead_bound"] = out["speedup_dynamo_ci_high"] < 1.0 - min_effect
    out["stable"] = True
    return out
