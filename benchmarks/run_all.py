"""Run every benchmark script in turn (``make bench``)."""

import runpy
import sys

for mod in ("benchmarks.bench_graphs", "benchmarks.bench_capture", "benchmarks.bench_hash", "benchmarks.bench_proxy_stats",
            "benchmarks.bench_curate", "benchmarks.bench_crawl", "benchmarks.bench_executor",
            "benchmarks.bench_hash_spellings", "benchmarks.bench_hash_metamorphic"):
    try:
        sys.argv = [mod]
        runpy.run_module(mod, run_name="__main__")
    except ModuleNotFoundError as exc:
        print(f"skipping {mod}: {exc}")
