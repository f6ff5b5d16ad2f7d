"""``python -m extract catalog``: the models catalog from the ``catalog`` params block."""

from __future__ import annotations

import argparse
from pathlib import Path

from extract.config import CatalogConfig
from extract.quiet import quiet_libraries
from extract.sources.catalog import write_catalog
from passnet_common.params import load_params


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--out", default="data/catalog/models.parquet")


def run(args: argparse.Namespace) -> int:
    quiet_libraries()
    rows = write_catalog(CatalogConfig.from_params(load_params(args.params, "catalog"), "catalog"), Path(args.out))
    print(f"catalog: {len(rows)} models -> {args.out}")
    return 0
