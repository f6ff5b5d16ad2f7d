"""Assembling the extract stage's outputs from the finished work folders.

:func:`assemble` reads every attempt's ``result.json`` and graph records in catalog order and
writes the ``models``, ``extractions`` and ``graphs`` tables (Parquet, explicit schemas) and
the graph store (:mod:`passnet_common.store`), so local and Ray runs give identical tables.
The work folder is not a DVC output: a clone that pulled ``data/extract`` and
``data/graph_store`` is up to date without it, and re-captures only what changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from extract.runs.attempts import attempt_key, code_hash, work_dir
from extract.runs.reads_dedupe import with_duplicates
from extract.runs.scheduler import failure_result
from passnet_common.canonical import CANONICAL_VERSION, hash_metadata
from passnet_common.io import atomic_write_json, canonical_json, write_parquet
from passnet_common.schema import to_table
from passnet_common.store import write_graph


def failure_summary(ext_rows: list[dict]) -> dict:
    """``{status: {error_class: [model_id, ...]}}`` of every extraction that is not ``ok``
    (sorted), for the stage summary."""
    out: dict = {}
    for r in ext_rows:
        if r["status"] != "ok":
            out.setdefault(r["status"], {}).setdefault(r["error_class"] or "unknown", []).append(r["model_id"])
    return {s: {c: sorted(ids) for c, ids in sorted(v.items())} for s, v in sorted(out.items())}


def assemble(rows: list[dict], capture: dict, work: Path, out: Path, store: Path) -> dict:
    """Write ``models``/``extractions``/``graphs`` Parquet tables and the graph store.

    Rows are sorted by model_id (and graph index), so identical inputs give identical
    files. A row with ``duplicate_of`` (the catalog's, or a merge of the capture stage,
    :func:`extract.runs.reads_dedupe.with_duplicates`) gets the extraction and graphs of that
    row (captured once). The tables hold what defines the dataset only: run bookkeeping (attempts, wall and
    CPU seconds) stays in the work folder (``result.json``, ``timings.jsonl``), so a run that
    needed a retry gives the same bytes as one that did not. Returns summary counts.
    """
    out.mkdir(parents=True, exist_ok=True)
    if store.exists():
        shutil.rmtree(store)
    store.mkdir(parents=True)
    rows = with_duplicates(rows, capture, work)  # configs merged by what their architecture's capture read
    ext_rows, graph_rows = [], []
    versions = {"torch_version": torch.__version__}
    by_id = {r["model_id"]: r for r in rows}
    for row in sorted(rows, key=lambda r: r["model_id"]):
        key = attempt_key(by_id.get(row.get("duplicate_of")) or row, capture)
        wd = work_dir(work, key)
        res_path = wd / "result.json"
        res = json.loads(res_path.read_text()) if res_path.exists() else failure_result("failed", "missing", "no result (run interrupted?)")
        ext_rows.append({
            "model_id": row["model_id"], "attempt_key": key, "config_hash": row["config_hash"],
            "status": res["status"], "error_class": res["error_class"], "error_message": res["error_message"],
            "mode": res["mode"], "fallback_reason": res["fallback_reason"], "num_graphs": res["num_graphs"],
            "num_graph_breaks": res["num_graph_breaks"], "input_spec_json": canonical_json(res["input_spec"]).rstrip("\n"),
            "param_count": res["param_count"], "library_version": row["library_version"],
            "canonical_version": CANONICAL_VERSION, **versions,
            "complete": bool(res.get("complete", False)), "incomplete_reason": res.get("incomplete_reason"),
            "eager_frames": int(res.get("eager_frames") or 0),
            "recompile_limit_hits": int(res.get("recompile_limit_hits") or 0),
            "output_mismatches": int(res.get("output_mismatches") or 0),
            "dynamo_json": canonical_json(res.get("dynamo")).rstrip("\n") if res.get("dynamo") else None,
            "code_hash": code_hash(),
        })
        for i in range(res["num_graphs"]):
            rec = json.loads((wd / "graphs" / f"{i}.json").read_text())
            graph_rows.append({"model_id": row["model_id"], **{k: rec[k] for k in (
                "graph_index", "graph_hash", "structure_hash", "wl_hash", "canonical_version", "num_nodes",
                "num_ops", "num_inputs", "num_params", "param_bytes", "break_reason")},
                "output_mismatch": "; ".join(rec.get("output_mismatch") or []) or None})
            write_graph(store, rec, res["input_spec"])
    write_parquet(out / "models.parquet", to_table("models", sorted(rows, key=lambda r: r["model_id"])))
    write_parquet(out / "extractions.parquet", to_table("extractions", ext_rows))
    write_parquet(out / "graphs.parquet", to_table("graphs", graph_rows, metadata=hash_metadata()))
    ok = sum(1 for r in ext_rows if r["status"] == "ok")
    failures = failure_summary(ext_rows)
    atomic_write_json(out / "summary.json", {"models": len(rows), "captured": ok, "graphs": len(graph_rows),
                                             "not_ok": failures})
    return {"models": len(rows), "captured": ok, "graphs": len(graph_rows), "not_ok": failures}
