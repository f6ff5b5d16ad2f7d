"""CLI of the extract stages.

    python -m extract catalog --params params.yaml --out data/catalog/models.parquet
    python -m extract capture --params params.yaml --catalog data/catalog/models.parquet \
        --out data/extract --store data/graph_store --work data/work/extract
    python -m extract crawl --params params.yaml --work data/hub --cache data/hub/cache   (Hub listing)
    python -m extract publish --repo org/passnet --tables data/extract --store data/graph_store
    python -m extract export --store data/graph_store --out data/graphnet_export [--graph-hash H ...]
        (our unique graphs as GraphNet sample folders; every stored graph without --graph-hash)
    python -m extract coverage --params params.yaml --sample transformers=200 \
        --metrics metrics/bench/coverage.json
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if not (len(sys.argv) > 1 and sys.argv[1] in ("crawl", "publish")):  # these two talk to the Hub
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # huggingface_hub also reads TRANSFORMERS_OFFLINE as HF_HUB_OFFLINE: set only off the Hub commands
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
    v = sub.add_parser("coverage", help="capture a seeded sample of the all catalogs; write coverage metrics")
    v.add_argument("--params", default="params.yaml")
    v.add_argument("--sample", action="append", default=[], metavar="SOURCE=N",
                   help="models per source, e.g. transformers=200 (repeatable)")
    v.add_argument("--work", default="data/work/coverage")
    v.add_argument("--out", default="data/coverage")
    v.add_argument("--metrics", default="metrics/bench/coverage.json")
    v.add_argument("--no-progress", action="store_true")
    v.add_argument("--no-capture", action="store_true",
                   help="only assemble what the work folder holds (models not run count as 'missing')")
    x = sub.add_parser("export", help="write stored graphs as GraphNet sample folders (extract/sources/graphnet.py)")
    x.add_argument("--store", default="data/graph_store")
    x.add_argument("--out", required=True, help="folder of samples, one <graph_hash>/ each")
    x.add_argument("--graph-hash", action="append", default=None, metavar="H",
                   help="a graph to export (repeatable); default: every stored graph")
    x.add_argument("--graphs", default="data/extract/graphs.parquet",
                   help="graphs table naming each graph's models (model_name); skipped when absent")
    from extract.hub_cli import add_hub_commands, run_hub_command

    add_hub_commands(sub)
    args = ap.parse_args(argv)
    if args.cmd in ("crawl", "publish"):
        return run_hub_command(args)
    if args.cmd == "export":
        return _export(args)

    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)
    import transformers

    transformers.logging.set_verbosity_error()
    import pyarrow.parquet as pq

    from passnet_common.io import write_parquet
    from passnet_common.params import load_params
    from passnet_common.schema import to_table

    if args.cmd == "catalog":
        from extract.sources.catalog import build_catalog

        rows = build_catalog(load_params(args.params, "catalog"))
        write_parquet(Path(args.out), to_table("models", rows))
        print(f"catalog: {len(rows)} models -> {args.out}")
        return 0
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all

    if args.cmd == "coverage":
        from extract.runs.coverage import coverage_metrics
        from extract.sources.catalog import build_catalog
        from passnet_common.io import atomic_write_json

        sample = {}
        for item in args.sample:
            src, _, n = item.partition("=")
            if not n.isdigit():
                raise ValueError(f"--sample {item!r}: expected SOURCE=N, e.g. transformers=200")
            sample[src] = int(n)
        if not sample:
            raise ValueError("--sample: give at least one SOURCE=N")
        cat = load_params(args.params, "catalog")
        rows = build_catalog({"mode": "all", "all_sources": sorted(sample), "sample_per_source": sample,
                              "sample_seed": int(cat.get("sample_seed", 0))})
        params = load_params(args.params, "extract")
        capture = dict(params.get("capture", {}))
        if not args.no_capture:
            capture_all(rows, capture, Path(args.work), workers=int(params.get("workers", 2)),
                        timeout_s=float(params.get("timeout_s", 7200)), mem_cap_gb=params.get("mem_cap_gb", 8),
                        retry_failed=bool(params.get("retry_failed", False)),
                        retry_transient=bool(params.get("retry_transient", True)), progress=not args.no_progress,
                        cpu_budget_s=params.get("cpu_budget_s"), hang_s=params.get("hang_s"),
                        retries=int(params.get("retries", 1)))
        assemble(rows, capture, Path(args.work), Path(args.out), Path(args.out) / "graph_store")
        ext = pq.read_table(Path(args.out) / "extractions.parquet").to_pylist()
        metrics = coverage_metrics(ext, rows, int(cat.get("sample_seed", 0)), sample)
        atomic_write_json(Path(args.metrics), metrics)
        for src, m in metrics["sources"].items():
            print(f"coverage {src}: {m['captured']}/{m['sample_size']} captured ({100 * m['captured_share']:.1f}%), "
                  f"{m['complete']} complete; failures: {m['failures_by_class']}")
        return 0
    from passnet_common.worker import work_lock

    params = load_params(args.params, "extract")
    if not Path(args.catalog).is_file():
        raise FileNotFoundError(f"--catalog {args.catalog}: no such catalog file (run `python -m extract catalog` "
                                f"or `dvc repro catalog` first)")
    rows = pq.read_table(args.catalog).to_pylist()
    capture = dict(params.get("capture", {}))
    with work_lock(Path(args.work)):  # a second run on this work folder refuses (one error line)
        counts = capture_all(rows, capture, Path(args.work), workers=int(params.get("workers", 2)),
                             timeout_s=float(params.get("timeout_s", 7200)), mem_cap_gb=params.get("mem_cap_gb", 8),
                             retry_failed=bool(params.get("retry_failed", False)),
                             retry_transient=bool(params.get("retry_transient", True)), progress=not args.no_progress,
                             executor=params.get("executor", "local"), ray_params=params.get("ray"),
                             cpu_budget_s=params.get("cpu_budget_s"), hang_s=params.get("hang_s"),
                             retries=int(params.get("retries", 1)))
        summary = assemble(rows, capture, Path(args.work), Path(args.out), Path(args.store))
    print(f"capture: {counts['ran']} run now ({counts['failed']} failed, {counts['retried']} retried), "
          f"{counts['skipped']} recorded without running (custom code / unreadable config), "
          f"{counts.get('duplicates', 0)} duplicate configs, {counts.get('retried_in_run', 0)} retried in this run, "
          f"{counts['done_before']} done before; "
          f"{summary['captured']}/{summary['models']} models captured complete, {summary['graphs']} graphs")
    for status, classes in summary["not_ok"].items():
        for error_class, ids in classes.items():
            print(f"  {status} [{error_class}] {len(ids)}: {', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}")
    return 0


def _export(args) -> int:
    import json

    from extract.publish.graphnet_export import export_store

    names = None
    if Path(args.graphs).is_file():
        import pyarrow.parquet as pq

        members: dict[str, list[str]] = {}
        for r in pq.read_table(args.graphs, columns=["graph_hash", "model_id"]).to_pylist():
            members.setdefault(r["graph_hash"], []).append(r["model_id"])
        names = {h: ", ".join(sorted(set(m))) for h, m in members.items()}
    res = export_store(Path(args.store), Path(args.out), args.graph_hash, names)
    print(f"export: {len(res['exported'])} written, {len(res['kept'])} already complete, "
          f"{len(res['failed'])} not representable -> {args.out}")
    for h, msg in res["failed"].items():
        print(f"  {h}: {msg}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "export_summary.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    from passnet_common.cli import run_cli
    from passnet_common.worker import die_with_parent

    die_with_parent()  # a killed `dvc repro` takes this stage (and, through theirs, its children) with it
    sys.exit(run_cli(main))
