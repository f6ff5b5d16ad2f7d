"""Long-tail labels and the figures of ``metrics/curate.json``.

Reads the ratios and intervals that :mod:`curate.profile.variant` stores per row (``speedup_e2e`` =
eager / Inductor, ``speedup_compiler`` = Dynamo-only / Inductor, ``speedup_dynamo`` = eager /
Dynamo-only) and the row's ``min_effect`` (``m``, default 0.05): "slower with confidence" = the
interval's upper end lies below ``1 - m`` (:func:`curate.timing.slower`). Run 0's full-protocol rows
pool ``curate.profile.replicates`` timing children (:mod:`curate.profile.replicates`: random effects,
Hartung-Knapp interval), so their interval holds the between-child spread as well as each child's
trial noise; one child's paired bootstrap interval holds the latter only, and two builds then
disagreed on variants whose ratio one child had put just below ``1 - m``. ``curate.curate.build_spread``
(``s``, default 0) can still widen every upper end by ``exp(s)``; ``task_build_spread`` the task
rule's.

A row (one subgraph variant -- ``(subgraph_hash, size, dtype)`` -- in one run) is labelled only
when it is **stable** (status ``ok`` or ``accuracy_error``; ``unstable`` rows get ``long_tail =
None``). Rules (``curate.rule``):

* ``compiler`` (default): membership from the compiler effect alone: correct at ``t`` and the
  ``speedup_compiler`` (Dynamo-only / Inductor) interval lies below ``1 - m``: the generated
  code is slower with confidence. ``overhead_bound`` (the ``speedup_dynamo`` interval below
  ``1 - m``: Dynamo's guards / wrapper alone lose to eager) never removes such a row; it only
  *explains* a row whose ``speedup_e2e`` is slower while its compiler interval does not say
  slower (``overhead_explains``: not long tail, and the reason recorded). A backend that compiles
  nothing (the no-op control) stays out because its compiler interval holds 1, with or without
  ``overhead_bound``.
* ``e2e`` (PassNet's): Inductor slower than eager with confidence and correct.

Correct at ``t``: every output's smallest passing level <= t; outputs of random ops
(``deterministic = False``) are not judged on values. A variant is in the long tail when its run-0
row is (:func:`long_tail_variants`); runs >= 1 (single children: the quiet agreement run, the run with
a hog pinned to the timing core) give the agreement figures, and ``long_tail_unconfirmed`` counts
the members one of them labelled not slower.

**Tasks** (:func:`task_slower`, :mod:`curate.select.tasks`): a task is one subgraph with all its
labelled shape x dtype variants (one candidate pass must serve them all). A task is in the long
tail when, over run 0's rows, every labelled variant is correct at ``t`` and the geometric mean
over its variants of the rule's interval upper ends lies below ``1 - m`` ("slower on the family's
geometric mean with confidence"; each upper end bounds its variant's ratio, so the geometric mean
of the upper ends is a conservative bound on the family's).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

from curate.select.config import SelectConfig
from curate.timing import slower
from curate.tolerance import passes_at

TIMED = ("ok", "accuracy_error", "unstable")
"""Statuses that carry timings (``unstable`` ones get no label)."""
RULES = ("compiler", "e2e")


def widened(ci_high: float | None, build_spread: float) -> float | None:
    """An interval's upper end widened by the between-build spread: ``ci_high * exp(build_spread)``."""
    return None if ci_high is None else ci_high * math.exp(build_spread)


def label_row(row: dict, t: int, rule: str = SelectConfig.rule,
              build_spread: float = SelectConfig.build_spread) -> dict[str, Any]:
    """Labels of one ``profiles`` row: ``correct_at_t``, ``slower_e2e``, ``slower_compiler``,
    ``long_tail`` (None for unstable rows and rows without timings). Both ``slower_*`` read the
    upper ends :func:`widened` by ``build_spread``.

    Raises:
        ValueError: unknown ``rule``.
    """
    if rule not in RULES:
        raise ValueError(f"curate.rule must be one of {RULES}, got {rule!r}")
    out = {"correct_at_t": False, "slower_e2e": None, "slower_compiler": None, "overhead_explains": None, "long_tail": None}
    if row.get("status") not in TIMED or row.get("speedup_e2e") is None:
        return out
    m = float(row.get("min_effect") or 0.0)
    correct = passes_at(row.get("min_pass_t"), t) or row.get("deterministic") is False
    se = slower(widened(row.get("speedup_e2e_ci_high"), build_spread), m)
    sc = slower(widened(row.get("speedup_compiler_ci_high"), build_spread), m)
    out.update(correct_at_t=bool(correct), slower_e2e=se, slower_compiler=sc,
               overhead_explains=bool(se and not sc and row.get("overhead_bound")))
    if row["status"] == "unstable":
        return out
    out["long_tail"] = bool(correct and (se if rule == "e2e" else sc))
    return out


def variant_key(row: dict) -> tuple[str, str, str]:
    """``(subgraph_hash, size, dtype)``: one variant across runs."""
    return row["subgraph_hash"], row.get("size") or "catalog", row.get("dtype") or "float32"


def paired_rows(labelled: list[dict], run_a: int, run_b: int) -> list[dict[int, dict]]:
    """Variants (``(subgraph_hash, size)``) timed in both runs: per variant ``{run: row}``, in first-seen
    order. The pairs every agreement figure is measured on."""
    by: dict[tuple, dict[int, dict]] = {}
    for r in labelled:
        if r.get("status") in TIMED and r["run"] in (run_a, run_b):
            by.setdefault(variant_key(r), {})[r["run"]] = r
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
    """``label_agreement`` (runs 0 / 1) and ``label_agreement_pinned`` (runs 1 / 2: run 2 with a
    hog pinned to the timing core and one on the other cores) with the variant counts they are
    measured on, and their split (:func:`decided_agreement`): ``*_decided`` (agreement among
    variants labelled in both runs) and ``labelled_both_share*`` (share of paired variants
    labelled in both runs)."""
    a, na = agreement(labelled, 0, 1)
    s, ns = agreement(labelled, 1, 2)
    ad, ab = decided_agreement(labelled, 0, 1)
    sd, sb = decided_agreement(labelled, 1, 2)
    return {"label_agreement": a, "agreement_variants": na, "label_agreement_pinned": s, "agreement_variants_pinned": ns,
            "label_agreement_decided": ad, "labelled_both_share": ab,
            "label_agreement_pinned_decided": sd, "labelled_both_share_pinned": sb}


def long_tail_variants(labelled: list[dict]) -> set[tuple[str, str, str]]:
    """:func:`variant_key` of every variant whose **run-0** row is in the long tail, as :func:`label_row`
    labelled it (the rule, ``t`` and ``build_spread`` are the label's). Run 0's protocol rows pool
    ``curate.profile.replicates`` timing children (:mod:`curate.profile.replicates`), so their interval
    holds the between-child spread that made one child's label flip between builds; runs >= 1 (single
    children, the agreement subset) measure label agreement and do not vote."""
    return {variant_key(r) for r in labelled if r["run"] == 0 and r.get("long_tail")}


def task_slower(rows: list[dict], rule: str = SelectConfig.rule,
                build_spread: float = SelectConfig.task_build_spread) -> bool | None:
    """The task-level rule (module docstring) over the labelled rows of one subgraph in one run:
    None when no row is labelled, False when a labelled row is incorrect, else whether the
    geometric mean of the rows' interval upper ends (``speedup_compiler`` under rule
    ``compiler``, ``speedup_e2e`` under ``e2e``), :func:`widened` by ``build_spread``, lies below
    ``1 - min_effect``."""
    lab = [r for r in rows if r.get("long_tail") is not None]
    if not lab:
        return None
    if not all(r["correct_at_t"] for r in lab):
        return False
    col = "speedup_compiler_ci_high" if rule == "compiler" else "speedup_e2e_ci_high"
    g = geomean([r.get(col) for r in lab])
    m = float(lab[0].get("min_effect") or 0.0)
    return g is not None and widened(g, build_spread) < 1.0 - m


def long_tail_tasks(labelled: list[dict], rule: str = SelectConfig.rule, min_variants: int = 1,
                    build_spread: float = SelectConfig.task_build_spread, min_shapes: int = 1) -> set[str]:
    """Subgraph hashes whose task is slower (:func:`task_slower`) over their **run-0** rows, when run 0
    labelled at least ``min_variants`` of the subgraph's variants in at least ``min_shapes`` distinct
    sizes (``curate.curate.min_task_shapes``: PassBench's tasks span shapes, so a subgraph whose inputs
    have no dimension to scale, one size in two dtypes, is not a task); runs >= 1 do not vote
    (:func:`long_tail_variants`)."""
    by: dict[str, list] = {}
    for r in labelled:
        if r["run"] == 0:
            by.setdefault(r["subgraph_hash"], []).append(r)
    out = set()
    for h, rs in by.items():
        lab = [r for r in rs if r.get("long_tail") is not None]
        if len(lab) >= min_variants and len({r.get("size") for r in lab}) >= min_shapes and task_slower(rs, rule, build_spread):
            out.add(h)
    return out


def screen_figures(run0: list[dict]) -> dict[str, Any]:
    """What the screen missed, from run 0's rows of a screened run (``phase``, ``screen_candidate``,
    ``audit``): the audit sample is a seeded random share of the screen's non-candidates timed
    with the full protocol. ``screen_miss_rate`` = estimated long-tail variants among all
    non-candidates (audited long tail x non-candidates / audited) over that estimate plus the
    long-tail variants found among the candidates; ``None`` without an audit or a long tail.
    Counts: ``screen_candidates``, ``audit_sample``, ``audit_long_tail``, ``screen_non_candidates``."""
    scr = [r for r in run0 if r.get("screen_candidate") is not None]
    if not scr:
        return {}
    cand = [r for r in scr if r["screen_candidate"]]
    non = [r for r in scr if not r["screen_candidate"]]
    aud = [r for r in non if r.get("audit")]
    aud_lt = sum(1 for r in aud if r.get("long_tail"))
    found = sum(1 for r in cand if r.get("long_tail"))
    est = aud_lt * len(non) / len(aud) if aud else None
    miss = (est / (found + est)) if est is not None and (found + est) > 0 else (0.0 if est == 0 and found else None)
    return {"screen_candidates": len(cand), "screen_non_candidates": len(non), "audit_sample": len(aud),
            "audit_long_tail": aud_lt, "screen_long_tail_found": found, "screen_miss_rate": miss}


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


def curate_metrics(subgraphs: list[dict], labelled: list[dict], tasks: list[dict], long_tail: set, hardware: dict,
                   rates: dict) -> dict[str, Any]:
    """Flat figures of ``metrics/curate.json`` (shares over run 0's timed variants): the long
    tail (variants and subgraphs), the tasks (``tasks``, ``variants_per_task_median``, ``dtypes``
    over the tasks' variants), ``degenerate_filtered`` (run-0 variants skipped as degenerate, with
    ``degenerate_by_reason``), ``no_cpu_kernel`` (run-0 variants per dtype without a CPU kernel),
    the agreement figures (:func:`label_agreement`), the screen's (:func:`screen_figures`), the
    compiler dashboard's columns per source and dtype (:func:`dashboard`), and
    the projected cost of profiling every subgraph (:func:`profile_all_projection`)."""
    run0 = [r for r in labelled if r["run"] == 0]
    timed = [r for r in run0 if r.get("status") in TIMED]
    stable = [r for r in timed if r["long_tail"] is not None]
    fam = {s["subgraph_hash"]: s.get("pattern") for s in subgraphs}
    lt_rows = [r for r in run0 if variant_key(r) in long_tail]
    degen = Counter(r["skip_reason"] for r in run0 if str(r.get("skip_reason") or "").startswith("degenerate"))
    nock = Counter(r.get("dtype") for r in run0 if r.get("skip_reason") == "no_cpu_kernel")
    nvar = [t["num_variants"] for t in tasks]
    return {
        "subgraphs_profiled": len({r["subgraph_hash"] for r in run0}),
        "variants_profiled": len(timed),
        "families_profiled": len({fam.get(r["subgraph_hash"]) for r in run0}),
        "tasks": len(tasks),
        "variants_per_task_median": statistics.median(nvar) if nvar else None,
        "dtypes": sorted({d for t in tasks for d in t.get("dtypes") or []}),
        "degenerate_filtered": sum(degen.values()),
        "degenerate_by_reason": dict(sorted(degen.items())),
        "no_cpu_kernel_by_dtype": dict(sorted(nock.items())),
        "slowdown_share_e2e": _share([bool(r["slower_e2e"]) for r in timed]),
        "slowdown_share_compiler": _share([bool(r["slower_compiler"]) for r in timed]),
        "overhead_bound_share": _share([bool(r.get("overhead_bound")) for r in timed]),
        "overhead_explains_share": _share([bool(r.get("overhead_explains")) for r in timed]),
        "clock_flag_share": _share([bool(r.get("clock_flag")) for r in timed]),
        "long_tail": len({k[0] for k in long_tail}),
        "long_tail_variants": len(long_tail),
        "long_tail_overhead_bound": sum(1 for r in lt_rows if r.get("overhead_bound")),
        # long-tail variants that a single-child run >= 1 (quiet agreement run, stressed run) labelled not slower
        "long_tail_unconfirmed": len({variant_key(r) for r in labelled if r["run"] != 0 and r.get("long_tail") is False
                                      and variant_key(r) in long_tail}),
        # run 0's protocol rows: timing children pooled per row, and their between-child spread (ln speedup_compiler)
        "replicates_median": statistics.median(reps) if (reps := [r["replicates"] for r in timed if r.get("replicates")]) else None,
        "replicate_tau_median": statistics.median(taus) if (taus := [r["speedup_compiler_tau"] for r in timed
                                                                     if r.get("speedup_compiler_tau") is not None]) else None,
        "unstable_share": (1 - len(stable) / len(timed)) if timed else None,
        **label_agreement(labelled),
        **screen_figures(run0),
        "dashboard": dashboard(subgraphs, run0),
        "hardware": hardware,
        **rates,
        **profile_all_projection(subgraphs, run0, rates.get("profile_rate_per_core_hour_cold")),
    }


def dashboard(subgraphs: list[dict], run0: list[dict]) -> dict[str, dict[str, dict[str, Any]]]:
    """The columns of PyTorch's compiler dashboard over run 0's compiled variants, per model source
    (the ``model_ids`` prefix before ``:``, e.g. ``transformers``; a subgraph shared by several
    sources counts in each) and per dtype: ``variants``, ``pass_rate`` (correct at every output's
    level, i.e. status ``ok`` / ``unstable`` over the variants that reached the compile phase),
    ``geomean_speedup_e2e`` / ``geomean_speedup_compiler`` (timed rows), ``compile_s_median``
    (Inductor compile + first call, compile phase) and ``peak_rss_mb_median`` (compile child)."""
    sources = {s["subgraph_hash"]: sorted({str(m).split(":", 1)[0] for m in (s.get("model_ids") or [])}) or ["?"]
               for s in subgraphs}
    compiled = [r for r in run0 if r.get("status") in ("ok", "unstable", "accuracy_error", "runtime_crash", "compile_failure")]
    out: dict[str, dict[str, dict[str, Any]]] = {"by_source": {}, "by_dtype": {}}
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in compiled:
        for src in sources.get(r["subgraph_hash"], ["?"]):
            groups.setdefault(("by_source", src), []).append(r)
        groups.setdefault(("by_dtype", r.get("dtype") or "float32"), []).append(r)
    for (kind, key), rs in sorted(groups.items()):
        cs = [r["compile_s"] for r in rs if r.get("compile_s") is not None]
        mem = [r["peak_rss_bytes"] / 2**20 for r in rs if r.get("peak_rss_bytes")]
        out[kind][key] = {
            "variants": len(rs), "pass_rate": sum(1 for r in rs if r["status"] in ("ok", "unstable")) / len(rs),
            "geomean_speedup_e2e": geomean([r.get("speedup_e2e") for r in rs]),
            "geomean_speedup_compiler": geomean([r.get("speedup_compiler") for r in rs]),
            "compile_s_median": statistics.median(cs) if cs else None,
            "peak_rss_mb_median": statistics.median(mem) if mem else None}
    return out


def geomean(xs: list[float]) -> float | None:
    """Geometric mean of the positive finite values of ``xs`` (None when there are none)."""
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def status_counts(rows: list[dict]) -> dict[str, int]:
    """``status`` -> rows."""
    return dict(Counter(r.get("status") for r in rows))
