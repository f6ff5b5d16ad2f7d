"""``python -m curate decompose``: unique graphs -> deduplicated subgraph ranges and their store
(:func:`curate.decompose.ranges.decompose_stage`)."""

from __future__ import annotations

import argparse

from curate.decompose.config import DecomposeConfig
from curate.decompose.ranges import decompose_stage
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--unique", default="data/dedupe/unique_graphs.parquet")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--out", default="data/decompose")


def run(args: argparse.Namespace) -> int:
    cfg = DecomposeConfig.from_params(load_params(args.params, "curate").get("decompose"), "curate.decompose").to_params()
    stats, seconds = decompose_stage(cfg, args.unique, args.store, args.out)
    print(f"decompose: {stats['unique_graphs']} unique graphs -> {stats['ranges']} ranges, {stats['unique_subgraphs']} unique "
          f"subgraphs ({stats['unique_profilable']} profilable) in {seconds:.1f} s; variants {stats['variants']}")
    return 0
