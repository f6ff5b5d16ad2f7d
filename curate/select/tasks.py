"""Group long-tail variants into tasks and lay out task folders runnable without PassNet.

A task is **one subgraph with its shape x dtype variants**, as in PassBench (one op-sequence
bucket of ~10 variants across dtype and shape/batch; one replacement must serve every variant):
a variant is ``(subgraph_hash, size, dtype)`` (:mod:`curate.profile.sizes`, ``curate.profile.dtypes``).
A subgraph becomes a task when the task-level rule holds (:func:`curate.select.longtail.task_slower`:
slower on the geometric mean of its run-0 variants with confidence) and it
has at least ``min_task_variants`` labelled variants in ``min_task_shapes`` sizes; every labelled variant of it belongs to the task
(at most ``task_size``, slowest first). Tasks are ordered slowest first (geometric mean of the
rule's speedup), ``t000``...; at most ``max_tasks`` are kept.

Folder layout (``<out>/tasks/<task_id>/``)::

    task.json                 task id, pattern, tolerance t, rule, the profile's timing protocol
                              (``timing``: TimingConfig knobs), environment, ``op_modules``, and per
                              variant: ``variant_id``, hash, size, dtype, input/weight metadata,
                              baseline medians of the three sides, speedup_e2e / speedup_compiler and
                              their intervals
    run_task.py               standalone loader + runner (curate/select/task_runner.py)
    timing_protocol.py        the profile's timing protocol (a copy of curate/timing.py)
    subgraphs/<hash>-<size>[-<dtype>]/  graph.json, input_meta.json, weight_meta.json (+ model.py)
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import torch

from curate.select.config import SelectConfig
from passnet_common.io import atomic_write_json
from passnet_common.store import load_graph, op_modules


def variant_id(row: dict) -> str:
    """``<subgraph_hash>:<size>`` for a float32 variant, ``<subgraph_hash>:<size>:<dtype>`` for
    another dtype (the scorer's subgraph id of a variant)."""
    base = f"{row['subgraph_hash']}:{row.get('size') or 'catalog'}"
    dt = row.get("dtype") or "float32"
    return base if dt == "float32" else f"{base}:{dt}"


def _speedup(row: dict, rule: str) -> float:
    """The rule's speedup of a row: ``speedup_compiler`` (rule ``compiler``) or ``speedup_e2e``."""
    return row["speedup_compiler"] if rule == "compiler" and row.get("speedup_compiler") is not None else row["speedup_e2e"]


def group_tasks(rows: list[dict], task_size: int = SelectConfig.task_size, max_tasks: int = SelectConfig.max_tasks,
                rule: str = SelectConfig.rule) -> list[dict]:
    """Tasks from the labelled run-0 variant rows of the long-tail subgraphs (``subgraph_hash``,
    ``size``, ``dtype``, ``pattern``, ``speedup_e2e``, ``speedup_compiler``): one task per subgraph.

    Returns:
        ``tasks`` rows: ``task_id`` (``t000``...), ``pattern``, ``variant_ids``, ``subgraph_hashes``,
        ``num_variants``, ``dtypes``, ``sizes``, min / max / geometric-mean speedup (the rule's)
        and the member rows under ``_members``.

    Raises:
        ValueError: ``task_size`` or ``max_tasks`` below 1.
    """
    if task_size < 1 or max_tasks < 1:
        raise ValueError(f"task_size and max_tasks must be >= 1 (got {task_size}, {max_tasks})")
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["subgraph_hash"], []).append(r)
    groups = []
    for h, members in by.items():
        members = sorted(members, key=lambda r: (_speedup(r, rule), variant_id(r)))[:task_size]
        sp = [_speedup(m, rule) for m in members]
        groups.append((math.exp(sum(math.log(x) for x in sp) / len(sp)), h, members, sp))
    tasks: list[dict] = []
    for g, h, chunk, sp in sorted(groups, key=lambda x: (x[0], x[1]))[:max_tasks]:
        tasks.append({
            "task_id": f"t{len(tasks):03d}", "pattern": chunk[0]["pattern"], "anchor": chunk[0].get("anchor") or "",
            "num_variants": len(chunk), "num_subgraphs": 1,
            "variant_ids": [variant_id(m) for m in chunk], "subgraph_hashes": [h],
            "model_ids": sorted({mid for m in chunk for mid in (m.get("model_ids") or [])}),
            "dtypes": sorted({m.get("dtype") or "float32" for m in chunk}),
            "sizes": sorted({m.get("size") or "catalog" for m in chunk}),
            "min_speedup": min(sp), "max_speedup": max(sp), "geomean_speedup": g,
            "_members": chunk,
        })
    return tasks


def write_task_folders(tasks: list[dict], *args: Any, timing: dict | None = None, rule: str = SelectConfig.rule) -> None:
    """Write one folder per task (module docstring); replaces ``out``.

    Call as ``(tasks, out, t, env)`` with members carrying ``variant_folder`` (the store folder
    of their size), or ``(tasks, store_root, out, t, env)``: members without ``variant_folder``
    are read from ``store_root/<h[:2]>/<h>``. ``timing``: the profile's TimingConfig knobs
    (``task.json`` ``timing``: what ``run_task.py`` times with); ``rule``: the label rule.

    Raises:
        TypeError: another number of arguments.
    """
    if len(args) == 3:
        store_root, (out, t, env) = None, args
    elif len(args) == 4:
        store_root, out, t, env = args
    else:
        raise TypeError(f"write_task_folders(tasks, [store_root,] out, t, env): got {len(args) + 1} arguments")

    here = Path(__file__)
    runner = here.with_name("task_runner.py").read_text()
    protocol = (here.parents[1] / "timing.py").read_text()
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for task in tasks:
        d = out / task["task_id"]
        (d / "subgraphs").mkdir(parents=True)
        subs, mods = [], set()
        for m in task["_members"]:
            vid = variant_id(m)
            h = m["subgraph_hash"]
            src = Path(m["variant_folder"]) if m.get("variant_folder") else Path(store_root) / h[:2] / h
            dst = d / "subgraphs" / vid.replace(":", "-")
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("expected.json"))
            needs = op_modules(n["target"] for n in json.loads((src / "graph.json").read_text())["nodes"]
                               if n["op"] == "call_function")
            mods.update(needs)
            subs.append({
                "variant_id": vid, "subgraph_hash": m["subgraph_hash"], "size": m.get("size") or "catalog",
                "dtype": m.get("dtype") or "float32",
                "folder": dst.name, "pattern": m["pattern"], "model_ids": m.get("model_ids") or [],
                "input_meta": json.loads((src / "input_meta.json").read_text()).get("placeholders", []),
                "weight_meta": json.loads((src / "weight_meta.json").read_text()).get("placeholders", [])
                if (src / "weight_meta.json").exists() else [],
                "baseline_ms": {s: m.get(f"{s}_median_ms") for s in ("eager", "dynamo", "inductor")},
                "baseline_speedup_e2e": m.get("speedup_e2e"),
                "speedup_e2e_ci": [m.get("speedup_e2e_ci_low", m.get("ci_low")), m.get("speedup_e2e_ci_high", m.get("ci_high"))],
                "baseline_speedup_compiler": m.get("speedup_compiler"),
                "speedup_compiler_ci": [m.get("speedup_compiler_ci_low"), m.get("speedup_compiler_ci_high")],
                "min_pass_t": m.get("min_pass_t"), "op_modules": needs,
            })
        (d / "run_task.py").write_text(runner)
        (d / "timing_protocol.py").write_text(protocol)
        atomic_write_json(d / "task.json", {"task_id": task["task_id"], "pattern": task["pattern"], "tolerance_t": t,
                                            "rule": rule, "timing": timing or {}, "environment": env,
                                            "op_modules": sorted(mods), "subgraphs": subs}, indent=1)
        task["folder"] = str(d)
        task["op_modules"] = sorted(mods)


def task_folders(path: str | Path) -> list[Path]:
    """The task folders under ``path`` (each holds a ``task.json``), sorted.

    Raises:
        FileNotFoundError: ``path`` has no task folders (the message says so when ``path`` is itself one).
    """
    path = Path(path)
    folders = sorted(p.parent for p in path.glob("*/task.json"))
    if not folders:
        hint = f"; {path} is one task folder: pass the folder that holds it ({path.parent})" if (path / "task.json").is_file() else ""
        raise FileNotFoundError(f"{path}: no task folders (*/task.json){hint}")
    return folders


def read_task(folder: str | Path) -> dict:
    """A task folder's ``task.json``.

    Raises:
        ValueError: the file is not JSON, holds no ``subgraphs`` list, or an entry of it is not a dict with a
            ``subgraph_hash`` whose ``folder`` is a plain name (inside ``subgraphs/``); the message names the file.
    """
    f = Path(folder) / "task.json"
    try:
        task = json.loads(f.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{f}: not a task file ({type(exc).__name__}: {exc})") from exc
    if not isinstance(task, dict) or not isinstance(task.get("subgraphs"), list):
        raise ValueError(f"{f}: not a task file (no 'subgraphs' list)")
    for i, sg in enumerate(task["subgraphs"]):
        if not isinstance(sg, dict) or not isinstance(sg.get("subgraph_hash"), str):
            raise ValueError(f"{f}: subgraphs[{i}] is not a variant entry (a dict with 'subgraph_hash')")
        name = sg.get("folder", sg["subgraph_hash"])
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
            raise ValueError(f"{f}: subgraphs[{i}] names folder {name!r}, not a folder of subgraphs/")
    return task


def load_task_set(path: str | Path, seed: int = 0) -> list[tuple[str, str, Any, Any]]:
    """Every subgraph of a task folder set (``data/curate/tasks``) as
    ``(task_id, variant_id, gm, make_inputs)``; ``make_inputs(seed=seed)`` returns fresh
    synthesised inputs (:func:`passnet_common.store.load_graph`, same seed -> same values), the
    floating ones (weights included) cast to the variant's ``dtype``.

    Raises:
        FileNotFoundError: ``path`` has no task folders.
        ValueError: a ``task.json`` is malformed (:func:`read_task`).
    """
    out = []
    for d in task_folders(path):
        task = read_task(d)
        for sg in task["subgraphs"]:
            folder = d / "subgraphs" / sg.get("folder", sg["subgraph_hash"])
            gm, _ = load_graph(folder, seed=seed)
            dtype = getattr(torch, sg.get("dtype") or "float32")

            def make_inputs(seed: int = seed, folder: Path = folder, dtype=dtype) -> list:
                return [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                        for x in load_graph(folder, seed=seed)[1]]

            out.append((task["task_id"], sg.get("variant_id", sg["subgraph_hash"]), gm, make_inputs))
    return out
