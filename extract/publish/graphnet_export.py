"""Our graphs in GraphNet's sample layout (``python -m extract export``).

:func:`export_sample` writes one graph record (:func:`passnet_common.record.describe_graph`)
as a GraphNet sample folder: ``model.py``, ``weight_meta.py`` without values, an empty
``input_meta.py``, ``graph_hash.txt`` with OUR hash, and ``graph_net.json`` last (the
completion marker). :func:`export_store` exports a whole graph store, keeping finished folders.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from passnet_common.store import store_path


def _dtype_name(d: str) -> str:
    return d if d.startswith("torch.") else f"torch.{d}"


def export_sample(rec: dict, out_dir: str | Path, model_name: str, source: str = "passnet") -> Path:
    """Write one graph record (as :func:`passnet_common.record.describe_graph` returns it: ``code``
    from ``print_readable``, ``placeholders`` with name/kind/shape/dtype/stats, ``graph_hash``)
    as a GraphNet sample folder ``out_dir``; returns it.

    ``graph_hash.txt`` holds OUR ``graph_hash`` (canonical form v``canonical_version``), not
    GraphNet's text hash. No tensor values are written (``data = None``).

    Raises:
        ValueError: a placeholder is not a tensor (no shape/dtype): not representable.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    code = rec["code"]
    if "class GraphModule" not in code:
        raise ValueError("export_sample: record code is not a GraphModule class (print_readable output expected)")
    (out / "model.py").write_text("import torch\n\n\n" + code.strip() + "\n", encoding="utf-8")
    # forward's argument names (the placeholder targets, e.g. ``L_x_``) in placeholder order;
    # the record's ``name`` is the FX node name (``l_x_``), not what forward is called with
    cls = next(n for n in ast.parse(code).body if isinstance(n, ast.ClassDef) and n.name == "GraphModule")
    fwd = next(f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
    arg_names = [a.arg for a in fwd.args.args[1:]]
    if len(arg_names) != len(rec["placeholders"]):
        raise ValueError(f"export_sample: forward has {len(arg_names)} arguments, record {len(rec['placeholders'])} placeholders")
    blocks = []
    for arg, ph in zip(arg_names, rec["placeholders"]):
        ph = dict(ph, name=arg)
        if "shape" not in ph or "dtype" not in ph:
            raise ValueError(f"export_sample: placeholder {ph.get('name')} is not a tensor")
        st = ph.get("stats") or {}
        mean = round(st["mean"], 3) if isinstance(st.get("mean"), (int, float)) else None
        std = round(st["std"], 3) if isinstance(st.get("std"), (int, float)) else None
        blocks.append(f"class Program_weight_tensor_meta_{ph['name']}:\n    name = {ph['name']!r}\n"
                      f"    shape = {list(ph['shape'])!r}\n    dtype = {_dtype_name(ph['dtype'])!r}\n"
                      f"    device = 'cpu'\n    mean = {mean!r}\n    std = {std!r}\n    data = None\n")
    (out / "weight_meta.py").write_text("\n\n".join(blocks), encoding="utf-8")
    (out / "input_meta.py").write_text("", encoding="utf-8")
    (out / "graph_hash.txt").write_text(rec["graph_hash"], encoding="utf-8")
    meta = {"framework": "torch", "num_devices_required": 1, "num_nodes_required": 1, "dynamic": False,
            "model_name": model_name, "source": source,
            "passnet": {"graph_hash": rec["graph_hash"], "canonical_version": rec.get("canonical_version")}}
    tmp = out / "graph_net.json.tmp"
    tmp.write_text(json.dumps(meta, indent=4) + "\n", encoding="utf-8")
    os.replace(tmp, out / "graph_net.json")  # written last: the sample is whole
    return out


def record_from_store(folder: str | Path) -> dict:
    """The parts of a graph record :func:`export_sample` needs, read back from a graph store
    folder (:func:`passnet_common.store.write_graph`): ``graph_hash``, ``canonical_version``,
    ``code`` (``model.py``) and ``placeholders`` (inputs and weights merged in calling order).

    Raises:
        FileNotFoundError: the folder lacks ``graph.json``/``model.py``/the meta files.
    """
    folder = Path(folder)
    for f in ("graph.json", "model.py", "input_meta.json", "weight_meta.json"):
        if not (folder / f).is_file():
            raise FileNotFoundError(f"graph store folder {folder}: missing {f}")
    graph = json.loads((folder / "graph.json").read_text(encoding="utf-8"))
    phs = (json.loads((folder / "input_meta.json").read_text(encoding="utf-8"))["placeholders"]
           + json.loads((folder / "weight_meta.json").read_text(encoding="utf-8"))["placeholders"])
    return {"graph_hash": graph["graph_hash"], "canonical_version": graph.get("canonical_version"),
            "code": (folder / "model.py").read_text(encoding="utf-8"),
            "placeholders": sorted(phs, key=lambda p: p["position"])}


def export_store(store: str | Path, out: str | Path, hashes: list[str] | None = None,
                 names: dict[str, str] | None = None) -> dict:
    """Write graphs of a graph store as GraphNet sample folders ``out/<graph_hash>``
    (:func:`export_sample`); ``hashes`` None exports every stored graph.

    ``names`` maps a hash to the ``model_name`` written to ``graph_net.json`` (default: the
    hash). A graph that cannot be represented (a non-tensor placeholder) is reported, not
    fatal. A folder whose ``graph_net.json`` exists is complete and kept (resumable).

    Returns:
        ``{"exported": [hash...], "kept": [hash...], "failed": {hash: message}}``.

    Raises:
        FileNotFoundError: ``store`` does not exist, or a requested hash is not stored.
    """
    store, out = Path(store), Path(out)
    if not store.is_dir():
        raise FileNotFoundError(f"graph store {store} does not exist")
    if hashes is None:
        hashes = sorted(p.name for p in store.glob("*/*") if p.is_dir() and (p / "graph.json").is_file())
    missing = [h for h in hashes if not (store_path(store, h) / "graph.json").is_file()]
    if missing:
        raise FileNotFoundError(f"graph store {store} has no graph {', '.join(missing[:5])}"
                                f"{' ...' if len(missing) > 5 else ''}")
    res: dict = {"exported": [], "kept": [], "failed": {}}
    for h in hashes:
        dest = out / h
        if (dest / "graph_net.json").is_file():
            res["kept"].append(h)
            continue
        try:
            export_sample(record_from_store(store_path(store, h)), dest, (names or {}).get(h, h))
            res["exported"].append(h)
        except ValueError as exc:
            res["failed"][h] = str(exc)
    return res


def export_graphs(store: Path, out: Path, hashes: list[str] | None, graphs_table: Path | None) -> dict:
    """``python -m extract export``: :func:`export_store` with each graph's ``model_name`` the
    sorted model ids of its instances in ``graphs_table`` (the extract stage's ``graphs.parquet``;
    the hash when the table is absent), and the result written to ``out/export_summary.json``.
    Returns the result of :func:`export_store`."""
    names = None
    if graphs_table is not None and Path(graphs_table).is_file():
        members: dict[str, list[str]] = {}
        for r in pq.read_table(graphs_table, columns=["graph_hash", "model_id"]).to_pylist():
            members.setdefault(r["graph_hash"], []).append(r["model_id"])
        names = {h: ", ".join(sorted(set(m))) for h, m in members.items()}
    res = export_store(Path(store), Path(out), hashes, names)
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "export_summary.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    return res
