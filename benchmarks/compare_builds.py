"""Compare two builds of the pipeline output by output: which ``dvc.lock`` outputs have the same bytes.

Each build is a checkout that ran ``dvc repro`` (its ``dvc.lock`` and its local DVC cache,
``.dvc/cache``). For every stage output the md5 that DVC recorded is compared; for a directory
output whose md5 differs, the two ``.dir`` manifests from the caches are compared file by file, so
the differing files are named. An output DVC records as a measurement by design (wall times, peak
memory: the ``MEASUREMENTS`` list, documented in ``docs/reproducibility.md``) is reported in its own
group and does not count against ``identical``.

    python -m benchmarks.compare_builds /path/to/buildA /path/to/buildB --out metrics/bench/compare_builds.json

Writes a JSON record: per output ``same`` (bool), ``files_differ`` (paths inside a directory output,
first 20) and ``files`` (file count), plus ``identical`` (every non-measurement output of stages both
builds ran has the same md5) and the commits of both checkouts. It reads files only; nothing is run.

With ``--curate`` it compares what the curate stage selected instead: the long-tail variants
(``data/curate/long_tail.parquet``: ``(subgraph_hash, size, dtype)`` labelled long tail in every run
that labelled it) and the tasks (``data/curate/tasks.parquet``: their subgraph hashes) of the two
builds as sets, with their Jaccard indices (``long_tail_jaccard_variants``,
``long_tail_jaccard_tasks``) and each build's machine and load (its ``metrics/curate.json``
``hardware``), and how far each variant's compiler ratio moves between the builds next to the
within-build interval (``between_builds``, :func:`between_builds`);
``--out metrics/bench/compare_builds_curate.json``.

Raises:
    SystemExit(2): a checkout without ``dvc.lock`` (or, with ``--curate``, without the curate outputs).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# outputs that hold measured times / memory on purpose (their own outputs, so everything else can match)
MEASUREMENTS = (
    "data/profile",  # the timing phase: trials in ms (persist: true, resumed)
    "data/curate",  # labels from data/profile's measurements
    "data/score",  # scorer timings
    "metrics/curate.json", "metrics/score.json", "metrics/summary.json",
    "plots/curate_speedup.csv", "plots/curate_speedup_vs_eager.png",
    "plots/score_curves.png", "plots/score_es_t.csv", "plots/score_s_t.csv",
    "data/proxy/grpo_timing", "metrics/proxy_cost.json", "plots/proxy_cost_report.md",
)


def _is_measurement(path: str) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in MEASUREMENTS)


def lock_outputs(build: Path) -> dict[str, dict]:
    """``{out path: {"md5", "stage", "nfiles"}}`` of a checkout's ``dvc.lock``."""
    import yaml

    lock = build / "dvc.lock"
    if not lock.is_file():
        raise SystemExit(f"compare_builds: {lock} not found (run `dvc repro` in that checkout first)")
    stages = yaml.safe_load(lock.read_text()).get("stages", {})
    out = {}
    for name, st in stages.items():
        for o in st.get("outs", []):
            out[o["path"]] = {"md5": o.get("md5"), "stage": name, "nfiles": o.get("nfiles")}
    return out


def dir_manifest(build: Path, md5: str) -> dict[str, str] | None:
    """``{relpath: md5}`` of a directory output from the checkout's DVC cache (None if absent)."""
    h = md5.removesuffix(".dir")
    for root in (build / ".dvc" / "cache" / "files" / "md5", build / ".dvc" / "cache"):
        p = root / h[:2] / (h[2:] + ".dir")
        if p.is_file():
            return {e["relpath"]: e["md5"] for e in json.loads(p.read_text())}
    return None


def compare(a: Path, b: Path, stages: list[str] | None = None) -> dict:
    """The comparison record of two checkouts (see the module docstring); ``stages``: only the
    outputs of these stages (a matrix stage by its name before ``@``), e.g. the ones both builds ran."""
    la, lb = lock_outputs(a), lock_outputs(b)
    if stages:
        keep = lambda o: o["stage"].split("@")[0] in stages  # noqa: E731
        la = {p: o for p, o in la.items() if keep(o)}
        lb = {p: o for p, o in lb.items() if keep(o)}
    rows = {}
    for path in sorted(la.keys() & lb.keys()):
        ma, mb = la[path]["md5"], lb[path]["md5"]
        row = {"stage": la[path]["stage"], "same": ma == mb, "measurement": _is_measurement(path)}
        if ma != mb and ma and mb and ma.endswith(".dir") and mb.endswith(".dir"):
            fa, fb = dir_manifest(a, ma), dir_manifest(b, mb)
            if fa is not None and fb is not None:
                diff = sorted(p for p in fa.keys() | fb.keys() if fa.get(p) != fb.get(p))
                row.update(files=len(fb), files_differ=diff[:20], n_files_differ=len(diff))
        elif la[path].get("nfiles"):
            row["files"] = la[path]["nfiles"]
        rows[path] = row
    checked = [r for r in rows.values() if not r["measurement"]]

    def commit(p: Path) -> str | None:
        r = subprocess.run(["git", "-C", str(p), "rev-parse", "HEAD"], capture_output=True, text=True)
        return r.stdout.strip() or None

    return {"builds": [str(a), str(b)], "commits": [commit(a), commit(b)], "stages": stages or "all",
            "outputs_compared": len(checked), "outputs_same": sum(r["same"] for r in checked),
            "identical": all(r["same"] for r in checked),
            "measurement_outputs": sorted(p for p, r in rows.items() if r["measurement"]),
            "only_in_one": sorted(la.keys() ^ lb.keys()), "outputs": rows}


def jaccard(a: set, b: set) -> float | None:
    """``|a & b| / |a | b|`` (None when both are empty: nothing to agree on)."""
    return len(a & b) / len(a | b) if a | b else None


def variant_estimates(rows: list[dict]) -> dict[tuple, tuple[float, float]]:
    """Per labelled variant ``(subgraph_hash, size, dtype)``: the median over its labelled runs of
    ``speedup_compiler`` (Dynamo-only / Inductor) and of that interval's upper end."""
    import statistics

    from curate.select.longtail import variant_key

    by: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("long_tail") is not None and r.get("speedup_compiler") is not None:
            by.setdefault(variant_key(r), []).append(r)
    return {k: (statistics.median(r["speedup_compiler"] for r in rs),
                statistics.median(r["speedup_compiler_ci_high"] for r in rs)) for k, rs in by.items()}


def task_geomeans(rows: list[dict]) -> dict[str, float]:
    """Per subgraph with >= 2 labelled run-0 variants: the geometric mean of their ``speedup_compiler``."""
    from curate.select.longtail import geomean

    by: dict[str, list[float]] = {}
    for r in rows:
        if r.get("run") == 0 and r.get("long_tail") is not None and r.get("speedup_compiler"):
            by.setdefault(r["subgraph_hash"], []).append(r["speedup_compiler"])
    return {h: geomean(x) for h, x in by.items() if len(x) >= 2}


def between_builds(ea: dict, eb: dict, va: set, vb: set, ga: dict | None = None, gb: dict | None = None) -> dict:
    """How far one variant's ``speedup_compiler`` moves from build a to build b, next to the
    within-build interval the rule reads: over the variants labelled in both builds, the ratio b / a
    (10th, 50th, 90th percentile), the 90th percentile of ``|ln(b / a)|``, and the median relative
    half-width of the within-build interval (upper end / estimate - 1). A between-build spread wider than
    the within-build interval is what flips variants whose upper end sits near ``1 - m``; ``flips``
    lists each variant in one long tail only with (estimate, upper end) in a and in b. With the
    per-subgraph geometric means ``ga`` / ``gb`` (:func:`task_geomeans`) it adds the same spread at
    task level: ``tasks_labelled_both``, ``task_abs_log_ratio_p90`` (the source of
    ``curate.curate.task_build_spread``)."""
    import numpy as np

    both = sorted(set(ea) & set(eb))
    if not both:
        return {"variants_labelled_both": 0}
    ln = np.log(np.array([eb[k][0] / ea[k][0] for k in both]))
    half = np.array([ea[k][1] / ea[k][0] - 1 for k in both] + [eb[k][1] / eb[k][0] - 1 for k in both])
    tb = sorted(set(ga or {}) & set(gb or {}))
    task = {"tasks_labelled_both": len(tb), "task_abs_log_ratio_p90": round(float(np.percentile(
        np.abs(np.log([gb[h] / ga[h] for h in tb])), 90)), 4) if tb else None}
    return {**task, "variants_labelled_both": len(both),
            "ratio_b_over_a_p10_p50_p90": [round(float(x), 4) for x in np.exp(np.percentile(ln, [10, 50, 90]))],
            "abs_log_ratio_p90": round(float(np.percentile(np.abs(ln), 90)), 4),
            "within_build_ci_halfwidth_median": round(float(np.median(half)), 4),
            "flips": [{"variant": ":".join(k), "a": [round(x, 4) for x in ea.get(k, ())] or None,
                       "b": [round(x, 4) for x in eb.get(k, ())] or None} for k in sorted(va ^ vb)]}


def curate_rows(build: Path) -> tuple[list[dict], dict]:
    """``(rows of data/curate/long_tail.parquet, metrics/curate.json)`` of a build; each row carries the
    build's ``min_effect`` (its rows were labelled with it; it is not a column).

    Raises:
        SystemExit(2): the build has no ``data/curate/long_tail.parquet``.
    """
    import polars as pl

    lt, mt = build / "data" / "curate" / "long_tail.parquet", build / "metrics" / "curate.json"
    if not lt.is_file():
        raise SystemExit(f"compare_builds: {build} has no data/curate/long_tail.parquet")
    metrics = json.loads(mt.read_text()) if mt.is_file() else {}
    return [{"min_effect": metrics.get("min_effect"), **r} for r in pl.read_parquet(lt).to_dicts()], metrics


def curate_sets(build: Path) -> tuple[set, set, dict, dict, dict]:
    """``(long-tail variants, task subgraph hashes, hardware, variant estimates, task geometric means)``
    of a build's curate outputs (:func:`curate_rows`, :func:`variant_estimates`, :func:`task_geomeans`)."""
    import polars as pl

    from curate.select.longtail import long_tail_variants

    tk = build / "data" / "curate" / "tasks.parquet"
    if not tk.is_file():
        raise SystemExit(f"compare_builds: {build} has no data/curate/tasks.parquet")
    rows, metrics = curate_rows(build)
    variants = long_tail_variants(rows)
    tasks = {h for hs in pl.read_parquet(tk)["subgraph_hashes"].to_list() for h in hs}
    hw = metrics.get("hardware", {})
    return variants, tasks, hw, variant_estimates(rows), task_geomeans(rows)


def compare_curate(a: Path, b: Path) -> dict:
    """The ``--curate`` record of two checkouts (module docstring)."""
    va, ta, ha, ea, ga = curate_sets(a)
    vb, tb, hb, eb, gb = curate_sets(b)
    return {"builds": [str(a), str(b)], "hardware": [ha, hb],
            "long_tail_variants": [len(va), len(vb)], "long_tail_variants_both": len(va & vb),
            "long_tail_jaccard_variants": jaccard(va, vb),
            "tasks": [len(ta), len(tb)], "tasks_both": len(ta & tb), "long_tail_jaccard_tasks": jaccard(ta, tb),
            "only_in_a": sorted(":".join(v) for v in va - vb), "only_in_b": sorted(":".join(v) for v in vb - va),
            "between_builds": between_builds(ea, eb, va, vb, ga, gb)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--stages", nargs="*", default=None, help="compare only these stages' outputs")
    ap.add_argument("--note", default=None, help="what the builds ran on (machine, load), stored with the record")
    ap.add_argument("--curate", action="store_true", help="compare the long-tail variants and tasks as sets (Jaccard)")
    args = ap.parse_args(argv)
    if args.curate:
        rec = compare_curate(args.a, args.b)
        if args.note:
            rec["measured_on"] = args.note
        print(json.dumps({k: v for k, v in rec.items() if not k.startswith("only_in")}))
        if args.out:
            from passnet_common.io import atomic_write_json

            atomic_write_json(args.out, rec, indent=2)
        return 0
    rec = compare(args.a, args.b, args.stages)
    if args.note:
        rec["measured_on"] = args.note
    for path, r in rec["outputs"].items():
        tag = "same" if r["same"] else ("measured" if r["measurement"] else "DIFF")
        extra = f"  {r['n_files_differ']}/{r['files']} files differ: {', '.join(r['files_differ'][:3])}" if "n_files_differ" in r else ""
        print(f"{tag:8s} {r['stage']:22s} {path}{extra}")
    print(f"{rec['outputs_same']}/{rec['outputs_compared']} non-measurement outputs identical")
    if args.out:
        from passnet_common.io import atomic_write_json

        atomic_write_json(args.out, rec, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
