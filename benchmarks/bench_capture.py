"""Capture throughput of the extract stage, with and without the parent's warm-up
(printed table with ratios against the baseline measured in the same run; nothing asserted).

    python -m benchmarks.bench_capture [--models N] [--workers W] [--metrics metrics/bench_capture.json]

Baseline: every forked child pays Dynamo's first-capture cost (lazy imports, first-call
caches). Candidate: the parent runs one meta-device capture before forking
(:func:`extract.run.warm_up`), so children start warm. Both capture the same evenly
spaced subset of the default catalog (``--models``, all 109 with ``--models 0``) into
fresh work folders; the graph hashes of both runs must agree (reported). Writes the
figures to ``--metrics`` (a DVC metrics file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _subset(rows: list[dict], n: int) -> list[dict]:
    if not n or n >= len(rows):
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def _run(rows, ex, warm: bool) -> dict:
    from extract.run import _work_dir, attempt_key, capture_all

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        counts = capture_all(rows, ex["capture"], Path(tmp), workers=int(ex["workers"]), timeout_s=float(ex["timeout_s"]),
                             mem_cap_gb=ex["mem_cap_gb"], progress=False, warm=warm)
        wall = time.perf_counter() - t
        log = [json.loads(x) for x in (Path(tmp) / "timings.jsonl").read_text().splitlines()]
        hashes = {}
        for r in rows:
            res = _work_dir(Path(tmp), attempt_key(r, ex["capture"])) / "result.json"
            if res.exists():
                hashes[r["model_id"]] = [g["graph_hash"] for g in json.loads(res.read_text())["graphs"]]
    per = sorted(e["seconds"] for e in log)
    return {"models": len(rows), "failed": counts["failed"], "wall_s": round(wall, 1),
            "architectures_per_min": round(60 * len(rows) / wall, 1),
            "median_child_s": round(per[len(per) // 2], 2), "p90_child_s": round(per[int(len(per) * 0.9)], 2),
            "warm_up_s": counts.get("warm_up_s", 0.0), "hashes": hashes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=24, help="evenly spaced models of the default catalog (0: all)")
    ap.add_argument("--workers", type=int, default=None, help="default: extract.workers")
    ap.add_argument("--metrics", default=str(ROOT / "metrics" / "bench_capture.json"))
    args = ap.parse_args()
    import warnings

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    from extract.catalog import build_catalog
    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params

    params = load_params(ROOT / "params.yaml")
    rows = _subset(build_catalog(dict(params["catalog"], mode="default", local_dir=None, limit=None)), args.models)
    ex = dict(params["extract"])
    if args.workers:
        ex["workers"] = args.workers
    base = _run(rows, ex, warm=False)
    warm = _run(rows, ex, warm=True)
    same = base["hashes"] == warm["hashes"]
    ratio = warm["architectures_per_min"] / base["architectures_per_min"]
    header = ["run", "models", "failed", "wall s", "architectures/min (target >= 30)", "median s/child", "p90 s/child", "ratio"]
    print(f"\nCapture throughput, {len(rows)} models of the default catalog, {ex['workers']} workers")
    print(" | ".join(header))
    for name, r, q in (("cold children (baseline)", base, 1.0), ("warm parent (fork after warm-up)", warm, ratio)):
        print(" | ".join(str(v) for v in (name, r["models"], r["failed"], r["wall_s"], r["architectures_per_min"],
                                          r["median_child_s"], r["p90_child_s"], f"{q:.2f}")))
    print(f"graph hashes identical in both runs: {same}")
    strip = lambda r: {k: v for k, v in r.items() if k != "hashes"}  # noqa: E731
    atomic_write_json(Path(args.metrics), {
        "models": len(rows), "workers": int(ex["workers"]), "baseline_cold_children": strip(base),
        "warm_parent": strip(warm), "throughput_ratio": round(ratio, 2), "graph_hashes_identical": same,
    })


if __name__ == "__main__":
    main()
