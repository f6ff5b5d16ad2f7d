"""Capture coverage of the ``all`` catalogs on a seeded sample (a DVC metrics file).

    python -m extract coverage --params params.yaml --sample transformers=200 \\
        --work data/work/coverage --out data/coverage --metrics metrics/bench/coverage.json

The sample is :func:`extract.sources.catalog.build_catalog` with ``mode: all`` and
``sample_per_source`` from ``--sample`` (seed ``catalog.sample_seed``); the capture uses
the ``extract`` params, resumably, as the extract stage does.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from extract.config import CatalogConfig, ExtractConfig, catalog_config, extract_config
from extract.runs.assemble import assemble
from extract.runs.stage import capture_rows
from extract.sources.catalog import build_catalog
from passnet_common.io import atomic_write_json


def parse_sample(items: list[str]) -> dict[str, int]:
    """``["transformers=200", ...]`` (``--sample``) as ``{source: models}``.

    Raises:
        ValueError: an item that is not ``SOURCE=N``, or no item at all.
    """
    sample = {}
    for item in items:
        src, _, n = item.partition("=")
        if not n.isdigit():
            raise ValueError(f"--sample {item!r}: expected SOURCE=N, e.g. transformers=200")
        sample[src] = int(n)
    if not sample:
        raise ValueError("--sample: give at least one SOURCE=N")
    return sample


def run_coverage(catalog: CatalogConfig | dict, extract: ExtractConfig | dict, sample: dict[str, int], work: Path,
                 out: Path, metrics: Path, progress: bool = True, capture: bool = True) -> dict:
    """Capture a seeded sample of the ``all`` catalogs (``sample``: models per source, seed
    ``catalog.sample_seed``) with the ``extract`` params, resumably in ``work``; assemble its tables
    in ``out`` (graph store ``out/graph_store``) and write :func:`coverage_metrics` to ``metrics``.
    ``capture`` False only assembles what ``work`` holds (models not run count as ``missing``).
    Returns the metrics."""
    seed = catalog_config(catalog).sample_seed
    cfg = extract_config(extract)
    rows = build_catalog(CatalogConfig(mode="all", all_sources=sorted(sample), sample_per_source=dict(sample),
                                       sample_seed=seed))
    if capture:
        capture_rows(rows, cfg, Path(work), progress)
    assemble(rows, cfg.capture, Path(work), Path(out), Path(out) / "graph_store")
    ext = pq.read_table(Path(out) / "extractions.parquet").to_pylist()
    result = coverage_metrics(ext, rows, seed, sample)
    atomic_write_json(Path(metrics), result)
    return result


def coverage_lines(metrics: dict) -> list[str]:
    """One line per source: captured and complete counts, failures by class."""
    return [f"coverage {src}: {m['captured']}/{m['sample_size']} captured ({100 * m['captured_share']:.1f}%), "
            f"{m['complete']} complete; failures: {m['failures_by_class']}" for src, m in metrics["sources"].items()]


def coverage_metrics(ext_rows: list[dict], models: list[dict], seed: int, sample: dict[str, int]) -> dict:
    """Per source: ``sample_size``, ``captured`` (graphs stored: status ``ok`` or
    ``incomplete``), ``captured_share``, ``complete`` (status ``ok``), ``complete_share``
    and ``failures_by_class`` (``{error_class: count}`` of every row that is not ``ok``,
    ``incomplete`` rows under ``incomplete``; models never run, e.g. an interrupted
    sample, under ``missing``, also counted in ``not_run``).

    Args:
        ext_rows: ``extractions`` rows; models: the catalog rows (for the source).
    """
    source_of = {m["model_id"]: m["source"] for m in models}
    out: dict = {"sample_seed": seed, "sample_per_source": dict(sample), "sources": {}}
    for src in sorted({source_of[r["model_id"]] for r in ext_rows}):
        rows = [r for r in ext_rows if source_of[r["model_id"]] == src]
        captured = sum(1 for r in rows if r["status"] in ("ok", "incomplete"))
        complete = sum(1 for r in rows if r["status"] == "ok")
        fails = Counter(r["error_class"] or r["status"] for r in rows if r["status"] != "ok")
        out["sources"][src] = {
            "sample_size": len(rows), "captured": captured, "captured_share": round(captured / len(rows), 4),
            "complete": complete, "complete_share": round(complete / len(rows), 4),
            "not_run": fails.get("missing", 0),
            "failures_by_class": dict(sorted(fails.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
    return out
