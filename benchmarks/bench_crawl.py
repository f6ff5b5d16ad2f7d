"""Crawl of a synthetic 100,000-repo Hub listing from the local stand-in (passnet_common/hub_standin.py).

Each phase runs in a fresh child process (peak RSS is per process; the server runs in its
own process so it does not share the GIL with the crawler):

* listing + checkpointing of ``--repos`` rows, and of ``--repos // 10`` rows as the baseline
  measured in the same run (ratios: time per row, peak RSS);
* config downloads + dedupe + finalize for the first ``--download`` repos (pinned
  ``hf_hub_download`` of config.json);
* distinct graph configs of the whole listing (ground truth from the listing generator: the
  number of captures the crawl would run, one per distinct config) and distinct base configs.

Writes ``metrics/bench/bench_crawl.json``. Wall times are noisy on a shared machine: read ratios.

    python -m benchmarks.bench_crawl [--repos 100000] [--download 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(phase: str, n: int, endpoint: str, work: str, download: int) -> dict:
    code = f"""
import json, resource, sys, time
sys.path.insert(0, {os.getcwd()!r})
from huggingface_hub import constants
constants.HF_HUB_OFFLINE = False
from extract.sources import hub_crawl
from pathlib import Path
work = Path({work!r}); work.mkdir(parents=True, exist_ok=True)
params = {{"limit": {n}, "workers": 8, "chunk": 256}}
t = time.perf_counter()
if {phase!r} == "list":
    rows = hub_crawl._list(params, work, {endpoint!r}, False)
    out = {{"rows": rows}}
else:
    hub_crawl._transformers_names()
    t = time.perf_counter()
    hub_crawl._download(params, work, {download}, {endpoint!r}, False, str(work / "cache"), False)
    lines = (work / "listing.jsonl").read_text().splitlines()[:{download}]
    (work / "listing.jsonl").write_text("\\n".join(lines) + "\\n")
    out = hub_crawl._finalize(work, str(work / "cache"))
out["seconds"] = time.perf_counter() - t
out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=100_000)
    ap.add_argument("--download", type=int, default=5_000)
    ap.add_argument("--out", default="metrics/bench/bench_crawl.json")
    args = ap.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.hub_listing", str(args.repos)], stdout=subprocess.PIPE,
                              text=True)
    try:
        endpoint = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            base = _child("list", args.repos // 10, endpoint, f"{tmp}/base", 0)
            full = _child("list", args.repos, endpoint, f"{tmp}/full", 0)
            dl = _child("download", args.repos, endpoint, f"{tmp}/full", args.download)
    finally:
        server.terminate()
        server.wait()
    from extract.sources.hub_configs import Listing, graph_config_hash

    t = time.perf_counter()
    listing = Listing(args.repos)
    hashes, bases, faults = set(), set(), 0
    for i in range(args.repos):
        r = listing.repo(i)
        if r["fault"] is not None:
            faults += 1
            continue
        bases.add(r["base"])
        hashes.add(graph_config_hash(json.loads(r["config_bytes"])))
    gt_s = time.perf_counter() - t
    per_dl = dl["seconds"] / args.download
    res = {
        "repos_listed": full["rows"],
        "listing_wall_s": round(full["seconds"], 2),
        "listing_peak_rss_mib": round(full["peak_rss_mib"], 1),
        "baseline_repos_listed": base["rows"],
        "baseline_listing_wall_s": round(base["seconds"], 2),
        "baseline_peak_rss_mib": round(base["peak_rss_mib"], 1),
        "ratio_time_per_row_full_vs_baseline": round((full["seconds"] / full["rows"]) / (base["seconds"] / base["rows"]), 3),
        "ratio_peak_rss_full_vs_baseline": round(full["peak_rss_mib"] / base["peak_rss_mib"], 3),
        "download_repos": args.download,
        "download_wall_s": round(dl["seconds"], 2),
        "download_ms_per_repo": round(1000 * per_dl, 2),
        "download_peak_rss_mib": round(dl["peak_rss_mib"], 1),
        "download_distinct_configs": dl["distinct_configs"],
        "download_by_status": dl["by_status"],
        "projected_download_wall_s_full_listing": round(per_dl * args.repos, 1),
        "listing_distinct_graph_configs": len(hashes),
        "listing_distinct_base_configs": len(bases),
        "listing_repos_without_capture_config": faults,
        "captures_needed_per_listed_repo": round(len(hashes) / args.repos, 4),
        "ground_truth_scan_s": round(gt_s, 2),
    }
    print(f"{'metric':45s} value")
    for k, v in res.items():
        if k != "download_by_status":
            print(f"{k:45s} {v}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
