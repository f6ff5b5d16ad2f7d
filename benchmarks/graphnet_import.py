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
a rerun with the same arguments resumes) and ``..._failures.json`` (the failed samples). Wall time depends on machine load: it is reported, nothing is asserted.
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


def _klass(res: dict) -> str:
    if res["status"] == "ok":
        return "ok"
    msg = res.get("error_message") or ""
    if "cannot be called on meta tensors" in msg:
        return "item_on_meta"
    if "re-traced into" in msg:
        return "multiple_graphs"
    return res.get("error_class") or "unknown"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("metrics/bench/graphnet_import.json"))
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
            have[r["sample"]] = r
    lock = threading.Lock()
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
                **{f"failed_{k}": v for k, v in sorted(classes.items()) if k != "ok"}}

    def one(s: Path) -> dict:
        rel = s.relative_to(a.root).as_posix()
        if rel in have:
            return have[rel]
        t = time.time()
        res = capture_sample(s, timeout_s=a.timeout_s)
        r = {"sample": rel, "class": _klass(res), "s": round(time.time() - t, 1),
             "error": (res.get("error_message") or "")[:300],
             "graph_hash": res["graphs"][0]["graph_hash"] if res["status"] == "ok" else None}
        print(f"{r['class']:>16} {r['s']:7.1f}s {r['sample']} {r['error'][:120]}", flush=True)
        with lock:
            with open(rows_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
            have[rel] = r
            done = [have[c.relative_to(a.root).as_posix()] for c in chosen if c.relative_to(a.root).as_posix() in have]
            atomic_write_json(a.out, summary(done), indent=1)  # partial figures say so ("complete": false)
        return r

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        rows = list(ex.map(one, chosen))
    out = summary(rows)
    atomic_write_json(a.out, out, indent=1)
    atomic_write_json(a.out.with_name(a.out.stem + "_failures.json"), [r for r in rows if r["class"] != "ok"], indent=1)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
