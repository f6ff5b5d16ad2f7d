"""CLI of the extract stages.

    python -m extract catalog --params params.yaml --out data/catalog/models.parquet
    python -m extract capture --params params.yaml --catalog data/catalog/models.parquet \
        --out data/extract --store data/graph_store --work data/work/extract
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m extract", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("catalog", help="build the models catalog from params")
    c.add_argument("--params", default="params.yaml")
    c.add_argument("--out", default="data/catalog/models.parquet")
    p = sub.add_parser("capture", help="capture graphs of every catalog model (resumable)")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--catalog", default="data/catalog/models.parquet")
    p.add_argument("--out", default="data/extract")
    p.add_argument("--store", default="data/graph_store")
    p.add_argument("--work", default="data/work/extract")
    p.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)
    import transformers

    transformers.logging.set_verbosity_error()
    import pyarrow.parquet as pq

    from passnet_common.io import write_parquet
    from passnet_common.params import load_params
    from passnet_common.schema import to_table

    if args.cmd == "catalog":
        from extract.catalog import build_catalog

        rows = build_catalog(load_params(args.params, "catalog"))
        write_parquet(Path(args.out), to_table("models", rows))
        print(f"catalog: {len(rows)} models -> {args.out}")
        return 0
    from extract.run import assemble, capture_all

    params = load_params(args.params, "extract")
    rows = pq.read_table(args.catalog).to_pylist()
    capture = dict(params.get("capture", {}))
    counts = capture_all(rows, capture, Path(args.work), workers=int(params.get("workers", 2)),
                         timeout_s=float(params.get("timeout_s", 300)), mem_cap_gb=params.get("mem_cap_gb", 8),
                         retry_failed=bool(params.get("retry_failed", False)),
                         retry_transient=bool(params.get("retry_transient", True)), progress=not args.no_progress)
    summary = assemble(rows, capture, Path(args.work), Path(args.out), Path(args.store))
    print(f"capture: {counts['ran']} run now ({counts['failed']} failed, {counts['retried']} retried), "
          f"{counts['skipped']} recorded without running (custom code / unreadable config), "
          f"{counts['done_before']} done before; "
          f"{summary['captured']}/{summary['models']} models captured complete, {summary['graphs']} graphs")
    for status, classes in summary["not_ok"].items():
        for error_class, ids in classes.items():
            print(f"  {status} [{error_class}] {len(ids)}: {', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}")
    return 0


if __name__ == "__main__":
    from passnet_common.cli import run_cli

    sys.exit(run_cli(main))
