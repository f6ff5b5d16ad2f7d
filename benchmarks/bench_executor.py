"""Capture throughput with the local vs the Ray executor on the same machine.

Captures the same ``--models`` real configs (the first distinct graph configs of the committed
corpus that transformers ships) with ``executor: local`` (baseline) and ``executor: ray``
(local ``ray.init(num_cpus=workers)``), fresh work folders each, and prints models/min and the
ratio. Writes ``metrics/bench/bench_executor.json``.

    python -m benchmarks.bench_executor [--models 4] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="metrics/bench/bench_executor.json")
    args = ap.parse_args()
    from extract.runs.scheduler import capture_all
    from extract.sources.hub_configs import graph_config_hash, load_corpus
    from extract.sources.hub_crawl import classify_config
    from extract.sources.rows import row_from_hf_config
    from passnet_common.params import load_params

    rows, seen = [], set()
    for i, e in enumerate(load_corpus()):
        h = graph_config_hash(e["config"])
        if h in seen or classify_config(e["config"])[0] != "ok":
            continue
        seen.add(h)
        rows.append(row_from_hf_config(e["config"], f"local:corpus{i}", e["name"], "local"))
        if len(rows) == args.models:
            break
    capture = dict(load_params("params.yaml", "extract")["capture"])
    res = {"models": len(rows), "workers": args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("local", "ray"):
            t = time.perf_counter()
            counts = capture_all(rows, capture, Path(tmp) / name, workers=args.workers, timeout_s=600, mem_cap_gb=None,
                                 progress=False, executor=name, ray_params={"num_cpus": args.workers})
            s = time.perf_counter() - t
            res[f"{name}_wall_s"] = round(s, 1)
            res[f"{name}_models_per_min"] = round(60 * len(rows) / s, 2)
            res[f"{name}_failed"] = counts["failed"]
    import ray

    if ray.is_initialized():
        ray.shutdown()
    res["ray_vs_local_throughput"] = round(res["ray_models_per_min"] / res["local_models_per_min"], 3)
    for k, v in res.items():
        print(f"{k:28s} {v}")
    Path(args.out).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
