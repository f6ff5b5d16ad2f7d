"""The ``score`` command: run a candidate on every subgraph of a task set, classify, score.

A *candidate* is given as ``name=spec`` with spec one of:

* ``eager`` — the reference itself (speedup exactly 1 by definition: the candidate *is* the
  eager callable, so it is not timed against itself; it scores 1 at every t);
* ``backend:<name>`` — a registered ``torch.compile`` backend (``backend:inductor``);
* ``module:<file.py>`` — a Python file exposing ``backend(gm, example_inputs) -> callable``;
* ``pass:<file.py>`` — a Python file exposing ``PATTERNS = [(pattern, replacement), ...]`` (or
  ``pattern`` and ``replacement``) for ``torch.fx.subgraph_rewriter.replace_pattern``; the
  rewritten graph runs eagerly. A subgraph the pass does not change is the eager graph, so its
  speedup is set to exactly 1 and the row is flagged ``no_match`` (timing noise is not a gain).

Per subgraph, inside an isolated child process (``spawn``; address space capped with
``RLIMIT_AS``; a wall-time limit per subgraph, a timeout is a runtime crash):

1. reference outputs on seed-0 inputs (eager); when every reference output is constant / near
   zero / empty the sample is ``excluded`` (not scored; :func:`curate.tolerance.trivial_reason`);
   a sample with only some trivial outputs is scored, with ``out_trivial`` naming them;
2. candidate built (compile failure -> code 3) and called (exception -> code 2);
3. integrity checks (:mod:`curate.integrity`): inputs after the call equal the eager inputs after
   the eager call; outputs alias no input the reference does not alias; a second call's outputs
   do not share storage with the first's (cached outputs); outputs on fresh inputs (seed 1)
   compared again and the worse level kept (passing at t = -5 on seed 0 but only above t = -3 on
   fresh inputs is a violation: cached or input-independent outputs); timer functions intact; no Python threads left running;
4. correctness at every level t = -10..5 (:mod:`curate.tolerance`), per output;
5. timing with the curate protocol (:func:`curate.timing.measure_pair`, interleaved trials,
   median, IQR/median gate) using the ``perf_counter`` captured before any candidate import;
6. a speedup above ``retime_above`` is re-timed in a fresh process and that value kept.

A candidate file with a static violation (:func:`curate.integrity.check_source`) is not run:
the candidate is ``rejected`` with the violations (line numbers) in the summary. Samples with a
runtime violation count as accuracy failures (code 1) at every level and mark the candidate
``valid = false``; invalid candidates rank last.

Outputs (``--out``): ``score_samples.parquet`` (per sample), ``scores.parquet`` (S_t / ES_t per
candidate x convention x scope x t, see :mod:`curate.scoring`), ``summary.json``; plus
``plots/score_es_t.csv``, ``plots/score_s_t.csv``, ``plots/score_curves.png`` and ``metrics/score.json``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import math
import multiprocessing as mp
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate import integrity  # noqa: F401  (captures the original timers first)
from curate.tolerance import ERROR_ACCURACY, ERROR_COMPILE, ERROR_RUNTIME, LEVELS

SCORE_CODE_VERSION = 1
FRESH_CHECK_LEVEL = -5
"""A candidate correct at this level (assert_close defaults) on the seed-0 inputs ..."""
FRESH_MARGIN = 2
"""... but passing on fresh inputs only above ``FRESH_CHECK_LEVEL + FRESH_MARGIN`` is a violation
(cached or input-independent outputs); the margin leaves room for honest rounding differences."""


@dataclass(frozen=True)
class Candidate:
    """A parsed candidate: ``name`` (row label), ``kind`` (eager|backend|module|pass), ``target``."""

    name: str
    kind: str
    target: str

    @property
    def spec(self) -> str:
        return self.kind if self.kind == "eager" else f"{self.kind}:{self.target}"


def parse_candidate(text: str) -> Candidate:
    """Parse ``name=spec`` (or a bare spec, named after it). Raises ValueError on a bad spec or a
    missing file."""
    name, _, spec = text.partition("=") if "=" in text else (text, "", text)
    if spec == "eager":
        return Candidate(name, "eager", "")
    kind, _, target = spec.partition(":")
    if kind not in ("backend", "module", "pass") or not target:
        raise ValueError(f"candidate {text!r}: spec must be eager, backend:<name>, module:<file.py> or pass:<file.py>")
    if kind != "backend" and not Path(target).is_file():
        raise ValueError(f"candidate {name!r}: file {target} not found")
    return Candidate(name, kind, target)


def static_violations(cand: Candidate) -> list[integrity.Violation]:
    """Static check of a module/pass candidate's file (empty for eager/backend names)."""
    if cand.kind in ("module", "pass"):
        return integrity.check_source(Path(cand.target).read_text(), cand.target)
    return []


# --- task sets ------------------------------------------------------------------------------


def load_task_set(spec: str, include_trivial: bool = False) -> list:
    """Subgraphs of a task set: ``builtin`` (:mod:`curate.synthetic_tasks`) or a folder written by
    the ``curate`` stage (loaded by ``curate.tasks.load_task_set`` once that exists).

    Raises:
        ValueError: unknown spec / a folder without a loader.
    """
    if spec == "builtin":
        from curate.synthetic_tasks import builtin_task_set

        return builtin_task_set(include_trivial=include_trivial)
    if not Path(spec).is_dir():
        raise ValueError(f"task set {spec!r}: not 'builtin' and not a folder")
    try:
        from curate.tasks import load_task_set as load  # the curate stage's loader (issue 8)
    except ImportError as exc:
        raise ValueError(f"task set {spec!r}: curate.tasks.load_task_set is not available") from exc
    from curate.synthetic_tasks import TaskSubgraph

    out = []
    for task_id, sub_hash, gm, make_inputs in load(spec, seed=0):
        out.append(TaskSubgraph(str(task_id), str(sub_hash), lambda gm=gm: gm, lambda s, mi=make_inputs: list(mi(seed=s))))
    if not out:
        raise ValueError(f"task set {spec!r} holds no subgraphs")
    return out


# --- the child ------------------------------------------------------------------------------


def _load_file(path: str):
    spec = importlib.util.spec_from_file_location(f"candidate_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load candidate file {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _build_candidate(cand: Candidate, gm, example_inputs):
    """Returns ``(callable, compile_s, matches)``; raises on compile failure."""
    from curate.timing import compile_candidate

    if cand.kind == "backend":
        fn, s = compile_candidate(gm, [t.clone() for t in example_inputs], backend=cand.target)
        return fn, s, None
    mod = _load_file(cand.target)
    if cand.kind == "module":
        fn, s = compile_candidate(gm, [t.clone() for t in example_inputs], backend=mod.backend)
        return fn, s, None
    from torch.fx.subgraph_rewriter import replace_pattern

    pairs = getattr(mod, "PATTERNS", None) or [(mod.pattern, mod.replacement)]
    t0 = integrity.original_perf_counter()()
    g2 = copy.deepcopy(gm)
    matches = 0
    for pat, rep in pairs:
        matches += len(replace_pattern(g2, pat, rep))
    g2.recompile()
    return g2, integrity.original_perf_counter()() - t0, matches


def _is_compile_error(exc: BaseException) -> bool:
    """Compile failure (code 3) vs an error of the compiled code's first run (code 2):
    :class:`curate.timing.CompileError` / Dynamo's ``BackendCompilerFailed`` are compile failures."""
    from curate.timing import CompileError, RunError

    if isinstance(exc, RunError):
        return False
    if isinstance(exc, CompileError):
        return True
    try:
        from torch._dynamo.exc import BackendCompilerFailed
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, BackendCompilerFailed)


def _clone(xs):
    import torch

    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def evaluate_subgraph(sub, cand: Candidate, cfg: dict) -> dict[str, Any]:
    """Evaluate one subgraph (in the current process); returns a ``score_samples`` row.

    ``cfg`` keys: ``warmup``, ``trials``, ``min_trial_ms``, ``max_iqr_ratio``, ``retries``,
    ``fresh_seed``, ``timing`` (False: skip timing, for tests).
    """
    import torch

    from curate.tolerance import compare_outputs, sample_min_pass_t, trivial_reason
    from curate.timing import TimingConfig, measure_pair

    row: dict[str, Any] = {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": sub.task_id,
                           "subgraph_id": sub.subgraph_id, "violations": [], "retimed": False, "scored": True,
                           "code_version": SCORE_CODE_VERSION}
    gm = sub.build()
    inputs0 = sub.make_inputs(0)
    torch.manual_seed(0)
    eager_in = _clone(inputs0)
    ref = gm(*eager_in)
    from torch.utils._pytree import tree_flatten

    ref_leaves = tree_flatten(ref)[0]
    trivial = [trivial_reason(o) for o in ref_leaves]
    row["out_trivial"] = [t for t in trivial]
    if ref_leaves and all(t is not None for t in trivial):
        row.update(status="excluded", scored=False, error_message=f"trivial reference outputs: {sorted(set(trivial))}")
        return row
    if cand.kind == "eager":
        cs = compare_outputs(ref, ref)
        row.update(status="ok", speedup=1.0, min_pass_t=sample_min_pass_t(c.min_pass_t for c in cs),
                   out_dtypes=[c.dtype for c in cs], out_min_pass_t=[c.min_pass_t for c in cs],
                   out_max_abs_diff=[0.0 for _ in cs], stable=True, compile_s=0.0)
        return row
    try:
        fn, compile_s, matches = _build_candidate(cand, gm, inputs0)
    except Exception as exc:  # noqa: BLE001 - every failure of the candidate is a result
        code = ERROR_COMPILE if (cand.kind == "pass" or _is_compile_error(exc)) else ERROR_RUNTIME
        row.update(status="compile_failure" if code == ERROR_COMPILE else "runtime_crash", error_code=code,
                   error_message=f"{type(exc).__name__}: {exc}"[:500])
        return row
    row["compile_s"], row["matches"] = compile_s, matches
    threads_before = threading.active_count()  # after compiling: Inductor starts its own workers there
    try:
        cand_in = _clone(inputs0)
        torch.manual_seed(0)
        out1 = fn(*cand_in)
        changed = integrity.inputs_unchanged(cand_in, eager_in)
        if changed:
            row["violations"].append(f"input_mutation: inputs {changed} differ from eager's after the call")
        ref_alias = set(integrity.aliased_outputs(ref, eager_in))
        extra = [a for a in integrity.aliased_outputs(out1, cand_in) if a not in ref_alias]
        if extra:
            row["violations"].append(f"output_alias: {extra}")
        in2 = _clone(inputs0)
        torch.manual_seed(0)
        out2 = fn(*in2)
        cached = integrity.aliased_outputs(out2, [], earlier_outputs=out1)
        if cached:
            row["violations"].append(f"cached_output: {cached}")
        fresh = sub.make_inputs(int(cfg.get("fresh_seed", 1)))
        torch.manual_seed(0)
        ref_f = gm(*_clone(fresh))
        torch.manual_seed(0)
        out_f = fn(*_clone(fresh))
    except Exception as exc:  # noqa: BLE001
        row.update(status="runtime_crash", error_code=ERROR_RUNTIME, error_message=f"{type(exc).__name__}: {exc}"[:500])
        return row
    cs = compare_outputs(out1, ref)
    cs_f = compare_outputs(out_f, ref_f)
    mp0 = sample_min_pass_t(c.min_pass_t for c in cs)
    mpf = sample_min_pass_t(c.min_pass_t for c in cs_f)
    if mp0 is not None and mp0 <= FRESH_CHECK_LEVEL and (mpf is None or mpf > FRESH_CHECK_LEVEL + FRESH_MARGIN):
        row["violations"].append(f"fresh_input_mismatch: passes from t={mp0} on seed-0 inputs, from t={mpf} on fresh inputs")
    per_out = [None if a is None or b is None else max(a, b) for a, b in zip([c.min_pass_t for c in cs], [c.min_pass_t for c in cs_f])]
    row.update(out_dtypes=[c.dtype for c in cs], out_min_pass_t=per_out,
               out_max_abs_diff=[max(a.max_abs_diff, b.max_abs_diff) for a, b in zip(cs, cs_f)],
               min_pass_t=None if mp0 is None or mpf is None else max(mp0, mpf), fresh_min_pass_t=mpf)
    if cand.kind == "pass" and matches == 0:
        row.update(status="ok", speedup=1.0, stable=True)
        row["flags"] = ["no_match"]
    elif cfg.get("timing", True):
        tc = TimingConfig(warmup=int(cfg.get("warmup", 3)), trials=int(cfg.get("trials", 15)),
                          min_trial_ms=float(cfg.get("min_trial_ms", 2.0)), max_iqr_ratio=float(cfg.get("max_iqr_ratio", 0.2)),
                          retries=int(cfg.get("retries", 2)))
        try:
            pt = measure_pair(gm, fn, lambda: _clone(inputs0), tc, timer=integrity.original_perf_counter())
        except Exception as exc:  # noqa: BLE001
            row.update(status="runtime_crash", error_code=ERROR_RUNTIME, error_message=f"{type(exc).__name__}: {exc}"[:500])
            return row
        eager_med = sorted(pt.eager_ms)[len(pt.eager_ms) // 2]
        cand_med = sorted(pt.candidate_ms)[len(pt.candidate_ms) // 2]
        row.update(status="ok", speedup=pt.speedup, eager_ms=eager_med, candidate_ms=cand_med, stable=pt.stable)
    else:
        row.update(status="ok", speedup=1.0, stable=True)
    patched = integrity.timers_intact()
    if patched:
        row["violations"].append(f"timer_patched: {patched}")
    if threading.active_count() > threads_before:
        row["violations"].append(f"threads_started: {threading.active_count() - threads_before}")
    if row["violations"]:
        row.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)
    return row


def retime_subgraph(sub, cand: Candidate, cfg: dict) -> float:
    """Speedup of one subgraph measured in this (fresh) process; used for suspicious speedups."""
    from curate.timing import TimingConfig, measure_pair

    gm = sub.build()
    inputs0 = sub.make_inputs(0)
    fn, _, _ = _build_candidate(cand, gm, inputs0)
    tc = TimingConfig(warmup=int(cfg.get("warmup", 3)), trials=int(cfg.get("trials", 15)),
                      min_trial_ms=float(cfg.get("min_trial_ms", 2.0)), retries=int(cfg.get("retries", 2)))
    return measure_pair(gm, fn, lambda: _clone(inputs0), tc, timer=integrity.original_perf_counter()).speedup


def _worker(conn, cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str) -> None:
    import resource

    if cfg.get("inductor_cache"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cfg["inductor_cache"]).resolve())
    cap = int(float(cfg.get("mem_cap_gb", 8)) * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import torch
    import torch._inductor.config as ic

    torch.set_num_threads(int(cfg.get("threads", 1)))
    ic.compile_threads = 1
    subs = {s.subgraph_id: s for s in load_task_set(tasks_spec, include_trivial)}
    for sid in ids:
        conn.send(("start", sid, None))
        if mode == "retime":
            conn.send(("speedup", sid, retime_subgraph(subs[sid], cand, cfg)))
        else:
            conn.send(("row", sid, evaluate_subgraph(subs[sid], cand, cfg)))
    conn.send(("done", None, None))


def _run_children(cand: Candidate, tasks_spec: str, include_trivial: bool, ids: list[str], cfg: dict, mode: str,
                  log=print) -> dict[str, Any]:
    """Run ``ids`` in spawned children, restarting after a crash or timeout; id -> result or
    ``("crash", message)``."""
    ctx = mp.get_context("spawn")
    timeout = float(cfg.get("timeout_s", 300))
    results: dict[str, Any] = {}
    pending = list(ids)
    while pending:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, cand, tasks_spec, include_trivial, pending, cfg, mode), daemon=True)
        proc.start()
        child.close()
        current = None
        try:
            while True:
                if not parent.poll(timeout + (120 if current is None else 0)):
                    raise TimeoutError(f"no result within {timeout:.0f} s")
                kind, sid, payload = parent.recv()
                if kind == "start":
                    current = sid
                elif kind in ("row", "speedup"):
                    results[sid] = payload
                    pending.remove(sid)
                    current = None
                elif kind == "done":
                    break
        except (EOFError, TimeoutError, OSError) as exc:
            why = f"timeout after {timeout:.0f} s" if isinstance(exc, TimeoutError) else f"child died (exit code {proc.exitcode})"
            victim = current or pending[0]
            log(f"  {cand.name}: {victim}: {why}")
            results[victim] = ("crash", why)
            pending.remove(victim)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            parent.close()
    return results


def sample_ids(ids: list[str], k: int | None, seed: int) -> list[str]:
    """A seeded sample of ``k`` subgraph ids (all when ``k`` is None or >= len), in input order."""
    if k is None or k >= len(ids):
        return list(ids)
    import random

    keep = set(random.Random(seed).sample(sorted(ids), int(k)))
    return [i for i in ids if i in keep]


def run_candidate(cand: Candidate, tasks_spec: str, cfg: dict, include_trivial: bool = False, log=print) -> tuple[list[dict], list[str]]:
    """Evaluate ``cand`` on every subgraph of the task set. Returns ``(rows, rejected_reasons)``;
    a statically rejected candidate has no rows."""
    bad = static_violations(cand)
    if bad and cfg.get("static_check", True):
        return [], [str(v) for v in bad]
    subs = load_task_set(tasks_spec, include_trivial)
    ids = sample_ids([s.subgraph_id for s in subs], cfg.get("max_subgraphs"), int(cfg.get("sample_seed", 0)))
    task_of = {s.subgraph_id: s.task_id for s in subs}
    res = _run_children(cand, tasks_spec, include_trivial, ids, cfg, "eval", log)
    rows = []
    for sid in ids:
        r = res[sid]
        if isinstance(r, tuple):
            r = {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": task_of[sid], "subgraph_id": sid,
                 "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_message": r[1], "violations": [],
                 "retimed": False, "scored": True, "code_version": SCORE_CODE_VERSION}
        rows.append(r)
    thr = float(cfg.get("retime_above", 10.0))
    suspicious = [r["subgraph_id"] for r in rows if r.get("status") == "ok" and (r.get("speedup") or 0) > thr]
    if suspicious:
        again = _run_children(cand, tasks_spec, include_trivial, suspicious, cfg, "retime", log)
        for r in rows:
            if r["subgraph_id"] in again:
                new = again[r["subgraph_id"]]
                r["speedup_first"] = r["speedup"]
                r["retimed"] = True
                if isinstance(new, tuple):
                    r.update(status="runtime_crash", error_code=ERROR_RUNTIME, error_message=f"re-timing: {new[1]}", speedup=None)
                else:
                    r["speedup"] = new
    return rows, []


# --- summary, plots, CLI ----------------------------------------------------------------------


def summarize(all_rows: dict[str, list[dict]], rejected: dict[str, list[str]], p: float, b: float,
              conventions: list[str], default_convention: str) -> tuple[list[dict], dict]:
    """``scores`` rows for every candidate and the JSON summary with the ranking.

    Ranking: valid candidates first, then by ES_t at t = -5 (the ``assert_close`` default
    tolerance) under the default convention, then by the mean of ES_t over t = -10..5.
    """
    from curate.scoring import score_table

    score_rows, summary = [], {"default_convention": default_convention, "conventions": conventions, "p": p, "b": b,
                               "levels": list(LEVELS), "candidates": {}}
    for name, rows in all_rows.items():
        entry: dict[str, Any] = {"rejected": rejected.get(name, [])}
        scored = [r for r in rows if r.get("scored", True)]
        violations = sum(1 for r in rows if r.get("violations"))
        entry.update(valid=not entry["rejected"] and violations == 0, violations=violations, n_samples=len(rows),
                     n_scored=len(scored), n_excluded=len(rows) - len(scored),
                     status_counts={s: sum(1 for r in rows if r.get("status") == s) for s in sorted({r.get("status") for r in rows})})
        if scored:
            table = score_table(scored, name, p, b, conventions)
            for r in table:
                r["valid"], r["violations"] = entry["valid"], violations
            score_rows.extend(table)
            for conv in conventions:
                s = {r["t"]: r for r in table if r["convention"] == conv and r["scope"] == "set"}
                entry[conv] = {"S_t": {str(t): s[t]["S_t"] for t in LEVELS}, "ES_t": {str(t): s[t]["ES_t"] for t in LEVELS}}
        summary["candidates"][name] = entry

    def key(name):
        e = summary["candidates"][name]
        if default_convention not in e:
            return (0, -math.inf, -math.inf)
        es = e[default_convention]["ES_t"]
        return (1 if e["valid"] else 0, es["-5"], sum(math.log(v) for v in es.values()) / len(es))

    summary["ranking"] = sorted(summary["candidates"], key=key, reverse=True)
    return score_rows, summary


def write_plots(score_rows: list[dict], plots_dir: Path, convention: str = "paper") -> None:
    """DVC plot data for the default ``convention`` over the whole set: ``score_es_t.csv`` and
    ``score_s_t.csv`` (column ``t`` plus one column per candidate), and ``score_curves.png``
    (S_t dashed and ES_t vs t, one panel per convention, log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from passnet_common.io import atomic_write_bytes, atomic_write_text

    rows = [r for r in score_rows if r["scope"] == "set"]
    cands = list(dict.fromkeys(r["candidate"] for r in rows))
    plots_dir.mkdir(parents=True, exist_ok=True)
    for key, fname in (("ES_t", "score_es_t.csv"), ("S_t", "score_s_t.csv")):
        val = {(r["candidate"], r["t"]): r[key] for r in rows if r["convention"] == convention}
        lines = ["t," + ",".join(cands)]
        lines += [f"{t}," + ",".join(f"{val[(c, t)]:.6g}" if (c, t) in val else "" for c in cands) for t in LEVELS]
        atomic_write_text(plots_dir / fname, "\n".join(lines) + "\n")
    convs = sorted({r["convention"] for r in rows})
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
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    atomic_write_bytes(plots_dir / "score_curves.png", buf.getvalue())


def add_score_parser(sub) -> None:
    """Register the ``score`` subcommand on an argparse subparsers object."""
    s = sub.add_parser("score", help="score candidates (S_t / ES_t) on a task set")
    s.add_argument("--tasks", default=None, help="task set: builtin, or a folder from the curate stage")
    s.add_argument("--candidate", action="append", default=None, help="name=spec (repeatable); default: params")
    s.add_argument("--params", default="params.yaml")
    s.add_argument("--out", default="data/score")
    s.add_argument("--plots", default="plots")
    s.add_argument("--metrics", default="metrics/score.json")
    s.add_argument("--log", default=None, help="score a GraphNet benchmark log instead of running anything")


def score_main(args: argparse.Namespace) -> int:
    """Run the ``score`` subcommand (see module docstring)."""
    from passnet_common.io import atomic_write_json, write_parquet
    from passnet_common.params import load_params
    from passnet_common.schema import to_table

    cfg = load_params(args.params, "score") if Path(args.params).exists() else {}
    p, b = float(cfg.get("p", 0.1)), float(cfg.get("b", 0.1))
    conventions = list(cfg.get("conventions", ["paper", "graphnet"]))
    default_conv = cfg.get("convention", "paper")
    if args.log:
        from curate.scoring import parse_graphnet_log, score_table

        rows = parse_graphnet_log(Path(args.log).read_text())
        for r in score_table(rows, "log", p, b, conventions):
            if r["scope"] == "set":
                print(f"{r['convention']:9s} t={r['t']:3d}  S_t={r['S_t']:.4f}  ES_t={r['ES_t']:.4f}")
        return 0
    tasks = args.tasks or cfg.get("tasks") or "builtin"
    specs = args.candidate or [f"{k}={v}" for k, v in (cfg.get("candidates") or {"inductor": "backend:inductor"}).items()]
    cands = [parse_candidate(s) for s in specs]
    run_cfg = {**cfg.get("timing", {}), **{k: cfg[k] for k in ("timeout_s", "mem_cap_gb", "retime_above", "threads", "max_subgraphs", "sample_seed",
                                                  "inductor_cache") if k in cfg}}
    all_rows, rejected, wall = {}, {}, {}
    t0 = time.time()
    for cand in cands:
        print(f"score: {cand.name} ({cand.spec}) on {tasks}", flush=True)
        t_c = time.time()
        rows, bad = run_candidate(cand, tasks, run_cfg)
        wall[cand.name] = round(time.time() - t_c, 1)
        all_rows[cand.name], rejected[cand.name] = rows, bad
        for v in bad:
            print(f"  rejected: {v}")
    score_rows, summary = summarize(all_rows, rejected, p, b, conventions, default_conv)
    summary.update(tasks=tasks, wall_s=round(time.time() - t0, 1), wall_s_per_candidate=wall)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    flat = [r for rows in all_rows.values() for r in rows]
    meta = {"passnet.score_convention": default_conv, "passnet.score_p": str(p), "passnet.score_b": str(b)}
    write_parquet(out / "score_samples.parquet", to_table("score_samples", flat, metadata=meta))
    write_parquet(out / "scores.parquet", to_table("scores", score_rows, metadata=meta))
    atomic_write_json(out / "summary.json", summary, indent=1)
    write_plots(score_rows, Path(args.plots), default_conv)
    metrics = {"default_convention": default_conv, "p": p, "b": b, "tasks": tasks, "ranking": summary["ranking"],
               "n_subgraphs": len(next(iter(all_rows.values()), [])), "wall_s": summary["wall_s"],
               "wall_s_per_candidate": wall, "candidates": {}}
    for name, e in summary["candidates"].items():
        rs = all_rows[name]
        m = {"valid": e["valid"], "rejected": e["rejected"], "n_scored": e["n_scored"], "status_counts": e["status_counts"],
             "unstable": sum(1 for r in rs if r.get("stable") is False),
             "geomean_speedup_ok": round(math.exp(sum(math.log(r["speedup"]) for r in rs if r.get("status") == "ok")
                                                  / max(1, sum(1 for r in rs if r.get("status") == "ok"))), 4)}
        for conv in conventions:
            if conv in e:
                m[conv] = {f"{k}@t={t}": round(e[conv][k][str(t)], 4) for k in ("S_t", "ES_t") for t in (-5, -3, 0, 1, 2, 3)}
        metrics["candidates"][name] = m
    atomic_write_json(args.metrics, metrics, indent=1)
    print(f"score: ranking ({default_conv}, ES_t at t=-5): {' > '.join(summary['ranking'])}")
    for conv in conventions:
        print(f"-- convention {conv} (p={p}, b={b}) --")
        print(f"{'candidate':14s}" + "".join(f"  t={t:<4d}" for t in (-5, -3, 0, 1, 2, 3)))
        for name in summary["ranking"]:
            e = summary["candidates"][name]
            if conv in e:
                print(f"{name:14s}" + "".join(f"  {e[conv]['ES_t'][str(t)]:.4f}" for t in (-5, -3, 0, 1, 2, 3)))
    return 0
