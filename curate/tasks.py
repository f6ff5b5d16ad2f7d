"""Group long-tail subgraphs into tasks and lay out task folders runnable without PassNet.

Tasks group subgraphs by **structure family**: the ``pattern`` of :func:`curate.decompose.pattern_of`
(the range's op names in order, views dropped: ``conv2d>batch_norm>relu``), i.e. the fusible
pattern a pass would target. Families are taken largest first; each is cut into tasks of at
most ``task_size`` subgraphs (slowest first), and at most ``max_tasks`` tasks are kept
(PassNet's seed scale: 200 tasks of about 10 subgraphs).

Folder layout (``<out>/tasks/<task_id>/``)::

    task.json                 task id, pattern, tolerance t, environment, ``op_modules`` (modules
                              whose import registers custom operators the subgraphs call, from
                              passnet_common.store.OP_NAMESPACE_MODULES; imported by run_task.py), and per subgraph:
                              hash, input/weight metadata, baseline eager / compiled medians,
                              speedup and its bootstrap interval
    run_task.py               standalone loader + runner + timer (curate/task_runner.py)
    subgraphs/<hash>/         graph.json, input_meta.json, weight_meta.json, model.py
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

from passnet_common.io import atomic_write_json


def group_tasks(long_tail: list[dict], task_size: int = 10, max_tasks: int = 200) -> list[dict]:
    """Tasks from long-tail rows (``subgraph_hash``, ``pattern``, ``speedup``, ...).

    Returns:
        ``tasks`` rows: ``task_id`` (``t000``...), ``pattern``, ``subgraph_hashes`` and the
        member rows under ``_members`` (for the folder writer).

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
        members = sorted(fams[p], key=lambda r: (r["speedup"], r["subgraph_hash"]))
        for k in range(0, len(members), task_size):
            if len(tasks) >= max_tasks:
                return tasks
            chunk = members[k:k + task_size]
            sp = [m["speedup"] for m in chunk]
            tasks.append({
                "task_id": f"t{len(tasks):03d}", "pattern": p, "anchor": chunk[0].get("anchor") or "",
                "num_subgraphs": len(chunk), "subgraph_hashes": [m["subgraph_hash"] for m in chunk],
                "model_ids": sorted({mid for m in chunk for mid in (m.get("model_ids") or [])}),
                "min_speedup": min(sp), "max_speedup": max(sp),
                "geomean_speedup": math.exp(sum(math.log(s) for s in sp) / len(sp)),
                "_members": chunk,
            })
    return tasks


def write_task_folders(tasks: list[dict], store_root: Path, out: Path, t: int, env: dict[str, Any]) -> None:
    """Write one folder per task (module docstring); replaces ``out`` atomically per task."""
    from passnet_common.store import op_modules

    runner = Path(__file__).with_name("task_runner.py").read_text()
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for task in tasks:
        d = out / task["task_id"]
        (d / "subgraphs").mkdir(parents=True)
        subs, mods = [], set()
        for m in task["_members"]:
            h = m["subgraph_hash"]
            src = Path(store_root) / h[:2] / h
            shutil.copytree(src, d / "subgraphs" / h)
            needs = op_modules(n["target"] for n in json.loads((src / "graph.json").read_text())["nodes"]
                               if n["op"] == "call_function")
            mods.update(needs)
            subs.append({
                "subgraph_hash": h, "pattern": m["pattern"], "model_ids": m.get("model_ids") or [],
                "input_meta": json.loads((src / "input_meta.json").read_text())["placeholders"],
                "weight_meta": json.loads((src / "weight_meta.json").read_text())["placeholders"],
                "baseline_eager_ms": m["eager_median_ms"], "baseline_compiled_ms": m["compiled_median_ms"],
                "baseline_speedup": m["speedup"], "speedup_ci": [m["ci_low"], m["ci_high"]],
                "min_pass_t": m.get("min_pass_t"), "op_modules": needs,
            })
        (d / "run_task.py").write_text(runner)
        atomic_write_json(d / "task.json", {"task_id": task["task_id"], "pattern": task["pattern"], "tolerance_t": t,
                                            "environment": env, "op_modules": sorted(mods), "subgraphs": subs}, indent=1)
        task["folder"] = str(d)
        task["op_modules"] = sorted(mods)


def load_task_set(path: str | Path, seed: int = 0) -> list[tuple[str, str, Any, Any]]:
    """Every subgraph of a task folder set (``data/curate/tasks``) as
    ``(task_id, subgraph_hash, gm, make_inputs)``; ``make_inputs(seed=seed)`` returns fresh
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
            folder = d / "subgraphs" / sg["subgraph_hash"]
            gm, _ = load_graph(folder, seed=seed)

            def make_inputs(seed: int = seed, folder: Path = folder) -> list:
                return load_graph(folder, seed=seed)[1]

            out.append((task["task_id"], sg["subgraph_hash"], gm, make_inputs))
    return out
