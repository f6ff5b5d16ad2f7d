"""The isolated evaluation child and the parent that clocks it.

Each candidate runs in a ``spawn`` child (address space capped with ``RLIMIT_AS``, one torch
thread, a wall-time limit per subgraph: a timeout or a dead child is a runtime crash of that
subgraph and a new child takes the rest). The child sends ``("start", id)``, then during timing
``("tick", id, (attempt, trial, side, edge, child_ms, child_now_s))`` around every trial, then
``("row", id, row)``. The parent stamps every tick on its own ``time.perf_counter_ns`` as it
arrives and compares the child's clock with its own
(:func:`curate.score_timing.reconcile_clocks`; ``clock_mismatch`` is a violation; the parent's
speedup is kept as ``speedup_parent``). See
:mod:`curate.score_timing` for the design and its residual risk.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path
from typing import Any, Callable

from curate.score_spec import Candidate, load_task_set
from curate.tolerance import ERROR_ACCURACY


def _worker(conn, cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str) -> None:
    import resource

    if cfg.get("inductor_cache"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cfg["inductor_cache"]).resolve())
    cap = int(float(cfg.get("mem_cap_gb", 8)) * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import torch
    import torch._inductor.config as ic

    from curate.score_checks import evaluate_subgraph, retime_subgraph

    torch.set_num_threads(int(cfg.get("threads", 1)))
    ic.compile_threads = 1
    subs = {s.subgraph_id: s for s in load_task_set(tasks_spec, include_trivial)}
    for sid in ids:
        conn.send(("start", sid, None))

        def tick(payload, sid=sid):
            conn.send(("tick", sid, payload))

        if mode == "retime":
            conn.send(("speedup", sid, retime_subgraph(subs[sid], cand, cfg, tick)))
        else:
            conn.send(("row", sid, evaluate_subgraph(subs[sid], cand, cfg, tick)))
    conn.send(("done", None, None))


def apply_parent_clock(result: dict[str, Any], ticks: list, cfg: dict) -> dict[str, Any]:
    """Check the child's clock against the parent's stamps; a disagreement is a ``clock_mismatch``
    violation, the parent's speedup is added as ``speedup_parent`` (``speedup_vs_dynamo_parent`` when
    the Dynamo-only side was timed; and ``clock_rate``). ``result`` is a row or a retime dict; unchanged when it was
    not timed (no ``timing_attempt``)."""
    if result.get("timing_attempt") is None or not ticks:
        return result
    from curate.score_timing import reconcile_clocks

    try:
        rc = reconcile_clocks(ticks, int(result["timing_attempt"]), int(result["inner"]),
                              float(cfg.get("clock_rel_tol", 0.3)), float(cfg.get("clock_abs_ms", 15.0)),
                              float(cfg.get("clock_rate_tol", 0.1)))
    except ValueError as exc:
        result.setdefault("violations", []).append(f"clock_mismatch: {exc}")
        rc = None
    if rc is not None:
        result["speedup_parent"], result["clock_rate"] = rc["speedup"], rc["rate"]
        if "speedup_vs_dynamo" in rc:
            result["speedup_vs_dynamo_parent"] = rc["speedup_vs_dynamo"]
        result.setdefault("violations", []).extend(rc["mismatch"])
    if result.get("violations") and "status" in result:
        result.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)
    return result


def run_children(cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str,
                 log: Callable = print, on_result: Callable | None = None) -> dict[str, Any]:
    """Run ``ids`` in spawned children, restarting after a crash or timeout.

    Returns id -> row / retime dict (parent-clocked) or ``("crash", message)``. ``on_result(id,
    result)`` is called as each arrives (the resume journal).
    """
    ctx = mp.get_context("spawn")
    timeout = float(cfg.get("timeout_s", 300))
    results: dict[str, Any] = {}
    pending = list(ids)
    while pending:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, cand, tasks_spec, include_trivial, pending, cfg, mode), daemon=True)
        proc.start()
        child.close()
        current, ticks = None, []
        deadline = None
        try:
            while True:
                wait = 120 + timeout if current is None else max(0.0, deadline - time.monotonic())
                if not parent.poll(wait):
                    raise TimeoutError(f"no result within {timeout:.0f} s")
                kind, sid, payload = parent.recv()
                now = time.perf_counter_ns()
                if kind == "tick":
                    ticks.append((now, payload))
                elif kind == "start":
                    current, ticks, deadline = sid, [], time.monotonic() + timeout
                elif kind in ("row", "speedup"):
                    res = apply_parent_clock(payload, ticks, cfg)
                    results[sid] = res
                    pending.remove(sid)
                    if on_result:
                        on_result(sid, res)
                    current = None
                elif kind == "done":
                    break
        except (EOFError, TimeoutError, OSError) as exc:
            why = f"timeout after {timeout:.0f} s" if isinstance(exc, TimeoutError) else f"child died (exit code {proc.exitcode})"
            victim = current or pending[0]
            log(f"  {cand.name}: {victim}: {why}")
            results[victim] = ("crash", why)
            pending.remove(victim)
            if on_result:
                on_result(victim, results[victim])
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            parent.close()
    return results
