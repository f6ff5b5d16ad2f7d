"""``python -m curate profile``: eager, Dynamo-only and Inductor on a stratified sample of subgraph variants."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import polars as pl
import torch

from curate.profile.config import ProfileConfig
from curate.profile.run import profile_all, run_plan
from curate.profile.sample import select_sample
from curate.select.config import SelectConfig
from passnet_common.io import atomic_write_json, write_parquet
from passnet_common.params import load_params
from passnet_common.schema import to_table


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--out", default="data/profile", help="rows, variants and resumable attempts (a DVC output)")
    p.add_argument("--cache", default="data/work/inductor_cache", help="TORCHINDUCTOR_CACHE_DIR (speed only, not an output)")
    p.add_argument("--all", action="store_true", help="profile every profilable subgraph (overrides sample_size)")
    p.add_argument("--sample-size", type=int, default=None)
    p.add_argument("--candidate", default="inductor",
                   help="backend profiled in Inductor's place (eager = the no-op control; its attempts get their own keys)")


def run(args: argparse.Namespace) -> int:
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)  # before Dynamo / Inductor load: torch._dynamo reads it at import

    block = load_params(args.params, "curate")
    cfg = ProfileConfig.from_params(block.get("profile"), "curate.profile")
    # the label's edge (curate.curate.build_spread widens each upper end): the replicates' second stage targets it
    build_spread = float((block.get("curate") or {}).get("build_spread", SelectConfig.build_spread))
    subs = pl.read_parquet(Path(args.decompose) / "subgraphs.parquet").to_dicts()
    size = None if (args.all or cfg.all) else (args.sample_size or cfg.sample_size)
    sample = select_sample(subs, size, cfg.sample_seed)
    devices = ["cpu"]
    if cfg.cuda_when_available:
        if torch.cuda.is_available():
            devices.append("cuda")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, stats = [], {}
    t0 = time.perf_counter()
    hashes = [r["subgraph_hash"] for r in sample]
    for device in devices:
        timing = (cfg.timing if device == "cpu" else cfg.cuda_timing).to_params()
        pcfg = {"device": device, "dtypes": list(cfg.dtypes), "dtype": cfg.dtypes[0], "seed": cfg.seed, "threads": cfg.threads,
                "timing": timing, "cache_dir": str(cache), "candidate": args.candidate}
        plan = run_plan(hashes, cfg.runs, cfg.agreement_sample, cfg.stress_run and device == "cpu", cfg.sample_seed)
        screen = {"timing": cfg.screen_timing.to_params(), "audit_share": cfg.audit_share, "seed": cfg.sample_seed,
                  "build_spread": build_spread} if cfg.screen and device == "cpu" else None
        r, st = profile_all(sample, Path(args.decompose) / "subgraph_store", pcfg, out, plan, cfg.sizes.to_params(),
                            compile_workers=cfg.compile_workers, timeout_s=cfg.timeout_s,
                            mem_cap_bytes=int(cfg.mem_cap_gb * 2**30), remeasure_passes=cfg.remeasure_passes,
                            overlap_compile=cfg.overlap_compile, skip_over_cap=cfg.skip_over_time_cap, screen=screen,
                            stress_confirm=cfg.stress_confirm, replicates=cfg.replicates,
                            extra_replicates=cfg.extra_replicates)
        rows += r
        stats[device] = {**st, "timing_config": timing}
    write_parquet(out / "profiles.parquet", to_table("profiles", rows))
    stats["seconds"] = time.perf_counter() - t0
    stats["sample"] = len(sample)
    atomic_write_json(out / "profile.json", stats, indent=2)
    n_ok = sum(1 for r in rows if r.get("speedup_e2e") is not None)
    print(f"profile: {len(sample)} subgraphs x {devices}: {len(rows)} rows, {n_ok} timed, {stats['seconds']:.1f} s")
    return 0
