r"""CLI of the curation stages (one command per dvc.yaml stage).

    python -m curate decompose --params params.yaml --unique data/dedupe/unique_graphs.parquet \
        --store data/graph_store --out data/decompose
    python -m curate profile --params params.yaml --decompose data/decompose --out data/profile \
        --cache data/work/inductor_cache
    python -m curate curate --params params.yaml --decompose data/decompose --profile data/profile \
        --out data/curate --metrics metrics/curate.json --plots plots

Commands live in :data:`COMMANDS` (name -> :class:`Command`); another module adds one with
:func:`register`. The scorer's ``score`` comes from ``curate/evaluate.py`` when present
(``add_score_parser(subparsers)`` / ``score_main(args)``), so it touches no other command.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass
class Command:
    """One subcommand: ``add_args(parser)`` declares its options, ``run(args) -> exit code``."""

    help: str
    add_args: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}


def register(name: str, help: str, add_args: Callable, run: Callable) -> None:
    """Add (or replace) subcommand ``name``."""
    COMMANDS[name] = Command(help, add_args, run)


def _params(path: str) -> dict:
    from passnet_common.params import load_params

    return load_params(path, "curate")


# --------------------------------------------------------------------------- decompose


def _decompose_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--unique", default="data/dedupe/unique_graphs.parquet")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/decompose")


def _decompose(args: argparse.Namespace) -> int:
    import polars as pl

    from curate.decompose import DECOMPOSE_VERSION, decompose_corpus, subgraph_table, variant_count, variant_counts
    from passnet_common.canonical import hash_metadata
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.schema import to_table

    cfg = _params(args.params)["decompose"]
    ug = pl.read_parquet(args.unique).to_dicts()
    out = Path(args.out)
    store_out = out / "subgraph_store"
    store_out.mkdir(parents=True, exist_ok=True)
    kw = dict(max_nodes=cfg["max_nodes"], max_param_bytes=int(cfg["max_param_bytes"]), min_graph_ops=cfg["min_graph_ops"])
    t0 = time.perf_counter()
    # the other anchors_per_subgraph values (counts only) in one spawned process beside the main pass
    others = [k for k in cfg.get("variants", []) if k != cfg["anchors_per_subgraph"]]
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))) if others else None
        futures = {k: pool.submit(variant_count, ug, args.store, k, kw) for k in others}
        ranges, graph_skips = decompose_corpus(ug, Path(args.store), store_out, anchors_per_subgraph=cfg["anchors_per_subgraph"], **kw)
        seconds = time.perf_counter() - t0
        rows = subgraph_table(ranges, ug, str(store_out))
        write_parquet(out / "subgraphs.parquet", to_table("subgraphs", rows, metadata=hash_metadata()))
        stats = variant_counts(ranges)
        inst = {u["graph_hash"]: int(u.get("num_instances") or 1) for u in ug}
        # no wall seconds in the output: decompose.json is a dep of `profile`, and a measured time there
        # would re-run profile's timing on every rebuild although the subgraphs are byte-identical
        stats.update(graph_skips=graph_skips, unique_graphs=len(ug),
                     instances=sum(inst.get(r["graph_hash"], 1) for r in ranges if r["subgraph_hash"]),
                     anchors_per_subgraph=cfg["anchors_per_subgraph"], decompose_version=DECOMPOSE_VERSION)
        variants = {}
        for k in cfg.get("variants", []):
            variants[str(k)] = ({kk: stats[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}
                                if k == cfg["anchors_per_subgraph"] else futures[k].result())
    stats["variants"] = variants
    atomic_write_json(out / "decompose.json", stats, indent=2)
    print(f"decompose: {len(ug)} unique graphs -> {stats['ranges']} ranges, {stats['unique_subgraphs']} unique subgraphs "
          f"({stats['unique_profilable']} profilable) in {seconds:.1f} s; variants {variants}")
    return 0


# --------------------------------------------------------------------------- profile


def _profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--out", default="data/profile", help="rows, variants and resumable attempts (a DVC output)")
    p.add_argument("--cache", default="data/work/inductor_cache", help="TORCHINDUCTOR_CACHE_DIR (speed only, not an output)")
    p.add_argument("--all", action="store_true", help="profile every profilable subgraph (overrides sample_size)")
    p.add_argument("--sample-size", type=int, default=None)
    p.add_argument("--candidate", default="inductor",
                   help="backend profiled in Inductor's place (eager = the no-op control; its attempts get their own keys)")


def select_sample(rows: list[dict], size: int | None, seed: int) -> list[dict]:
    """Stratified seeded sample of profilable subgraphs: every structure family (``pattern``)
    gets one subgraph first (families in a seeded order; when ``size`` is below the number of
    families, a seeded subset of them), the rest is filled by a seeded draw over the remaining
    subgraphs (so large families keep their weight). Sorted by hash; ``size`` None = all."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["subgraph_hash"])
    if size is None or size >= len(ok):
        return ok
    rng = random.Random(seed)
    fams: dict[str, list[dict]] = {}
    for r in ok:
        fams.setdefault(r.get("pattern") or "", []).append(r)
    order = sorted(fams)
    rng.shuffle(order)
    picked = [rng.choice(fams[f]) for f in order[:size]]
    seen = {r["subgraph_hash"] for r in picked}
    rest = [r for r in ok if r["subgraph_hash"] not in seen]
    picked += rng.sample(rest, max(0, size - len(picked)))
    return sorted(picked, key=lambda r: r["subgraph_hash"])


def _profile(args: argparse.Namespace) -> int:
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)  # before torch is imported: Inductor reads it lazily
    import polars as pl

    from curate.profile import PROFILE_TIMING_DEFAULTS, REMEASURE_PASSES
    from curate.profile_run import profile_all, run_plan
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.schema import to_table

    cfg = _params(args.params)["profile"]
    subs = pl.read_parquet(Path(args.decompose) / "subgraphs.parquet").to_dicts()
    size = None if (args.all or cfg.get("all")) else (args.sample_size or cfg["sample_size"])
    sample = select_sample(subs, size, cfg["sample_seed"])
    devices = ["cpu"]
    if cfg.get("cuda_when_available"):
        import torch

        if torch.cuda.is_available():
            devices.append("cuda")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, stats = [], {}
    t0 = time.perf_counter()
    hashes = [r["subgraph_hash"] for r in sample]
    for device in devices:
        timing = {**PROFILE_TIMING_DEFAULTS, **cfg["timing"]}  # params override the profile's cap defaults
        if device != "cpu":
            timing.update(cfg.get("cuda_timing", {}))
        pcfg = {"device": device, "dtype": cfg["dtype"], "seed": cfg["seed"], "threads": cfg["threads"],
                "timing": timing, "cache_dir": str(cache), "candidate": args.candidate}
        plan = run_plan(hashes, cfg["runs"], cfg["agreement_sample"], cfg["stress_run"] and device == "cpu", cfg["sample_seed"])
        r, st = profile_all(sample, Path(args.decompose) / "subgraph_store", pcfg, out, plan, cfg["sizes"],
                            compile_workers=cfg["compile_workers"], timeout_s=cfg["timeout_s"],
                            mem_cap_bytes=int(cfg["mem_cap_gb"] * 2**30),
                            remeasure_passes=int(cfg.get("remeasure_passes", REMEASURE_PASSES)),
                            overlap_compile=bool(cfg.get("overlap_compile", False)),
                            skip_over_cap=bool(cfg.get("skip_over_time_cap", False)))
        rows += r
        stats[device] = st
    write_parquet(out / "profiles.parquet", to_table("profiles", rows))
    stats["seconds"] = time.perf_counter() - t0
    stats["sample"] = len(sample)
    atomic_write_json(out / "profile.json", stats, indent=2)
    n_ok = sum(1 for r in rows if r.get("speedup_e2e") is not None)
    print(f"profile: {len(sample)} subgraphs x {devices}: {len(rows)} rows, {n_ok} timed, {stats['seconds']:.1f} s")
    return 0


# --------------------------------------------------------------------------- curate


def _curate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--profile", default="data/profile")
    p.add_argument("--out", default="data/curate")
    p.add_argument("--metrics", default="metrics/curate.json")
    p.add_argument("--plots", default="plots")


def _rates(stats: dict, rows: list[dict]) -> dict:
    """Profile throughput in variant-runs per core-hour. Cold: the compile phase (empty Inductor
    cache; ``compile_workers`` cores) plus timing run 0 (one core), over the variants compiled;
    warm: the timing runs >= 1 (one core; each re-compiles from the warm cache and times)."""
    cpu = stats.get("cpu", {})
    t = cpu.get("timing", [])
    run0 = next((x for x in t if x["run"] == 0), None)
    warm = [x for x in t if x["run"] >= 1 and x["attempts"]]
    out = {"profile_rate_per_core_hour_cold": None, "profile_rate_per_core_hour_warm": None}
    if run0 and run0["attempts"] and cpu.get("compile_attempts"):
        core_s = cpu["compile_seconds"] * cpu.get("compile_workers", 1) + run0["seconds"]
        out["profile_rate_per_core_hour_cold"] = round(cpu["compile_attempts"] / (core_s / 3600), 1)
    if warm:
        out["profile_rate_per_core_hour_warm"] = round(sum(x["attempts"] for x in warm) / (sum(x["seconds"] for x in warm) / 3600), 1)
    return out


def _curate(args: argparse.Namespace) -> int:
    import polars as pl

    from curate.longtail import curate_metrics, label_row, long_tail_subgraphs
    from curate.plots import write_plots
    from curate.profile import fingerprint
    from curate.tasks import group_tasks, write_task_folders
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.schema import to_table

    cfg = _params(args.params)["curate"]
    t, rule = int(cfg["tolerance_t"]), cfg.get("rule", "compiler")
    subs = {r["subgraph_hash"]: r for r in pl.read_parquet(Path(args.decompose) / "subgraphs.parquet").to_dicts()}
    profiles = pl.read_parquet(Path(args.profile) / "profiles.parquet").to_dicts()
    pstats = json.loads((Path(args.profile) / "profile.json").read_text())
    labelled = [{**r, **label_row(r, t, rule), "pattern": subs[r["subgraph_hash"]]["pattern"]}
                for r in profiles if r["device"] == "cpu"]
    lt = long_tail_subgraphs(labelled)
    members = []
    for r in labelled:
        if r["run"] == 0 and (r["subgraph_hash"], r["size"]) in lt:
            s = subs[r["subgraph_hash"]]
            folder = (Path(args.decompose) / "subgraph_store" / r["subgraph_hash"][:2] / r["subgraph_hash"]) if r["size"] == "catalog" \
                else Path(args.profile) / "variants" / r["subgraph_hash"][:2] / r["subgraph_hash"] / r["size"]
            members.append({**r, "anchor": s["anchor"], "model_ids": s["model_ids"], "variant_folder": str(folder)})
    tasks = group_tasks(members, cfg["task_size"], cfg["max_tasks"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    hw = fingerprint("cpu")
    timed0 = [r for r in labelled if r["run"] == 0 and r.get("load_avg_start") is not None]
    hardware = {"cpu_model": hw["cpu_model"], "cores": hw["cpu_logical_cores"], "torch": hw["torch_version"],
                "threads": profiles[0]["threads"] if profiles else None,
                "load_avg_median": round(float(sorted(r["load_avg_start"] for r in timed0)[len(timed0) // 2]), 2) if timed0 else None}
    write_task_folders(tasks, out / "tasks", t, hw)
    write_parquet(out / "tasks.parquet", to_table("tasks", [{k: v for k, v in task.items() if not k.startswith("_")} | {"tolerance_t": t} for task in tasks]))
    write_parquet(out / "long_tail.parquet", to_table("long_tail", [r | {"tolerance_t": t, "rule": rule} for r in labelled]))
    metrics = curate_metrics(list(subs.values()), labelled, len(tasks), [task["num_variants"] for task in tasks], lt, hardware,
                             _rates(pstats, profiles))
    atomic_write_json(args.metrics, metrics, indent=2)
    write_plots(labelled, Path(args.plots))
    print(f"curate: {metrics['long_tail']} long-tail subgraphs -> {len(tasks)} tasks; {json.dumps(metrics)}")
    return 0


register("decompose", "split unique graphs into deduplicated subgraphs", _decompose_args, _decompose)
register("profile", "eager, Dynamo-only and Inductor on a stratified sample of subgraph variants (isolated, resumable)", _profile_args, _profile)
register("curate", "long-tail labels, tasks and metrics", _curate_args, _curate)


def main(argv: list[str] | None = None) -> int:
    try:  # the scorer's module (issue 9) adds its `score` subcommand when present
        from curate import evaluate
    except ImportError:
        evaluate = None
    ap = argparse.ArgumentParser(prog="python -m curate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, cmd in COMMANDS.items():
        cmd.add_args(sub.add_parser(name, help=cmd.help))
    if evaluate is not None and hasattr(evaluate, "add_score_parser") and "score" not in COMMANDS:
        evaluate.add_score_parser(sub)
    args = ap.parse_args(argv)
    if args.cmd not in COMMANDS:
        return evaluate.score_main(args)
    return COMMANDS[args.cmd].run(args)


if __name__ == "__main__":
    from passnet_common.cli import run_cli

    sys.exit(run_cli(main))
