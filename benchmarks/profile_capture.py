"""CPU seconds per phase of one model's capture, in this process (printed JSON; nothing asserted).

    nice -n 10 python -m benchmarks.profile_capture MODEL_ID OUT_DIR [--catalog data/catalog/models.parquet]

Runs what a capture child runs (:func:`extract.runs.scheduler.capture_task`) on the catalog row of
``MODEL_ID``, after the parent's preload and warm-up (:func:`extract.runs.scheduler.preload_libraries`,
:func:`extract.runs.scheduler.warm_up`), with ``time.process_time`` around each phase (exclusive: a
phase's time excludes the phases it calls): ``build_model`` (config, model on meta or CPU, inputs),
``dynamo_capture`` (Dynamo's trace and the compiled run, every call: retries and fallbacks included,
each listed in ``calls`` with its outcome), ``account_ops`` (the op account's eager run and graph
re-runs), ``canonicalize`` (passnet_common.canonical), ``describe_graph`` (the graph record without
the canonical form: placeholder statistics), ``write_json``. CPU seconds grow with the machine's load
(shared caches): compare phases within one run.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_id")
    ap.add_argument("out", type=Path)
    ap.add_argument("--catalog", default="data/catalog/models.parquet")
    ap.add_argument("--params", default="params.yaml")
    a = ap.parse_args(argv)
    import pyarrow.parquet as pq
    import yaml

    import passnet_common.record as record
    from extract.capture import build, dynamo
    from extract.runs import scheduler

    capture = yaml.safe_load(open(a.params))["extract"]["capture"]
    row = next((r for r in pq.read_table(a.catalog).to_pylist() if r["model_id"] == a.model_id), None)
    if row is None:
        raise SystemExit(f"{a.model_id}: not in {a.catalog}")
    phases: dict[str, float] = {}
    calls: list[dict] = []
    stack: list[str] = []

    def wrap(mod, name, label, log=None):
        f = getattr(mod, name)

        @functools.wraps(f)
        def g(*args, **kw):
            t0 = time.process_time()
            stack.append(label)
            outcome = "ok"
            try:
                return f(*args, **kw)
            except Exception as exc:
                outcome = type(exc).__name__
                raise
            finally:
                stack.pop()
                dt = time.process_time() - t0
                phases[label] = phases.get(label, 0.0) + dt
                if stack:
                    phases[stack[-1]] = phases.get(stack[-1], 0.0) - dt
                if log is not None:
                    log.append({"cpu_s": round(dt, 2), "outcome": outcome})
        setattr(mod, name, g)

    scheduler.preload_libraries([row])
    scheduler.warm_up()
    wrap(build, "build_model", "build_model")
    wrap(dynamo, "dynamo_capture", "dynamo_capture", calls)
    wrap(dynamo, "account_ops", "account_ops")
    wrap(record, "describe_graph", "describe_graph")
    wrap(record, "canonicalize", "canonicalize")
    wrap(scheduler, "atomic_write_json", "write_json")
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    scheduler.capture_task((row, capture), a.out)
    res = json.loads((a.out / "result.json").read_text())
    out = {"model_id": a.model_id, "cpu_s": round(time.process_time() - t0, 2),
           "phases": {k: round(v, 2) for k, v in sorted(phases.items())}, "calls": calls,
           "mode": res["mode"], "fallback_reason": res["fallback_reason"], "num_graphs": res["num_graphs"],
           "num_nodes": sum(g["num_nodes"] for g in res["graphs"]),
           "retries": sorted(k for k in (res["dynamo"] or {}) if k in ("retry", "second_call", "meta_retry"))}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
