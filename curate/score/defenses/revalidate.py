"""Re-validation of top candidates on held-out shapes and seeds (kernelbot's secret runs).

A candidate can be correct on exactly what it was shown: the public task set's shapes (a kernel
that hard-codes their sizes, a table of the public inputs). After scoring, each of the
``score.revalidate.top`` best valid candidates (``ranking``; never ``eager``, which runs nothing)
is run again, untimed, in a fresh candidate sandbox, on

* **held-out shapes**: ``score.revalidate.tasks`` (e.g. the release's secret task folders,
  ``docs/full_scale.md``), else ``builtin-heldout`` for the built-in set (the same tasks at
  :data:`curate.score.synthetic_tasks.HELD_OUT_SHAPES`), else the task set's own subgraphs outside
  the scored sample (the other variants of its tasks); none left: the public subgraphs again;
  ``max_subgraphs`` of them, one task after another, chosen at run time;
* **held-out seeds**: the checked calls' inputs come from a seed drawn by
  :class:`random.SystemRandom` at run time (``input_seed``), never 0, the public seed.

Every check of :func:`curate.score.defenses.checks.evaluate_subgraph` before timing applies
(fresh inputs, independence, zero outputs, output types and aliases, threads and processes).
:func:`revalidation_failures` judges the held-out rows against the candidate's own public rows:
a violation anywhere fails; on a task where any public row was correct (status ``ok`` with a
passing level), a held-out row must be correct too, passing no later than the worst level of the
task's correct public rows (at least ``FRESH_CHECK_LEVEL``, -5: ``assert_close``'s defaults, since
a compiler exact on one shape may round differently on another) plus
:data:`curate.score.defenses.checks.FRESH_MARGIN`, the rule of the fresh-input check (a crash, a
compile failure or a wrong answer there fails). Failing one public variant on purpose therefore
does not shield a task: only a task the candidate failed on every public row (b on each) is not
judged again, except for violations. A candidate that fails is ``valid = false`` (ranked last, the floor
reward of :func:`curate.score.reward.score_candidate`), with the failures named.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from curate.score.boundary.child import run_children
from curate.score.config import ScoreRevalidateConfig, run_config
from curate.score.defenses.checks import FRESH_CHECK_LEVEL, FRESH_MARGIN
from curate.score.spec import Candidate, load_task_set


def held_out_set(tasks_spec: str, configured: str | None, public_ids: list[str], k: int,
                 rng: random.Random) -> tuple[str, list[str], bool]:
    """``(task set spec, subgraph ids, held-out subgraphs?)`` of the re-validation (module docstring):
    at most ``k`` ids, one task after another (each task's ids shuffled by ``rng``, then one id per
    task in turn, so ``k`` >= the number of tasks covers every task), in task-set order.

    Raises:
        ValueError: an unknown task set (:func:`curate.score.spec.load_task_set`).
    """
    spec = configured or ("builtin-heldout" if tasks_spec == "builtin" else tasks_spec)
    subs = load_task_set(spec)
    ids = [s.subgraph_id for s in subs]
    shapes = True
    if spec == tasks_spec:
        public = set(public_ids)
        ids = [i for i in ids if i not in public] or [i for i in ids if i in public]
        shapes = any(i not in public for i in ids)
    if len(ids) > k:
        task_of = {s.subgraph_id: s.task_id for s in subs}
        by_task: dict[str, list[str]] = {}
        for i in ids:
            by_task.setdefault(task_of[i], []).append(i)
        queues = [rng.sample(v, len(v)) for _, v in sorted(by_task.items())]
        rng.shuffle(queues)
        keep: set[str] = set()
        while len(keep) < k:
            for q in queues:
                if q and len(keep) < k:
                    keep.add(q.pop())
        ids = [i for i in ids if i in keep]
    return spec, ids, shapes


def _correct_level(rows: list[dict]) -> int | None:
    """The worst passing level over the correct rows of ``rows`` (``ok`` with a level); None when
    no row is correct."""
    levels = [int(r["min_pass_t"]) for r in rows if r.get("status") == "ok" and r.get("min_pass_t") is not None]
    return max(levels) if levels else None


def revalidation_failures(public_rows: list[dict], held_rows: list[dict]) -> list[str]:
    """Named failures of ``held_rows`` (re-validation rows) against ``public_rows`` (the same
    candidate's scored rows), by the rule of the module docstring; empty: passed."""
    scored = [r for r in public_rows if r.get("scored", True)]
    by_task: dict[str, list[dict]] = {}
    for r in scored:
        by_task.setdefault(r["task_id"], []).append(r)
    overall = _correct_level(scored)
    out = []
    for r in held_rows:
        sid, status = r["subgraph_id"], r.get("status")
        if not r.get("scored", True) or status in ("reference_failed", "excluded"):
            continue
        if r.get("violations") or status == "violation":
            out.append(f"revalidation: {sid}: {'; '.join(r.get('violations') or [status])}"[:300])
            continue
        level = _correct_level(by_task[r["task_id"]]) if r["task_id"] in by_task else overall
        if level is None:
            continue
        mp = r.get("min_pass_t") if status == "ok" else None
        if mp is None or mp > max(level, FRESH_CHECK_LEVEL) + FRESH_MARGIN:
            why = f"passes from t={mp}" if status == "ok" and mp is not None else (
                "fails at every level" if status == "ok" else f"{status}: {r.get('error_message') or ''}"[:160])
            out.append(f"revalidation: {sid}: {why} on held-out inputs; its public rows of task {r['task_id']} "
                       f"pass from t={level}")
    return out


def revalidate(cand: Candidate, public_rows: list[dict], tasks_spec: str, cfg: dict, log: Callable = print) -> dict[str, Any]:
    """Re-validate ``cand`` (module docstring) after its scored run ``public_rows`` on
    ``tasks_spec`` with the run configuration ``cfg`` (its ``revalidate`` block).

    Returns:
        ``{"passed", "failures", "task_set", "held_out_subgraphs", "n_subgraphs", "input_seed"}``.
    """
    cfg = run_config(cfg)
    rv = ScoreRevalidateConfig.from_params(cfg["revalidate"], "score.revalidate")
    public_ids = [r["subgraph_id"] for r in public_rows]
    secret = random.SystemRandom()  # which held-out subgraphs, and their inputs' seed: drawn now, never published before
    spec, ids, shapes = held_out_set(tasks_spec, rv.tasks, public_ids, int(rv.max_subgraphs), secret)
    log(f"score: re-validating {cand.name} on {len(ids)} " + ("held-out subgraphs" if shapes else
        "of the subgraphs it was scored on (the task set holds no held-out one)") + f" of {spec}, inputs from a new seed")
    seed = secret.randrange(1 << 20, 1 << 30)  # a seed no public input was drawn with
    run = {**cfg, "timing": False, "input_seed": seed}
    res = run_children(cand, spec, False, ids, run, "eval", log) if ids else {}
    task_of = {s.subgraph_id: s.task_id for s in load_task_set(spec)}
    rows = []
    for sid in ids:
        r = res[sid]
        if isinstance(r, tuple):  # a sandbox failure (child.run_children): a crash, or the harness's reference
            cls = r[2] if len(r) > 2 else "crash"
            r = {"subgraph_id": sid, "task_id": task_of[sid], "status": "reference_failed" if cls.startswith("reference_failed")
                 else "runtime_crash", "error_message": r[1], "violations": []}
        rows.append(r)
    failures = revalidation_failures(public_rows, rows)
    return {"passed": not failures, "failures": failures, "task_set": spec, "held_out_subgraphs": shapes,
            "n_subgraphs": len(ids), "input_seed": seed}
