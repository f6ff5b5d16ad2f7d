r"""CLI of the curation stages (one command per dvc.yaml stage).

    python -m curate decompose --params params.yaml --unique data/dedupe/unique_graphs.parquet \
        --store data/graph_store --out data/decompose
    python -m curate profile --params params.yaml --decompose data/decompose --out data/profile \
        --work data/work/profile --cache data/work/inductor_cache --plots plots
    python -m curate curate --params params.yaml --decompose data/decompose --profile data/profile \
        --out data/curate --metrics metrics/curate.json

Commands live in :data:`COMMANDS` (name -> :class:`Command`); another module adds one with
:func:`register`. The scorer's ``score`` comes from ``curate/evaluate.py`` when present
(``add_score_parser(subparsers)`` / ``score_main(args)``), so it touches no other command.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
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

    from curate.decompose import DECOMPOSE_VERSION, decompose_corpus, subgraph_table, variant_counts
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
    ranges, graph_skips = decompose_corpus(ug, Path(args.store), store_out, anchors_per_subgraph=cfg["anchors_per_subgraph"], **kw)
    seconds = time.perf_counter() - t0
    rows = subgraph_table(ranges, ug, str(store_out))
    write_parquet(out / "subgraphs.parquet", to_table("subgraphs", rows, metadata=hash_metadata()))
    stats = variant_counts(ranges)
    inst = {u["graph_hash"]: int(u.get("num_instances") or 1) for u in ug}
    stats.update(graph_skips=graph_skips, unique_graphs=len(ug), seconds=round(seconds, 1),
                 instances=sum(inst.get(r["graph_hash"], 1) for r in ranges if r["subgraph_hash"]),
                 anchors_per_subgraph=cfg["anchors_per_subgraph"], decompose_version=DECOMPOSE_VERSION)
    variants = {}
    for k in cfg.get("variants", []):
        if k == cfg["anchors_per_subgraph"]:
            variants[str(k)] = {kk: stats[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}
            continue
        vr, _ = decompose_corpus(ug, Path(args.store), None, anchors_per_subgraph=k, **kw)
        vc = variant_counts(vr)
        variants[str(k)] = {kk: vc[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}
    stats["variants"] = variants
    atomic_write_json(out / "decompose.json", stats, indent=2)
    print(f"decompose: {len(ug)} unique graphs -> {stats['ranges']} ranges, {stats['unique_subgraphs']} unique subgraphs "
          f"({stats['unique_profilable']} profilable) in {seconds:.1f} s; variants {variants}")
    return 0


# --------------------------------------------------------------------------- profile


def _profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--out", default="data/profile")
    p.add_argument("--work", default="data/work/profile")
    p.add_argument("--cache", default="data/work/inductor_cache", help="TORCHINDUCTOR_CACHE_DIR (persistent caches)")
    p.add_argument("--plots", default="plots")
    p.add_argument("--all", action="store_true", help="profile every profilable subgraph (overrides sample_size)")
    p.add_argument("--sample-size", type=int, default=None)


def select_sample(rows: list[dict], size: int | None, seed: int) -> list[dict]:
    """Seeded sample of profilable subgraphs (sorted by hash first, so the sample depends only
    on the set and the seed); ``size`` None = all."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["subgraph_hash"])
    if size is None or size >= len(ok):
        return ok
    return sorted(random.Random(seed).sample(ok, size), key=lambda r: r["subgraph_hash"])


def _profile(args: argparse.Namespace) -> int:
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)  # before torch is imported: Inductor reads it lazily
    import polars as pl

    from curate.profile import profile_all
    from passnet_common.io import write_parquet
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
    rows = []
    t0 = time.perf_counter()
    for device in devices:
        pcfg = {"device": device, "dtype": cfg["dtype"], "seed": cfg["seed"], "threads": cfg["threads"],
                "timing": dict(cfg["timing"]), "cache_dir": str(cache)}
        rows += profile_all(sample, Path(args.decompose) / "subgraph_store", pcfg, Path(args.work), runs=cfg["runs"],
                            workers=cfg["workers"], timeout_s=cfg["timeout_s"], mem_cap_bytes=int(cfg["mem_cap_gb"] * 2**30))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(out / "profiles.parquet", to_table("profiles", rows))
    write_profile_plots(rows, Path(args.plots))
    n_ok = sum(1 for r in rows if r.get("speedup") is not None)
    print(f"profile: {len(sample)} subgraphs x {cfg['runs']} runs x {devices}: {len(rows)} rows, {n_ok} timed, "
          f"{time.perf_counter() - t0:.1f} s")
    return 0


def write_profile_plots(rows: list[dict], plots: Path) -> None:
    """DVC plot data of run 0: speedup histogram on a log2 axis, compile-time histogram."""
    import csv

    plots.mkdir(parents=True, exist_ok=True)
    run0 = [r for r in rows if r["run"] == 0]
    sp: dict[float, int] = {}
    for r in run0:
        if r.get("speedup"):
            b = math.floor(math.log2(r["speedup"]) * 4) / 4
            sp[b] = sp.get(b, 0) + 1
    with open(plots / "curate_speedup.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["log2_speedup", "subgraphs"])
        for b in sorted(sp):
            w.writerow([b, sp[b]])
    ct: dict[float, int] = {}
    for r in run0:
        if r.get("compile_s") is not None:
            b = math.floor(r["compile_s"] * 2) / 2
            ct[b] = ct.get(b, 0) + 1
    with open(plots / "curate_compile_time.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["compile_s", "subgraphs"])
        for b in sorted(ct):
            w.writerow([b, ct[b]])


# --------------------------------------------------------------------------- curate


def _curate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--decompose", default="data/decompose")
    p.add_argument("--profile", default="data/profile")
    p.add_argument("--out", default="data/curate")
    p.add_argument("--metrics", default="metrics/curate.json")


def _curate(args: argparse.Namespace) -> int:
    import polars as pl

    from curate.longtail import curate_metrics, label_row
    from curate.profile import environment
    from curate.tasks import group_tasks, write_task_folders
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.schema import to_table

    cfg = _params(args.params)["curate"]
    t = int(cfg["tolerance_t"])
    subs = {r["subgraph_hash"]: r for r in pl.read_parquet(Path(args.decompose) / "subgraphs.parquet").to_dicts()}
    stats = json.loads((Path(args.decompose) / "decompose.json").read_text())
    profiles = pl.read_parquet(Path(args.profile) / "profiles.parquet").to_dicts()
    labelled = [{**r, **label_row(r, t, cfg["ci_level"], cfg["bootstrap"])} for r in profiles if r["device"] == "cpu"]
    runs: dict[str, list[dict]] = {}
    for r in labelled:
        runs.setdefault(r["subgraph_hash"], []).append(r)
    long_tail = []
    for h, rs in runs.items():
        if rs and all(r["long_tail"] for r in rs):
            r0 = min(rs, key=lambda r: r["run"])
            long_tail.append({**r0, "pattern": subs[h]["pattern"], "anchor": subs[h]["anchor"], "model_ids": subs[h]["model_ids"]})
    tasks = group_tasks(long_tail, cfg["task_size"], cfg["max_tasks"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_task_folders(tasks, Path(args.decompose) / "subgraph_store", out / "tasks", t, environment("cpu"))
    write_parquet(out / "tasks.parquet", to_table("tasks", [{k: v for k, v in task.items() if not k.startswith("_")} | {"tolerance_t": t} for task in tasks]))
    write_parquet(out / "long_tail.parquet", to_table("long_tail", [
        {k: r.get(k) for k in ("subgraph_hash", "run", "speedup", "ci_low", "ci_high", "correct_at_t", "long_tail", "status", "min_pass_t")}
        | {"tolerance_t": t} for r in labelled]))
    metrics = curate_metrics(list(subs.values()), labelled, stats, t, len(tasks), len(long_tail))
    metrics["decompose_variants"] = stats.get("variants")
    metrics["decompose_seconds"] = stats.get("seconds")
    atomic_write_json(args.metrics, metrics, indent=2)
    print(f"curate: {len(long_tail)} long-tail subgraphs -> {len(tasks)} tasks; {json.dumps(metrics)}")
    return 0


register("decompose", "split unique graphs into deduplicated subgraphs", _decompose_args, _decompose)
register("profile", "eager vs Inductor on a sample of subgraphs (isolated, resumable)", _profile_args, _profile)
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
