"""Capture coverage of the ``all`` catalogs on a seeded sample (a DVC metrics file).

    python -m extract coverage --params params.yaml --sample transformers=200 \\
        --work data/work/coverage --out data/coverage --metrics metrics/bench/coverage.json

The sample is :func:`extract.sources.catalog.build_catalog` with ``mode: all`` and
``sample_per_source`` from ``--sample`` (seed ``catalog.sample_seed``); the capture uses
the ``extract`` params, resumably, as the extract stage does.
"""

from __future__ import annotations

from collections import Counter


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
