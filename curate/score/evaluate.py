"""The ``score`` command: run a candidate on every subgraph of a task set, classify, score.

Candidates (``name=spec``: ``eager``, ``backend:<name>``, ``module:<file.py>``, ``pass:<file.py>``)
and task sets: :mod:`curate.score.spec`. A subgraph the pass does not change is the eager graph:
speedup exactly 1, flag ``no_match`` (``score.no_match: one``), or PassNet's rule, the failure
factor b at every level (``no_match: floor``). The work is split by concern:

* :mod:`curate.score.boundary.parent` / :mod:`curate.score.boundary.sandbox` — the trust boundary: the candidate
  runs in a sandbox process holding nothing of the evaluator, the references in another, inputs
  and outputs cross through shared memory, the parent's clock is the only one;
* :mod:`curate.score.boundary.child` — one subgraph after another, a dead / timed-out / over-cap sandbox
  replaced (crash = code 2, or ``reference_failed``);
* :mod:`curate.score.defenses.checks` — one subgraph: reference, candidate build / call, the integrity
  checks, RNG subgraphs, threads and processes, the roofline;
* :mod:`curate.score.defenses.clock` — timing with fresh inputs per trial and checked timed outputs;
* :mod:`curate.score.defenses.dispatch_guard` — PassNet's dispatch guard for pass replacements (option);
* :mod:`curate.score.trajectories` — the ``trajectories`` table; :func:`curate.score.reward.score_candidate`, the reward
  function for an RL loop; :mod:`curate.score.scoring` — S_t, ES_t and the aggregate score AS.

This module: :func:`run_candidate` (static check, children, re-timing of speedups above
``retime_above`` in a fresh process, the one-replacement-per-task rule, a resume journal so a
killed run continues) and the CLI (tables, summary, plots, metrics). A candidate file with a
static violation (:func:`curate.score.defenses.integrity.check_source`) is not run: ``rejected``. Samples with a
runtime violation (``status = violation``) score the floor b at every level in both conventions
(:func:`curate.score.scoring.sample_state`) and mark the candidate ``valid = false``; invalid
candidates rank last. When no candidate is valid (all rejected, say) ``metrics/score.json`` is
still written, with ``valid: false``.

Two references (:data:`REFERENCES`): every timed row has ``speedup`` = eager /
candidate (PassNet's figure) and ``speedup_vs_dynamo`` = Dynamo-only / candidate, where the
Dynamo-only side (``torch.compile(backend="eager")``: guards and wrapper, no code generation) is
timed in the same interleaved trials (:mod:`curate.score.defenses.clock`). Each candidate is scored against
both (:func:`reference_rows`); ``rank_reference`` (default ``eager``) picks the ranking named
``ranking``, and both rankings are always written. Every knob is a field of
:class:`curate.score.config.ScoreConfig` (the ``score`` block), defaults included.

Outputs (``--out``): ``score_samples.parquet`` (with the vs-Dynamo columns of
:data:`SAMPLE_COLUMNS`), ``scores.parquet`` (S_t / ES_t vs eager per candidate x convention x
scope x t), ``scores_vs_dynamo.parquet`` (the same vs Dynamo-only), ``trajectories.parquet`` (one
row per candidate x task), ``summary.json`` (with AS and both rankings), ``journal/`` (resume
rows); plus ``plots/score_es_t.csv``, ``plots/score_s_t.csv``, ``plots/score_curves.png`` (vs
eager) and ``metrics/score.json`` (vs-Dynamo keys beside the vs-eager ones:
``ES_t_vs_dynamo@t=..``, ``AS_vs_dynamo``, ``ranking_vs_dynamo``).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import multiprocessing as mp
import os
import random
import time
import typing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from curate.score.boundary.child import run_children
from curate.score.boundary.parent import isolation_level
from curate.score.config import Reference, ScoreConfig, ScoreRevalidateConfig, run_config
from curate.score.defenses.checks import (  # noqa: F401  (re-exported: the public API of the scorer)
    FRESH_CHECK_LEVEL,
    FRESH_MARGIN,
    SCORE_CODE_VERSION,
    UNTRUSTED_KINDS,
    error_class_of,
    evaluate_subgraph,
    retime_subgraph,
)
from curate.score.defenses.revalidate import revalidate
from curate.score.scoring import aggregate_score, parse_graphnet_log, score_table
from curate.score.spec import Candidate, candidate_source, load_task_set, parse_candidate, source_hash, static_violations  # noqa: F401
from curate.score.trajectories import trajectories_table, trajectory_rows
from curate.tolerance import ERROR_ACCURACY, ERROR_RUNTIME, LEVELS
from passnet_common.io import atomic_write_bytes, atomic_write_json, atomic_write_text, write_parquet
from passnet_common.params import load_params
from passnet_common.schema import to_table

RESUME_KEYS = ("warmup", "trials", "min_trial_ms", "max_iqr_ratio", "retries", "check_per_trial", "pool_mb", "fresh_seed",
               "timing", "dispatch_guard", "no_match", "mem_cap_gb", "threads", "retime_above", "dynamo_reference", "n_boot",
               "roofline_factor", "cpu_rel_tol", "cpu_abs_ms")
"""Configuration keys that shape a row (with the candidate's source, the subgraph and the code)."""


def scorer_files() -> list[Path]:
    """Every Python file of the scoring wing (``curate/score/**``, sorted by path) except the
    built-in candidates (``candidates/``: a candidate's source enters the key on its own)."""
    here = Path(__file__).parent
    return sorted(p for p in here.rglob("*.py") if "candidates" not in p.relative_to(here).parts)


def resume_key(cand: Candidate, tasks_spec: str, cfg: dict) -> str:
    """One key for a candidate's journal: its spec and source hash, the task set, the row-shaping
    configuration (:data:`RESUME_KEYS`) and the sha256 of the scorer's own files (:func:`scorer_files`,
    with ``curate/tolerance.py`` and ``passnet_common/worker.py``, whose helpers enforce the memory cap)."""
    here = Path(__file__).parent
    code = "".join(f"{p.relative_to(here).as_posix()}\n{p.read_text()}" for p in scorer_files())
    code += (here.parent / "tolerance.py").read_text()
    code += (here.parents[1] / "passnet_common" / "worker.py").read_text()  # the memory cap's helpers
    key = {"spec": cand.spec, "source": source_hash(candidate_source(cand)), "tasks": tasks_spec,
           "cfg": {k: cfg.get(k) for k in RESUME_KEYS}, "code": source_hash(code), "version": SCORE_CODE_VERSION}
    return source_hash(json.dumps(key, sort_keys=True))[:16]


class Journal:
    """Append-only JSON-lines file of finished rows (one per subgraph), keyed by :func:`resume_key`.

    Each line is flushed and fsynced as it is written; a torn last line (a killed run) is
    ignored on reading. ``path=None``: no journal.
    """

    def __init__(self, path: Path | None):
        self.path = path
        self.done: dict[str, Any] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                try:
                    d = json.loads(line)
                except json.JSONDecodeError:
                    continue
                self.done[d["id"]] = d["result"] if not d.get("crash") else ("crash", d["result"], d.get("class", "crash"))

    def add(self, sid: str, result: Any) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        crash = isinstance(result, tuple)
        with open(self.path, "a") as f:
            line = {"id": sid, "crash": crash, "result": result[1] if crash else result}
            if crash:
                line["class"] = result[2] if len(result) > 2 else "crash"
            f.write(json.dumps(line, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


RETIMED_FIELDS = ("speedup_vs_dynamo", "speedup_vs_dynamo_ci_low", "speedup_vs_dynamo_ci_high", "speedup_ci_low",
                  "speedup_ci_high", "dynamo_ms")
"""Fields a re-timing in a fresh process replaces besides ``speedup``."""

REFERENCES: tuple[str, ...] = typing.get_args(Reference)  # ("eager", "dynamo"): one home, the config's Literal
"""The two references a candidate is scored against: ``eager`` (speedup = eager / candidate,
PassNet's and GraphNet's figure) and ``dynamo`` (speedup = Dynamo-only / candidate, where
Dynamo-only is ``torch.compile(backend="eager")``: guards and wrapper, no code generation)."""


def reference_rows(rows: list[dict], reference: str) -> list[dict]:
    """The rows to score against ``reference`` (:data:`REFERENCES`): unchanged for ``eager``; for
    ``dynamo`` each row's ``speedup`` is its ``speedup_vs_dynamo``. Failed rows keep their error
    codes (a failure is a failure against either reference); a correct row without a vs-Dynamo
    figure (``dynamo_reference_failed``, or ``dynamo_reference: false``) is left out of the
    vs-Dynamo scores (``n_scored`` says how many were scored).

    Raises:
        ValueError: unknown ``reference``.
    """
    if reference not in REFERENCES:
        raise ValueError(f"unknown score reference {reference!r}; known: {list(REFERENCES)}")
    scored = [r for r in rows if r.get("scored", True)]
    if reference == "eager":
        return scored
    out = []
    for r in scored:
        if r.get("error_code") is None and r.get("speedup_vs_dynamo") is None:
            continue
        out.append({**r, "speedup": r.get("speedup_vs_dynamo")})
    return out


def exclude_reference_failures(all_rows: dict[str, list[dict]], trusted: list[str] | None = None) -> list[str]:
    """Leave every subgraph whose eager reference failed out of every candidate's scores alike
    (in place), and charge every other reference failure to the candidate whose child it was.

    ``trusted``: the candidates of kind ``eager`` (they run the reference and nothing else, no
    candidate code in their child). When there is one, only *their* ``reference_failed`` rows (the
    reference could not run under the harness's memory cap or time limit,
    :mod:`curate.score.boundary.child`) exclude a subgraph; a ``reference_failed`` row of another candidate on
    a subgraph whose trusted reference ran is that candidate's ``runtime_crash`` (code 2, flag
    ``reference_ok_in_eager``): its child had loaded candidate code on an earlier subgraph, and code
    that exhausts memory or stalls before the next reference is computed must not be able to strike
    a subgraph from every candidate's set. Without a trusted candidate, any candidate's
    ``reference_failed`` row excludes the subgraph (the only evidence there is; such a run should
    list ``eager``). An excluded subgraph gets, in every candidate, ``status = reference_failed``,
    ``scored = False``, ``error_code = None`` and a flag ``reference_failed``; a row that was
    something else keeps its message and gets the flag ``was:<status>``. ES_t's formula is
    untouched: the subgraph is simply not in the set scored, as an ``excluded``
    (trivial-reference) row is not. Returns the excluded subgraph ids, sorted."""
    judges = [n for n in (trusted or []) if n in all_rows] or list(all_rows)
    bad = sorted({r["subgraph_id"] for n in judges for r in all_rows[n] if r.get("status") == "reference_failed"})
    for rows in all_rows.values():
        for r in rows:
            flags = list(r.get("flags") or [])
            if r["subgraph_id"] not in bad:
                if r.get("status") == "reference_failed":
                    r.update(status="runtime_crash", scored=True, error_code=ERROR_RUNTIME, flags=flags + ["reference_ok_in_eager"])
                continue
            if r.get("status") != "reference_failed":
                flags.append(f"was:{r.get('status')}")
            if "reference_failed" not in flags:
                flags.append("reference_failed")
            r.update(status="reference_failed", scored=False, error_code=None, min_pass_t=None, flags=flags)
    return bad


def one_replacement_per_task(rows: list[dict]) -> None:
    """PassNet's rule: within a task, every rewritten subgraph uses the same replacement. Rows of
    a task whose subgraphs were rewritten by different ``PATTERNS`` entries get a
    ``multi_replacement`` violation (in place)."""
    by_task: dict[str, set] = {}
    for r in rows:
        if r.get("replacements_used"):
            by_task.setdefault(r["task_id"], set()).add(tuple(r["replacements_used"]))
    for r in rows:
        used = by_task.get(r["task_id"], set())
        if len(used) > 1 and r.get("replacements_used"):
            r["violations"] = list(r.get("violations") or []) + [f"multi_replacement: task {r['task_id']} uses replacements {sorted(used)}"]
            r.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)


def sample_ids(ids: list[str], k: int | None, seed: int) -> list[str]:
    """A seeded sample of ``k`` subgraph ids (all when ``k`` is None or >= len), in input order."""
    if k is None or k >= len(ids):
        return list(ids)

    keep = set(random.Random(seed).sample(sorted(ids), int(k)))
    return [i for i in ids if i in keep]


def run_candidate(cand: Candidate, tasks_spec: str, cfg: dict, include_trivial: bool = False, log=print,
                  journal_dir: Path | None = None) -> tuple[list[dict], list[str]]:
    """Evaluate ``cand`` on every subgraph of the task set. Returns ``(rows, rejected_reasons)``;
    a statically rejected candidate has no rows.

    ``journal_dir``: rows are journaled there under :func:`resume_key` as they arrive, and a run
    with the same key takes the journaled rows instead of evaluating again (resumable scoring).
    """
    cfg = run_config(cfg)
    bad = static_violations(cand)
    if bad and cfg["static_check"]:
        return [], [str(v) for v in bad]
    subs = load_task_set(tasks_spec, include_trivial)
    ids = sample_ids([s.subgraph_id for s in subs], cfg["max_subgraphs"], int(cfg["sample_seed"]))
    task_of = {s.subgraph_id: s.task_id for s in subs}
    key = resume_key(cand, tasks_spec, cfg) if journal_dir is not None else None
    ev = Journal(journal_dir / f"{cand.name}.{key}.eval.jsonl" if key else None)
    todo = [i for i in ids if i not in ev.done]
    if len(todo) < len(ids):
        log(f"  {cand.name}: resumed {len(ids) - len(todo)} of {len(ids)} subgraphs from the journal")
    res = {**ev.done, **(run_children(cand, tasks_spec, include_trivial, todo, cfg, "eval", log, ev.add) if todo else {})}
    rows = []
    for sid in ids:
        r = res[sid]
        if isinstance(r, tuple):
            cls = r[2] if len(r) > 2 else "crash"
            r = {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": task_of[sid], "subgraph_id": sid,
                 "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_message": r[1], "error_class": cls,
                 "violations": [], "flags": [], "retimed": False, "scored": True, "code_version": SCORE_CODE_VERSION}
            if cls.startswith("reference_failed:"):
                r.update(status="reference_failed", error_code=None, scored=False, error_class=cls.split(":", 1)[1])
        r = dict(r)
        if r.get("status") in ("runtime_crash", "compile_failure") and not r.get("error_class"):
            r["error_class"] = error_class_of(r.get("error_message"))
        rows.append(r)
    thr = float(cfg["retime_above"])
    suspicious = [r["subgraph_id"] for r in rows if r.get("status") == "ok" and (r.get("speedup") or 0) > thr]
    if suspicious:
        rt = Journal(journal_dir / f"{cand.name}.{key}.retime.jsonl" if key else None)
        todo = [i for i in suspicious if i not in rt.done]
        again = {**rt.done, **(run_children(cand, tasks_spec, include_trivial, todo, cfg, "retime", log, rt.add) if todo else {})}
        for r in rows:
            if r["subgraph_id"] in again:
                new = again[r["subgraph_id"]]
                r["speedup_first"] = r["speedup"]
                r["retimed"] = True
                if isinstance(new, tuple):
                    r.update(status="runtime_crash", error_code=ERROR_RUNTIME, error_message=f"re-timing: {new[1]}", speedup=None,
                             error_class=(new[2] if len(new) > 2 else "crash").split(":")[-1])
                else:
                    r["speedup"] = new["speedup"]
                    for k in RETIMED_FIELDS:
                        if k in new:
                            r[k] = new[k]
                    if new.get("violations"):
                        r["violations"] = list(r.get("violations") or []) + [f"re-timing: {v}" for v in new["violations"]]
                        r.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)
    if cfg["one_replacement_per_task"] and cand.kind == "pass":
        one_replacement_per_task(rows)
    return rows, []


# --- lanes: candidates scored at once ----------------------------------------------------------


def lane_plan(cands: list[Candidate], lanes: int, isolation: str, cores: list[int] | None = None
              ) -> tuple[list[list[Candidate]], str | None]:
    """Candidates per lane (``score.lanes``): each lane is one process pinned to its own core that
    scores its candidates one after another (:func:`run_lanes`), so lanes time side by side, never on
    one core. The trusted candidates (``eager``, ``backend:``) are dealt round-robin over the lanes in
    the params' order; the untrusted ones (``module:`` / ``pass:``) all follow in the last lane, so no
    two of them ever run at once. Returns ``(plan, why)``: ``why`` says why the
    plan has one lane although more were asked (``None`` otherwise). One lane when ``lanes`` is 1, when
    the machine has one usable core, or when ``isolation`` is not ``uid``: a same-uid candidate could
    signal or starve the other lane's processes, which would then charge their own candidate
    (:mod:`curate.score.boundary.parent`). Empty lanes are dropped."""
    cores = sorted(os.sched_getaffinity(0)) if cores is None and hasattr(os, "sched_getaffinity") else (cores or [0])
    n = min(int(lanes), len(cores), len(cands))
    why = (None if n > 1 else "score.lanes is 1" if lanes <= 1 else "one usable core" if len(cores) < 2 else None)
    if n > 1 and isolation != "uid":
        n, why = 1, f"isolation {isolation!r}: lanes > 1 need uid isolation"
    if n <= 1:
        return [list(cands)], why
    untrusted = [c for c in cands if c.kind in UNTRUSTED_KINDS]
    trusted = [c for c in cands if c.kind not in UNTRUSTED_KINDS]
    plan: list[list[Candidate]] = [[] for _ in range(n)]
    for i, c in enumerate(trusted):
        plan[i % n].append(c)
    plan[-1] += untrusted
    return [lane for lane in plan if lane], None


def _run_lane(core: int | None, lane: list[Candidate], tasks: str, run_cfg: dict, journal: Path | None) -> list[tuple]:
    """A lane process: pinned to ``core`` (its sandboxes inherit it), scores ``lane`` in order."""
    if core is not None:
        os.sched_setaffinity(0, {core})
    out = []
    for cand in lane:
        print(f"score: {cand.name} ({cand.spec}) on {tasks}" + (f" [core {core}]" if core is not None else ""), flush=True)
        t_c = time.time()
        rows, bad = run_candidate(cand, tasks, run_cfg, journal_dir=journal)
        out.append((cand.name, rows, bad, round(time.time() - t_c, 1)))
    return out


def run_lanes(plan: list[list[Candidate]], tasks: str, run_cfg: dict, journal: Path | None) -> list[tuple]:
    """``(name, rows, rejected, wall_s)`` of every candidate of ``plan`` (:func:`lane_plan`): one lane in
    this process, several in spawned processes (each pinned to its own core) at once. A lane process
    that dies raises (``BrokenProcessPool``): the journal keeps what its candidates finished."""
    if len(plan) == 1:
        return _run_lane(None, plan[0], tasks, run_cfg, journal)
    cores = sorted(os.sched_getaffinity(0))
    with ProcessPoolExecutor(max_workers=len(plan), mp_context=mp.get_context("spawn")) as pool:
        futs = [pool.submit(_run_lane, cores[i % len(cores)], lane, tasks, run_cfg, journal) for i, lane in enumerate(plan)]
        return [r for f in futs for r in f.result()]


# --- summary, plots, CLI ----------------------------------------------------------------------


def summarize(all_rows: dict[str, list[dict]], rejected: dict[str, list[str]], p: float, b: float,
              conventions: list[str], default_convention: str, rank_reference: str = ScoreConfig.rank_reference,
              revalidation: dict[str, dict] | None = None) -> tuple[list[dict], dict]:
    """``scores`` rows for every candidate against both references and the JSON summary with the
    rankings.

    Every ``scores`` row carries ``reference`` (``eager`` | ``dynamo``, :data:`REFERENCES`). A
    candidate's entry holds its vs-eager curves under the convention names (as before) and its
    vs-Dynamo curves under ``vs_dynamo`` (same shape, plus ``n_scored``).

    ``revalidation``: name -> :func:`curate.score.defenses.revalidate.revalidate` result; a candidate
    that did not pass is ``valid = false`` (entry ``revalidation``).

    Ranking (one per reference: ``ranking_vs_eager``, ``ranking_vs_dynamo``; ``ranking`` is the one
    of ``rank_reference``, default ``eager``): valid candidates first, then by ES_t at t = -5 (the
    ``assert_close`` default tolerance) under the default convention, then by the mean of
    log ES_t over t = -10..5.

    Raises:
        ValueError: unknown ``rank_reference``.
    """
    if rank_reference not in REFERENCES:
        raise ValueError(f"unknown score.rank_reference {rank_reference!r}; known: {list(REFERENCES)}")
    score_rows, summary = [], {"default_convention": default_convention, "conventions": conventions, "p": p, "b": b,
                               "levels": list(LEVELS), "rank_reference": rank_reference, "candidates": {}}
    for name, rows in all_rows.items():
        entry: dict[str, Any] = {"rejected": rejected.get(name, [])}
        scored = [r for r in rows if r.get("scored", True)]
        violations = sum(1 for r in rows if r.get("violations"))
        rv = (revalidation or {}).get(name)
        if rv is not None:
            entry["revalidation"] = rv
        entry.update(valid=not entry["rejected"] and violations == 0 and (rv is None or rv["passed"]),
                     violations=violations, n_samples=len(rows),
                     n_scored=len(scored), n_excluded=len(rows) - len(scored),
                     status_counts={s: sum(1 for r in rows if r.get("status") == s) for s in sorted({r.get("status") for r in rows})})
        for ref in REFERENCES:
            ref_rows = reference_rows(rows, ref)
            target = entry if ref == "eager" else entry.setdefault("vs_dynamo", {"n_scored": len(ref_rows)})
            if not ref_rows:
                continue
            table = score_table(ref_rows, name, p, b, conventions)
            for r in table:
                r["valid"], r["violations"], r["reference"] = entry["valid"], violations, ref
            score_rows.extend(table)
            for conv in conventions:
                s = {r["t"]: r for r in table if r["convention"] == conv and r["scope"] == "set"}
                target[conv] = {"S_t": {str(t): s[t]["S_t"] for t in LEVELS}, "ES_t": {str(t): s[t]["ES_t"] for t in LEVELS},
                                "AS": aggregate_score({t: s[t]["ES_t"] for t in LEVELS})}
        summary["candidates"][name] = entry

    def key(name, ref):
        e = summary["candidates"][name]
        e = e if ref == "eager" else e.get("vs_dynamo", {})
        if default_convention not in e:
            return (0, -math.inf, -math.inf)
        es = e[default_convention]["ES_t"]
        return (1 if summary["candidates"][name]["valid"] else 0, es["-5"], sum(math.log(v) for v in es.values()) / len(es))

    for ref in REFERENCES:
        summary[f"ranking_vs_{ref}"] = sorted(summary["candidates"], key=lambda n: key(n, ref), reverse=True)
    summary["ranking"] = summary[f"ranking_vs_{rank_reference}"]
    return score_rows, summary


def revalidate_top(cands: list[Candidate], all_rows: dict[str, list[dict]], summary: dict, tasks: str, cfg: dict,
                   log=print) -> dict[str, dict]:
    """Re-validate the ``revalidate.top`` best valid candidates of ``summary["ranking"]`` (not
    ``eager``; :func:`curate.score.defenses.revalidate.revalidate`) on held-out shapes and seeds;
    name -> result."""
    top = int(ScoreRevalidateConfig.from_params(run_config(cfg)["revalidate"], "score.revalidate").top)
    by_name = {c.name: c for c in cands}
    names = [n for n in summary["ranking"] if summary["candidates"][n]["valid"] and by_name[n].kind != "eager"
             and all_rows.get(n)][:top]
    out = {}
    for n in names:
        out[n] = revalidate(by_name[n], all_rows[n], tasks, cfg, log)  # it says on what
        for f in out[n]["failures"]:
            log(f"  {f}")
    return out


def write_plots(score_rows: list[dict], plots_dir: Path, convention: str = ScoreConfig().convention) -> None:
    """DVC plot data (vs eager) for the default ``convention`` over the whole set: ``score_es_t.csv`` and
    ``score_s_t.csv`` (column ``t`` plus one column per candidate), and ``score_curves.png``
    (S_t dashed and ES_t vs t, one panel per convention, log scale)."""
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

    rows = [r for r in score_rows if r["scope"] == "set" and r.get("reference", "eager") == "eager"]
    cands = list(dict.fromkeys(r["candidate"] for r in rows))
    plots_dir.mkdir(parents=True, exist_ok=True)
    for key, fname in (("ES_t", "score_es_t.csv"), ("S_t", "score_s_t.csv")):
        val = {(r["candidate"], r["t"]): r[key] for r in rows if r["convention"] == convention}
        lines = ["t," + ",".join(cands)]
        lines += [f"{t}," + ",".join(f"{val[(c, t)]:.6g}" if (c, t) in val else "" for c in cands) for t in LEVELS]
        atomic_write_text(plots_dir / fname, "\n".join(lines) + "\n")
    convs = sorted({r["convention"] for r in rows}) or [convention]  # no scored candidate: empty panels
    fig, axes = plt.subplots(1, len(convs), figsize=(6 * len(convs), 4), squeeze=False)
    for ax, conv in zip(axes[0], convs):
        for cand in sorted({r["candidate"] for r in rows}):
            pts = sorted((r["t"], r["S_t"], r["ES_t"]) for r in rows if r["candidate"] == cand and r["convention"] == conv)
            line, = ax.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=f"{cand} ES_t")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", color=line.get_color(), label=f"{cand} S_t")
        ax.set_yscale("log")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xlabel("tolerance level t")
        ax.set_ylabel("score")
        ax.set_title(f"S_t (dashed) and ES_t, convention={conv}")
        ax.legend(fontsize=7)
    fig.tight_layout()

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    atomic_write_bytes(plots_dir / "score_curves.png", buf.getvalue())


def add_score_args(s: argparse.ArgumentParser) -> None:
    """Declare the ``score`` subcommand's options on parser ``s``."""
    s.add_argument("--tasks", default=None, help="task set: builtin, or a folder from the curate stage")
    s.add_argument("--candidate", action="append", default=None, help="name=spec (repeatable); default: params")
    s.add_argument("--params", default=None, help="params file (default: params.yaml when present)")
    s.add_argument("--out", default="data/score")
    s.add_argument("--plots", default="plots")
    s.add_argument("--metrics", default="metrics/score.json")
    s.add_argument("--log", default=None, help="score a GraphNet benchmark log instead of running anything")
    s.add_argument("--no-resume", action="store_true", help="ignore the journal of an earlier (killed) run in --out")


def score_main(args: argparse.Namespace) -> int:
    """Run the ``score`` subcommand (see module docstring)."""
    # an explicit --params must exist (load_params names it); without the flag, a missing params.yaml means defaults
    block = load_params(args.params or "params.yaml", "score") if args.params or Path("params.yaml").exists() else {}
    conf = ScoreConfig.from_params(block, "score")
    p, b = float(conf.p), float(conf.b)
    conventions = list(conf.conventions)
    default_conv = conf.convention
    if args.log:
        rows = parse_graphnet_log(Path(args.log).read_text())
        table = [r for r in score_table(rows, "log", p, b, conventions) if r["scope"] == "set"]
        for r in table:
            print(f"{r['convention']:9s} t={r['t']:3d}  S_t={r['S_t']:.4f}  ES_t={r['ES_t']:.4f}")
        for conv in conventions:
            print(f"{conv:9s} AS={aggregate_score({r['t']: r['ES_t'] for r in table if r['convention'] == conv}):.6f}")
        return 0
    tasks = args.tasks or conf.tasks
    specs = args.candidate or [f"{k}={v}" for k, v in conf.candidates.items()]
    cands = [parse_candidate(s) for s in specs]
    run_cfg = conf.run_config()
    all_rows, rejected, wall = {}, {}, {}
    t0 = time.time()
    journal = None if args.no_resume else Path(args.out) / "journal"
    plan, lanes_why = lane_plan(cands, int(conf.lanes), isolation_level())
    if lanes_why:
        print(f"score: one lane ({lanes_why})", flush=True)
    for name, rows, bad, secs in run_lanes(plan, tasks, run_cfg, journal):
        wall[name] = secs
        all_rows[name], rejected[name] = rows, bad
        for v in bad:
            print(f"  rejected: {name}: {v}")
    all_rows = {c.name: all_rows[c.name] for c in cands}  # the params' order, whatever lane finished first
    rejected = {c.name: rejected[c.name] for c in cands}
    ref_failed = exclude_reference_failures(all_rows, trusted=[c.name for c in cands if c.kind == "eager"])
    for sid in ref_failed:
        print(f"score: {sid}: eager reference failed under the harness's limits; left out of every candidate's scores")
    score_rows, summary = summarize(all_rows, rejected, p, b, conventions, default_conv, conf.rank_reference)
    revalidation = revalidate_top(cands, all_rows, summary, tasks, run_cfg)
    if revalidation:
        score_rows, summary = summarize(all_rows, rejected, p, b, conventions, default_conv, conf.rank_reference,
                                        revalidation)
    summary.update(tasks=tasks, wall_s=round(time.time() - t0, 1), wall_s_per_candidate=wall, reference_failed=ref_failed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    flat = [r for rows in all_rows.values() for r in rows]
    meta = {"passnet.score_convention": default_conv, "passnet.score_p": str(p), "passnet.score_b": str(b)}
    write_parquet(out / "score_samples.parquet", with_columns(to_table("score_samples", flat, metadata=meta), flat, SAMPLE_COLUMNS))
    for ref, fname in (("eager", "scores.parquet"), ("dynamo", "scores_vs_dynamo.parquet")):
        rows_ref = [r for r in score_rows if r["reference"] == ref]
        write_parquet(out / fname, to_table("scores", rows_ref, metadata={**meta, "passnet.score_reference": ref}))
    atomic_write_json(out / "summary.json", summary, indent=1)

    traj = [t for c in cands for t in trajectory_rows(c.name, c.kind, candidate_source(c), all_rows[c.name],
                                                        rejected[c.name] + revalidation.get(c.name, {}).get("failures", []),
                                                        p, b, default_conv)]
    write_parquet(out / "trajectories.parquet", trajectories_table(traj))
    write_plots(score_rows, Path(args.plots), default_conv)
    metrics = {"default_convention": default_conv, "p": p, "b": b, "tasks": tasks, "ranking": summary["ranking"],
               "rank_reference": summary["rank_reference"], "ranking_vs_eager": summary["ranking_vs_eager"],
               "ranking_vs_dynamo": summary["ranking_vs_dynamo"],
               "n_subgraphs": len(next(iter(all_rows.values()), [])), "n_reference_failed": len(ref_failed),
               "wall_s": summary["wall_s"], "isolation": isolation_level(), "lanes": [[c.name for c in lane] for lane in plan],
               "wall_s_per_candidate": wall, "valid": any(e["valid"] and e["n_scored"] for e in summary["candidates"].values()),
               "candidates": {}}
    for name, e in summary["candidates"].items():
        rs = all_rows[name]
        m = {"valid": e["valid"], "rejected": e["rejected"], "n_scored": e["n_scored"], "status_counts": e["status_counts"],
             "unstable": sum(1 for r in rs if r.get("stable") is False),
             "geomean_speedup_ok": round(math.exp(sum(math.log(r["speedup"]) for r in rs if r.get("status") == "ok")
                                                  / max(1, sum(1 for r in rs if r.get("status") == "ok"))), 4)}
        m.update(vs_dynamo_metrics(rs))
        if "revalidation" in e:
            m["revalidation"] = {k: e["revalidation"][k] for k in ("passed", "task_set", "held_out_subgraphs", "n_subgraphs")}
            m["revalidation"]["failures"] = e["revalidation"]["failures"][:5]
        for conv in conventions:
            if conv in e:
                m[conv] = {f"{k}@t={t}": round(e[conv][k][str(t)], 4) for k in ("S_t", "ES_t") for t in (-5, -3, 0, 1, 2, 3)}
                m[conv]["AS"] = round(e[conv]["AS"], 4)
                d = e.get("vs_dynamo", {}).get(conv)
                if d is not None:
                    m[conv].update({f"ES_t_vs_dynamo@t={t}": round(d["ES_t"][str(t)], 4) for t in (-5, -3, 0, 1, 2, 3)})
                    m[conv]["AS_vs_dynamo"] = round(d["AS"], 4)
        metrics["candidates"][name] = m
    atomic_write_json(args.metrics, metrics, indent=1)
    for name, m in metrics["candidates"].items():
        timed = sum(1 for r in all_rows[name] if r.get("stable") is not None)
        if m["unstable"]:  # valid says the checks passed; this says how far the timings can be read
            print(f"score: caution: {m['unstable']} of {timed} timed rows of {name} are unstable (stable=False: the timing "
                  "protocol's noise gate did not pass after its retries; on a loaded core or a sub-0.1 ms subgraph its speedups are mostly "
                  "noise and harness overhead)")
    for ref in REFERENCES:
        print(f"score: ranking vs {ref} ({default_conv}, ES_t at t=-5): {' > '.join(summary[f'ranking_vs_{ref}'])}")
    for ref in REFERENCES:
        for conv in conventions:
            print(f"-- vs {ref}, convention {conv} (p={p}, b={b}) --")
            print(f"{'candidate':14s}" + "".join(f"  t={t:<4d}" for t in (-5, -3, 0, 1, 2, 3)))
            for name in summary[f"ranking_vs_{ref}"]:
                e = summary["candidates"][name]
                e = e if ref == "eager" else e.get("vs_dynamo", {})
                if conv in e:
                    print(f"{name:14s}" + "".join(f"  {e[conv]['ES_t'][str(t)]:.4f}" for t in (-5, -3, 0, 1, 2, 3)))
    return 0


SAMPLE_COLUMNS = (("speedup_vs_dynamo", "float64"), ("speedup_vs_dynamo_ci_low", "float64"),
                  ("speedup_vs_dynamo_ci_high", "float64"), ("speedup_ci_low", "float64"), ("speedup_ci_high", "float64"),
                  ("dynamo_ms", "float64"),
                  ("error_class", "string"), ("peak_rss_bytes", "int64"), ("isolation", "string"))
"""Columns of ``score_samples.parquet`` beyond the core schema (``passnet_common.schema``): the
vs-Dynamo speedup, both intervals, the Dynamo-only median, the error
class of a failed row (``oom``, ``timeout``, ``crash``, ``exception:<Type>``), the sandboxes'
peak resident memory the parent read while the subgraph ran (bytes) and the candidate sandbox's
isolation (``uid`` | ``dumpable`` | ``trusted``, :func:`curate.score.boundary.parent.isolation_level`;
null where no candidate sandbox ran)."""


def with_columns(table, rows: list[dict], columns=SAMPLE_COLUMNS):
    """``table`` with ``columns`` (``(name, arrow type name)``) appended from ``rows`` (missing: null)."""
    for name, typ in columns:
        if name not in table.column_names:
            table = table.append_column(pa.field(name, getattr(pa, typ)()), pa.array([r.get(name) for r in rows],
                                                                                   type=getattr(pa, typ)()))
    return table


def vs_dynamo_metrics(rows: list[dict]) -> dict[str, Any]:
    """Flat per-candidate figures of the Dynamo-only reference: the geometric-mean vs-Dynamo
    speedup over correct rows (``geomean_speedup_vs_dynamo_ok``), how many timed rows have a
    vs-Dynamo interval (``n_vs_dynamo_timed``) and the share of those whose interval holds 1
    (``vs_dynamo_ci_holds_1_share``: 1 for a candidate that changes nothing, the control)."""
    ok = [r for r in rows if r.get("status") == "ok" and r.get("speedup_vs_dynamo")]
    timed = [r for r in ok if r.get("speedup_vs_dynamo_ci_low") is not None]
    holds = [r for r in timed if r["speedup_vs_dynamo_ci_low"] <= 1.0 <= r["speedup_vs_dynamo_ci_high"]]
    return {"geomean_speedup_vs_dynamo_ok": round(math.exp(sum(math.log(r["speedup_vs_dynamo"]) for r in ok) / len(ok)), 4)
            if ok else None, "n_vs_dynamo_timed": len(timed),
            "vs_dynamo_ci_holds_1_share": round(len(holds) / len(timed), 4) if timed else None}
