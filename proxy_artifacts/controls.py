"""Negative controls of a proxy, and the magnitude fidelity score a control must fail.

Fault *kinds* (:mod:`detector`) are largely consequences of the injection: a skipped update freezes any
model, bf16 rollouts give any model a log-prob mismatch, a x100 learning rate blows up any model's KL.
So a proxy's fidelity is also judged on the **magnitudes** of its runs, which depend on the weights: per
run, the quantities of :data:`QUANTITIES` (reward, entropy, KL, gradient norm, fresh-rollout log-prob
mismatch), compared seed by seed with the base's run of the same fault and seed
(seed s of both shares prompts and sampling seed), within a tolerance derived from the base's own
seed-to-seed spread (:func:`tolerance`). A value at or below :data:`LOG_FLOOR` on a log quantity is a
zero (a frozen update, an exact match): it matches only a zero and stays out of the spread, so one
zero seed cannot widen a tolerance to a dozen decades. A quantity whose tolerance would let a dead
model match (:func:`discriminates`: a linear tolerance reaching the base's typical value, so 0 is
within it; a log tolerance wider than ``log_max`` decades) is left out of the score and listed under
``non_discriminating``: a cell that any model matches is no evidence.

Controls (:data:`CONTROL_KINDS`, built by :func:`pipeline.build_control`), each with the proxy's expert count:

- ``random_experts``: experts chosen uniformly at random (``prune`` method ``random``), no merge;
- ``random_output_merge``: the same random choice with the output-space merge (the default proxy's merge);
- ``reinit``: the proxy's architecture (``config.json``) with freshly initialised weights;
- ``dense``: a dense model of the proxy's active size (:func:`pipeline.dense_control`: each routed-expert
  block replaced by one MLP of ``top_k x moe_intermediate_size``, the mean of the proxy's ``top_k`` most
  routed experts of the layer; attention, norms and embeddings the proxy's; no router).

Verdict per proxy and fault (:func:`control_verdicts`): the proxy **passes** the fidelity test when its
signature reproduces the base's on at least ``min_seed_share`` of the seeds (:func:`verdicts.fault_rates`;
the healthy row ``none`` has no signature and is judged on magnitudes only; on a ``<fault>+fix`` row the
signature to reproduce is the fixed base's, absence included; :func:`verdicts.at_least_share`) and its
magnitude score is at least ``min_score``; a control passes under the same rule.

Pass / fail is a threshold on a share, so two models that both pass cannot be ordered by it. The proxy is
ordered against a control by **magnitude distance** (:func:`magnitude_distance`): per (seed, quantity)
cell, |model - base| on the quantity's scale in units of the tolerance, capped at ``dist_cap``, and per run
(seed) the mean over its cells; a run drawn independently from the base's own distribution has a mean
distance near 0.38 (the mean of |N(0, 2)| / 3 sigma with ``sd_factor`` 3), one off by one tolerance
everywhere has 1. The proxy's and a control's seed s share the base's seed s prompts and sampling seed, so
both sit closer to the base than an independent draw would: distances compare a proxy with a control, not
with the base's own seeds. The proxy **beats** a control on a fault when the 95% t interval of the mean
paired run difference (control's run distance - proxy's, seed by seed, :func:`paired_difference`; the run,
not the cell, is the unit, as the quantities of one run share its seed) lies above 0 *and* the mean is at
least ``min_effect`` tolerances (a control that differs from the proxy by nothing measurable but always in
one direction is not beaten); it **reproduces** the fault only where it passes and beats every control that
ran the fault. With 3 seeds a per-fault interval has 2 degrees of freedom, so few faults clear it; the
fault-seed study (``benchmarks/proxy_fidelity_seeds.py``) judges on more. Per proxy, ``overall`` pools the
runs of every fault a control ran (the same test over all of them). A control runs every fault but the
``+fix`` rows: where its plan lacks such a fault, a run failed, or a seed the proxy was judged on is
missing, it is ``incomplete`` there and not beaten, and its pooled ``overall`` is not beaten either (else its
crashes would choose what is pooled). A proxy that lost a planned run reproduces nothing on that row. The
``+fix`` rows (controls run no fix runs) are judged on the proxy alone: ``reproduces`` is None and the row is
listed under ``passed_without_controls`` when the proxy passes it. One draw of a random control is
one draw: beating it is not beating the control kind (another draw may sit closer to the base). The Newcombe
interval of the two scores (:func:`newcombe`) is reported beside the distance test (``score_diff_ci95``).

The base's own score (``base_self``: seed s_i against seed s_{i+1}, cyclically) is its seed-to-seed
agreement, a reference and not a ceiling (the proxy's seed s is compared with the base's seed s, which
shares its prompts and sampling seed); each pair is judged with the tolerance of the base's *other* seeds
(leave the judged seed out), else every pair would be inside a tolerance built from its own difference and
the score would be 1 by construction.
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

from scipy.stats import binomtest
from scipy.stats import t as student_t

from .verdicts import FAULT_KINDS, at_least_share, fault_name, rate, wilson

CONTROL_KINDS = ("random_experts", "random_output_merge", "reinit", "dense")
# quantity -> scale of its comparison: "linear" (absolute difference) or "log" (decades, log10 of max(v, LOG_FLOOR))
# (not the parameter update norm: Adam normalises it to about lr x sqrt(parameters), so every model of one
# shape has the same, trained or not)
QUANTITIES = {"reward_mean": "linear", "entropy_mean": "linear", "kl_max": "log", "grad_norm_max": "log",
              "logprob_mismatch_fresh_max": "log"}
# a log quantity at or below this is a zero (a frozen update, an exact match): 1e-6 nats / units is below any
# logged effect (the smallest bf16 mismatch ~1e-4, the smallest healthy KL ~1e-3) and above float32 round-off of
# a log-prob (ulp of a value ~10 is ~1e-6; an fp32 "exact match" logs ~1e-8, which a 1e-12 floor read as 4 decades
# away from a true 0)
LOG_FLOOR = 1e-6


def _vals(rows: Sequence[Mapping], key: str, fresh: bool = False) -> list[float]:
    return [float(r[key]) for r in rows if r.get(key) is not None and (not fresh or r.get("fresh_rollout"))]


def run_quantities(rows: Sequence[Mapping]) -> dict[str, float | None]:
    """The magnitudes of one GRPO run (``rl.run_grpo`` step rows): {quantity: value or None when not logged}.

    ``reward_mean``: mean reward over the steps that logged one (fresh rollouts, reward in [0, 1]);
    ``entropy_mean``: mean token entropy of the completions (nats); ``kl_max``: largest KL to the reference
    (nats); ``grad_norm_max``: largest gradient norm before clipping (``grad_norm_trl``); ``logprob_mismatch_
    fresh_max``: largest mean |log pi_train - log pi_rollout| on a fresh rollout (nats); ``update_norm_median``:
    median parameter update norm. A non-finite value stays non-finite (NaN weights after an fp16 overflow).
    """
    def agg(xs, f):
        if not xs:
            return None
        return float("nan") if not all(math.isfinite(x) for x in xs) else float(f(xs))

    return {"reward_mean": agg(_vals(rows, "reward"), statistics.mean),
            "entropy_mean": agg(_vals(rows, "entropy"), statistics.mean),
            "kl_max": agg(_vals(rows, "kl"), max),
            "grad_norm_max": agg(_vals(rows, "grad_norm_trl") or _vals(rows, "grad_norm_total"), max),
            "logprob_mismatch_fresh_max": agg(_vals(rows, "logprob_mismatch", fresh=True), max),
            "update_norm_median": agg(_vals(rows, "update_norm"), statistics.median)}


def _scaled(v: float | None, scale: str) -> float | None:
    if v is None:
        return None
    if not math.isfinite(v):
        return float("nan")
    return math.log10(max(v, LOG_FLOOR)) if scale == "log" else v


def _zero(v: float | None, scale: str) -> bool:
    return scale == "log" and v is not None and math.isfinite(v) and v <= LOG_FLOOR


def spread_values(base_values: Sequence[float | None], scale: str) -> list[float]:
    """The base's values a spread is taken over: on the quantity's scale (decades for ``log``), finite,
    zeros (:data:`LOG_FLOOR`) and unlogged seeds left out."""
    return [x for v in base_values
            if not _zero(v, scale) and (x := _scaled(v, scale)) is not None and math.isfinite(x)]


def tolerance(base_values: Sequence[float | None], scale: str, cp: Mapping) -> float:
    """Tolerance of one quantity on one fault: ``sd_factor`` x the base's seed-to-seed standard deviation
    (sample SD, n - 1, on the quantity's scale: decades for ``log``, zeros left out), at least ``log_floor``
    decades / ``abs_floor`` (linear).

    A standard deviation, not a range: the expected range of n draws grows with n (1.69 sigma at 3 seeds,
    3.08 at 10), so a range-based tolerance loosens as seeds are added and a verdict would depend on the
    seed count; the sample SD estimates sigma at any n (its mean is c4(n) sigma: 0.886 at 3, 0.973 at 10).
    With ``sd_factor`` 3, a seed of a model whose runs come from the base's own distribution lands within
    the tolerance of the base's run of the same seed with probability 2 Phi(3 / sqrt 2) - 1 = 0.966 when
    sigma is known (the difference of two draws has SD sqrt(2) sigma)."""
    xs = spread_values(base_values, scale)
    spread = statistics.stdev(xs) if len(xs) > 1 else 0.0
    floor = float(cp["log_floor"]) if scale == "log" else float(cp["abs_floor"])
    return max(float(cp["sd_factor"]) * spread, floor)


def discriminates(base_values: Sequence[float | None], scale: str, tol: float, cp: Mapping) -> bool:
    """Whether a tolerance ``tol`` on one quantity can tell the base from a dead model: the base logged
    some finite non-zero value (a quantity that is 0 or NaN on every base seed -- no mismatch in fp32, NaN
    after an fp16 overflow, a frozen update -- is what the injection gives any model, so every model
    matches it), and then, linear, the base's median |value| exceeds ``tol`` (else 0, a model with no
    reward, matches); log, ``tol`` is at most ``log_max`` decades."""
    if all(v is None for v in base_values):
        return True  # not logged: every cell is left out anyway (cell_matches None)
    xs = [abs(float(v)) for v in base_values if v is not None and math.isfinite(v)]
    if not any(x > (LOG_FLOOR if scale == "log" else 0.0) for x in xs):
        return False
    if scale == "log":
        return tol <= float(cp["log_max"])
    return statistics.median(xs) > tol


def cell_matches(ref: float | None, got: float | None, scale: str, tol: float) -> bool | None:
    """One cell: ``got`` within ``tol`` of ``ref`` on ``scale``; both non-finite match; on a log scale a zero
    (<= :data:`LOG_FLOOR`) matches only a zero; None when either was not logged (the cell is left out)."""
    a, b = _scaled(ref, scale), _scaled(got, scale)
    if a is None or b is None:
        return None
    if not math.isfinite(a) or not math.isfinite(b):
        return not math.isfinite(a) and not math.isfinite(b)
    if _zero(ref, scale) or _zero(got, scale):
        return _zero(ref, scale) and _zero(got, scale)
    return abs(a - b) <= tol + 1e-12


def magnitude_score(base_q: Mapping[int, Mapping], model_q: Mapping[int, Mapping], cp: Mapping,
                    pairs: Sequence[tuple[int, int]] | None = None, leave_out_judged: bool = False) -> dict:
    """Share of (seed, quantity) cells where the model's magnitude is within tolerance of the base's.

    Args:
        base_q / model_q: {seed: :func:`run_quantities`} of one fault.
        pairs: (base seed, model seed) pairs compared (default: the seeds both have, each with itself;
            the base's self-score pairs seed s_i with s_{i+1}).
        leave_out_judged: each pair's tolerance from the base seeds other than the judged (model) seed --
            the base's self-score, where ``model_q`` is ``base_q``.

    Returns :func:`verdicts.rate` of the matched cells (``rate`` is the score, ``ci95`` its Wilson interval)
    plus ``by_quantity`` {quantity: [k, n]}, ``by_seed`` {model seed (a string, as JSON keys are): [k, n]}
    (the cells of one run share its seed, so they are not independent draws), ``tolerance``
    {quantity: tol} (all base seeds) and ``non_discriminating`` [quantities left out,
    :func:`discriminates`].
    """
    pairs = list(pairs) if pairs is not None else [(s, s) for s in sorted(set(base_q) & set(model_q))]
    k = n = 0
    by_q, tols, blind = {}, {}, []
    by_s = {str(ms): [0, 0] for _, ms in pairs}
    for q, scale in QUANTITIES.items():
        base_vals = [base_q[s].get(q) for s in sorted(base_q)]
        tol = tolerance(base_vals, scale, cp)
        tols[q] = round(tol, 6)
        if not discriminates(base_vals, scale, tol, cp):
            blind.append(q)
            continue
        kq = nq = 0
        for bs, ms in pairs:
            t = tolerance([base_q[s].get(q) for s in sorted(base_q) if s != ms], scale, cp) if leave_out_judged else tol
            m = cell_matches(base_q[bs].get(q), model_q[ms].get(q), scale, t)
            if m is None:
                continue
            kq, nq = kq + int(m), nq + 1
            by_s[str(ms)][0] += int(m)
            by_s[str(ms)][1] += 1
        by_q[q] = [kq, nq]
        k, n = k + kq, n + nq
    return {**rate(k, n), "by_quantity": by_q, "by_seed": by_s, "tolerance": tols, "non_discriminating": blind}


def cell_distance(ref: float | None, got: float | None, scale: str, tol: float, cap: float) -> float | None:
    """One cell's distance: |got - ref| on ``scale`` (decades for ``log``) divided by ``tol``, at most ``cap``;
    0 when both are non-finite or both zero (:data:`LOG_FLOOR`), ``cap`` when only one is; None when either
    was not logged (the cell is left out, as in :func:`cell_matches`)."""
    a, b = _scaled(ref, scale), _scaled(got, scale)
    if a is None or b is None:
        return None
    if not math.isfinite(a) or not math.isfinite(b):
        return 0.0 if not math.isfinite(a) and not math.isfinite(b) else cap
    if _zero(ref, scale) or _zero(got, scale):
        return 0.0 if _zero(ref, scale) and _zero(got, scale) else cap
    return min(abs(a - b) / tol, cap) if tol > 0 else (0.0 if a == b else cap)


def magnitude_distance(base_q: Mapping[int, Mapping], model_q: Mapping[int, Mapping], cp: Mapping,
                       score: Mapping) -> dict:
    """Mean cell distance (:func:`cell_distance`, cap ``cp['dist_cap']``) of a model to the base on one fault.

    Args:
        base_q / model_q: {seed: :func:`run_quantities`} of one fault; cells pair seed s with seed s.
        score: the model's :func:`magnitude_score` on the fault: its ``tolerance`` per quantity and its
            ``non_discriminating`` quantities (left out here too), so distance and score judge the same cells.

    Returns {"distance": mean (None without cells), "n": cells, "by_quantity": {q: mean}, "by_seed":
    {"<seed>": mean over that run's cells} (the runs :func:`paired_difference` pairs), "cells":
    {"<seed>:<quantity>": distance}}.
    """
    cap = float(cp["dist_cap"])
    cells: dict[str, float] = {}
    per_q: dict[str, list[float]] = {}
    per_s: dict[str, list[float]] = {}
    for q, scale in QUANTITIES.items():
        if q in score["non_discriminating"]:
            continue
        for s in sorted(set(base_q) & set(model_q)):
            d = cell_distance(base_q[s].get(q), model_q[s].get(q), scale, float(score["tolerance"][q]), cap)
            if d is not None:
                cells[f"{s}:{q}"] = d = round(d, 6)
                per_q.setdefault(q, []).append(d)
                per_s.setdefault(str(s), []).append(d)
    return {"distance": round(statistics.mean(cells.values()), 4) if cells else None, "n": len(cells),
            "by_quantity": {q: round(statistics.mean(v), 4) for q, v in per_q.items()},
            "by_seed": {s: round(statistics.mean(v), 6) for s, v in sorted(per_s.items(), key=lambda x: int(x[0]))},
            "cells": cells}


def paired_difference(proxy_runs: Mapping[str, float], control_runs: Mapping[str, float], min_effect: float,
                      level: float = 0.95) -> dict | None:
    """Mean of (control's distance - proxy's) over the runs both have (keys: a seed, or ``<fault>|<seed>``
    when pooled; values: a run's mean cell distance), with its t interval (Student, n - 1 degrees of freedom;
    a zero spread gives the point). Positive: the proxy is closer to the base. ``beaten``: the interval's
    lower end above 0 and the mean at least ``min_effect``, decided on the unrounded values. None with fewer
    than 2 common runs. The unit is the run, not the cell: the quantities of one run share its seed (prompts,
    sampling), so cells are not independent draws."""
    common = sorted(set(proxy_runs) & set(control_runs))
    if len(common) < 2:
        return None
    diffs = [control_runs[c] - proxy_runs[c] for c in common]
    m, sd = statistics.mean(diffs), statistics.stdev(diffs)
    half = float(student_t.ppf(0.5 + level / 2, len(diffs) - 1)) * sd / math.sqrt(len(diffs))
    return {"mean": round(m, 4), "ci95": [round(m - half, 4), round(m + half, 4)], "n": len(diffs),
            "beaten": m - half > 0 and m >= min_effect}


def seeds_ahead(proxy_score: Mapping, control_score: Mapping) -> list[int]:
    """[seeds where the proxy matched more cells than the control, seeds both were scored on] from the
    ``by_seed`` counts of two :func:`magnitude_score` results of one fault: how many seeds, not cells,
    separate the proxy from the control. [0, 0] when either has no per-seed counts."""
    a, b = proxy_score.get("by_seed") or {}, control_score.get("by_seed") or {}
    common = [s for s in a if s in b and a[s][1] and b[s][1]]
    return [sum(1 for s in common if a[s][0] / a[s][1] > b[s][0] / b[s][1]), len(common)]


def newcombe(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> list[float] | None:
    """Interval of p1 - p2 for two independent proportions: Newcombe's hybrid score interval (method 10 of
    Newcombe 1998, Statistics in Medicine 17:873-890, built from the two Wilson intervals). None when
    either n is 0. Newcombe's example 56/70 vs 48/80 gives [0.0524, 0.3339]."""
    w1, w2 = wilson(k1, n1, level), wilson(k2, n2, level)
    if w1 is None or w2 is None:
        return None
    def exact_wilson(k, n):  # unrounded bounds (verdicts.wilson rounds to 4 places)
        ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
        return float(ci.low), float(ci.high)

    (l1, u1), (l2, u2) = exact_wilson(k1, n1), exact_wilson(k2, n2)
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    return [round(d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), 4),
            round(d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2), 4)]


def _passes(kinds_rep: Mapping | None, score: Mapping, fault: str, cp: Mapping) -> bool:
    """The fidelity test of one model on one fault (module doc)."""
    if score["n"] == 0 or score["rate"] < float(cp["min_score"]):
        return False
    if fault == "none" or not FAULT_KINDS.get(fault_name(fault)):
        return fault == "none"  # a fault without specific kinds has nothing to reproduce
    return bool(kinds_rep) and at_least_share(kinds_rep["k"], kinds_rep["n"], float(cp["min_seed_share"]))


def control_verdicts(quantities: Mapping[str, Mapping[str, Mapping[int, Mapping]]], rates: Mapping,
                     controls: Mapping[str, Sequence[str]], cp: Mapping,
                     planned: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> dict:
    """The ``controls`` block of the fidelity metrics (module doc: pass, distance, beaten, reproduces).

    Args:
        quantities: {model: {fault: {seed: :func:`run_quantities`}}}, ``base`` and every proxy and control
            (fault ``none``: the healthy seeds; failed runs left out).
        rates: :func:`verdicts.fault_rates` over the same models (kinds detection / reproduction).
        controls: {proxy: [control model names]}.
        cp: the ``proxy.fidelity.controls`` params.
        planned: {model: {fault: [seeds]}} of every run a model's GRPO plan holds, failed ones included
            (default: the runs ``quantities`` holds). A control runs every fault but the ``+fix`` rows
            (``grpo --control``): where its plan lacks such a fault, one of its runs failed, or it lacks a seed
            the proxy was judged on, it is ``incomplete`` and not beaten, so a crashed control, or one whose
            summary drops or renames a fault, cannot let a fault through; a ``+fix`` row its plan lacks is
            "not run". A proxy that lost a planned run (``proxy_incomplete``) reproduces nothing on that row.

    Returns {proxy: {"controls": [names], "faults": {fault: {"base_self", "proxy", "controls": {name: {...,
    "ran", "incomplete", "diff_ci95" (interval of the paired run distance difference, control - proxy; None
    when not compared), "distance_diff" (:func:`paired_difference` over the seeds), "score_diff_ci95"
    (Newcombe), "beaten", "seeds_proxy_ahead" (:func:`seeds_ahead`)}}, "passes", "reproduces", "proxy_incomplete"}}, "rule",
    "reproduces": [faults], "passed_without_controls": [``+fix`` rows no control ran that the proxy passes],
    "controls_passing": {name: [faults]}, "overall": {name: :func:`paired_difference` pooled over the runs of
    every fault the control ran completely, with "faults" and "incomplete"; not beaten while any fault is
    incomplete}}}; each model
    entry holds ``score`` (rate, k, n, ci95, by_quantity, by_seed, tolerance), ``distance``
    (:func:`magnitude_distance`), ``kinds`` (reproduction rate dict or None) and ``passes``.
    """
    base = quantities["base"]
    min_effect = float(cp["min_effect"])
    if planned is None:
        planned = {m: {f: sorted(by_seed) for f, by_seed in per.items()} for m, per in quantities.items()}
    out: dict = {}
    for proxy, names in controls.items():
        per: dict = {}
        pooled: dict = {c: ({}, {}, [], []) for c in names}  # proxy runs, control runs, faults, incomplete
        for fault in sorted(base):
            bq = base[fault]
            seeds = sorted(bq)
            ring = [(seeds[i], seeds[(i + 1) % len(seeds)]) for i in range(len(seeds))] if len(seeds) > 1 else []
            fixed = fault.endswith("+fix")

            def entry(model):
                mq = (quantities.get(model) or {}).get(fault) or {}
                sc = magnitude_score(bq, mq, cp)
                kr = (((rates.get("models") or {}).get(model) or {}).get(fault) or {}).get("reproduction")
                return {"score": sc, "distance": magnitude_distance(bq, mq, cp, sc), "kinds": kr,
                        "passes": _passes(kr, sc, fault, cp)}

            pe = entry(proxy)
            p_runs = pe["distance"]["by_seed"]
            p_plan = (planned.get(proxy) or {}).get(fault) or []
            proxy_incomplete = len(p_runs) < len(p_plan)
            row = {"base_self": magnitude_score(bq, bq, cp, ring, leave_out_judged=True), "proxy": pe, "controls": {},
                   "proxy_incomplete": proxy_incomplete}
            for c in names:
                ce = entry(c)
                c_plan = (planned.get(c) or {}).get(fault)
                # a control runs every fault but the +fix rows (grpo --control): one its plan lacks is missing,
                # not "not run", so a control whose summary drops or renames a fault cannot let it through
                ran = c_plan is not None or not fixed
                c_runs = ce["distance"]["by_seed"]
                incomplete = ran and (c_plan is None or len(c_runs) < len(c_plan) or not set(p_runs) <= set(c_runs))
                dd = paired_difference(p_runs, c_runs, min_effect) if ran and not incomplete else None
                if dd is not None and not proxy_incomplete:
                    pooled[c][0].update({f"{fault}|{k}": v for k, v in p_runs.items()})
                    pooled[c][1].update({f"{fault}|{k}": v for k, v in c_runs.items()})
                    pooled[c][2].append(fault)
                elif incomplete:
                    pooled[c][3].append(fault)
                row["controls"][c] = {**ce, "ran": ran, "incomplete": bool(incomplete), "distance_diff": dd,
                                      "diff_ci95": dd["ci95"] if dd else None,
                                      "score_diff_ci95": newcombe(pe["score"]["k"], pe["score"]["n"],
                                                                  ce["score"]["k"], ce["score"]["n"]) if ran else None,
                                      "beaten": bool(dd) and dd["beaten"],
                                      "seeds_proxy_ahead": seeds_ahead(pe["score"], ce["score"])}
            ran = [v for v in row["controls"].values() if v["ran"]]
            row["passes"] = pe["passes"]
            row["reproduces"] = (pe["passes"] and not proxy_incomplete and all(v["beaten"] for v in ran)) if ran \
                else None
            per[fault] = row

        def overall(c):
            d = paired_difference(pooled[c][0], pooled[c][1], min_effect)
            # a pooled verdict over the faults a control happened to complete could be chosen by its crashes
            return {**d, "beaten": d["beaten"] and not pooled[c][3], "faults": pooled[c][2],
                    "incomplete": pooled[c][3]} if d else None

        out[proxy] = {"controls": list(names), "faults": per,
                      "rule": {"min_score": float(cp["min_score"]), "min_seed_share": float(cp["min_seed_share"]),
                               "dist_cap": float(cp["dist_cap"]), "min_effect": min_effect},
                      "reproduces": [f for f, r in per.items() if r["reproduces"]],
                      "passed_without_controls": [f for f, r in per.items()
                                                  if r["reproduces"] is None and r["passes"] and not r["proxy_incomplete"]],
                      "controls_passing": {c: [f for f, r in per.items() if r["controls"][c]["passes"]] for c in names},
                      "overall": {c: overall(c) for c in names}}
    return out


def quantities_of(runs: Mapping[str, Mapping[int, Mapping]]) -> dict:
    """{fault: {seed: :func:`run_quantities`}} of a ``fidelity._load_runs`` result (failed runs left out)."""
    return {f: {int(s): run_quantities(r["rows"]) for s, r in by_seed.items() if r.get("rows") is not None}
            for f, by_seed in runs.items()}
