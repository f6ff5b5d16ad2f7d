"""Long-tail labels and the figures of ``metrics/curate.json``.

A profiled subgraph is in the **long tail** at level ``t`` when

* Inductor is slower *with confidence*: the upper end of the 95% percentile-bootstrap interval
  of ``median(eager) / median(compiled)`` over the interleaved trials
  (:func:`curate.timing.bootstrap_speedup_ci`) lies below 1, and
* its compiled outputs are correct at ``t`` (every output's smallest passing level <= t;
  outputs of random ops, ``deterministic = False``, are not judged on values).

The task set keeps subgraphs labelled long tail in *every* profile run; the label agreement
between runs 0 and 1 is the reproducibility figure of the issue (target >= 95%).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

TIMED = ("ok", "accuracy_error")
"""Statuses that carry timings."""


def label_row(row: dict, t: int, level: float = 0.95, n_boot: int = 2000) -> dict[str, Any]:
    """Long-tail label of one ``profiles`` row: adds ``ci_low``, ``ci_high``, ``correct_at_t``,
    ``long_tail`` (False for rows without timings)."""
    from curate.timing import bootstrap_speedup_ci
    from curate.tolerance import passes_at

    out = {"ci_low": None, "ci_high": None, "correct_at_t": False, "long_tail": False}
    if row.get("status") not in TIMED or not row.get("eager_trials_ms"):
        return out
    lo, hi = bootstrap_speedup_ci(row["eager_trials_ms"], row["compiled_trials_ms"], n_boot=n_boot, level=level)
    correct = passes_at(row.get("min_pass_t"), t) or row.get("deterministic") is False
    out.update(ci_low=lo, ci_high=hi, correct_at_t=bool(correct), long_tail=bool(correct and hi < 1.0))
    return out


def label_agreement(labelled: list[dict]) -> dict[str, Any]:
    """Share of subgraphs with timings in runs 0 and 1 whose long-tail label is equal."""
    by: dict[str, dict[int, bool]] = {}
    for r in labelled:
        if r.get("status") in TIMED:
            by.setdefault(r["subgraph_hash"], {})[r["run"]] = r["long_tail"]
    both = [v for v in by.values() if 0 in v and 1 in v]
    same = sum(1 for v in both if v[0] == v[1])
    return {"subgraphs_in_both_runs": len(both), "same_label": same,
            "label_agreement": (same / len(both)) if both else None}


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def curate_metrics(subgraphs: list[dict], labelled: list[dict], decompose_stats: dict, t: int, n_tasks: int,
                   n_long_tail: int) -> dict[str, Any]:
    """Figures of ``metrics/curate.json`` (run 0 for shares; see README for definitions)."""
    run0 = [r for r in labelled if r["run"] == 0]
    timed = [r for r in run0 if r.get("status") in TIMED]
    correct = [r for r in timed if r["correct_at_t"]]
    attempted = [r for r in run0 if r.get("status") not in ("skipped",)]
    status = Counter(r.get("status") for r in run0)
    skipped = dict(decompose_stats.get("skipped_ranges", {}))
    for r in run0:
        if r.get("status") == "skipped":
            skipped[r.get("skip_reason") or "unknown"] = skipped.get(r.get("skip_reason") or "unknown", 0) + 1
    return {
        "subgraphs_total": decompose_stats.get("ranges"),
        "subgraph_instances": decompose_stats.get("instances"),
        "subgraphs_unique": decompose_stats.get("unique_subgraphs"),
        "subgraphs_unique_profilable": decompose_stats.get("unique_profilable"),
        "subgraphs_profiled": len(run0),
        "skipped_by_reason": skipped,
        "graphs_skipped_by_reason": decompose_stats.get("graph_skips", {}),
        "status_counts": dict(status),
        "tolerance_t": t,
        "slowdown_share": (sum(1 for r in timed if r["speedup"] < 1) / len(timed)) if timed else None,
        "slowdown_share_correct": (sum(1 for r in correct if r["speedup"] < 1) / len(correct)) if correct else None,
        "paper_slowdown_share": 0.43,
        "geomean_speedup": _geomean([r["speedup"] for r in timed]),
        "compile_failure_share": (status.get("compile_failure", 0) / len(attempted)) if attempted else None,
        "runtime_crash_share": (status.get("runtime_crash", 0) / len(attempted)) if attempted else None,
        "unstable_share": (sum(1 for r in timed if not r.get("stable")) / len(timed)) if timed else None,
        "long_tail_run0": sum(1 for r in run0 if r["long_tail"]),
        "long_tail": n_long_tail,
        "tasks": n_tasks,
        **label_agreement(labelled),
    }
