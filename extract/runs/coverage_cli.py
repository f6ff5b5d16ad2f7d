"""``python -m extract coverage``: capture a seeded sample of the ``all`` catalogs, write coverage metrics."""

from __future__ import annotations

import argparse
from pathlib import Path

from extract.config import CatalogConfig, ExtractConfig
from extract.quiet import quiet_libraries
from extract.runs.coverage import coverage_lines, parse_sample, run_coverage
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--sample", action="append", default=[], metavar="SOURCE=N",
                   help="models per source, e.g. transformers=200 (repeatable)")
    p.add_argument("--work", default="data/work/coverage")
    p.add_argument("--out", default="data/coverage")
    p.add_argument("--metrics", default="metrics/bench/coverage.json")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-capture", action="store_true",
                   help="only assemble what the work folder holds (models not run count as 'missing')")


def run(args: argparse.Namespace) -> int:
    quiet_libraries()
    sample = parse_sample(args.sample)
    catalog = CatalogConfig.from_params(load_params(args.params, "catalog"), "catalog")
    extract = ExtractConfig.from_params(load_params(args.params, "extract"), "extract")
    metrics = run_coverage(catalog, extract, sample, Path(args.work), Path(args.out), Path(args.metrics),
                           progress=not args.no_progress, capture=not args.no_capture)
    print("\n".join(coverage_lines(metrics)))
    return 0
