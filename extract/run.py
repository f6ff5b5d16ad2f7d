"""The extract stage: capture every catalog model in isolation, resumably, then assemble
the ``models``, ``extractions`` and ``graphs`` tables and the graph store.

Resume: each attempt has a key (model_id, config hash, library and torch versions,
canonical version, capture params). Its work folder ends with ``result.json``, written
last; a re-run skips every key that has one (failures included, unless
``retry_failed``). Killing the run loses at most the models in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import torch

from passnet_common.canonical import CANONICAL_VERSION, hash_metadata
from passnet_common.io import atomic_write_json, canonical_json, write_parquet
from passnet_common.schema import to_table


_SITE = re.compile(r"[^\s\"'(]*/site-packages/")


def portable_text(text: str | None) -> str | None:
    """``text`` with machine-specific path prefixes removed (``.../site-packages/`` and the
    working directory), so stored code and error messages do not depend on where the
    checkout or the virtualenv lives."""
    if text is None:
        return None
    text = _SITE.sub("", text)
    return text.replace(os.getcwd().rstrip("/") + "/", "")


def attempt_key(row: dict, capture: dict) -> str:
    """Hex key of one capture attempt (see module doc)."""
    blob = canonical_json({
        "model_id": row["model_id"], "config_hash": row["config_hash"],
        "library_version": row["library_version"], "torch": torch.__version__,
        "canonical_version": CANONICAL_VERSION, "capture": capture,
    })
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _work_dir(work: Path, key: str) -> Path:
    return work / key[:2] / key


def capture_task(arg: tuple[dict, dict], out_dir: Path) -> None:
    """Child-process body: capture one row, write ``graphs/<i>.json`` then ``result.json``."""
    import warnings

    warnings.filterwarnings("ignore")
    import logging

    torch._logging.set_logs(dynamo=logging.ERROR)  # graph breaks are recorded in the tables
    try:
        import transformers

        transformers.logging.set_verbosity_error()
    except ImportError:
        pass
    from extract.capture import capture_row, describe_graph

    row, capture = arg
    res = capture_row(row, capture)
    gdir = out_dir / "graphs"
    if gdir.exists():
        shutil.rmtree(gdir)
    gdir.mkdir(parents=True)
    with_stats = res.mode != "meta"
    records = []
    for i, g in enumerate(res.graphs):
        rec = describe_graph(i, g, with_stats)
        rec["code"] = portable_text(rec["code"])
        atomic_write_json(gdir / f"{i}.json", rec)
        records.append({k: rec[k] for k in ("graph_hash", "num_nodes", "break_reason")})
    atomic_write_json(out_dir / "result.json", {
        "status": "ok", "error_class": None, "error_message": None, "mode": res.mode,
        "fallback_reason": portable_text(res.fallback_reason), "input_spec": res.input_spec,
        "param_count": int(res.param_count), "num_graphs": len(res.graphs),
        "num_graph_breaks": sum(1 for g in res.graphs if g.break_reason), "graphs": records,
    })


def _failure(status: str, error_class: str, message: str | None) -> dict:
    return {"status": status, "error_class": error_class, "error_message": portable_text(message or "")[:4000],
            "mode": None, "fallback_reason": None, "input_spec": [], "param_count": None,
            "num_graphs": 0, "num_graph_breaks": 0, "graphs": []}


def capture_all(rows: list[dict], capture: dict, work: Path, workers: int, timeout_s: float,
                mem_cap_gb: float | None, retry_failed: bool = False, progress: bool = True,
                executor: str = "local", ray_params: dict | None = None) -> dict:
    """Capture every row not already done; returns counts {done_before, ran, failed}.

    ``executor``: ``local`` or ``ray`` (:mod:`extract.executor`; same isolation and resume)."""
    from tqdm import tqdm
    import tqdm as tqdm_mod

    from extract.catalog import remote_code_reason

    tqdm_mod.tqdm.monitor_interval = 0  # no monitor thread in a parent that forks
    todo = []
    done_before = 0
    skipped = 0
    for row in rows:
        key = attempt_key(row, capture)
        wd = _work_dir(work, key)
        res = wd / "result.json"
        if res.exists():
            prev = json.loads(res.read_text())
            if prev["status"] == "ok" or not retry_failed:
                done_before += 1
                continue
            res.unlink()
        if row.get("trust_remote_code"):
            wd.mkdir(parents=True, exist_ok=True)
            atomic_write_json(res, _failure("skipped", "trust_remote_code", remote_code_reason(row) + "; never executed"))
            skipped += 1
            continue
        todo.append((key, (row, capture), wd))
    counts = {"done_before": done_before, "ran": len(todo), "failed": 0, "skipped": skipped}
    if not todo:
        return counts
    bar = tqdm(total=len(todo), desc="capture", unit="model", disable=not progress, dynamic_ncols=True)
    log = work / "timings.jsonl"
    ids = {key: arg[0]["model_id"] for key, arg, _ in todo}

    def on_done(o):
        wd = _work_dir(work, o.key)
        if not o.ok:
            counts["failed"] += 1
            status = "skipped" if o.error_class == "exception:TrustRemoteCodeRefused" else "failed"
            atomic_write_json(wd / "result.json", _failure(status, o.error_class, o.error_message))
        elif not (wd / "result.json").exists():
            counts["failed"] += 1
            atomic_write_json(wd / "result.json", _failure("failed", "exit:0", "child exited without a result"))
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"model_id": ids[o.key], "key": o.key, "ok": o.ok, "error_class": o.error_class,
                                 "seconds": round(o.seconds, 3), "peak_rss_bytes": o.peak_rss_bytes,
                                 "time": time.time()}) + "\n")
        bar.set_postfix_str(f"{ids[o.key][:40]} {'ok' if o.ok else o.error_class}")
        bar.update(1)

    work.mkdir(parents=True, exist_ok=True)
    mem_cap = int(mem_cap_gb * 2**30) if mem_cap_gb else None
    from extract.executor import get_executor

    get_executor(executor, ray_params)(todo, capture_task, workers=workers, timeout_s=timeout_s, mem_cap_bytes=mem_cap,
                                       on_done=on_done)
    bar.close()
    return counts


def assemble(rows: list[dict], capture: dict, work: Path, out: Path, store: Path) -> dict:
    """Write ``models``/``extractions``/``graphs`` Parquet tables and the graph store.

    Rows are sorted by model_id (and graph index), so identical inputs give identical
    files. Returns summary counts.
    """
    from extract.store import write_graph

    out.mkdir(parents=True, exist_ok=True)
    if store.exists():
        shutil.rmtree(store)
    store.mkdir(parents=True)
    ext_rows, graph_rows = [], []
    versions = {"torch_version": torch.__version__}
    for row in sorted(rows, key=lambda r: r["model_id"]):
        key = attempt_key(row, capture)
        wd = _work_dir(work, key)
        res_path = wd / "result.json"
        res = json.loads(res_path.read_text()) if res_path.exists() else _failure("failed", "missing", "no result (run interrupted?)")
        ext_rows.append({
            "model_id": row["model_id"], "attempt_key": key, "config_hash": row["config_hash"],
            "status": res["status"], "error_class": res["error_class"], "error_message": res["error_message"],
            "mode": res["mode"], "fallback_reason": res["fallback_reason"], "num_graphs": res["num_graphs"],
            "num_graph_breaks": res["num_graph_breaks"], "input_spec_json": canonical_json(res["input_spec"]).rstrip("\n"),
            "param_count": res["param_count"], "library_version": row["library_version"],
            "canonical_version": CANONICAL_VERSION, **versions,
        })
        for i in range(res["num_graphs"]):
            rec = json.loads((wd / "graphs" / f"{i}.json").read_text())
            graph_rows.append({"model_id": row["model_id"], **{k: rec[k] for k in (
                "graph_index", "graph_hash", "structure_hash", "wl_hash", "canonical_version", "num_nodes",
                "num_ops", "num_inputs", "num_params", "param_bytes", "break_reason")}})
            write_graph(store, rec, res["input_spec"])
    write_parquet(out / "models.parquet", to_table("models", sorted(rows, key=lambda r: r["model_id"])))
    write_parquet(out / "extractions.parquet", to_table("extractions", ext_rows))
    write_parquet(out / "graphs.parquet", to_table("graphs", graph_rows, metadata=hash_metadata()))
    ok = sum(1 for r in ext_rows if r["status"] == "ok")
    return {"models": len(rows), "captured": ok, "graphs": len(graph_rows)}
