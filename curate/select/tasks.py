"""Group long-tail variants into tasks and lay out task folders runnable without PassNet.

A task is one **structure family** holding its variants, as in PassBench (one op-sequence
bucket of ~10 variants across shape/batch and, on CUDA, dtype): the family is the ``pattern``
of :func:`curate.decompose.ranges.pattern_of` (the range's op names in order, views dropped:
``conv2d>batch_norm>relu``), a variant is ``(subgraph_hash, size)``. Families are taken
largest first; each is cut into tasks of at most ``task_size`` variants (slowest first),
and at most ``max_tasks`` tasks are kept.

Folder layout (``<out>/tasks/<task_id>/``)::

    task.json                 task id, pattern, tolerance t, environment, ``op_modules``, and per
                              variant: ``variant_id`` (``<hash>:<size>``), hash, size, input/weight
                              metadata, baseline medians of the three sides, speedup_e2e /
                              speedup_compiler and their intervals
    run_task.py               standalone loader + runner (curate/select/task_runner.py)
    timing_protocol.py        the profile's timing protocol (a copy of curate/timing.py)
    subgraphs/<hash>-<size>/  graph.json, input_meta.json, weight_meta.json (+ model.py)
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

from passnet_common.io import atomic_write_json


def variant_id(row: dict) -> str:
    """``<subgraph_hash>:<size>`` (the scorer's subgraph id of a variant)."""
    return f"{row['subgraph_hash']}:{row.get('size') or 'catalog'}"


def _speedup(row: dict) -> float:
    """``speedup_e2e`` (rows of the previous profile format: ``speedup``)."""
    return row["speedup_e2e"] if row.get("speedup_e2e") is not None else row["speedup"]


def group_tasks(long_tail: list[dict], task_size: int = 10, max_tasks: int = 200) -> list[dict]:
    """Tasks from long-tail variant rows (``subgraph_hash``, ``size``, ``pattern``, ``speedup_e2e``).

    Returns:
        ``tasks`` rows: ``task_id`` (``t000``...), ``pattern``, ``variant_ids``,
        ``subgraph_hashes``, ``num_variants`` and the member rows under ``_members``.

    Raises:
        ValueError: ``task_size`` or ``max_tasks`` below 1.
    """
    if task_size < 1 or max_tasks < 1:
        raise ValueError(f"task_size and max_tasks must be >= 1 (got {task_size}, {max_tasks})")
    fams: dict[str, list[dict]] = {}
    for r in long_tail:
        fams.setdefault(r["pattern"], []).append(r)
    order = sorted(fams, key=lambda p: (-len(fams[p]), p))
    tasks: list[dict] = []
    for p in order:
        members = sorted(fams[p], key=lambda r: (_speedup(r), variant_id(r)))
        for k in range(0, len(members), task_size):
            if len(tasks) >= max_tasks:
                return tasks
            chunk = members[k:k + task_size]
            sp = [_speedup(m) for m in chunk]
            tasks.append({
                "task_id": f"t{len(tasks):03d}", "pattern": p, "anchor": chunk[0].get("anchor") or "",
                "num_variants": len(chunk), "num_subgraphs": len({m["subgraph_hash"] for m in chunk}),
                "variant_ids": [variant_id(m) for m in chunk],
                "subgraph_hashes": sorted({m["subgraph_hash"] for m in chunk}),
                "model_ids": sorted({mid for m in chunk for mid in (m.get("model_ids") or [])}),
                "min_speedup": min(sp), "max_speedup": max(sp),
                "geomean_speedup": math.exp(sum(math.log(s) for s in sp) / len(sp)),
                "_members": chunk,
            })
    return tasks


def write_task_folders(tasks: list[dict], *args: Any) -> None:
    """Write one folder per task (module docstring); replaces ``out``.

    Call as ``(tasks, out, t, env)`` with members carrying ``variant_folder`` (the store folder
    of their size), or as before, ``(tasks, store_root, out, t, env)``: members without
    ``variant_folder`` are read from ``store_root/<h[:2]>/<h>``.

    Raises:
        TypeError: another number of arguments.
    """
    if len(args) == 3:
        store_root, (out, t, env) = None, args
    elif len(args) == 4:
        store_root, out, t, env = args
    else:
        raise TypeError(f"write_task_folders(tasks, [store_root,] out, t, env): got {len(args) + 1} arguments")
    from passnet_common.store import op_modules

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
                "folder": dst.name, "pattern": m["pattern"], "model_ids": m.get("model_ids") or [],
                "input_meta": json.loads((src / "input_meta.json").read_text()).get("placeholders", []),
                "weight_meta": json.loads((src / "weight_meta.json").read_text()).get("placeholders", [])
                if (src / "weight_meta.json").exists() else [],
                "baseline_ms": {s: m.get(f"{s}_median_ms") for s in ("eager", "dynamo", "inductor")},
                "baseline_speedup_e2e": _speedup(m),
                "speedup_e2e_ci": [m.get("speedup_e2e_ci_low", m.get("ci_low")), m.get("speedup_e2e_ci_high", m.get("ci_high"))],
                "baseline_speedup_compiler": m.get("speedup_compiler"),
                "speedup_compiler_ci": [m.get("speedup_compiler_ci_low"), m.get("speedup_compiler_ci_high")],
                "min_pass_t": m.get("min_pass_t"), "op_modules": needs,
            })
        (d / "run_task.py").write_text(runner)
        (d / "timing_protocol.py").write_text(protocol)
        atomic_write_json(d / "task.json", {"task_id": task["task_id"], "pattern": task["pattern"], "tolerance_t": t,
                                            "environment": env, "op_modules": sorted(mods), "subgraphs": subs}, indent=1)
        task["folder"] = str(d)
        task["op_modules"] = sorted(mods)


def load_task_set(path: str | Path, seed: int = 0) -> list[tuple[str, str, Any, Any]]:
    """Every subgraph of a task folder set (``data/curate/tasks``) as
    ``(task_id, variant_id, gm, make_inputs)``; ``make_inputs(seed=seed)`` returns fresh
    synthesised inputs (:func:`passnet_common.store.load_graph`, same seed -> same values).

    Raises:
        FileNotFoundError: ``path`` has no task folders.
    """
    from passnet_common.store import load_graph

    path = Path(path)
    folders = sorted(p.parent for p in path.glob("*/task.json"))
    if not folders:
        raise FileNotFoundError(f"{path}: no task folders (*/task.json)")
    out = []
    for d in folders:
        task = json.loads((d / "task.json").read_text())
        for sg in task["subgraphs"]:
            folder = d / "subgraphs" / sg.get("folder", sg["subgraph_hash"])
            gm, _ = load_graph(folder, seed=seed)

            def make_inputs(seed: int = seed, folder: Path = folder) -> list:
                return load_graph(folder, seed=seed)[1]

            out.append((task["task_id"], sg.get("variant_id", sg["subgraph_hash"]), gm, make_inputs))
    return out
