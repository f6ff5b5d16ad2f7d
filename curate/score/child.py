"""The isolated evaluation child and the parent that clocks it.

Each candidate runs in a ``spawn`` child (one torch thread, a wall-time limit per subgraph: a
timeout or a dead child is a runtime crash of that subgraph and a new child takes the rest).

The memory cap ``mem_cap_gb`` is on *resident* memory, as in :mod:`passnet_common.worker`: the
parent polls the child's RSS (:func:`passnet_common.worker.rss_bytes`, every
:data:`POLL_S` s) and kills a child above the cap (error class ``oom``, the message names the cap
and the RSS measured); the child's address space is capped only as a backstop, at its mappings
after importing torch plus the cap plus 2 GiB (:func:`passnet_common.worker.cap_address_space`).
Address space is not memory: torch and Inductor reserve GiB of virtual memory they never touch,
so an absolute ``RLIMIT_AS`` of the cap failed eager references of 0.8-1.4 GiB RSS.

The child reports ``("phase", id, "reference")`` once the eager reference outputs exist. A child
killed or dead (timeout, ``oom``, crash) before that report, or any failure of the ``eager``
candidate (which runs nothing but the reference), is a failure of the harness's reference, not of
the candidate: ``("crash", message, "reference_failed:<class>")``
(:func:`curate.score.evaluate.run_candidate` makes it a ``reference_failed`` row, out of the scores).

The child sends ``("start", id)``, then during timing
``("tick", id, (attempt, trial, side, edge, child_ms, child_now_s))`` around every trial, then
``("row", id, row)``. The parent stamps every tick on its own ``time.perf_counter_ns`` as it
arrives and compares the child's clock with its own
(:func:`curate.score.clock.reconcile_clocks`; ``clock_mismatch`` is a violation; the parent's
speedup is kept as ``speedup_parent``). See
:mod:`curate.score.clock` for the design and its residual risk.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path
from typing import Any, Callable

from curate.score.spec import Candidate, load_task_set
from curate.tolerance import ERROR_ACCURACY

POLL_S = 0.2
"""Seconds between two RSS readings of the child by the parent."""

def _worker(conn, cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str) -> None:
    if cfg.get("inductor_cache"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cfg["inductor_cache"]).resolve())
    import torch
    import torch._inductor.config as ic

    from curate.score.checks import evaluate_subgraph, retime_subgraph
    from passnet_common.worker import cap_address_space

    cap_address_space(mem_cap_bytes(cfg))  # backstop only; the cap is the parent's RSS watchdog

    from curate.timing import pin_allocator

    pin_allocator()  # eager's page faults must not depend on this child's history (curate.timing)
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
            conn.send(("row", sid, evaluate_subgraph(subs[sid], cand, cfg, tick,
                                                     phase=lambda p, sid=sid: conn.send(("phase", sid, p)))))
    conn.send(("done", None, None))


def mem_cap_bytes(cfg: dict) -> int:
    """The resident-memory cap of a child in bytes (``mem_cap_gb``, GiB; default 8)."""
    return int(float(cfg.get("mem_cap_gb", 8)) * (1 << 30))


def apply_parent_clock(result: dict[str, Any], ticks: list, cfg: dict) -> dict[str, Any]:
    """Check the child's clock against the parent's stamps; a disagreement is a ``clock_mismatch``
    violation, the parent's speedup is added as ``speedup_parent`` (``speedup_vs_dynamo_parent`` when
    the Dynamo-only side was timed; and ``clock_rate``). ``result`` is a row or a retime dict; unchanged when it was
    not timed (no ``timing_attempt``)."""
    if result.get("timing_attempt") is None or not ticks:
        return result
    from curate.score.clock import reconcile_clocks

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
    """Run ``ids`` in spawned children, restarting after a crash, an ``oom`` kill or a timeout.

    Returns id -> row / retime dict (parent-clocked; ``peak_rss_bytes``: the largest child RSS the
    parent read while that subgraph ran) or ``("crash", message, error_class)`` with
    ``error_class`` one of ``timeout``, ``oom`` (RSS above ``mem_cap_gb``), ``crash`` (the child
    died), each prefixed ``reference_failed:`` when the eager reference had not been computed yet
    or the candidate is ``eager`` (module docstring). ``on_result(id, result)`` is called as each
    arrives (the resume journal).
    """
    from passnet_common.worker import rss_bytes

    ctx = mp.get_context("spawn")
    timeout = float(cfg.get("timeout_s", 300))
    cap = mem_cap_bytes(cfg)
    results: dict[str, Any] = {}
    pending = list(ids)
    while pending:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, cand, tasks_spec, include_trivial, pending, cfg, mode), daemon=True)
        proc.start()
        child.close()
        current, ticks, ref_done, peak = None, [], False, 0
        deadline = time.monotonic() + 120 + timeout  # start-up (spawn, imports) before the first subgraph
        why = cls = None
        watched = 0.0  # when the RSS and the deadline were last checked (also while ticks stream in)
        try:
            while True:
                now_s = time.monotonic()
                if now_s - watched >= POLL_S:
                    watched = now_s
                    rss = rss_bytes(proc.pid) if proc.is_alive() else None
                    peak = max(peak, rss or 0)
                    if rss is not None and rss > cap:
                        why, cls = (f"resident memory {rss / 2**30:.2f} GiB above the cap mem_cap_gb = "
                                    f"{cap / 2**30:.2f} GiB; killed"), "oom"
                        break
                    if now_s >= deadline:
                        why, cls = f"timeout after {timeout:.0f} s", "timeout"
                        break
                if not parent.poll(min(POLL_S, max(0.0, deadline - now_s))):
                    continue
                kind, sid, payload = parent.recv()
                now = time.perf_counter_ns()
                if kind == "tick":
                    ticks.append((now, payload))
                elif kind == "phase":
                    ref_done = ref_done or payload == "reference"
                elif kind == "start":
                    current, ticks, ref_done, peak = sid, [], False, rss_bytes(proc.pid) or 0
                    deadline = time.monotonic() + timeout
                elif kind in ("row", "speedup"):
                    res = apply_parent_clock(payload, ticks, cfg)
                    if isinstance(res, dict):
                        res["peak_rss_bytes"] = peak or None
                    results[sid] = res
                    pending.remove(sid)
                    if on_result:
                        on_result(sid, res)
                    current = None
                elif kind == "done":
                    break
        except (EOFError, OSError):
            proc.join(2)
            why, cls = f"child died (exit code {proc.exitcode})", "crash"
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            parent.close()
        if why is not None:
            victim = current or pending[0]
            if cand.kind == "eager" or (mode == "eval" and not ref_done):
                cls = f"reference_failed:{cls}"
            log(f"  {cand.name}: {victim}: {why} ({cls})")
            results[victim] = ("crash", why, cls)
            pending.remove(victim)
            if on_result:
                on_result(victim, results[victim])
    return results
