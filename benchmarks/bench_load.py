"""Same inputs, different machine load: are the capture tables byte-identical?

    PYTHONPATH=. python benchmarks/bench_load.py [--hogs 2] [--out metrics/bench/load_proof.json]

Captures one small catalog (the programs of tests/fixtures/modules and the tiny configs of
the tests) twice into fresh work folders: once as the machine is, once beside ``--hogs``
CPU-bound processes (``while True: pass``) started by this script, with the stage's limits
(CPU budget, hang detector). Prints a table of wall / CPU seconds per run and whether the
``extractions`` / ``graphs`` / ``models`` tables and the graph store are byte-identical, and
writes the figures to ``--out``. Nothing is asserted; the control is the first run itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree_md5(folder: Path) -> str:
    h = hashlib.md5()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(f.relative_to(folder).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _run(rows, tmp: Path, name: str, hogs: int) -> dict:
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all

    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    try:
        t0, c0 = time.perf_counter(), os.times()
        capture_all(rows, {"seq_len": 8}, tmp / name / "work", workers=2, timeout_s=7200, mem_cap_gb=None,
                    progress=False, cpu_budget_s=300, hang_s=300)
        wall = time.perf_counter() - t0
        c1 = os.times()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    out = tmp / name / "out"
    assemble(rows, {"seq_len": 8}, tmp / name / "work", out, tmp / name / "store")
    log = [json.loads(line) for line in (tmp / name / "work" / "timings.jsonl").read_text().splitlines()]
    return {"wall_s": round(wall, 1), "child_cpu_s": round(sum(e["cpu_s"] for e in log), 1),
            "child_wall_s": round(sum(e["seconds"] for e in log), 1),
            "parent_cpu_s": round((c1.user - c0.user) + (c1.system - c0.system), 1),
            "md5": {t: hashlib.md5((out / f"{t}.parquet").read_bytes()).hexdigest()
                    for t in ("models", "extractions", "graphs")},
            "store_md5": _tree_md5(tmp / name / "store"),
            "load1": round(os.getloadavg()[0], 1)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hogs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "load_proof.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from extract.sources.catalog import build_catalog
    from tests.conftest import TINY_CONFIGS

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cfg = tmp / "configs"
        cfg.mkdir()
        for k, v in TINY_CONFIGS.items():
            (cfg / f"{k}.json").write_text(json.dumps(v))
        rows = build_catalog({"mode": "default", "default": [], "local_dir": str(cfg),
                              "module_dir": str(ROOT / "tests" / "fixtures" / "modules")})
        base = _run(rows, tmp, "base", 0)
        loaded = _run(rows, tmp, "loaded", args.hogs)
    same = {t: base["md5"][t] == loaded["md5"][t] for t in base["md5"]}
    same["graph_store"] = base["store_md5"] == loaded["store_md5"]
    print(f"{'run':8} {'wall s':>8} {'child CPU s':>12} {'child wall s':>13} {'load1':>6}")
    for name, r in (("base", base), (f"+{args.hogs} hogs", loaded)):
        print(f"{name:8} {r['wall_s']:8.1f} {r['child_cpu_s']:12.1f} {r['child_wall_s']:13.1f} {r['load1']:6.1f}")
    print(f"wall ratio loaded/base {loaded['wall_s'] / base['wall_s']:.2f}; "
          f"child CPU ratio {loaded['child_cpu_s'] / max(base['child_cpu_s'], 1e-9):.2f}")
    print("identical:", same)
    metrics = {"models": len(rows), "hogs": args.hogs, "base_wall_s": base["wall_s"], "loaded_wall_s": loaded["wall_s"],
               "base_child_cpu_s": base["child_cpu_s"], "loaded_child_cpu_s": loaded["child_cpu_s"],
               "base_load1": base["load1"], "loaded_load1": loaded["load1"],
               **{f"identical_{k}": v for k, v in same.items()}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
