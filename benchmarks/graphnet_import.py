"""Import success of a seeded subset of GraphNet's torch samples (extract/sources/graphnet.py).

Lists every sample folder under ``--root`` (GraphNet's ``samples/``, ``_decomposed`` excluded,
``graph_net.json`` framework torch), draws ``--n`` of them with ``random.Random(--seed)``, and
imports each in its own isolated child (:func:`extract.sources.graphnet.capture_sample`: static
check, meta tensors, Dynamo re-trace, canonical form) with a ``--timeout-s`` wall limit. Every
failure is classed: ``unsafe_model_py`` (refused by the static check), ``item_on_meta``,
``multiple_graphs``, ``timeout``, ``exit:<code>`` (with the child's last error line), or
``exception:<Type>``. Also counts graph_hash groups among the imported samples (GraphNet
samples that merge with each other).

Getting the samples (GraphNet, MIT): ``git --git-dir <mirror of PaddlePaddle/GraphNet> archive
HEAD samples | tar -x`` (or ``git cat-file --batch`` when the mirror lacks a few blobs).

    nice -n 10 python -m benchmarks.graphnet_import --root /tmp/graphnet/samples --n 50 --seed 0

Writes ``metrics/bench/graphnet_import.json`` (flat keys; rewritten after every sample, with
``complete`` false until the whole subset is measured), ``..._rows.jsonl`` (one line per sample:
a rerun with the same arguments resumes) and ``..._failures.json`` (the failed samples). Wall time
depends on machine load: it is reported, nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def _samples(root: Path) -> list[Path]:
    out = []
    for gj in sorted(root.rglob("graph_net.json")):
        rel = gj.parent.relative_to(root).as_posix()
        if "_decomposed" in rel.split("/") or not (gj.parent / "model.py").is_file():
            continue
        try:
            fw = json.loads(gj.read_text(encoding="utf-8")).get("framework", "torch")
        except ValueError:
            fw = "torch"
        if fw == "torch":
            out.append(gj.parent)
    return out


# failure kinds by the child's raised line (the importer's retries handle the first three
# kinds it knows; a row of one of them means a case the retry did not cover)
_KINDS = [("cannot be called on meta tensors", "item_on_meta"), ("device mismatch", "device_mismatch"),
          ("Please convert all Tensors to FakeTensors", "non_fake_tensor"), ("re-traced into", "multiple_graphs"),
          ("unsupported scalarType", "autocast_device"), ("when making fake tensor call", "fake_tensor_call")]


def _klass(res: dict) -> str:
    if res["status"] == "ok":
        return "ok"
    msg = res.get("error_message") or ""
    for text, kind in _KINDS:
        if text in msg:
            return kind
    return res.get("error_class") or "unknown"


def _code_hash() -> str:
    """sha256 (16 hex) of the importer's own source files: recorded per row, so a figure says how
    many rows the current code measured."""
    import hashlib

    import extract.sources.graphnet as g
    import extract.sources.graphnet_source as gs

    h = hashlib.sha256()
    for m in (g, gs):
        h.update(Path(m.__file__).read_bytes())
    return h.hexdigest()[:16]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("metrics/bench/graphnet_import.json"))
    ap.add_argument("--retry-failed", action="store_true",
                    help="measure again the rows that failed (after a fix), keep the ok ones")
    ap.add_argument("--no-capture", action="store_true", help="only summarise the rows already measured")
    ap.add_argument("--dedupe-with", type=Path, default=None,
                    help="an extract folder of our own captures (graphs.parquet): cross-source dedup figures")
    ap.add_argument("--combined", type=Path, default=Path("/tmp/graphnet_dedupe/extract"),
                    help="where the combined graphs table is written for the dedup figures")
    a = ap.parse_args(argv)
    from extract.sources.graphnet import capture_sample
    from passnet_common.io import atomic_write_json

    pool = _samples(a.root)
    chosen = random.Random(a.seed).sample(pool, min(a.n, len(pool)))
    rows_path = a.out.with_name(a.out.stem + "_rows.jsonl")  # one line per sample, appended: a rerun resumes
    have = {}
    if rows_path.exists():
        for line in rows_path.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a torn last line
            have[r["sample"]] = r  # the last line of a sample wins
    if a.retry_failed:
        have = {k: r for k, r in have.items() if r["class"] == "ok"}
    lock = threading.Lock()
    code = _code_hash()
    t0 = time.time()
    command = "python -m benchmarks.graphnet_import " + " ".join(argv if argv is not None else sys.argv[1:])

    def summary(rows: list[dict]) -> dict:
        classes = Counter(r["class"] for r in rows)
        hashes = Counter(r["graph_hash"] for r in rows if r["graph_hash"])
        ok = classes.get("ok", 0)
        return {"command": command, "torch_samples_total": len(pool), "seed": a.seed, "sample_size": len(chosen),
                "measured": len(rows), "complete": len(rows) == len(chosen), "imported": ok,
                "import_rate": round(ok / max(1, len(rows)), 4), "wall_s_this_run": round(time.time() - t0, 1),
                "distinct_graph_hashes": len(hashes), "graphnet_samples_merged": sum(c - 1 for c in hashes.values()),
                "importer_code": code, "measured_with_this_code": sum(r.get("code") == code for r in rows),
                **{f"failed_{k}": v for k, v in sorted(classes.items()) if k != "ok"}}

    def one(s: Path) -> dict | None:
        rel = s.relative_to(a.root).as_posix()
        if rel in have or a.no_capture:
            return have.get(rel)
        t = time.time()
        res = capture_sample(s, timeout_s=a.timeout_s)
        r = {"sample": rel, "class": _klass(res), "s": round(time.time() - t, 1),
             "error": (res.get("error_message") or "")[:300],
             "code": code, **{k: res["graphs"][0].get(k) if res["status"] == "ok" else None
                              for k in ("graph_hash", "structure_hash", "num_nodes")}}
        print(f"{r['class']:>16} {r['s']:7.1f}s {r['sample']} {r['error'][:120]}", flush=True)
        with lock:
            with open(rows_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
            have[rel] = r
            done = [have[c.relative_to(a.root).as_posix()] for c in chosen if c.relative_to(a.root).as_posix() in have]
            atomic_write_json(a.out, summary(done), indent=1)  # partial figures say so ("complete": false)
        return r

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        rows = [r for r in ex.map(one, chosen) if r is not None]
    out = summary(rows)
    if a.dedupe_with is not None:
        out.update(cross_source(rows, a.dedupe_with, a.combined))
    atomic_write_json(a.out, out, indent=1)
    atomic_write_json(a.out.with_name(a.out.stem + "_failures.json"), [r for r in rows if r["class"] != "ok"], indent=1)
    print(json.dumps(out, indent=1))
    return out


def cross_source(rows: list[dict], ours: Path, combined: Path) -> dict:
    """Cross-source dedup figures: the imported GraphNet samples (``graphnet:<sample>``, graph 0)
    and the ``graphs`` table of our own captures in ``ours`` are written as one ``graphs.parquet``
    under ``combined`` and grouped by the dedupe stage's own :func:`dedupe.group.unique_graphs`.

    Returns flat keys: ``cross_source_unique_graphs`` (unique graphs with members from both
    sources), ``cross_source_graphnet_samples`` (GraphNet samples in them), ``cross_source_members``
    (their ``model_id`` lists, ``;``-joined), ``combined_unique_graphs``, ``ours_graphs``.

    Raises:
        FileNotFoundError: ``ours`` has no ``graphs.parquet``.
        ValueError: the canonical versions differ (as :func:`dedupe.group.unique_graphs`).
    """
    import polars as pl

    from dedupe.group import unique_graphs
    from passnet_common.canonical.form import CANONICAL_VERSION

    g = pl.read_parquet(ours / "graphs.parquet")
    cols = ["model_id", "graph_index", "graph_hash", "structure_hash", "wl_hash", "canonical_version", "num_nodes"]
    gn = pl.DataFrame([{"model_id": f"graphnet:{r['sample']}", "graph_index": 0, "graph_hash": r["graph_hash"],
                        "structure_hash": r.get("structure_hash"), "wl_hash": None,
                        "canonical_version": CANONICAL_VERSION, "num_nodes": r.get("num_nodes")}
                       for r in rows if r["class"] == "ok"],
                      schema={c: g.schema[c] for c in cols})
    both = pl.concat([g.select(cols), gn])
    combined.mkdir(parents=True, exist_ok=True)
    both.write_parquet(combined / "graphs.parquet")
    uniq = unique_graphs(pl.read_parquet(combined / "graphs.parquet"))
    shared = []
    for members in uniq.get_column("members").to_list():
        ids = sorted({m["model_id"] for m in members})
        if any(i.startswith("graphnet:") for i in ids) and any(not i.startswith("graphnet:") for i in ids):
            shared.append(ids)
    return {"cross_source_unique_graphs": len(shared),
            "cross_source_graphnet_samples": sum(sum(i.startswith("graphnet:") for i in ids) for ids in shared),
            "cross_source_members": ";".join(",".join(ids) for ids in shared), "combined_unique_graphs": uniq.height,
            "ours_graphs": g.height, "ours_models": g.get_column("model_id").n_unique()}


if __name__ == "__main__":
    main()
