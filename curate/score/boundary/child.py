"""Running a candidate's subgraphs across the trust boundary, one failure at a time.

:func:`run_children` evaluates each subgraph in this (the parent) process with
:func:`curate.score.defenses.checks.evaluate_subgraph`, which drives the two sandboxes of
:mod:`curate.score.boundary.parent` (reference and candidate; run by :mod:`curate.score.boundary.sandbox`). A
sandbox that dies, runs past the subgraph's ``timeout_s`` or above the resident-memory cap
``mem_cap_gb`` (the parent reads its RSS every 0.2 s while it waits, as in
:mod:`passnet_common.worker`) is killed and replaced for the next subgraph; the subgraph gets
``("crash", message, error_class)`` with ``error_class`` one of ``timeout``, ``oom``, ``crash``.

A failure of the **reference** or the **Dynamo-only** sandbox (the harness's), or of any sandbox
before the eager reference outputs exist (``phase("reference")``), while the sandbox of an
untrusted candidate (``module:`` / ``pass:``) of this run is started, and that failure is one
only a signal or a process of the candidate explains (the harness's sandbox died (``crash``), was
found stopped (state ``T``), or the candidate had processes outside its sandbox), is **charged to
that candidate** when the reference runs again once the candidate's processes are killed
(:func:`reference_runs_alone`): a ``reference_disturbed`` violation row, the floor b at every t.
A **timeout** of the reference or Dynamo-only sandbox once the eager reference outputs exist (the
candidate's code has run on the subgraph, and its requests spent part of the same time limit) is
charged to the candidate the same way, as the crash it is when the limit runs out in its own
request: a ``runtime_crash`` row, ``error_class`` ``timeout``, flag ``deadline_spent``
(:func:`deadline_row`), so a candidate cannot spend the limit on a subgraph it would lose on and
leave it to run out in a trusted sandbox (``attack_deadline_strike.py``). (A timeout before the
reference outputs exist, or a memory-cap kill of a trusted sandbox, is the load's or the graph's.)
Otherwise, and for any failure of the
``eager`` candidate, it is the harness's reference failing, not the candidate: ``error_class``
is prefixed ``reference_failed:`` (:func:`curate.score.evaluate.run_candidate` makes it a
``reference_failed`` row, out of the scores). The candidate sandbox is closed (with every process
it left) when :func:`run_children` returns, so no candidate's code is alive while the next
candidate's references run.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from curate.score.boundary.parent import (  # noqa: F401  (mem_cap_bytes: public here before)
    SandboxFailure,
    candidate_leftovers,
    candidate_started,
    close_candidate,
    isolation_level,
    mem_cap_bytes,
)
from curate.score.defenses.checks import SCORE_CODE_VERSION, UNTRUSTED_KINDS, candidate_key, evaluate_subgraph, retime_subgraph
from curate.score.spec import Candidate, load_task_set, parse_candidate
from curate.tolerance import ERROR_ACCURACY, ERROR_RUNTIME

POLL_S = 0.2
"""Seconds between two RSS readings of a sandbox by the parent (:data:`curate.score.boundary.parent.POLL_S`)."""


PARENT_THREADS = 1
"""torch threads of the parent (this process) while it drives the sandboxes: its work between two
requests is small (fresh input sets, slot copies, chunked checks), and a parallel region on a
loaded machine waits for a descheduled worker thread (a 256 KiB slot copy: 2-4 ms with 2 threads
against 0.03 ms with one, at load 2-3 on the 2-core machine); the cores are left to the sandbox
being timed. Restored when :func:`run_children` returns."""


def run_children(cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str,
                 log: Callable = print, on_result: Callable | None = None) -> dict[str, Any]:
    """Evaluate (``mode="eval"``) or re-time in a fresh candidate sandbox (``mode="retime"``) the
    subgraphs ``ids``. Returns id -> row / retime dict (``peak_rss_bytes``: the largest sandbox RSS
    the parent read) or ``("crash", message, error_class)`` (module docstring). ``on_result(id,
    result)`` is called as each arrives (the resume journal)."""
    subs = {s.subgraph_id: s for s in load_task_set(tasks_spec, include_trivial)}
    results: dict[str, Any] = {}
    n_threads = torch.get_num_threads()
    torch.set_num_threads(PARENT_THREADS)
    try:
        _run(cand, subs, ids, cfg, mode, log, on_result, results)
    finally:
        torch.set_num_threads(n_threads)
        if cand.kind in UNTRUSTED_KINDS:
            close_candidate(cfg)  # the next candidate's references run with nothing of this one alive
    return results


def reference_runs_alone(sub, cfg: dict) -> bool:
    """Whether the eager reference of ``sub`` computes its outputs when no untrusted process is
    alive (the candidate sandbox closed first): a fresh reference sandbox, untimed."""
    try:
        row = evaluate_subgraph(sub, parse_candidate("eager=eager"), {**cfg, "timing": False})
    except SandboxFailure:
        return False
    return row.get("status") != "reference_failed"


def disturbed_row(cand: Candidate, sub, exc: SandboxFailure) -> dict[str, Any]:
    """The row of a subgraph whose reference (or Dynamo-only) sandbox failed while the candidate's
    code was alive and that ran again once it was gone: ``reference_disturbed``, a violation (the
    floor b at every t): the candidate's code killed, stopped or starved the harness's process."""
    return {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": sub.task_id, "subgraph_id": sub.subgraph_id,
            "status": "violation", "error_code": ERROR_ACCURACY, "min_pass_t": None, "scored": True, "retimed": False,
            "speedup": None,
            "violations": [f"reference_disturbed: the {exc.role} sandbox failed ({exc.cls}: {exc}) while the candidate's "
                           "code was alive, and ran once it was gone"],
            "flags": ["reference_disturbed"], "error_message": str(exc)[:500], "error_class": exc.cls,
            "isolation": isolation_level(), "code_version": SCORE_CODE_VERSION}


def deadline_row(cand: Candidate, sub, exc: SandboxFailure) -> dict[str, Any]:
    """The row of a subgraph whose time limit ran out in a trusted (reference or Dynamo-only) sandbox
    after the candidate's code had run on it, where the reference runs alone once the candidate is
    gone: the candidate's ``runtime_crash`` (``error_class`` ``timeout``, flag ``deadline_spent``),
    scored as when the limit runs out in the candidate's own request (a crash, code 2). The time the
    candidate's requests took is part of the limit: a candidate that spends it on a subgraph it would
    lose on cannot make the subgraph a ``reference_failed`` row, out of its scores."""
    return {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": sub.task_id, "subgraph_id": sub.subgraph_id,
            "status": "runtime_crash", "error_code": ERROR_RUNTIME, "min_pass_t": None, "scored": True, "retimed": False,
            "speedup": None, "violations": [], "flags": ["deadline_spent"],
            "error_message": f"deadline_spent: the {exc.role} sandbox ran past the subgraph's time limit ({exc}) after the "
                             "candidate's code had run on it; the reference runs alone"[:500],
            "error_class": "timeout", "isolation": isolation_level(), "code_version": SCORE_CODE_VERSION}


def _run(cand: Candidate, subs: dict, ids: list[str], cfg: dict, mode: str, log: Callable, on_result: Callable | None,
         results: dict[str, Any]) -> None:
    for sid in ids:
        state = {"ref_done": False}

        def phase(p, state=state):
            state["ref_done"] = state["ref_done"] or p == "reference"

        try:
            if mode == "retime":
                res: Any = retime_subgraph(subs[sid], cand, cfg)
            else:
                res = evaluate_subgraph(subs[sid], cand, cfg, phase=phase)
        except SandboxFailure as exc:
            cls = exc.cls
            harness = exc.role in ("reference", "dynamo") or (mode == "eval" and not state["ref_done"])
            who = candidate_key(cand, cfg, mode)
            if cand.kind in UNTRUSTED_KINDS and harness and candidate_started(cfg, who):
                # a trusted process died, was stopped, or timed out while the candidate had processes
                # outside its own: what only a signal or a daemon does (a timeout alone is the load's)
                touched = exc.cls == "crash" or exc.state in ("T", "t") or bool(candidate_leftovers(cfg))
                # the subgraph's time limit ran out in a trusted sandbox after the candidate's code had run on it:
                # the time the candidate's requests took is part of the same limit
                spent = exc.cls == "timeout" and exc.role in ("reference", "dynamo") and mode == "eval" and state["ref_done"]
                close_candidate(cfg)  # kill the candidate's processes, then ask the reference again
                if (touched or spent) and reference_runs_alone(subs[sid], cfg):
                    log(f"  {cand.name}: {sid}: {'reference_disturbed' if touched else 'deadline_spent'} ({exc.role} sandbox: {exc})")
                    res = disturbed_row(cand, subs[sid], exc) if touched else deadline_row(cand, subs[sid], exc)
                    results[sid] = res
                    if on_result:
                        on_result(sid, res)
                    continue
            if cand.kind == "eager" or harness:
                cls = f"reference_failed:{cls}"
            why = f"{exc.role} sandbox: {exc}"
            log(f"  {cand.name}: {sid}: {why} ({cls})")
            res = ("crash", why, cls)
        results[sid] = res
        if on_result:
            on_result(sid, res)
