"""What long-tail variant Jaccard the machine's between-build noise allows, from two or more builds.

The long tail is a threshold rule on each variant's run-0 interval (``speedup_compiler_ci_high`` below
``1 - min_effect``). Two builds disagree on a variant when its estimate moves across that edge between
builds. How often that happens depends on two measured things, not on the rule's form: how far one
variant's estimate moves from build to build, and how many variants sit near the edge. This script
measures both from the builds' curate outputs and simulates pairs of builds under them.

Model (a normal approximation on the log scale):

* ``d_v = ln(r_b / r_a)`` over the variants labelled in run 0 of both builds of each pair, every pair
  pooled; ``sigma_build = 1.4826 MAD(d) / sqrt(2)``: one build's deviation of a variant's log ratio
  from its centre (robust: a few volatile variants do not set it).
* Each variant labelled in >= 2 builds has a centre ``mu_v`` (the mean of its builds' ``ln r``) and its
  median interval half-width ``hw_v = ln(upper / r)``. A simulated build draws ``mu_v + sigma z``
  (z standard normal, independent per variant and build) and keeps the variant when
  ``draw + hw_v < ln(1 - min_effect)``; the Jaccard of two such builds' sets is recorded, 4,000 pairs
  per ``sigma``.
* ``sigma`` is ``sigma_build`` times each of :data:`SCALES` (records ``sigma_build_x1``,
  ``sigma_build_x0_75``, ...); ``sigma_within`` (the median half-width over ``t_{k-1}``, the noise the
  intervals themselves allow) is simulated too. The centres are themselves noisy (means of 2-3 builds),
  so variants near the edge look a little more spread than they are; the screen (a variant not timed in
  a build is in none of its sets) is left out, so the simulated Jaccard is an upper bound for the build
  pipeline as it is.

    python -m benchmarks.jaccard_noise_floor BUILD BUILD [BUILD ...] --out metrics/bench/jaccard_noise_floor.json

A build is a checkout (or a folder) with ``data/curate/long_tail.parquet`` and ``metrics/curate.json``
(``benchmarks.compare_builds`` reads the same files). Prints a table; ``--out`` writes the record
(machine, loads, counts, ``sigma_build``, the measured pair Jaccards and the simulated ones). Nothing
is timed here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

SCALES = (1.0, 0.75, 0.5, 0.35, 0.25)
PAIRS = 4000


def run0_estimates(build: Path) -> tuple[dict[tuple, tuple[float, float]], set, float, dict]:
    """``({variant: (speedup_compiler, upper end)}, long-tail set, 1 - min_effect, hardware)`` of one
    build's run-0 labelled rows (correct ones only: an incorrect variant is never in the long tail)."""
    import polars as pl

    from curate.select.longtail import long_tail_variants, variant_key

    lt, mt = build / "data" / "curate" / "long_tail.parquet", build / "metrics" / "curate.json"
    if not lt.is_file():
        raise SystemExit(f"jaccard_noise_floor: {lt} not found")
    metrics = json.loads(mt.read_text()) if mt.is_file() else {}
    rows = pl.read_parquet(lt).to_dicts()
    est = {variant_key(r): (r["speedup_compiler"], r["speedup_compiler_ci_high"]) for r in rows
           if r["run"] == 0 and r.get("long_tail") is not None and r.get("speedup_compiler")
           and r.get("speedup_compiler_ci_high") and r.get("correct_at_t")}
    return est, long_tail_variants(rows), 1.0 - float(metrics.get("min_effect") or 0.05), metrics.get("hardware", {})


def simulate(mu, hw, edge: float, sigma: float, pairs: int = PAIRS, seed: int = 0) -> dict:
    """Jaccard of ``pairs`` simulated pairs of builds (module docstring): median, 5th / 95th
    percentile, the share of pairs with Jaccard >= 0.9 and the mean size of one build's set. ``mu``,
    ``hw``: arrays of the variants' log centres and log half-widths; ``edge``: ln(1 - min_effect);
    ``sigma``: one build's log deviation. Two empty sets count as agreeing (Jaccard 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = mu + sigma * rng.standard_normal((pairs, mu.size)) + hw < edge
    b = mu + sigma * rng.standard_normal((pairs, mu.size)) + hw < edge
    union = (a | b).sum(1)
    j = np.where(union > 0, (a & b).sum(1) / np.maximum(union, 1), 1.0)
    return {"sigma": round(float(sigma), 4), "jaccard_median": round(float(np.median(j)), 3),
            "jaccard_p5_p95": [round(float(x), 3) for x in np.percentile(j, [5, 95])],
            "share_pairs_jaccard_ge_0_9": round(float((j >= 0.9).mean()), 3),
            "long_tail_size_mean": round(float(a.sum(1).mean()), 2)}


def noise_floor(builds: list[Path]) -> dict:
    """The record (module docstring) of two or more builds."""
    import numpy as np
    from scipy import stats

    from benchmarks.compare_builds import jaccard

    got = [run0_estimates(b) for b in builds]
    edges = {round(g[2], 6) for g in got}
    if len(edges) != 1:
        raise SystemExit(f"jaccard_noise_floor: the builds use different thresholds {sorted(edges)}")
    edge = math.log(edges.pop())
    measured, diffs = [], []
    for (i, a), (j, b) in itertools.combinations(enumerate(got), 2):
        both = sorted(set(a[0]) & set(b[0]))
        diffs += [math.log(b[0][k][0] / a[0][k][0]) for k in both]
        measured.append({"builds": [str(builds[i]), str(builds[j])], "labelled_both": len(both),
                         "long_tail_sizes": [len(a[1]), len(b[1])], "jaccard_variants": None if jaccard(a[1], b[1]) is None
                         else round(jaccard(a[1], b[1]), 3)})
    d = np.array(diffs)
    sigma_build = float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2))
    keys = sorted({k for g in got for k in g[0]})
    seen = {k: [g[0][k] for g in got if k in g[0]] for k in keys}
    keys = [k for k in keys if len(seen[k]) >= 2]
    mu = np.array([np.mean([math.log(p) for p, _ in seen[k]]) for k in keys])
    hw = np.array([np.median([math.log(u / p) for p, u in seen[k]]) for k in keys])
    k_children = 4
    sigma_within = float(np.median(hw) / stats.t.ppf(0.975, k_children - 1))
    near = int(np.sum(np.abs(mu + hw - edge) < 2 * sigma_build))
    return {
        "builds": [str(b) for b in builds], "hardware": [g[3] for g in got], "threshold": round(math.exp(edge), 4),
        "variants_modelled": len(keys), "pair_differences": int(d.size),
        "sigma_build": round(sigma_build, 4), "sigma_build_sd": round(float(d.std(ddof=1) / math.sqrt(2)), 4),
        "sigma_within": round(sigma_within, 4), "interval_halfwidth_median": round(float(np.median(hw)), 4),
        "variants_within_2_sigma_of_edge": near,
        "measured": measured, "measured_jaccard_variants": [m["jaccard_variants"] for m in measured],
        "simulated": {**{"sigma_build_x" + f"{s:g}".replace(".", "_"): simulate(mu, hw, edge, s * sigma_build) for s in SCALES},
                      "sigma_within": simulate(mu, hw, edge, sigma_within)},
        "model": "normal on ln(speedup_compiler); per-variant centre = mean over builds; "
                 "member iff draw + median half-width < ln(1 - min_effect); screen misses ignored (upper bound)",
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
    print(f"threshold {rec['threshold']}  variants {rec['variants_modelled']}  sigma_build {rec['sigma_build']}  "
          f"sigma_within {rec['sigma_within']}  near the edge (2 sigma) {rec['variants_within_2_sigma_of_edge']}")
    for m in rec["measured"]:
        print(f"measured  {' vs '.join(Path(b).name for b in m['builds']):24s} J = {m['jaccard_variants']}  sizes {m['long_tail_sizes']}")
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
