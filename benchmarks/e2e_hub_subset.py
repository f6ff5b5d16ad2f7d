"""End to end on the real-config stand-in: crawl -> catalog (hub source, ``limit``) -> capture.

Crawls an ``--repos`` listing from passnet_common/hub_standin.py, builds the catalog from the crawl's
distinct graph configs (first ``--captures`` by listing position), captures them with the
extract stage (local executor, params.yaml ``extract`` block) and reports unique graphs per
listed repo for the repos those captures cover. Writes ``metrics/bench/hub_e2e.json``.

    python -m benchmarks.e2e_hub_subset [--repos 2000] [--captures 8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=2000)
    ap.add_argument("--captures", type=int, default=8)
    ap.add_argument("--out", default="metrics/bench/hub_e2e.json")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog
    from extract.sources.hub_crawl import crawl
    from passnet_common.params import load_params

    server = subprocess.Popen([sys.executable, "-m", "benchmarks.hub_listing", str(args.repos)], stdout=subprocess.PIPE, text=True)
    try:
        endpoint = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            summary = crawl({"limit": args.repos, "workers": 8}, Path(tmp) / "hub", cache_dir=Path(tmp) / "cache",
                            endpoint=endpoint, token=False, offline=False)
            crawl_s = time.perf_counter() - t0
            rows = build_catalog({"mode": "default", "default": [], "hub_dir": str(Path(tmp) / "hub"),
                                  "limit": args.captures})
            params = load_params("params.yaml", "extract")
            t1 = time.perf_counter()
            counts = capture_all(rows, dict(params["capture"]), Path(tmp) / "work", workers=int(params["workers"]),
                                 timeout_s=float(params["timeout_s"]), mem_cap_gb=params.get("mem_cap_gb"),
                                 progress=False)
            capture_s = time.perf_counter() - t1
            assemble(rows, dict(params["capture"]), Path(tmp) / "work", Path(tmp) / "out", Path(tmp) / "store")
            ext = pq.read_table(Path(tmp) / "out" / "extractions.parquet").to_pylist()
            graphs = pq.read_table(Path(tmp) / "out" / "graphs.parquet").to_pylist()
            repos = pq.read_table(Path(tmp) / "hub" / "hub_repos.parquet").to_pylist()
    finally:
        server.terminate()
        server.wait()
    captured = {r["model_id"] for r in ext if r["status"] == "ok"}
    covered = [r for r in repos if r["captured_as"] in captured]
    unique = {g["graph_hash"] for g in graphs if g["model_id"] in captured}
    res = {
        "repos_listed": summary["listed"], "distinct_configs": summary["distinct_configs"],
        "crawl_wall_s": round(crawl_s, 1), "catalog_rows_captured": len(rows),
        "captures_ok": len(captured), "captures_failed_or_skipped": len(rows) - len(captured),
        "capture_wall_s": round(capture_s, 1),
        "capture_s_per_model": round(capture_s / max(1, counts["ran"]), 2),
        "listed_repos_covered_by_captures": len(covered), "unique_graphs_among_captures": len(unique),
        "unique_graphs_per_covered_listed_repo": round(len(unique) / max(1, len(covered)), 4),
        "by_status": summary["by_status"],
        "projected_capture_wall_h_100k_at_this_listing_share_on_n_workers": {
            str(n): round(summary["distinct_configs"] / max(1, summary["listed"]) * 100000
                          * capture_s / max(1, counts["ran"]) * int(params["workers"]) / n / 3600, 2)
            for n in (2, 8, 32, 128)},
    }
    bench = Path("metrics/bench/bench_crawl.json")
    if bench.exists():  # the 100K listing's own distinct count (this run's small listing has a higher share)
        distinct_100k = json.loads(bench.read_text())["listing_distinct_graph_configs"]
        per_capture_worker_s = capture_s / max(1, counts["ran"]) * int(params["workers"])
        res["projected_capture_wall_h_100k_listing_on_n_workers"] = {
            str(n): round(distinct_100k * per_capture_worker_s / n / 3600, 2) for n in (2, 8, 32, 128)}
        res["distinct_configs_100k_listing"] = distinct_100k
    for k, v in res.items():
        print(f"{k:48s} {v}")
    Path(args.out).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
