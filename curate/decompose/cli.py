"""``python -m curate decompose``: unique graphs -> deduplicated subgraph ranges and their store."""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import polars as pl

from curate.decompose.config import DecomposeConfig
from curate.decompose.ranges import DECOMPOSE_VERSION, decompose_corpus, subgraph_table, variant_count, variant_counts
from passnet_common.canonical import hash_metadata
from passnet_common.io import atomic_write_json, write_parquet
from passnet_common.params import load_params
from passnet_common.schema import to_table


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--unique", default="data/dedupe/unique_graphs.parquet")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/decompose")


def run(args: argparse.Namespace) -> int:
    cfg = DecomposeConfig.from_params(load_params(args.params, "curate").get("decompose"), "curate.decompose").to_params()
    ug = pl.read_parquet(args.unique).to_dicts()
    out = Path(args.out)
    store_out = out / "subgraph_store"
    store_out.mkdir(parents=True, exist_ok=True)
    kw = dict(max_nodes=cfg["max_nodes"], max_param_bytes=int(cfg["max_param_bytes"]), min_graph_ops=cfg["min_graph_ops"])
    t0 = time.perf_counter()
    # the other anchors_per_subgraph values (counts only) in one spawned process beside the main pass
    others = [k for k in cfg["variants"] if k != cfg["anchors_per_subgraph"]]
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
        for k in cfg["variants"]:
            variants[str(k)] = ({kk: stats[kk] for kk in ("ranges", "unique_subgraphs", "unique_profilable")}
                                if k == cfg["anchors_per_subgraph"] else futures[k].result())
    stats["variants"] = variants
    atomic_write_json(out / "decompose.json", stats, indent=2)
    print(f"decompose: {len(ug)} unique graphs -> {stats['ranges']} ranges, {stats['unique_subgraphs']} unique subgraphs "
          f"({stats['unique_profilable']} profilable) in {seconds:.1f} s; variants {variants}")
    return 0
