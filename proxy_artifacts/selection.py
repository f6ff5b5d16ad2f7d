"""The default prune method chosen by evidence over several base seeds (issue 19 §5).

``proxy_compare`` compares every selection method x merge on one base. A method that wins on
one trained base can lose on another trained the same way with another seed (the experts,
their specialisation and the routing differ), so the default in ``params.yaml``
(``proxy.prune``) follows the comparison repeated on several bases (seeds 0, 1, 2 of
``proxy.base``; ``benchmarks/proxy_selection_seeds.py`` runs it). This module holds the
aggregation and the rule; it reads the ``metrics/proxy_selection.json``-shaped summaries that
:func:`pipeline.run_compare` writes, one per seed.

Rule (:func:`seed_winner`): the lowest mean held-out loss over the seeds at the reference
keep ratio. A method is *tied* with the leader when the seeds cannot separate them: the mean
of the per-seed paired differences (method - leader, the same base for both) is at most its
standard error (sample sd / sqrt(n)), i.e. a paired t statistic <= 1. Among the tied
methods the lowest mean held-out loss averaged over all keep ratios wins (the wider evidence),
then the higher mean task accuracy at the reference ratio, then the name.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

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


def seed_winner(summaries: Mapping[int, Mapping], ratios: Sequence[float], names: Sequence[str],
                reference_ratio: float) -> dict:
    """The default method by the rule of the module docstring.

    Returns {"method": name, "reference_ratio", "rule", "leader" (lowest mean loss at the
    reference ratio), "tied_with_leader" [names], "wins_on_seeds" (seeds where the winner has
    the lowest loss at the reference ratio, of n), "runner_up", "gap_to_runner_up" {mean, se}
    (paired, runner-up - winner, nats), "per_ratio" {r<ratio>: lowest mean loss at that ratio}}.

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
    leader = min(names, key=lambda n: (mean(n, ref), n))
    tied = [n for n in names if n != leader and (lambda g: g[0] <= g[1])(paired_gap(summaries, n, leader, ref))]
    pool = [leader] + tied
    winner = min(pool, key=lambda n: (sum(mean(n, r) for r in ratios) / len(ratios),
                                      -mean(n, ref, "task_acc_proxy"), n))
    others = [n for n in names if n != winner]
    runner = min(others, key=lambda n: (mean(n, ref), n)) if others else None
    wins = sum(1 for s in seeds if min(names, key=lambda n: (summaries[s][f"r{ref}/{n}"]["heldout_loss_proxy"], n))
               == winner)
    out = {"method": winner, "reference_ratio": ref,
           "rule": "lowest mean held-out loss over base seeds at the reference ratio; methods the seeds cannot "
                   "separate from the leader (paired mean difference <= its standard error) are tied; ties: "
                   "lowest mean held-out loss over all ratios, then higher mean task accuracy at the reference "
                   "ratio, then the name",
           "leader": leader, "tied_with_leader": sorted(tied), "wins_on_seeds": f"{wins}/{len(seeds)}",
           "runner_up": runner,
           "per_ratio": {f"r{r}": min(names, key=lambda n: (mean(n, r), n)) for r in ratios}}
    if runner is not None:
        g, se = paired_gap(summaries, runner, winner, ref)
        out["gap_to_runner_up"] = {"mean": g, "se": se}
    return out


def method_settings(entry: Mapping, prune: Mapping) -> dict:
    """The effective prune settings of a ``proxy.compare.methods`` entry, as ``run_compare``
    builds them: {method, views, usage, merge} (``views``: the entry's, else ``prune.views``;
    ``usage``: ``prune.usage`` updated by the entry's; ``merge``: the entry's, default ``none``)."""
    merge = entry.get("merge", "none")
    merge = {False: "none", None: "none", True: "frequency"}.get(merge, merge) if isinstance(merge, (bool, type(None))) \
        else merge
    return {"method": entry["method"], "views": dict(entry.get("views") or prune.get("views") or {}),
            "usage": {**(prune.get("usage") or {}), **(entry.get("usage") or {})}, "merge": merge}
