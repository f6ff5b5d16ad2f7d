"""``python -m extract capture``: the extract stage (:func:`extract.runs.stage.run_capture`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from extract.config import ExtractConfig
from extract.quiet import quiet_libraries
from extract.runs.stage import capture_lines, run_capture
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--catalog", default="data/catalog/models.parquet")
    p.add_argument("--out", default="data/extract")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--work", default="data/work/extract")
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    quiet_libraries()
    cfg = ExtractConfig.from_params(load_params(args.params, "extract"), "extract")
    counts, summary = run_capture(cfg, Path(args.catalog), Path(args.out), Path(args.store), Path(args.work),
                                  progress=not args.no_progress)
    print("\n".join(capture_lines(counts, summary)))
    return 0
