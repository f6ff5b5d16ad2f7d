"""What long-tail variant Jaccard the between-build noise allows, from two or more builds.

The long tail is a threshold rule on each variant's run-0 row: the stage's rule keeps a variant when its
``speedup_compiler`` interval's upper end lies below ``1 - min_effect``. Two builds disagree on a variant
when that upper end moves across the edge between builds; it moves with the point estimate *and* with the
interval's half-width, which comes from ``profile.replicates`` children with a ``t_{k-1}`` multiplier and
so varies from build to build. This script measures that movement on the full-protocol rows (a variant
only screened cannot be a member, and screen rows are far noisier), the measured Jaccard of each pair of
builds under the stage's rule and under a point-estimate rule at the same edge, and simulates pairs of
builds.

Model (normal on the log scale; a variant's deviation independent per variant and build):

* Over the variants protocol-timed in run 0 of both builds of each pair (every pair pooled): the robust
  spread (1.4826 MAD / sqrt 2) of the pair differences of ``ln upper`` (``sigma_upper``: point and
  half-width moving together) and of ``ln speedup_compiler`` (``sigma_point``).
* Each variant protocol-timed in >= 2 builds has centres (means over builds) of ``ln upper`` and of
  ``ln speedup_compiler``. A simulated build draws ``centre + sigma z``; the upper rule keeps a variant
  when its drawn upper end is below ``ln(1 - min_effect)``, the point rule when its drawn point is; 4,000
  pairs per case, the upper rule at ``sigma_upper`` times each of :data:`SCALES` (records
  ``upper_x1``, ``upper_x0_75``, ...), the point rule at ``sigma_point``.
* The residuals are heavier-tailed than normal and differ by variant (short eager times and bf16 move
  more), so the simulation is a guide, not a calibrated model; the centres are means of 2-3 noisy builds.
  The measured pair Jaccards are the figures; the point rule's are in-sample (measured on the builds that
  suggested it), so they say what to validate on fresh builds, not that it holds.

    python -m benchmarks.jaccard_noise_floor BUILD BUILD [BUILD ...] --out metrics/bench/jaccard_noise_floor.json

A build is a checkout (or a folder) with ``data/curate/long_tail.parquet`` and ``metrics/curate.json``
(``benchmarks.compare_builds`` reads the same files). Prints a table; ``--out`` writes the record
(machine, loads, counts, the spreads, the measured pair Jaccards of both rules and the simulated ones).
Nothing is timed here.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

SCALES = (1.0, 0.75, 0.5, 0.35, 0.25)
PAIRS = 4000


def run0_estimates(build: Path) -> tuple[dict[tuple, tuple[float, float]], set, float, dict]:
    """``({variant: (speedup_compiler, upper end)}, long-tail set, 1 - min_effect, hardware)`` of one
    build (:func:`benchmarks.compare_builds.curate_rows`): its run-0 full-protocol rows that are labelled
    and correct (the rows a member can come from)."""
    from benchmarks.compare_builds import curate_rows
    from curate.select.longtail import long_tail_variants, variant_key

    rows, metrics = curate_rows(build)
    est = {variant_key(r): (r["speedup_compiler"], r["speedup_compiler_ci_high"]) for r in rows
           if r["run"] == 0 and r.get("phase") == "protocol" and r.get("long_tail") is not None
           and r.get("speedup_compiler") and r.get("speedup_compiler_ci_high") and r.get("correct_at_t")}
    return est, long_tail_variants(rows), 1.0 - float(metrics.get("min_effect") or 0.05), metrics.get("hardware", {})


def simulate(centre, edge: float, sigma: float, pairs: int = PAIRS, seed: int = 0) -> dict:
    """Jaccard of ``pairs`` simulated pairs of builds (module docstring): median, 5th / 95th
    percentile, the share of pairs with Jaccard >= 0.9 and the mean size of one build's set. ``centre``:
    the variants' log centres of the ruled quantity; ``edge``: ln(1 - min_effect); ``sigma``: one build's
    log deviation. Two empty sets count as agreeing (Jaccard 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = centre + sigma * rng.standard_normal((pairs, centre.size)) < edge
    b = centre + sigma * rng.standard_normal((pairs, centre.size)) < edge
    union = (a | b).sum(1)
    j = np.where(union > 0, (a & b).sum(1) / np.maximum(union, 1), 1.0)
    return {"sigma": round(float(sigma), 4), "jaccard_median": round(float(np.median(j)), 3),
            "jaccard_p5_p95": [round(float(x), 3) for x in np.percentile(j, [5, 95])],
            "share_pairs_jaccard_ge_0_9": round(float((j >= 0.9).mean()), 3),
            "long_tail_size_mean": round(float(a.sum(1).mean()), 2)}


def robust_sigma(diffs) -> float:
    """One build's spread from pair differences: 1.4826 x their median absolute deviation / sqrt 2."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2)) if d.size else float("nan")


def noise_floor(builds: list[Path]) -> dict:
    """The record (module docstring) of two or more builds."""
    import numpy as np

    from benchmarks.compare_builds import jaccard

    def jr(a, b):
        j = jaccard(a, b)
        return None if j is None else round(j, 3)

    got = [run0_estimates(b) for b in builds]
    edges = {round(g[2], 6) for g in got}
    if len(edges) != 1:
        raise SystemExit(f"jaccard_noise_floor: the builds use different thresholds {sorted(edges)}")
    edge = math.log(edges.pop())
    point_sets = [{k for k, (p, _) in g[0].items() if p < math.exp(edge)} for g in got]
    measured, d_up, d_pt = [], [], []
    for (i, a), (j, b) in itertools.combinations(enumerate(got), 2):
        both = sorted(set(a[0]) & set(b[0]))
        d_up += [math.log(b[0][k][1] / a[0][k][1]) for k in both]
        d_pt += [math.log(b[0][k][0] / a[0][k][0]) for k in both]
        measured.append({"builds": [str(builds[i]), str(builds[j])], "protocol_both": len(both),
                         "long_tail_sizes": [len(a[1]), len(b[1])], "jaccard_variants": jr(a[1], b[1]),
                         "point_rule_sizes": [len(point_sets[i]), len(point_sets[j])],
                         "jaccard_variants_point_rule": jr(point_sets[i], point_sets[j])})
    sigma_upper, sigma_point = robust_sigma(d_up), robust_sigma(d_pt)
    keys = sorted({k for g in got for k in g[0]})
    seen = {k: [g[0][k] for g in got if k in g[0]] for k in keys}
    keys = [k for k in keys if len(seen[k]) >= 2]
    c_up = np.array([np.mean([math.log(u) for _, u in seen[k]]) for k in keys])
    c_pt = np.array([np.mean([math.log(p) for p, _ in seen[k]]) for k in keys])
    hw = np.array([math.log(u / p) for k in keys for p, u in seen[k]])
    return {
        "builds": [str(b) for b in builds], "hardware": [g[3] for g in got], "threshold": round(math.exp(edge), 4),
        "variants_modelled": len(keys), "pair_differences": len(d_up),
        "sigma_upper": round(sigma_upper, 4), "sigma_point": round(sigma_point, 4),
        "sigma_upper_sd": round(float(np.std(d_up, ddof=1) / math.sqrt(2)), 4) if len(d_up) > 1 else None,
        "interval_halfwidth_median": round(float(np.median(hw)), 4),
        "variants_within_2_sigma_of_edge": {"upper": int(np.sum(np.abs(c_up - edge) < 2 * sigma_upper)),
                                            "point": int(np.sum(np.abs(c_pt - edge) < 2 * sigma_point))},
        "measured": measured,
        "measured_jaccard_variants": [m["jaccard_variants"] for m in measured],
        "measured_jaccard_variants_point_rule": [m["jaccard_variants_point_rule"] for m in measured],
        "simulated": {**{"upper_x" + f"{s:g}".replace(".", "_"): simulate(c_up, edge, s * sigma_upper) for s in SCALES},
                      "point_x1": simulate(c_pt, edge, sigma_point)},
        "model": "normal on the log scale; full-protocol run-0 rows; per-variant centre = mean over builds; "
                 "upper rule: draw of ln upper < ln(1 - min_effect); point rule: draw of ln speedup_compiler < it",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--note", default=None, help="what the builds ran on (machine, loads), stored with the record")
    args = ap.parse_args(argv)
    if len(args.builds) < 2:
        raise SystemExit("jaccard_noise_floor: give at least two builds")
    rec = noise_floor(args.builds)
    if args.note:
        rec["measured_on"] = args.note
    print(f"threshold {rec['threshold']}  variants {rec['variants_modelled']}  sigma_upper {rec['sigma_upper']}  "
          f"sigma_point {rec['sigma_point']}  near the edge (2 sigma) {rec['variants_within_2_sigma_of_edge']}")
    for m in rec["measured"]:
        print(f"measured  {' vs '.join(Path(b).name for b in m['builds']):24s} upper rule J = {m['jaccard_variants']} "
              f"(sizes {m['long_tail_sizes']})   point rule J = {m['jaccard_variants_point_rule']} (sizes {m['point_rule_sizes']})")
    print(f"{'simulated':24s} {'sigma':>7s} {'J median':>9s} {'J p5-p95':>13s} {'P(J>=0.9)':>10s} {'size':>6s}")
    for name, s in rec["simulated"].items():
        print(f"{name:24s} {s['sigma']:7.4f} {s['jaccard_median']:9.3f} {str(s['jaccard_p5_p95']):>13s} "
              f"{s['share_pairs_jaccard_ge_0_9']:10.3f} {s['long_tail_size_mean']:6.2f}")
    if args.out:
        from passnet_common.io import atomic_write_json

        atomic_write_json(args.out, rec, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
