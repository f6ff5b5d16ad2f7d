"""Our task set in PassBench's sample layout, and PassBench samples into our task format.

Layout (read from PaddlePaddle/PassNet ``pass_bench/README.md``, ``entry_scripts/entry.sh`` and its
``samples/fusible_subgraphs/*`` folders; GraphNet's sample files; no code of theirs). One sample
folder per task::

    <task>/graph_list.txt                   one variant per line, relative to the sample folder
    <task>/graphs/<dtype>/<variant>/        (PassBench: graphs/.../float16|float32|bfloat16/...)
        model.py                            class GraphModule(torch.nn.Module), forward(self, in_0, w_0, ...)
        weight_meta.py                      one class per forward argument: name, original_name,
                                            shape, dtype, device, mean, std (numbers: recorded, else
                                            those of the distribution the inputs are drawn from),
                                            min_val / max_val (integer and bool tensors: the range
                                            they are drawn from; floats: where recorded), data
                                            (recorded small integer tensors), kind (value_stats)
        input_meta.py                       empty (PassNet lists inputs in weight_meta.py too)
        input_tensor_constraints.py         GraphNet's shape file: every argument's static shape
                                            (no dynamic dimension symbols: each size is a variant)
        graph_net.json                      framework, model_name, source; ours adds a ``passnet``
                                            block (task id, variant id, subgraph hash, size,
                                            pattern, tolerance t, int_high); written last

**Export** (:func:`export_tasks`): every variant of every task folder of the curate stage
(``data/curate/tasks``). ``model.py`` is generated here from the stored FX graph
(:func:`passnet_common.store.load_graph` rebuilds it from ``graph.json`` without executing code;
FX's code generator writes ``forward``), so it is ours and trusted. A variant whose graph holds
state (``get_attr``: constants, sub-graphs of higher-order ops) is not representable (forward
takes every tensor as an argument) and is listed in ``export_report.json`` with its reason.

**Import** (:func:`import_samples`): someone else's ``model.py`` is never imported. It is parsed
with :mod:`ast` and :func:`static_check` accepts only the straight-line subset the layout uses
(``import torch``; one ``GraphModule`` class whose ``forward`` assigns names from calls of
allowed torch functions (:func:`_allowed_torch`), tensor methods (not :data:`DENIED_METHODS`),
operators, subscripts, literals, and FX's forms of ``operator.setitem`` and the in-place operators;
no dunder, no other name, no loop, no ``def``/``lambda``). The
same AST is then *converted* into an FX graph node by node (:func:`graph_from_source`: nothing is
``exec``-ed; targets resolve through :func:`passnet_common.store.resolve_target`'s allowlist), and
the graph is run once on synthesised inputs for its shapes in a forked child with a wall-time
limit and a memory cap (:func:`passnet_common.worker.run_isolated`); the child writes the variant
as a store folder (``graph.json``, ``model.py``, ``input_meta.json``, ``weight_meta.json``). A
refused or failing variant is a row of ``import_report.json`` (status ``refused`` / ``failed``
with its error class) and the import goes on. The imported task set is an ordinary curate task
folder set: ``python -m curate score --tasks <TASKDIR>`` (or ``score.tasks``) scores it.

Why our own checker and not :func:`extract.sources.graphnet.static_check`: stage families import
only ``passnet_common`` (curate must not import extract), and that checker accepts any ``torch.*``
call and then *executes* the file; here the file is converted, not executed, so a smaller
allowlist suffices and ``torch.load``-like calls are refused by name.

Round trip (tested): export then import keeps every float32 variant's :func:`variant_graph_hash` (the
canonical hash, :func:`passnet_common.canonical.canonicalize`, of the rebuilt graph) and its
input metadata, so the scorer's verdicts are the same. A bfloat16 variant's sample declares its
floating arguments in bfloat16, so the imported graph is hashed with those input dtypes (the
``passnet`` block of ``graph_net.json`` keeps the task variant's hash).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch.fx.passes.shape_prop import ShapeProp

from curate.passbench.check import (  # noqa: F401  (re-exported: the import's checks)
    RefusedSample,
    graph_from_source,
    kind_of,
    read_meta,
    static_check,
    stats_of,
)
from curate.select.tasks import read_task, task_folders
from passnet_common.canonical import canonicalize
from passnet_common.io import atomic_write_json, atomic_write_text
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.store import load_graph, synth_placeholder, write_graph
from passnet_common.worker import run_isolated

LAYOUT_FILES = ("model.py", "weight_meta.py", "input_meta.py", "input_tensor_constraints.py", "graph_net.json")

# --- export -------------------------------------------------------------------------------------

_FX_GLOBALS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}


def variant_graph_hash(folder: str | Path) -> str:
    """The canonical hash (:func:`passnet_common.canonical.canonicalize`) of the graph stored in a
    variant folder, rebuilt (:func:`passnet_common.store.load_graph`) and shape-propagated on its
    seed-0 inputs: the same function on both ends of the round trip."""
    folder = Path(folder)
    gm, inputs = load_graph(folder)
    nodes = json.loads((folder / "graph.json").read_text())["nodes"]
    kinds = [n.get("kind", "input") for n in sorted((n for n in nodes if n["op"] == "placeholder"), key=lambda n: n["position"])]
    ShapeProp(gm).propagate(*inputs)
    return canonicalize(gm, kinds).graph_hash


def model_source(folder: Path, dtype: str | None = None) -> tuple[str, list[dict]]:
    """``model.py`` text and the ``weight_meta.py`` entries of one stored variant folder; with
    ``dtype`` (a task variant's, e.g. ``bfloat16``) every floating argument is declared in it
    (the curate stage casts floating inputs and weights to the variant's dtype).

    Raises:
        ValueError: the graph holds state (``get_attr``) or needs globals beyond torch (not
            representable in the layout), or the generated file fails :func:`static_check`.
    """
    gm, values = load_graph(folder)
    if any(n.op in ("get_attr", "call_module") for n in gm.graph.nodes):
        raise ValueError("not representable: the graph holds constants or sub-graphs (get_attr)")
    imeta = json.loads((folder / "input_meta.json").read_text())
    wpath = folder / "weight_meta.json"
    wmeta = json.loads(wpath.read_text()) if wpath.exists() else {"placeholders": []}
    by_pos = {p["position"]: p for p in imeta.get("placeholders", []) + wmeta.get("placeholders", [])}
    metas, count = [], {"in": 0, "w": 0}
    for pos, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        p = by_pos[pos]
        pre = "in" if p["kind"] == "input" else "w"
        name = f"{pre}_{count[pre]}"
        count[pre] += 1
        n.target = name
        n._rename(name)
        dt = dtype if dtype and str(p["dtype"]).startswith(("float", "bfloat")) else p["dtype"]
        metas.append({"name": name, "original_name": p.get("name") or f"arg{pos}", "shape": list(p["shape"]),
                      "dtype": f"torch.{dt}", "device": "cpu",
                      **value_stats(p.get("stats"), values[pos], p["kind"], imeta.get("int_high")), "kind": p["kind"]})
    pc = gm.graph.python_code(root_module="self")
    extra = sorted(set(pc.globals) - _FX_GLOBALS)
    if extra or "pytree" in pc.src:
        raise ValueError(f"not representable: the generated forward needs globals {extra or ['pytree']}")
    body = "\n".join(("    " + ln) if ln.strip() else "" for ln in pc.src.strip("\n").splitlines())
    src = f"import torch\nfrom torch import device\nfrom math import inf, nan\n\n\nclass GraphModule(torch.nn.Module):\n{body}\n"
    static_check(src, str(folder / "model.py"))
    return src, metas


def value_stats(recorded: dict | None, value, kind: str, int_high: int | None) -> dict:
    """``mean``, ``std``, ``min_val``, ``max_val``, ``data`` of one forward argument, as PassNet's
    samples write them: numbers, never None where a number exists.

    Recorded statistics (graphs captured on real tensors) win. Otherwise the figures are those of the
    distribution :func:`passnet_common.store.synth_placeholder` draws the argument from (the values the
    profile timed): float inputs mean 0.0 / std 1.0, parameters 0.0 / 0.02, buffers 1.0 / 0.02;
    integer inputs the range ``[0, int_high - 1]`` (``[0, 1]`` without ``int_high``), other integer
    tensors (zeros) ``[0, 0]``, bool tensors ``[1, 1]`` (all true), each with the mean / std of the
    seed-0 value. Written this way, an importer that draws ``N(mean, std)`` and ``randint(min, max)``
    reproduces our inputs exactly (the PassBench round trip keeps them bit for bit). ``data`` only where
    values were recorded (small integer buffers such as ``position_ids``): a fresh seed must still draw
    fresh inputs.
    """
    st = recorded or {}
    out = {"mean": st.get("mean"), "std": st.get("std"), "min_val": st.get("min"), "max_val": st.get("max"),
           "data": st.get("values")}
    if not isinstance(value, torch.Tensor):
        return out
    if value.dtype.is_floating_point:
        if out["mean"] is None:
            out["mean"], out["std"] = {"parameter": (0.0, 0.02), "buffer": (1.0, 0.02)}.get(kind, (0.0, 1.0))
        return out
    f = value.detach().to(torch.float64)
    if out["mean"] is None:
        out["mean"] = float(f"{f.mean().item():.6g}") if f.numel() else 0.0
    if out["std"] is None:
        out["std"] = float(f"{f.std(unbiased=False).item():.6g}") if f.numel() > 1 else 0.0
    if out["min_val"] is None and not value.dtype.is_complex:
        if value.dtype == torch.bool:
            out["min_val"], out["max_val"] = 1, 1
        else:
            out["min_val"], out["max_val"] = (0, int(int_high or 2) - 1) if kind == "input" else (0, 0)
    return out


def _constraints_text(metas: list[dict]) -> str:
    """``input_tensor_constraints.py`` in GraphNet's form, all shapes static (no symbols)."""
    rows = "".join(f"    ({list(m['shape'])!r}, {m['name']!r}),\n" for m in metas)
    return ("dynamic_dim_constraint_symbols = []\n\ndynamic_dim_constraint_symbol2example_value = {}\n\n"
            "dynamic_dim_constraint_relations = []\n\n"
            f"dynamic_dim_constraint_input_shapes = [\n{rows}]\n")


def _meta_text(metas: list[dict]) -> str:
    blocks = []
    for m in metas:
        lines = [f"class Program_weight_tensor_meta_{m['name']}:"]
        lines += [f"    {k} = {m[k]!r}" for k in ("name", "original_name", "shape", "dtype", "device", "mean", "std",
                                                  "min_val", "max_val", "data", "kind")]
        blocks.append("\n".join(lines) + "\n")
    return "\n\n".join(blocks)


def export_tasks(tasks_dir: str | Path, out: str | Path) -> dict:
    """Write every task folder under ``tasks_dir`` (``*/task.json``) as a PassBench sample folder
    under ``out`` (module docstring); returns the report (also ``out/export_report.json``):
    ``tasks``, ``variants``, ``exported``, ``skipped`` (``[{variant_id, error}]``).

    Raises:
        FileNotFoundError: ``tasks_dir`` holds no task folders.
    """
    tasks_dir, out = Path(tasks_dir), Path(out)
    folders = task_folders(tasks_dir)
    report: dict[str, Any] = {"tasks": 0, "variants": 0, "exported": 0, "skipped": []}
    for d in folders:
        task = read_task(d)
        lines = []
        for sg in task["subgraphs"]:
            report["variants"] += 1
            vfolder = d / "subgraphs" / sg.get("folder", sg["subgraph_hash"])
            try:
                src, metas = model_source(vfolder, sg.get("dtype"))
            except (ValueError, KeyError, FileNotFoundError, RefusedSample) as exc:
                report["skipped"].append({"variant_id": sg.get("variant_id"), "error": f"{type(exc).__name__}: {exc}"})
                continue
            dtype = next((m["dtype"].replace("torch.", "") for m in metas if "float" in m["dtype"]), "float32")
            rel = Path("graphs") / dtype / vfolder.name
            dst = out / task["task_id"] / rel
            dst.mkdir(parents=True, exist_ok=True)
            atomic_write_text(dst / "model.py", src)
            atomic_write_text(dst / "weight_meta.py", _meta_text(metas))
            atomic_write_text(dst / "input_meta.py", "")
            atomic_write_text(dst / "input_tensor_constraints.py", _constraints_text(metas))
            imeta = json.loads((vfolder / "input_meta.json").read_text())
            atomic_write_json(dst / "graph_net.json", {
                "framework": "torch", "num_devices_required": 1, "num_nodes_required": 1, "dynamic": False,
                "model_name": f"{task['task_id']}/{sg.get('variant_id')}", "source": "passnet",
                "passnet": {"task_id": task["task_id"], "pattern": task.get("pattern"), "tolerance_t": task.get("tolerance_t"),
                            "variant_id": sg.get("variant_id"), "subgraph_hash": sg["subgraph_hash"], "size": sg.get("size"),
                            "dtype": sg.get("dtype") or "float32",
                            "graph_hash": variant_graph_hash(vfolder), "int_high": imeta.get("int_high")}}, indent=1)
            lines.append(rel.as_posix())
            report["exported"] += 1
        if lines:
            atomic_write_text(out / task["task_id"] / "graph_list.txt", "\n".join(lines) + "\n")
            report["tasks"] += 1
    atomic_write_json(out / "export_report.json", report, indent=1)
    return report


# --- import -------------------------------------------------------------------------------------


def _inside(base: Path, rel: str) -> Path | None:
    """``base / rel`` when it stays inside ``base`` (no absolute path, ``..`` or symlink escape)."""
    if not rel or rel.startswith("/") or "\\" in rel:
        return None
    p = (base / rel).resolve()
    return p if p.is_relative_to(base.resolve()) else None


def _plan_variant(sample: Path, rel: str) -> dict:
    """Everything the child needs for one variant, checked in the parent (no torch work here).

    Raises:
        RefusedSample: outside the sample folder, missing files, refused ``model.py`` or meta.
    """
    v = _inside(sample, rel)
    if v is None or not v.is_dir():
        raise RefusedSample(f"{sample}/graph_list.txt: {rel!r} is not a folder inside the sample")
    for f in ("model.py", "weight_meta.py"):
        if not (v / f).is_file():
            raise RefusedSample(f"{v}: missing {f}")
    source = (v / "model.py").read_text(encoding="utf-8")
    fwd = static_check(source, str(v / "model.py"))
    metas = {m["name"]: m for m in read_meta(v / "weight_meta.py") + read_meta(v / "input_meta.py")}
    args = [a.arg for a in fwd.args.args[1:]]
    missing = [a for a in args if a not in metas]
    if missing:
        raise RefusedSample(f"{v}: forward arguments {missing} have no weight_meta / input_meta entry")
    info = {}
    if (v / "graph_net.json").is_file():
        try:
            info = json.loads((v / "graph_net.json").read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RefusedSample(f"{v / 'graph_net.json'}: not valid JSON: {exc}") from exc
    pn = info.get("passnet") or {}
    vid = pn.get("variant_id") or f"{sample.name}:{v.name}"
    return {"folder": str(v), "source": source, "metas": [metas[a] for a in args], "int_high": pn.get("int_high"),
            "variant_id": str(vid), "subgraph_hash": pn.get("subgraph_hash"), "size": pn.get("size") or "catalog",
            "task_id": re.sub(r"[^A-Za-z0-9_.-]", "_", str(pn.get("task_id") or sample.name)),
            "pattern": pn.get("pattern"), "tolerance_t": pn.get("tolerance_t"), "model_name": info.get("model_name")}


def _import_child(plan: dict, out_dir: Path) -> None:
    """Body of the isolated child: convert, run once for shapes, write a store folder."""
    gm, _ = graph_from_source(plan["source"], plan["folder"] + "/model.py")
    gen = torch.Generator().manual_seed(0)
    kinds = [kind_of(m) for m in plan["metas"]]
    stats = [stats_of(m) for m in plan["metas"]]
    inputs = [synth_placeholder(["T", str(m["dtype"]).replace("torch.", ""), list(m["shape"])], k, plan["int_high"], gen,
                                torch.device("cpu"), st) for m, k, st in zip(plan["metas"], kinds, stats)]
    ShapeProp(gm).propagate(*inputs)
    rec = describe_graph(0, CapturedGraph(gm, kinds, inputs, None), with_stats=False)
    for p, st in zip(rec["placeholders"], stats):
        if st is not None:
            p["stats"] = st
    spec = [{"high": plan["int_high"]}] if plan["int_high"] is not None else None
    write_graph(out_dir / "store", rec, spec)
    atomic_write_json(out_dir / "result.json", {"graph_hash": rec["graph_hash"]})


def import_samples(src: str | Path, out: str | Path, timeout_s: float = 120.0, mem_cap_gb: float = 4.0,
                   workers: int = 1) -> dict:
    """Import PassBench sample folders (``src`` itself or its sub-folders holding ``graph_list.txt``)
    as curate task folders under ``out`` (replaced); returns the report (also
    ``out/import_report.json``): ``samples``, ``variants``, ``imported``, ``tasks`` and ``rows``
    (``[{variant_id, folder, status, error_class, error_message}]``: ``ok``, ``refused``
    (:class:`RefusedSample`, from the static check here or the conversion in the child) or ``failed``
    (the child's error class: ``timeout``, ``oom``, ``exception:<Type>``...)).

    Raises:
        FileNotFoundError: no ``graph_list.txt`` under ``src``.
    """
    src, out = Path(src), Path(out)
    samples = [src] if (src / "graph_list.txt").is_file() else sorted(p.parent for p in src.glob("*/graph_list.txt"))
    if not samples:
        raise FileNotFoundError(f"{src}: no PassBench sample (graph_list.txt) here or one level below")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows, plans = [], []
    for sample in samples:
        for rel in [ln.strip() for ln in (sample / "graph_list.txt").read_text().splitlines() if ln.strip()]:
            try:
                plans.append(_plan_variant(sample, rel))
            except RefusedSample as exc:
                rows.append({"variant_id": f"{sample.name}:{rel}", "folder": rel, "status": "refused",
                             "error_class": "refused", "error_message": str(exc)[:2000]})
    by_task: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="passbench_import_") as tmp:
        jobs = [(str(i), p, Path(tmp) / str(i)) for i, p in enumerate(plans)]
        for _, _, d in jobs:
            d.mkdir()
        outcomes = {o.key: o for o in run_isolated(jobs, _import_child, workers=workers, timeout_s=timeout_s,
                                                   mem_cap_bytes=int(mem_cap_gb * (1 << 30)), threads_per_worker=1)}
        for key, plan, d in jobs:
            o = outcomes[key]
            row = {"variant_id": plan["variant_id"], "folder": plan["folder"], "status": "ok" if o.ok else "failed",
                   "error_class": o.error_class, "error_message": (o.error_message or "")[:2000] or None}
            if o.error_class == f"exception:{RefusedSample.__name__}":  # the conversion in the child refused it
                row.update(status="refused", error_class="refused")
            if o.ok:
                h = json.loads((d / "result.json").read_text())["graph_hash"]
                vname = plan["variant_id"].replace(":", "-").replace("/", "_")
                dst = out / plan["task_id"] / "subgraphs" / vname
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(d / "store" / h[:2] / h), dst)
                row["graph_hash"] = h
                by_task.setdefault(plan["task_id"], []).append({**plan, "vname": vname, "graph_hash": h})
            rows.append(row)
    here = Path(__file__)
    for task_id, vs in by_task.items():
        d = out / task_id
        subs = [{"variant_id": v["variant_id"], "subgraph_hash": v["subgraph_hash"] or v["graph_hash"], "size": v["size"],
                 "folder": v["vname"], "pattern": v["pattern"], "model_ids": [v["model_name"]] if v["model_name"] else [],
                 "input_meta": json.loads((d / "subgraphs" / v["vname"] / "input_meta.json").read_text()).get("placeholders", []),
                 "weight_meta": json.loads((d / "subgraphs" / v["vname"] / "weight_meta.json").read_text()).get("placeholders", []),
                 "graph_hash": v["graph_hash"], "op_modules": []} for v in vs]
        (d / "run_task.py").write_text((here.parents[1] / "select" / "task_runner.py").read_text())
        (d / "timing_protocol.py").write_text((here.parents[1] / "timing.py").read_text())
        atomic_write_json(d / "task.json", {"task_id": task_id, "pattern": vs[0]["pattern"],
                                            "tolerance_t": vs[0]["tolerance_t"] if vs[0]["tolerance_t"] is not None else -5,
                                            "environment": {"imported_from": "passbench", "source": str(src)},
                                            "op_modules": [], "subgraphs": subs}, indent=1)
    report = {"samples": len(samples), "variants": len(rows), "imported": sum(1 for r in rows if r["status"] == "ok"),
              "tasks": len(by_task), "rows": rows}
    atomic_write_json(out / "import_report.json", report, indent=1)
    return report


# --- CLI ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m curate.passbench export --tasks DIR --out DIR`` | ``import DIR --out TASKDIR``."""
    ap = argparse.ArgumentParser(prog="python -m curate.passbench", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="our task set -> PassBench sample folders")
    e.add_argument("--tasks", default="data/curate/tasks")
    e.add_argument("--out", required=True)
    i = sub.add_parser("import", help="PassBench sample folders -> curate task folders (scored with --tasks)")
    i.add_argument("src")
    i.add_argument("--out", required=True)
    i.add_argument("--timeout-s", type=float, default=120.0, help="wall seconds per variant's child")
    i.add_argument("--mem-cap-gb", type=float, default=4.0)
    i.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "export":
            r = export_tasks(args.tasks, args.out)
            print(f"passbench export: {r['exported']} of {r['variants']} variants in {r['tasks']} samples -> {args.out}"
                  f" ({len(r['skipped'])} not representable, see export_report.json)")
        else:
            r = import_samples(args.src, args.out, args.timeout_s, args.mem_cap_gb, args.workers)
            bad = [x for x in r["rows"] if x["status"] != "ok"]
            print(f"passbench import: {r['imported']} of {r['variants']} variants in {r['tasks']} tasks -> {args.out}")
            for x in bad:
                print(f"  {x['status']}: {x['variant_id']}: {x['error_class']}: {(x['error_message'] or '')[:200]}")
    except (FileNotFoundError, ValueError) as exc:  # no task folders, a malformed task.json (named)
        print(f"passbench {args.cmd}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
