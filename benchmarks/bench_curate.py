"""Curation benchmark: compiles avoided by subgraph dedup, cold vs warm (Inductor-cached)
profile wall time, subgraphs profiled per hour on this machine.

    python -m benchmarks.bench_curate [--decompose data/decompose] [--n 6] [--out metrics/bench/bench_curate.json]

One profile run (run 0) of a seeded sample of ``n`` subgraphs three ways, all in this run:
``cold`` (empty Inductor cache, empty attempt folder), ``warm`` (the cache the cold pass left,
empty attempt folder: every subgraph is compiled again, from the FX graph / AOTAutograd
cache), ``resumed`` (the warm pass's attempt folder: nothing is re-run). Ratios are against
the cold pass. Timings are wall seconds on a shared machine: read the ratios.

Where the time goes: per pass, the children's wall seconds split into load, eager reference,
compile (``compile_s``: Dynamo + AOTAutograd + Inductor or their cache hits, and the first
call), correctness check, timing protocol (``timing_s``: untimed call, warm-up, interleaved
trials, noise-gate retries), and the rest (fork, imports, result write). The timing protocol
costs the same cold and warm, so ``warm_ratio_bound`` = cold wall / (warm wall - warm
compile) is the most any cache could give on this sample and machine. The 1-minute load
average before and after each pass is recorded (noise-gate retries grow with load).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--decompose", default="data/decompose")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--out", default="metrics/bench/bench_curate.json")
    args = ap.parse_args(argv)
    sub_path = Path(args.decompose) / "subgraphs.parquet"
    if not sub_path.exists():
        print(f"bench_curate: {sub_path} missing (run `dvc repro decompose` first); skipped")
        return 0
    import polars as pl

    from curate.__main__ import select_sample
    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params

    cfg = load_params(args.params, "curate")["profile"]
    subs = pl.read_parquet(sub_path).to_dicts()
    ok = [r for r in subs if r["status"] == "ok"]
    instances_ok = sum(r["num_instances"] for r in ok)
    sample = select_sample(subs, args.n, cfg["sample_seed"] + 1)
    tmp = Path(tempfile.mkdtemp(prefix="bench_curate."))
    cache = tmp / "inductor_cache"
    cache.mkdir()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    from curate.profile import preimport, profile_all

    preimport()  # parent set-up outside the timed passes (every pass inherits it alike)
    shutil.rmtree(cache)
    cache.mkdir()
    pcfg = {"device": "cpu", "dtype": cfg["dtype"], "seed": cfg["seed"], "threads": cfg["threads"],
            "timing": dict(cfg["timing"]), "cache_dir": str(cache)}
    times, compile_s, phases, load, attempts = {}, {}, {}, {}, {}
    for name, work in (("cold", tmp / "work_cold"), ("warm", tmp / "work_warm"), ("resumed", tmp / "work_warm")):
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        rows = profile_all(sample, Path(args.decompose) / "subgraph_store", pcfg, work, runs=1, workers=cfg["workers"],
                           timeout_s=cfg["timeout_s"], mem_cap_bytes=int(cfg["mem_cap_gb"] * 2**30), log=lambda *_: None)
        times[name] = time.perf_counter() - t0
        load[name] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        cs = [r["compile_s"] for r in rows if r.get("compile_s") is not None]
        compile_s[name] = sum(cs) / len(cs) if cs else None
        if name != "resumed":
            ph = {"child_s": sum(r.get("seconds") or 0.0 for r in rows), "compile_s": sum(cs)}
            for r in rows:
                for k, v in (r.get("phase_s") or {}).items():
                    ph[k] = ph.get(k, 0.0) + v
            ph["other_s"] = times[name] - sum(v for k, v in ph.items() if k != "child_s")
            phases[name] = {k: round(v, 2) for k, v in ph.items()}
            att = [r["timing_attempts"] for r in rows if r.get("timing_attempts")]
            attempts[name] = sum(att) / len(att) if att else None
    shutil.rmtree(tmp, ignore_errors=True)
    n = len(sample)
    result = {
        "subgraph_ranges_profilable": instances_ok,
        "unique_subgraphs_profilable": len(ok),
        "compiles_avoided_by_dedup": instances_ok - len(ok),
        "dedup_factor": instances_ok / len(ok) if ok else None,
        "sample": n,
        "profile_cold_s": round(times["cold"], 2),
        "profile_warm_s": round(times["warm"], 2),
        "profile_resumed_s": round(times["resumed"], 2),
        "warm_speedup_vs_cold": times["cold"] / times["warm"] if times["warm"] else None,
        "resumed_speedup_vs_cold": times["cold"] / times["resumed"] if times["resumed"] else None,
        "mean_compile_s_cold": compile_s["cold"],
        "mean_compile_s_warm": compile_s["warm"],
        "subgraphs_per_hour_cold": n / times["cold"] * 3600,
        "subgraphs_per_hour_warm": n / times["warm"] * 3600,
        "phases_s": phases,
        "warm_ratio_bound": times["cold"] / (times["warm"] - phases["warm"]["compile_s"])
        if times["warm"] > phases["warm"]["compile_s"] else None,
        "mean_timing_attempts": attempts,
        "load_avg_1min": load,
        "workers": cfg["workers"],
        "threads": cfg["threads"],
        "cpu_count": os.cpu_count(),
    }
    atomic_write_json(args.out, result, indent=2)
    print(f"{'pass':10} {'wall s':>8} {'vs cold':>8} {'mean compile s':>15} {'subgraphs/h':>12}")
    for name in ("cold", "warm", "resumed"):
        cs = compile_s[name]
        print(f"{name:10} {times[name]:8.1f} {times['cold'] / times[name]:8.1f}x {cs if cs is None else round(cs, 2)!s:>15} "
              f"{n / times[name] * 3600:12.0f}")
    keys = ["load_s", "eager_ref_s", "compile_s", "correctness_s", "timing_s", "other_s"]
    print(f"{'phase s':10} " + " ".join(f"{k:>13}" for k in keys))
    for name in ("cold", "warm"):
        print(f"{name:10} " + " ".join(f"{phases[name].get(k, 0.0):13.2f}" for k in keys))
    print(f"warm/cold bound with a free compile: {result['warm_ratio_bound']:.1f}x; load (1-min avg before/after) {load}; "
          f"mean timing attempts {attempts}")
    print(f"dedup: {instances_ok} profilable ranges -> {len(ok)} unique subgraphs: {instances_ok - len(ok)} compiles avoided "
          f"({result['dedup_factor']:.1f}x)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
