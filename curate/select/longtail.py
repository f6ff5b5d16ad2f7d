"""Long-tail labels and the figures of ``metrics/curate.json``.

Reads the ratios and intervals that :mod:`curate.profile.variant` stores per row (``speedup_e2e`` =
eager / Inductor, ``speedup_compiler`` = Dynamo-only / Inductor, ``speedup_dynamo`` = eager /
Dynamo-only; paired bootstrap intervals) and the row's ``min_effect`` (``m``, default 0.05):
"slower with confidence" = the interval's upper end lies below ``1 - m``
(:func:`curate.timing.slower`).

A row (one subgraph variant in one run) is labelled only when it is **stable** (status ``ok``
or ``accuracy_error``; ``unstable`` rows get ``long_tail = None``). Rules (``curate.rule``):

* ``compiler`` (default): Inductor slower than eager with confidence, slower than the
  Dynamo-only side with confidence, correct at ``t``, and not ``overhead_bound`` (Dynamo's
  guards/wrapper alone do not lose to eager). The long tail then holds no overhead-bound row
  by construction, and a backend that compiles nothing cannot enter it unless its own
  ``speedup_compiler`` interval excludes 1.
* ``e2e`` (PassNet's): Inductor slower than eager with confidence and correct.

Correct at ``t``: every output's smallest passing level <= t; outputs of random ops
(``deterministic = False``) are not judged on values. Overhead-bound rows stay in the
dataset, labelled. A subgraph is in the long tail when one of its variants is, in every run
that labelled that variant.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

TIMED = ("ok", "accuracy_error", "unstable")
"""Statuses that carry timings (``unstable`` ones get no label)."""
RULES = ("compiler", "e2e")


def label_row(row: dict, t: int, rule: str = "compiler") -> dict[str, Any]:
    """Labels of one ``profiles`` row: ``correct_at_t``, ``slower_e2e``, ``slower_compiler``,
    ``long_tail`` (None for unstable rows and rows without timings).

    Raises:
        ValueError: unknown ``rule``.
    """
    from curate.timing import slower
    from curate.tolerance import passes_at

    if rule not in RULES:
        raise ValueError(f"curate.rule must be one of {RULES}, got {rule!r}")
    out = {"correct_at_t": False, "slower_e2e": None, "slower_compiler": None, "long_tail": None}
    if row.get("status") not in TIMED or row.get("speedup_e2e") is None:
        return out
    m = float(row.get("min_effect") or 0.0)
    correct = passes_at(row.get("min_pass_t"), t) or row.get("deterministic") is False
    se, sc = slower(row.get("speedup_e2e_ci_high"), m), slower(row.get("speedup_compiler_ci_high"), m)
    out.update(correct_at_t=bool(correct), slower_e2e=se, slower_compiler=sc)
    if row["status"] == "unstable":
        return out
    if rule == "e2e":
        out["long_tail"] = bool(correct and se)
    else:
        out["long_tail"] = bool(correct and se and sc and not row.get("overhead_bound"))
    return out


def paired_rows(labelled: list[dict], run_a: int, run_b: int) -> list[dict[int, dict]]:
    """Variants (``(subgraph_hash, size)``) timed in both runs: per variant ``{run: row}``, in first-seen
    order. The pairs every agreement figure is measured on."""
    by: dict[tuple, dict[int, dict]] = {}
    for r in labelled:
        if r.get("status") in TIMED and r["run"] in (run_a, run_b):
            by.setdefault((r["subgraph_hash"], r.get("size")), {})[r["run"]] = r
    return [v for v in by.values() if run_a in v and run_b in v]


def _paired(labelled: list[dict], run_a: int, run_b: int) -> list[dict[int, Any]]:
    return [{run: r["long_tail"] for run, r in v.items()} for v in paired_rows(labelled, run_a, run_b)]


def agreement(labelled: list[dict], run_a: int, run_b: int) -> tuple[float | None, int]:
    """Share of variants timed in both runs whose labels are equal; an unlabelled (unstable)
    variant in either run counts as a disagreement. Returns ``(share, variants)``."""
    both = _paired(labelled, run_a, run_b)
    same = sum(1 for v in both if v[run_a] is not None and v[run_a] == v[run_b])
    return (same / len(both) if both else None), len(both)


def decided_agreement(labelled: list[dict], run_a: int, run_b: int) -> tuple[float | None, float | None]:
    """How the disagreement of :func:`agreement` splits: ``(agreement among variants labelled in
    both runs, share of the paired variants labelled in both runs)``. The first says whether a
    label, once given, is contradicted by another run (a load-proof label keeps it at 1); the
    second how many labels the noise gate withholds. Neither alone is the headline: a gate that
    labels nothing would score 1 on the first and 0 on the second."""
    both = _paired(labelled, run_a, run_b)
    dec = [v for v in both if v[run_a] is not None and v[run_b] is not None]
    same = sum(1 for v in dec if v[run_a] == v[run_b])
    return (same / len(dec) if dec else None), (len(dec) / len(both) if both else None)


def label_agreement(labelled: list[dict]) -> dict[str, Any]:
    """``label_agreement`` (runs 0 / 1) and ``label_agreement_stress`` (runs 1 / 2: run 2 under
    the stated stress) with the variant counts they are measured on, and their split
    (:func:`decided_agreement`): ``*_decided`` (agreement among variants labelled in both runs)
    and ``labelled_both_share*`` (share of paired variants labelled in both runs)."""
    a, na = agreement(labelled, 0, 1)
    s, ns = agreement(labelled, 1, 2)
    ad, ab = decided_agreement(labelled, 0, 1)
    sd, sb = decided_agreement(labelled, 1, 2)
    return {"label_agreement": a, "agreement_variants": na, "label_agreement_stress": s, "agreement_variants_stress": ns,
            "label_agreement_decided": ad, "labelled_both_share": ab,
            "label_agreement_stress_decided": sd, "labelled_both_share_stress": sb}


def long_tail_subgraphs(labelled: list[dict]) -> set[tuple[str, str]]:
    """``(subgraph_hash, size)`` labelled long tail in every run that labelled it."""
    by: dict[tuple, list] = {}
    for r in labelled:
        if r.get("long_tail") is not None:
            by.setdefault((r["subgraph_hash"], r.get("size")), []).append(r["long_tail"])
    return {k for k, v in by.items() if v and all(v)}


def _share(xs: list[bool]) -> float | None:
    return (sum(1 for x in xs if x) / len(xs)) if xs else None


def profile_all_projection(subgraphs: list[dict], run0: list[dict], rate_cold: float | None) -> dict[str, Any]:
    """What ``curate.profile.all: true`` would cost, projected from this build's measured cold rate.

    ``subgraphs``: every decomposed subgraph (``skip_reason`` None = profilable); ``run0``: run 0's
    rows of the sample; ``rate_cold``: ``profile_rate_per_core_hour_cold`` (variant attempts per
    core-hour, compile phase + timing run 0). Attempts per subgraph = run-0 rows that reached the
    compile phase (all but ``skipped / no_size_dim``) over the subgraphs sampled. Returns
    ``profile_all_subgraphs``, ``profile_all_variants_projected`` and
    ``profile_all_core_hours_projected`` (None without a rate); run 0 only, no agreement runs.
    """
    profilable = sum(1 for s in subgraphs if s.get("skip_reason") is None)
    sampled = {r["subgraph_hash"] for r in run0}
    attempted = sum(1 for r in run0 if r.get("skip_reason") != "no_size_dim")
    variants = round(profilable * attempted / len(sampled)) if sampled else None
    hours = round(variants / rate_cold, 1) if variants is not None and rate_cold else None
    return {"profile_all_subgraphs": profilable, "profile_all_variants_projected": variants,
            "profile_all_core_hours_projected": hours}


def curate_metrics(subgraphs: list[dict], labelled: list[dict], n_tasks: int, variants_per_task: list[int],
                   long_tail: set, hardware: dict, rates: dict) -> dict[str, Any]:
    """Flat figures of ``metrics/curate.json`` (shares over run 0's timed variants), with the
    projected cost of profiling every subgraph (:func:`profile_all_projection`)."""
    run0 = [r for r in labelled if r["run"] == 0]
    timed = [r for r in run0 if r.get("status") in TIMED]
    stable = [r for r in timed if r["long_tail"] is not None]
    fam = {s["subgraph_hash"]: s.get("pattern") for s in subgraphs}
    lt_rows = [r for r in run0 if (r["subgraph_hash"], r.get("size")) in long_tail]
    return {
        "subgraphs_profiled": len({r["subgraph_hash"] for r in run0}),
        "variants_profiled": len(timed),
        "families_profiled": len({fam.get(r["subgraph_hash"]) for r in run0}),
        "tasks": n_tasks,
        "variants_per_task_median": statistics.median(variants_per_task) if variants_per_task else None,
        "slowdown_share_e2e": _share([bool(r["slower_e2e"]) for r in timed]),
        "slowdown_share_compiler": _share([bool(r["slower_compiler"]) for r in timed]),
        "overhead_bound_share": _share([bool(r.get("overhead_bound")) for r in timed]),
        "long_tail": len({h for h, _ in long_tail}),
        "long_tail_variants": len(long_tail),
        "long_tail_overhead_bound": sum(1 for r in lt_rows if r.get("overhead_bound")),
        "unstable_share": (1 - len(stable) / len(timed)) if timed else None,
        **{k: v for k, v in label_agreement(labelled).items() if k.startswith(("label_agreement", "labelled_both"))},
        "hardware": hardware,
        **rates,
        **profile_all_projection(subgraphs, run0, rates.get("profile_rate_per_core_hour_cold")),
    }


def geomean(xs: list[float]) -> float | None:
    """Geometric mean of the positive finite values of ``xs`` (None when there are none)."""
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def status_counts(rows: list[dict]) -> dict[str, int]:
    """``status`` -> rows."""
    return dict(Counter(r.get("status") for r in rows))
