"""Which variants the label agreement loses, and why: the pairs of runs 0 / 1 and 1 / 2 whose
long-tail labels differ (or are missing), with each run's intervals, trial counts and load.

    python -m benchmarks.agreement_flips [--profiles data/profile/profiles.parquet] [--params params.yaml]
        [--out metrics/bench/agreement_flips.json] [--note "<machine, load>"]

Reads a built ``profiles.parquet`` (nothing is timed here) and labels every row with the curate
stage's own rule (:func:`curate.select.longtail.label_row` at ``curate.curate.tolerance_t``,
``curate.rule`` and ``curate.build_spread``), so its counts equal ``label_agreement`` / ``label_agreement_pinned`` of the same
build's ``metrics/curate.json``. For each disagreeing variant it names the label that moved
(``slower_e2e``, ``slower_compiler``, ``overhead_bound``, ``correct_at_t`` or ``unlabelled``) and
how far the deciding interval's upper end lies from its threshold (``(1 - min_effect) * exp(-build_spread)``
for the ``slower_*`` labels, ``1 - min_effect`` for ``overhead_bound``; a flip at the threshold's
edge vs a ratio that moved between runs).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

COMPONENTS = ("correct_at_t", "slower_compiler", "slower_e2e", "overhead_bound")
HIGH = {"slower_e2e": "speedup_e2e_ci_high", "slower_compiler": "speedup_compiler_ci_high",
        "overhead_bound": "speedup_dynamo_ci_high"}


def _r(x, nd=3):
    return None if x is None else round(float(x), nd)


def flips(rows: list[dict], run_a: int, run_b: int, build_spread: float = 0.0) -> tuple[int, list[dict]]:
    """``(paired variants, disagreements)`` of runs ``run_a`` / ``run_b`` over labelled ``rows``
    (each with :func:`curate.select.longtail.label_row`'s keys). A disagreement lists per run the status,
    ``long_tail``, the three ratios with their intervals, ``trials``, ``capped``, eager ms and the
    load average at the row's start, and ``moved``: the label components that differ (``unlabelled``
    when a run gave no label) with ``edge``: per moved interval, ``min(|high - threshold|)`` over the
    two runs (small = the label sat at the threshold in one run; threshold: module docstring, with the
    ``build_spread`` the rows were labelled with)."""
    from curate.select.longtail import paired_rows

    pairs = paired_rows(rows, run_a, run_b)
    out = []
    for v in pairs:
        a, b = v[run_a], v[run_b]
        if a["long_tail"] is not None and a["long_tail"] == b["long_tail"]:
            continue
        if a["long_tail"] is None or b["long_tail"] is None:
            moved = ["unlabelled"]
        else:
            moved = [c for c in COMPONENTS if bool(a.get(c)) != bool(b.get(c))][:1] or ["long_tail"]
        m = float(a.get("min_effect") or 0.0)
        thr = {c: (1 - m) * (math.exp(-build_spread) if c.startswith("slower_") else 1.0) for c in HIGH}
        edge = {c: _r(min(abs(x[HIGH[c]] - thr[c]) for x in (a, b))) for c in moved if c in HIGH}
        out.append({"subgraph_hash": a["subgraph_hash"], "size": a.get("size"), "dtype": a.get("dtype"), "moved": moved, "edge": edge,
                    "runs": {str(x["run"]): {
                        "status": x["status"], "long_tail": x["long_tail"], "trials": x.get("trials"),
                        "capped": x.get("capped"), "eager_ms": _r(x.get("eager_median_ms")),
                        "load_avg_start": _r(x.get("load_avg_start"), 2), "clock_gap": _r(x.get("clock_gap")),
                        **{k: [_r(x.get(k)), _r(x.get(f"{k}_ci_low")), _r(x.get(f"{k}_ci_high"))]
                           for k in ("speedup_e2e", "speedup_compiler", "speedup_dynamo")}} for x in (a, b)}})
    return len(pairs), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profiles", default="data/profile/profiles.parquet")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--out", default="metrics/bench/agreement_flips.json")
    ap.add_argument("--note", default="", help="machine and load of the build the profiles come from")
    args = ap.parse_args(argv)
    import polars as pl
    import yaml

    from curate.select.longtail import label_row
    from passnet_common.io import atomic_write_json

    p = yaml.safe_load(Path(args.params).read_text())["curate"]["curate"]
    rows = pl.read_parquet(args.profiles).to_dicts()
    for r in rows:
        r.update(label_row(r, int(p["tolerance_t"]), p.get("rule", "compiler"), float(p.get("build_spread", 0.0))))
    result = {"profiles": args.profiles, "measured_on": args.note, "tolerance_t": p["tolerance_t"],
              "rule": p.get("rule", "compiler"), "build_spread": float(p.get("build_spread", 0.0)), "pairs": {}}
    for a, b, name in ((0, 1, "label_agreement"), (1, 2, "label_agreement_pinned")):
        n, bad = flips(rows, a, b, float(p.get("build_spread", 0.0)))
        result["pairs"][f"{a}/{b}"] = {"metric": name, "variants": n, "disagree": len(bad),
                                       "agreement": _r((n - len(bad)) / n, 4) if n else None, "flips": bad}
        print(f"runs {a}/{b} ({name}): {n} paired, {len(bad)} disagree")
        print(f"  {'variant':24s} {'moved':28s} run  lt     e2e [ci]              compiler [ci]         dynamo [ci]"
              "           trials eager_ms load")
        for f in bad:
            for run, x in f["runs"].items():
                ci = "  ".join(f"{v[0]} [{v[1]}, {v[2]}]" for v in (x["speedup_e2e"], x["speedup_compiler"],
                                                                   x["speedup_dynamo"]))
                print(f"  {f['subgraph_hash'][:12] + ':' + str(f['size']):24s} {','.join(f['moved']):28s} {run:3s}"
                      f" {str(x['long_tail']):6s} {ci}  {x['trials']:4} {x['eager_ms']} {x['load_avg_start']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, result, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
