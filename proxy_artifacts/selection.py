"""The default prune method chosen by evidence over several base seeds.

``proxy_compare`` compares every selection method x merge on one base. A method that wins on
one trained base can lose on another trained the same way with another seed (the experts,
their specialisation and the routing differ), so the default in ``params.yaml``
(``proxy.prune``) follows the comparison repeated on several bases (seeds 0, 1, 2 of
``proxy.base``; ``benchmarks/proxy_selection_seeds.py`` runs it). This module holds the
aggregation and the rule; it reads the ``metrics/proxy_selection.json``-shaped summaries that
:func:`pipeline.run_compare` writes, one per seed.

Rule (:func:`verdict`, :data:`RULE`): methods that build the same proxy are one *entry* first
(:func:`twin_groups`: identical per-replicate held-out losses, and identical kept experts where those
are recorded; named ``"A = B"``): their paired differences are exactly 0, so no test could separate a
leader from its twin. The *leader* is the entry with the lowest mean held-out loss over the replicates
at the reference keep ratio. Every other entry's per-replicate paired differences to the leader (entry
- leader, the same base for both) get a one-sided paired t test (:func:`one_sided_paired_p`, H1: the
entry's loss is higher), and the p-values are Holm-corrected over the other entries at family-wise level
:data:`ALPHA` (:func:`holm`; the record holds both ``p_values_uncorrected`` and ``p_values_holm``,
:func:`holm_adjusted`). The leader is the *winner* only when every other entry is separated; otherwise
the verdict is ``"tied"`` and names the entries tied with the leader. An entry with one replicate has no
p-value and is never separated. ``runner_up`` is the entry with the next-lowest mean after the leader
(never the leader), ``gap_to_runner_up`` its paired gap to the leader (>= 0). Replicates are base seeds
in :func:`seed_winner` and the random-selection seeds of one base in :func:`judge_compare`
(``metrics/proxy_selection.json``: only ``random`` and ``random+output_merge`` have several there, so
that verdict is ``"tied"``, with ``default`` naming the default proxy's method). Both state the rule's
conclusion at every keep ratio, and a block whose verdict is ``"tied"`` carries no method's figures as a
winner's: figures are labelled with the method they belong to (the winner's only when there is one, the
default proxy's). The default choice of :func:`seed_winner` (``proxy.prune``) is one method: the
winner's, or among the methods of the leader's and its tied entries the lowest mean held-out loss
averaged over all keep ratios, then the higher mean task accuracy at the reference ratio, then the name.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from scipy.stats import t as student_t

from .config import COMPARE_METHOD_MERGE, PruneConfig

ALPHA = 0.05
RULE = ("methods with identical per-replicate held-out losses (and identical kept experts where recorded) are one "
        "entry, named 'A = B'; leader: the entry with the lowest mean held-out loss at the reference keep ratio; "
        "every other entry's per-replicate paired difference to the leader (same base) is tested by a one-sided "
        f"paired t test, p-values Holm-corrected over the other entries at alpha {ALPHA}; the leader wins only when "
        "every other entry is separated, else 'tied' (one replicate: no p-value, not separated)")

# (summary key in a per-seed selection summary, short name in the seed table)
METRICS = (("heldout_loss_proxy", "heldout_loss"), ("kl_base_to_proxy", "kl"), ("task_acc_proxy", "task_acc"),
           ("routing_mass_kept_mean", "routing_mass_kept"), ("routing_mass_kept_min", "routing_mass_kept_min"))
BASE_METRICS = ("heldout_loss", "task_acc")


def spread(values: Sequence[float]) -> dict:
    """{mean, sd (sample, n - 1; 0 for one value), min, max} of ``values`` (rounded to 6 digits).

    Raises:
        ValueError: no values.
    """
    v = [float(x) for x in values]
    if not v:
        raise ValueError("spread of no values")
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return {"mean": round(m, 6), "sd": round(sd, 6), "min": round(min(v), 6), "max": round(max(v), 6)}


def _check(summaries: Mapping[int, Mapping], ratios, names) -> None:
    if not summaries:
        raise ValueError("no per-seed selection summaries")
    for seed, s in summaries.items():
        missing = [f"r{r}/{n}" for r in ratios for n in names if f"r{r}/{n}" not in s]
        if missing:
            raise ValueError(f"selection summary of base seed {seed} lacks {missing[:3]}"
                             f"{' ...' if len(missing) > 3 else ''}")


def seed_table(summaries: Mapping[int, Mapping], ratios: Sequence[float], names: Sequence[str]) -> dict:
    """Per method x keep ratio, the spread over base seeds of every metric in :data:`METRICS`.

    Args:
        summaries: {base seed: selection summary} (keys ``r<ratio>/<name>`` and ``base``, as
            written by :func:`pipeline.run_compare`).

    Returns {"r<ratio>/<name>": {"<metric>": spread, "<metric>_per_seed": [values in seed
    order]}, "base": {...}} (losses and KL in nats/token, task accuracy and routing mass kept
    as shares in [0, 1]).

    Raises:
        ValueError: no summaries, or a summary without a method x ratio row.
    """
    _check(summaries, ratios, names)
    seeds = sorted(summaries)
    out = {}
    for r in ratios:
        for n in names:
            row = {}
            for key, short in METRICS:
                vals = [summaries[s][f"r{r}/{n}"][key] for s in seeds if key in summaries[s][f"r{r}/{n}"]]
                if len(vals) == len(seeds):
                    row[short] = spread(vals)
                    row[f"{short}_per_seed"] = [round(float(v), 6) for v in vals]
            out[f"r{r}/{n}"] = row
    out["base"] = {}
    for key in BASE_METRICS:
        vals = [summaries[s]["base"].get(key) for s in seeds]
        if all(v is not None for v in vals):
            out["base"][key] = spread(vals)
            out["base"][f"{key}_per_seed"] = [round(float(v), 6) for v in vals]
    return out


def paired_gap(summaries: Mapping[int, Mapping], a: str, b: str, ratio: float,
               metric: str = "heldout_loss_proxy") -> tuple[float, float]:
    """(mean, standard error) over base seeds of ``metric(a) - metric(b)`` at ``ratio``; the
    standard error is the sample sd / sqrt(n) (0 for one seed)."""
    d = [summaries[s][f"r{ratio}/{a}"][metric] - summaries[s][f"r{ratio}/{b}"][metric] for s in sorted(summaries)]
    sp = spread(d)
    return sp["mean"], round(sp["sd"] / math.sqrt(len(d)), 6)


def one_sided_paired_p(diffs: Sequence[float]) -> float | None:
    """p-value of a one-sided paired t test of H1: mean(diffs) > 0 (diffs = method - leader).

    n - 1 degrees of freedom, t = mean / (sd / sqrt(n)); sd 0 (to 1e-12 of the mean): p 0 when the
    mean is > 0, else 1;
    None for fewer than 2 differences (untestable)."""
    d = [float(x) for x in diffs]
    n = len(d)
    if n < 2:
        return None
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    if sd <= 1e-12 * max(abs(m), 1e-300):  # equal differences (to rounding): no spread
        return 0.0 if m > 0 else 1.0
    return float(student_t.sf(m / (sd / math.sqrt(n)), n - 1))


def holm(pvals: Mapping[str, float | None], alpha: float = ALPHA) -> dict[str, bool]:
    """Holm's step-down rejections {name: rejected} of ``pvals`` at family-wise level ``alpha``
    (None: untestable, never rejected, counted in the family)."""
    m = len(pvals)
    order = sorted(pvals, key=lambda k: (pvals[k] is None, pvals[k] if pvals[k] is not None else 0.0, k))
    out, going = {}, True
    for i, k in enumerate(order):
        p = pvals[k]
        going = going and p is not None and p <= alpha / (m - i)
        out[k] = going
    return out


def holm_adjusted(pvals: Mapping[str, float | None]) -> dict[str, float | None]:
    """Holm-adjusted p-values {name: min(1, max over the first i sorted p of (m - j + 1) p_(j))}: a name is
    rejected by :func:`holm` at level alpha exactly when its adjusted p is <= alpha (None stays None and
    counts in the family m)."""
    m = len(pvals)
    order = sorted((k for k in pvals if pvals[k] is not None), key=lambda k: (pvals[k], k))
    out: dict[str, float | None] = {k: None for k in pvals}
    run = 0.0
    for i, k in enumerate(order):
        run = max(run, min(1.0, (m - i) * float(pvals[k])))
        out[k] = run
    return out


TWIN_SEP = " = "
"""Joins the names of identical methods into one entry of the rule (``"A = B"``)."""


def twin_groups(values: Mapping[str, Mapping], kept: Mapping[str, object] | None = None) -> dict[str, list[str]]:
    """Methods that are one proxy: {entry name: [member methods]}, the entry named by its members in
    sorted order joined by :data:`TWIN_SEP`. Two methods are one entry when their per-replicate values are
    identical (same replicates, same values) and, where ``kept`` gives both methods' kept-expert sets
    (any hashable / comparable record of them per replicate), those are identical too; without ``kept``
    identical values alone decide. Entries are in the order of their first member in ``values``."""
    kept = kept or {}
    groups: dict[tuple, list[str]] = {}
    for n, v in values.items():
        key = (tuple(sorted(((str(r), float(x)) for r, x in v.items()))),
               repr(kept.get(n)) if n in kept else None)
        for k0, members in groups.items():
            if k0[0] == key[0] and (k0[1] is None or key[1] is None or k0[1] == key[1]):
                members.append(n)
                break
        else:
            groups[key] = [n]
    return {TWIN_SEP.join(sorted(ms)): sorted(ms) for ms in groups.values()}


def members_of(entry: str) -> list[str]:
    """The method names of an entry of :func:`twin_groups` (``"A = B"`` -> ``["A", "B"]``)."""
    return entry.split(TWIN_SEP)


def verdict(values: Mapping[str, Mapping], alpha: float = ALPHA, kept: Mapping[str, object] | None = None) -> dict:
    """The rule of the module docstring on ``values`` {method: {replicate: held-out loss}}.

    Identical methods are one entry first (:func:`twin_groups`, with ``kept`` the kept-expert sets when
    known): two methods that build the same proxy have paired differences of exactly 0, which no test
    can separate, so a leader with a twin would otherwise always be "tied".

    Returns {"verdict": the leader entry's name or "tied", "leader" (an entry: ``"A = B"`` for twins),
    "tied_with_leader" [entries not separated], "entries" {entry: [member methods]},
    "p_values_uncorrected" {entry: one-sided paired p or None}, "p_values_holm" {entry: Holm-adjusted p
    or None: separated exactly when <= alpha}, "separated" {entry: bool}, "replicates" {entry: paired
    replicates with the leader}, "runner_up" (the entry with the lowest mean after the leader's; None
    for one entry), "alpha", "rule"}.

    Raises:
        ValueError: no methods.
    """
    if not values:
        raise ValueError("verdict of no methods")
    groups = twin_groups(values, kept)
    vals = {g: values[ms[0]] for g, ms in groups.items()}
    mean = {n: sum(v.values()) / len(v) for n, v in vals.items()}
    leader = min(vals, key=lambda n: (mean[n], n))
    pv, reps = {}, {}
    for n, v in vals.items():
        if n == leader:
            continue
        common = sorted(set(v) & set(vals[leader]), key=str)
        reps[n] = len(common)
        pv[n] = one_sided_paired_p([v[k] - vals[leader][k] for k in common])
    sep = holm(pv, alpha)
    adj = holm_adjusted(pv)
    tied = sorted(n for n, ok in sep.items() if not ok)
    others = [n for n in vals if n != leader]
    return {"verdict": "tied" if tied else leader, "leader": leader, "tied_with_leader": tied,
            "entries": dict(sorted(groups.items())),
            "p_values_uncorrected": {n: None if p is None else round(p, 6) for n, p in sorted(pv.items())},
            "p_values_holm": {n: None if p is None else round(p, 6) for n, p in sorted(adj.items())},
            "separated": dict(sorted(sep.items())), "replicates": dict(sorted(reps.items())),
            "runner_up": min(others, key=lambda n: (mean[n], n)) if others else None, "alpha": alpha,
            "rule": RULE}


def one_base_verdict(rows: Sequence[Mapping], names: Sequence[str], ratio: float,
                     default_name: str | None = None) -> dict:
    """:func:`verdict` on the rows of one ``proxy_compare`` run at ``ratio`` (replicates: each row's
    ``seed``), with, when ``random`` and ``random+output_merge`` are both there, how much of the
    random-to-default held-out loss gap the output merge closes on random experts
    (``random_merge_gap_closed`` = (random - random+merge) / (random - default), mean losses) and the
    paired one-sided p of random+merge < random over the random seeds."""
    vals = {n: {r["seed"]: float(r["heldout_loss_proxy"]) for r in rows
                if r["method"] == n and float(r["keep_ratio"]) == float(ratio)} for n in names}
    out = verdict({n: v for n, v in vals.items() if v})
    rnd, rm = vals.get("random") or {}, vals.get("random+output_merge") or {}
    if rnd and rm:
        mr, mm = sum(rnd.values()) / len(rnd), sum(rm.values()) / len(rm)
        common = sorted(set(rnd) & set(rm))
        block = {"random": round(mr, 6), "random+output_merge": round(mm, 6),
                 "p_merge_below_random": one_sided_paired_p([rnd[k] - rm[k] for k in common]),
                 "seeds": len(common)}
        if default_name and vals.get(default_name):
            md = sum(vals[default_name].values()) / len(vals[default_name])
            block["default_method"] = default_name
            block["default"] = round(md, 6)
            block["random_merge_gap_closed"] = round((mr - mm) / (mr - md), 4) if mr != md else None
        out["random_merge"] = block
    return out


def seed_winner(summaries: Mapping[int, Mapping], ratios: Sequence[float], names: Sequence[str],
                reference_ratio: float) -> dict:
    """The verdict and the default choice by the rule of the module docstring.

    Returns {"method": the default choice (one method), "verdict": the winning entry or "tied",
    "p_values_uncorrected" / "p_values_holm" {entry: one-sided paired p vs the leader, before / after
    Holm's correction}, "alpha", "reference_ratio", "rule", "leader" (the entry with the lowest mean loss
    at the reference ratio; twins are one entry, :func:`twin_groups`), "tied_with_leader" [entries],
    "entries" {entry: [methods]}, "wins_on_seeds" (seeds where the default choice's loss is the lowest at
    the reference ratio, ties included, of n), "runner_up" (the entry with the lowest mean after the
    leader's, never the leader), "gap_to_runner_up" {mean, se} (paired, runner-up - leader, nats: >= 0),
    "per_ratio" {r<ratio>: lowest mean loss at that ratio},
    "verdict_per_ratio" {r<ratio>: {"verdict", "leader", "tied_with_leader"}} (the rule at each ratio)}.

    Raises:
        ValueError: ``reference_ratio`` not in ``ratios``; missing rows (:func:`seed_table`).
    """
    if reference_ratio not in ratios:
        raise ValueError(f"reference ratio {reference_ratio} is not one of {list(ratios)}")
    _check(summaries, ratios, names)
    seeds = sorted(summaries)

    def mean(n, r, key="heldout_loss_proxy"):
        return sum(summaries[s][f"r{r}/{n}"].get(key, 0.0) for s in seeds) / len(seeds)

    ref = reference_ratio
    v = verdict({n: {s: summaries[s][f"r{ref}/{n}"]["heldout_loss_proxy"] for s in seeds} for n in names})
    leader, tied = v["leader"], v["tied_with_leader"]
    pool = [m for e in [leader] + tied for m in members_of(e)]
    winner = min(pool, key=lambda n: (sum(mean(n, r) for r in ratios) / len(ratios),
                                      -mean(n, ref, "task_acc_proxy"), n))
    runner = v["runner_up"]
    wins = sum(1 for s in seeds if summaries[s][f"r{ref}/{winner}"]["heldout_loss_proxy"]
               <= min(summaries[s][f"r{ref}/{n}"]["heldout_loss_proxy"] for n in names))
    out = {"method": winner, "verdict": v["verdict"], "reference_ratio": ref,
           "rule": RULE + "; default choice (params.yaml): the winner, or among the methods of the leader's and the "
                          "tied entries the lowest mean held-out loss over all ratios, then higher mean task accuracy "
                          "at the reference ratio, then the name",
           "leader": leader, "tied_with_leader": tied, "entries": v["entries"],
           "p_values_uncorrected": v["p_values_uncorrected"], "p_values_holm": v["p_values_holm"],
           "alpha": v["alpha"], "wins_on_seeds": f"{wins}/{len(seeds)}", "runner_up": runner,
           "per_ratio": {f"r{r}": min(names, key=lambda n: (mean(n, r), n)) for r in ratios}}
    out["verdict_per_ratio"] = {}
    for r in ratios:
        vr = v if r == ref else verdict({n: {s: summaries[s][f"r{r}/{n}"]["heldout_loss_proxy"] for s in seeds}
                                         for n in names})
        out["verdict_per_ratio"][f"r{r}"] = {k: vr[k] for k in ("verdict", "leader", "tied_with_leader")}
    if runner is not None:
        g, se = paired_gap(summaries, members_of(runner)[0], members_of(leader)[0], ref)
        out["gap_to_runner_up"] = {"mean": g, "se": se}
    return out


def method_settings(entry: Mapping, prune: Mapping) -> dict:
    """The effective prune settings of a ``proxy.compare.methods`` entry, as ``run_compare``
    builds them: {method, views, usage, merge} (``views``: the entry's, else ``prune.views``;
    ``usage``: ``prune.usage`` updated by the entry's; ``merge``: the entry's, default ``config.COMPARE_METHOD_MERGE``)."""
    merge = entry.get("merge", COMPARE_METHOD_MERGE)
    merge = {False: "none", None: "none", True: "frequency"}.get(merge, merge) if isinstance(merge, (bool, type(None))) \
        else merge
    return {"method": entry["method"], "views": dict(entry.get("views") or prune.get("views") or {}),
            "usage": {**(prune.get("usage") or {}), **(entry.get("usage") or {})}, "merge": merge}


def default_method_name(methods: Sequence[Mapping], prune: Mapping) -> str | None:
    """The name of the ``proxy.compare.methods`` entry whose effective settings are ``proxy.prune``'s
    own (the default proxy), or None."""
    want = {"method": prune["method"], "views": dict(prune.get("views") or {}), "usage": dict(prune.get("usage") or {}),
            "merge": method_settings({"method": prune["method"], "merge": prune.get("merge", PruneConfig().merge)},
                                     prune)["merge"]}
    strip = lambda d: {**d, "views": {k: v for k, v in d["views"].items() if v}}  # noqa: E731
    return next((m["name"] for m in methods if strip(method_settings(m, prune)) == strip(want)), None)


def method_figures(summary: Mapping, name: str, ratios: Sequence[float]) -> dict:
    """{r<ratio>: {loss_ratio_to_base, task_acc_gap_points}} of method ``name`` in a one-base selection
    summary: its mean held-out loss over the base's (a ratio, 4 digits) and the base's task exact
    match minus its own (percentage points; None when the base has no task accuracy)."""
    base = summary["base"]
    out = {}
    for r in ratios:
        row = summary[f"r{r}/{name}"]
        out[f"r{r}"] = {"loss_ratio_to_base": round(row["heldout_loss_proxy"] / base["heldout_loss"], 4),
                        "task_acc_gap_points": None if base.get("task_acc") is None else
                        round(100 * (base["task_acc"] - row.get("task_acc_proxy", 0.0)), 2)}
    return out


def judge_compare(summary: Mapping, rows: Sequence[Mapping], compare: Mapping, prune: Mapping) -> dict:
    """The ``winner`` block of ``metrics/proxy_selection.json``: the rule (:data:`RULE`) applied to the
    rows of one ``proxy_compare`` run, at the reference ratio and at every keep ratio.

    Args:
        summary: the run's summary ({"r<ratio>/<name>": mean metrics, "base": ...}).
        rows: the run's table rows (one per method x ratio x seed; replicates are the seeds).
        compare, prune: ``proxy.compare`` and ``proxy.prune`` (the methods, keep ratios, reference ratio).

    Returns {"method": the verdict at the reference ratio (the winning entry's name or ``"tied"``), "rule",
    "alpha", "reference_ratio" (``compare.reference_ratio``, else the largest keep ratio), "leader",
    "tied_with_leader", "entries" (identical methods are one entry, :func:`twin_groups`),
    "p_values_uncorrected", "p_values_holm", "separated", "replicates", "runner_up" (at the reference
    ratio, :func:`verdict`), "per_ratio"
    {r<ratio>: {"verdict", "leader", "tied_with_leader"}} (the rule at each keep ratio), "winner_figures"
    (:func:`method_figures` of the winner, labelled with its name; None when tied: no method's figures
    stand for a winner then), "default" (the default proxy's method, :func:`default_method_name`) with
    "default_figures" (its figures, labelled), "random_merge" (:func:`one_base_verdict`) and "evidence"}.
    On one base every method but the random ones has one replicate, so the verdict there is ``tied``
    unless only random methods are compared.

    Raises:
        ValueError: the reference ratio is not one of the keep ratios.
    """
    names = [m["name"] for m in compare["methods"]]
    ratios = list(compare["keep_ratios"])
    ref = compare.get("reference_ratio") or max(ratios)
    if ref not in ratios:
        raise ValueError(f"compare reference ratio {ref} is not one of {ratios}")
    default = default_method_name(compare["methods"], prune)
    per = {r: one_base_verdict(rows, names, r, default) for r in ratios}
    v = per[ref]
    win = None if v["verdict"] == "tied" else v["verdict"]
    out = {"method": v["verdict"], "rule": v["rule"], "alpha": v["alpha"], "reference_ratio": ref,
           "leader": v["leader"], "tied_with_leader": v["tied_with_leader"], "entries": v["entries"],
           "p_values_uncorrected": v["p_values_uncorrected"], "p_values_holm": v["p_values_holm"],
           "separated": v["separated"], "replicates": v["replicates"], "runner_up": v["runner_up"],
           "per_ratio": {f"r{r}": {"verdict": per[r]["verdict"], "leader": per[r]["leader"],
                                   "tied_with_leader": per[r]["tied_with_leader"]} for r in ratios},
           "winner_figures": None if win is None else {"method": win,
                                                       **method_figures(summary, members_of(win)[0], ratios)},
           "default": default,
           "default_figures": None if default is None else {"method": default,
                                                              **method_figures(summary, default, ratios)},
           "evidence": "one base: replicates are the random-selection seeds; a method without them has one value"}
    if "random_merge" in v:
        out["random_merge"] = v["random_merge"]
    return out
