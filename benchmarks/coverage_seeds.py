"""Capture coverage of the transformers ``all`` catalog on a seeded sample with another seed than
``catalog.sample_seed``, written beside the seed-0 figures in ``metrics/bench/coverage.json``.

The same path as ``python -m extract coverage`` (:mod:`extract.runs.coverage`): the catalog is
:func:`extract.sources.catalog.build_catalog` with ``mode: all`` and ``sample_per_source:
{transformers: --n}`` drawn with ``random.Random(--seed)``; the capture uses the ``extract``
params (workers, limits, capture settings) and is resumable from ``--work`` (an interrupted run
is resumed by running the same command again); models not run yet count as ``missing`` (and in
``not_run``), so a partial figure says so.

    nice -n 10 python -m benchmarks.coverage_seeds --seed 7 --n 200

Writes ``metrics/bench/coverage.json``: the file's existing top level (the seed written by
``python -m extract coverage``) is kept, and this seed's :func:`extract.runs.coverage.coverage_metrics`
goes under ``by_seed.<seed>`` with ``command`` and ``complete`` (every sampled model run).
Wall time depends on machine load: nothing about it is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=200, help="transformers classes in the sample")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--work", type=Path, default=None, help="resume folder (default /tmp/coverage_seed<seed>/work)")
    ap.add_argument("--out", type=Path, default=None, help="tables (default /tmp/coverage_seed<seed>/out)")
    ap.add_argument("--metrics", type=Path, default=Path("metrics/bench/coverage.json"))
    ap.add_argument("--no-capture", action="store_true", help="only assemble what --work holds")
    a = ap.parse_args(argv)
    work = a.work or Path(f"/tmp/coverage_seed{a.seed}/work")
    out = a.out or Path(f"/tmp/coverage_seed{a.seed}/out")

    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)
    import pyarrow.parquet as pq
    import transformers

    transformers.logging.set_verbosity_error()
    from extract.runs.assemble import assemble
    from extract.runs.coverage import coverage_metrics
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog
    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params

    sample = {"transformers": a.n}
    rows = build_catalog({"mode": "all", "all_sources": ["transformers"], "sample_per_source": sample,
                          "sample_seed": a.seed})
    params = load_params(a.params, "extract")
    capture = dict(params.get("capture", {}))
    if not a.no_capture:
        capture_all(rows, capture, work, workers=int(params.get("workers", 2)),
                    timeout_s=float(params.get("timeout_s", 7200)), mem_cap_gb=params.get("mem_cap_gb", 8),
                    retry_failed=bool(params.get("retry_failed", False)),
                    retry_transient=bool(params.get("retry_transient", True)), progress=False,
                    cpu_budget_s=params.get("cpu_budget_s"), hang_s=params.get("hang_s"),
                    retries=int(params.get("retries", 1)))
    assemble(rows, capture, work, out, out / "graph_store")
    ext = pq.read_table(out / "extractions.parquet").to_pylist()
    m = coverage_metrics(ext, rows, a.seed, sample)
    src = m["sources"].get("transformers", {})
    m["complete"] = src.get("not_run", 0) == 0 and src.get("sample_size", 0) == a.n
    m["command"] = "python -m benchmarks.coverage_seeds " + " ".join(argv if argv is not None else sys.argv[1:])
    doc = json.loads(a.metrics.read_text()) if a.metrics.is_file() else {}
    doc.setdefault("by_seed", {})[str(a.seed)] = m
    atomic_write_json(a.metrics, doc)
    print(f"coverage seed {a.seed}: {src.get('captured')}/{src.get('sample_size')} captured "
          f"({src.get('not_run')} not run); failures: {src.get('failures_by_class')}")
    return m


if __name__ == "__main__":
    main()
