"""One subgraph, one candidate: build it, run it, check it, time it (inside the isolated child).

:func:`evaluate_subgraph` makes one ``score_samples`` row. Steps and the cheat each check stops
(the static check of the source runs before, in :func:`curate.score.evaluate.run_candidate`):

1. reference outputs on seed-0 inputs; re-run with the same seed (``nondeterministic_reference``
   flag when they differ) and, for a graph with random ops (``rng`` flag), with another seed:
   outputs that change with the seed are *RNG-dependent*; a trivial reference (constant / near
   zero / empty, :func:`curate.tolerance.trivial_reason`) is ``excluded``;
2. threads / native threads / child processes are counted before the candidate file is imported
   and checked after its import + compile, after the checked calls and after timing
   (:class:`ThreadWatch`: a pool created at import or compile time is caught too);
3. candidate built (compile failure: code 3) and called (exception: code 2);
4. checks: inputs unchanged, no new aliases, no storage shared with an earlier call's outputs,
   outputs on fresh inputs (seed 1) compared again (the worse level kept; a candidate correct at
   t = -5 on seed 0 but only above t = -3 on fresh inputs is ``fresh_input_mismatch``); an output
   identical on the two inputs while the reference's differs is ``input_independent``, an
   all-zero output where the reference is not trivial is ``zero_output`` (both at every t: a
   tolerance that grows with t would otherwise forgive them);
5. RNG-dependent outputs are compared by statistics, not element-wise (:func:`rng_stats_agree`):
   a candidate drawing other random numbers than eager is not failed when its mean, standard
   deviation and share of zeros lie within the spread of two reference runs with different seeds;
6. timing with fresh inputs per call and checked timed outputs
   (:func:`curate.score.clock.measure_accountable`; ``timed_output_mismatch``,
   ``input_independent``), clocked by the parent when ``tick`` is given; with
   ``dynamo_reference`` (default on) the Dynamo-only reference (:func:`dynamo_reference`) is a
   third side of the same trials, so every row has ``speedup`` (vs eager, PassNet's) and
   ``speedup_vs_dynamo``. The ``eager`` candidate and passes that matched nothing keep
   ``speedup`` exactly 1 and are timed against Dynamo-only only (eager is their candidate), with
   the profile stage's cheaper protocol (:func:`_reference_only`).

A violation makes the sample an accuracy failure at every level (``status = violation``).
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import threading
from typing import Any

from curate.score import integrity
from curate.score.spec import Candidate
from curate.tolerance import ERROR_ACCURACY, ERROR_COMPILE, ERROR_RUNTIME

SCORE_CODE_VERSION = 4  # 4: RSS cap (error_class oom), reference_failed rows, chunked checks
FRESH_CHECK_LEVEL = -5
"""A candidate correct at this level (assert_close defaults) on the seed-0 inputs ..."""
FRESH_MARGIN = 2
"""... but passing on fresh inputs only above ``FRESH_CHECK_LEVEL + FRESH_MARGIN`` is a violation."""
RNG_OPS = ("rand", "randn", "randint", "randperm", "bernoulli", "dropout", "normal", "uniform", "multinomial",
           "exponential", "poisson", "rrelu")
"""Substrings of an op name that make a graph an RNG graph (``rng`` flag)."""


ALLOC_FAILURES = ("DefaultCPUAllocator: can't allocate memory", "bad_alloc", "MemoryError", "Cannot allocate memory")
"""Substrings of an error message that make it an allocation failure (error class ``oom``)."""


def error_class_of(message: str | None) -> str:
    """The error class of a failed row from its message: ``oom`` for an allocation failure
    (:data:`ALLOC_FAILURES`: the address-space backstop or the machine refused memory),
    ``exception:<Type>`` for a message ``"<Type>: ..."`` (an exception the row recorded), else
    ``crash``."""
    if message and any(m in message for m in ALLOC_FAILURES):
        return "oom"
    head = (message or "").split(":", 1)[0]
    return f"exception:{head}" if head.isidentifier() and ":" in (message or "") else "crash"


def _load_file(path: str):
    spec = importlib.util.spec_from_file_location(f"candidate_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load candidate file {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _clone(xs):
    import torch

    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def build_candidate(cand: Candidate, gm, example_inputs, cfg: dict | None = None):
    """Returns ``(callable, compile_s, matches, replacements_used)``; raises on compile failure.

    ``replacements_used``: for a pass, the indices in its ``PATTERNS`` of the pairs that matched
    (for the one-replacement-per-task rule); None otherwise. With ``cfg["dispatch_guard"]`` the
    replacement of every matching pair is run once on guarded arguments
    (:func:`curate.score.dispatch_guard.check_replacement`).
    """
    import torch._inductor.config as ic

    from curate.timing import compile_candidate

    cfg = cfg or {}
    ic.compile_threads = 1  # as in the isolated child: Inductor compiles in this thread, no pool
    if cand.kind == "backend":
        fn, s = compile_candidate(gm, _clone(example_inputs), backend=cand.target)
        return fn, s, None, None
    mod = _load_file(cand.target)
    if cand.kind == "module":
        fn, s = compile_candidate(gm, _clone(example_inputs), backend=mod.backend)
        return fn, s, None, None
    from torch.fx.subgraph_rewriter import replace_pattern

    pairs = getattr(mod, "PATTERNS", None) or [(mod.pattern, mod.replacement)]
    clock = integrity.original_perf_counter()
    t0 = clock()
    g2 = copy.deepcopy(gm)
    env = None
    if cfg.get("dispatch_guard"):
        from curate.score.dispatch_guard import node_values

        env = node_values(g2, _clone(example_inputs))
    matches, used = 0, []
    for k, (pat, rep) in enumerate(pairs):
        found = replace_pattern(g2, pat, rep)
        if found:
            used.append(k)
            if env is not None:
                from curate.score.dispatch_guard import check_replacement

                check_replacement(pat, rep, found[0], env)
        matches += len(found)
    g2.recompile()
    return g2, clock() - t0, matches, used


def dynamo_reference(gm, example_inputs):
    """The Dynamo-only reference of ``gm``: ``torch.compile(backend="eager")`` of a deep copy (its
    own code object, so it shares no Dynamo cache entry with the candidate), compiled with one call
    and without ``torch._dynamo.reset()`` (the candidate's compiled code stays valid). Per call it
    costs Dynamo's guard evaluation and wrapper and then runs the captured graph eagerly: the
    harness a ``torch.compile`` backend pays, without any code generation (issue 17).

    Returns:
        The compiled callable.

    Raises:
        curate.timing.CompileError / RunError: the reference failed (the row is flagged
            ``dynamo_reference_failed`` and gets no ``speedup_vs_dynamo``).
    """
    from curate.timing import compile_candidate

    fn, _ = compile_candidate(copy.deepcopy(gm), _clone(example_inputs), backend="eager", reset=False)
    return fn


def _timed_fields(pt) -> dict[str, Any]:
    """Row fields of one :class:`curate.score.clock.AccountableTiming` (ms are per-call medians)."""
    import statistics

    out = {"status": "ok", "speedup": pt.speedup, "eager_ms": statistics.median(pt.eager_ms),
           "candidate_ms": statistics.median(pt.candidate_ms), "stable": pt.stable, "timing_attempt": pt.attempt,
           "inner": pt.inner, "n_checked": pt.n_checked}
    if pt.speedup_ci is not None:
        out["speedup_ci_low"], out["speedup_ci_high"] = pt.speedup_ci
    if pt.dynamo_ms:
        out["dynamo_ms"] = statistics.median(pt.dynamo_ms)
        out["speedup_vs_dynamo"] = pt.speedup_vs_dynamo
        out["speedup_vs_dynamo_ci_low"], out["speedup_vs_dynamo_ci_high"] = pt.speedup_vs_dynamo_ci
    return out


def _reference_only(row: dict, gm, sub, inputs0, cfg: dict, rng: bool, tick) -> None:
    """Eager is the candidate (the ``eager`` candidate, a pass that matched nothing): ``speedup``
    stays exactly 1; with the Dynamo-only reference and timing on, eager and Dynamo-only are timed
    for ``speedup_vs_dynamo``; untimed (``timing: false``) it is exactly 1 too (in place).

    Both sides are ours, so the cheaper protocol of the profile stage
    (:func:`curate.timing.measure_sides`: interleaved trials on one input set, no per-call fresh
    inputs, which only guard against a candidate that caches outputs) times them, on the clock
    :mod:`curate.score.integrity` captured before any candidate was imported; the ratio is of the
    medians with the paired interval of :func:`curate.score.clock.median_ratio_ci`. No parent
    clock: the speedup vs eager is exactly 1 and nothing of the candidate runs while it is timed.
    """
    import statistics

    from curate.score.clock import median_ratio_ci
    from curate.timing import TimingConfig, measure_sides

    if not cfg.get("dynamo_reference", True):
        return
    if not cfg.get("timing", True):
        row["speedup_vs_dynamo"] = 1.0
        return
    tc = _timing_config(cfg, rng, tick is not None)
    try:
        dyn = dynamo_reference(gm, inputs0)
        st = measure_sides({"eager": gm, "dynamo": dyn}, lambda: sub.make_inputs(0),
                           TimingConfig(warmup=tc.warmup, trials=tc.trials, min_trials=tc.trials, min_trial_ms=tc.min_trial_ms,
                                        max_iqr_ratio=tc.max_iqr_ratio, retries=tc.retries),
                           timer=integrity.original_perf_counter())
    except Exception as exc:  # noqa: BLE001 - the reference failed: this row has no vs-Dynamo figure
        row["flags"].append("dynamo_reference_failed")
        row["dynamo_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return
    e, d = st.trials_ms["eager"], st.trials_ms["dynamo"]
    me, md = statistics.median(e), statistics.median(d)
    lo, hi = median_ratio_ci(d, e, tc.n_boot)
    row.update(eager_ms=me, candidate_ms=me, dynamo_ms=md, speedup_vs_dynamo=md / me if me > 0 else math.inf,
               speedup_vs_dynamo_ci_low=lo, speedup_vs_dynamo_ci_high=hi, speedup_ci_low=1.0, speedup_ci_high=1.0,
               stable=st.stable, inner=st.inner["eager"])
    row["flags"].append("reference_timing")


def _is_compile_error(exc: BaseException) -> bool:
    """Compile failure (code 3) vs an error of the compiled code's first run (code 2)."""
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


class ThreadWatch:
    """Threads and processes present now vs a baseline taken before the candidate is imported.

    Counted: Python threads (``threading.enumerate``; tqdm's monitor thread, which Inductor starts
    at compile time, is allowed when it is exactly ``tqdm._monitor.TMonitor``), native threads of
    this process (``/proc/self/task``: threads started with ``_thread`` or from C; torch's own
    pools are started before the baseline), and live child
    processes (``psutil``). Threads or processes that start *and end* between two checks are
    not seen (residual risk; work they did is still checked through the outputs).
    """

    def __init__(self):
        import torch

        # torch's own pools (OpenMP / intra-op) start lazily at the first parallel kernel: start
        # them before the baseline, so that an honest candidate's first softmax is not counted
        x = torch.randn(1 << 18)
        (x.softmax(0) @ x + torch.mm(x[:4096].view(64, 64), x[:4096].view(64, 64)).sum()).item()
        self.py = {t.ident for t in threading.enumerate()}
        self.native = self._native()
        self.procs = self._procs()

    @staticmethod
    def _native() -> int:
        try:
            return len(os.listdir("/proc/self/task"))
        except OSError:  # pragma: no cover - not Linux
            return 0

    @staticmethod
    def _procs() -> set[int]:
        import psutil

        return {c.pid for c in psutil.Process().children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE}

    def check(self, when: str) -> list[str]:
        """Violations (``threads_started`` / ``processes_started``) at checkpoint ``when``."""
        try:
            from tqdm._monitor import TMonitor
        except ImportError:  # pragma: no cover
            TMonitor = None
        new = [t for t in threading.enumerate() if t.ident not in self.py and t.is_alive()]
        allowed = [t for t in new if TMonitor is not None and type(t) is TMonitor]
        bad = [t for t in new if t not in allowed]
        out = []
        if bad:
            out.append(f"threads_started: {len(bad)} Python thread(s) alive {when} ({', '.join(sorted(t.name for t in bad))})")
        native = self._native() - self.native - len(new)
        if native > 0 and not bad:
            out.append(f"threads_started: {native} native thread(s) alive {when}")
        procs = self._procs() - self.procs
        if procs:
            out.append(f"processes_started: {len(procs)} child process(es) alive {when}")
        return out


def is_rng_graph(gm) -> bool:
    """Whether any call node of ``gm`` targets a random op (:data:`RNG_OPS`; a training-mode
    ``dropout`` counts, an eval-mode one is not told apart)."""
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method"):
            name = str(getattr(n.target, "__name__", n.target)).lower()
            if any(op in name for op in RNG_OPS):
                if "dropout" in name and n.kwargs.get("training") is False:
                    continue
                return True
    return False


def rng_stats_agree(actual, ref_a, ref_b, slack: float = 4.0) -> bool:
    """Compare an RNG-dependent output by statistics: shape and dtype equal, and mean, standard
    deviation and share of exact zeros each within ``slack`` times the gap between two reference
    runs with different seeds (``ref_a``, ``ref_b``) plus 2% of the reference's magnitude."""
    import torch

    if not (isinstance(actual, torch.Tensor) and actual.shape == ref_a.shape and actual.dtype == ref_a.dtype):
        return False
    if not actual.is_floating_point():
        return bool(torch.equal(actual.sort().values if actual.dim() else actual, ref_a.sort().values if ref_a.dim() else ref_a))

    def stats(x):
        x = x.detach().double().reshape(-1)
        return [float(x.mean()), float(x.std()) if x.numel() > 1 else 0.0, float((x == 0).double().mean())]

    sa, sr, sb = stats(actual), stats(ref_a), stats(ref_b)
    scale = [abs(sr[1]) + abs(sr[0]), abs(sr[1]), 1.0]
    return all(abs(x - r) <= slack * abs(r - b) + 0.02 * s for x, r, b, s in zip(sa, sr, sb, scale))


def _timing_config(cfg: dict, seed_each_call: bool, parent_clock: bool = False):
    """The accountable timing knobs; under the parent's clock a trial lasts at least
    ``clock_min_trial_ms`` (10 ms) so that pipe / wake-up latency stays small against it."""
    from curate.score.clock import AccountableConfig

    min_ms = float(cfg.get("min_trial_ms", 5.0))
    if parent_clock:
        min_ms = max(min_ms, float(cfg.get("clock_min_trial_ms", 10.0)))
    return AccountableConfig(warmup=int(cfg.get("warmup", 3)), trials=int(cfg.get("trials", 15)),
                             min_trial_ms=min_ms, max_iqr_ratio=float(cfg.get("max_iqr_ratio", 0.2)),
                             retries=int(cfg.get("retries", 2)), check_per_trial=int(cfg.get("check_per_trial", 2)),
                             pool_bytes=int(float(cfg.get("pool_mb", 64)) * (1 << 20)), seed_each_call=seed_each_call,
                             n_boot=int(cfg.get("n_boot", 1000)))


def _output_checks(out1, out_f, ref, ref_f, trivial) -> list[str]:
    """``input_independent`` / ``zero_output`` findings over the two checked calls."""
    import torch

    from curate.score.clock import _leaves, independence_violations

    found = []
    same = independence_violations(out1, out_f, ref, ref_f)
    if same:
        found.append(f"input_independent: outputs {same} identical on seed-0 and fresh inputs; the reference's differ")
    zeros = [i for i, (o, tr) in enumerate(zip(_leaves(out1), trivial))
             if tr is None and isinstance(o, torch.Tensor) and o.numel() and (o.is_floating_point() or o.is_complex())
             and not bool(o.any())]
    if zeros:
        found.append(f"zero_output: outputs {zeros} are all zeros; the reference's are not trivial")
    return found


def evaluate_subgraph(sub, cand: Candidate, cfg: dict, tick=None, phase=None) -> dict[str, Any]:
    """Evaluate one subgraph in the current process; returns a ``score_samples`` row.

    ``cfg`` keys: ``warmup``, ``trials``, ``min_trial_ms``, ``max_iqr_ratio``, ``retries``,
    ``check_per_trial``, ``pool_mb``, ``fresh_seed``, ``timing`` (False: skip timing, for tests),
    ``dispatch_guard``, ``no_match`` (``one`` | ``floor``). ``tick``: the parent-clock hook
    (:mod:`curate.score.clock`); the row then carries ``timing_attempt`` / ``inner`` for the
    parent to reconcile. ``phase("reference")`` is called once the eager reference outputs exist
    (the isolated child tells the parent, :mod:`curate.score.child`). An eager reference that
    raises (or, for the ``eager`` candidate, any failure of its own timing) makes a
    ``reference_failed`` row (``scored = False``, ``error_code`` None): the harness failed, not
    the candidate.
    """
    import torch
    from torch.utils._pytree import tree_flatten

    from curate.score.clock import chunked_comparisons, fast_min_pass_t, measure_accountable
    from curate.tolerance import sample_min_pass_t, trivial_reason

    row: dict[str, Any] = {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": sub.task_id,
                           "subgraph_id": sub.subgraph_id, "violations": [], "flags": [], "retimed": False, "scored": True,
                           "code_version": SCORE_CODE_VERSION}
    try:
        gm = sub.build()
        inputs0 = sub.make_inputs(0)
        rng = is_rng_graph(gm)
        torch.manual_seed(0)
        eager_in = _clone(inputs0)
        ref = gm(*eager_in)
        torch.manual_seed(0)
        ref_again = gm(*_clone(inputs0))
    except Exception as exc:  # noqa: BLE001 - the harness's reference failed: out of every candidate's scores
        return _reference_failed(row, exc)
    if phase is not None:
        phase("reference")
    ref_leaves = tree_flatten(ref)[0]
    if fast_min_pass_t(ref_again, ref) != -10:
        row["flags"].append("nondeterministic_reference")
    rng_dep: set[int] = set()
    ref_other = None
    if rng:
        row["flags"].append("rng")
        torch.manual_seed(12345)
        ref_other = tree_flatten(gm(*_clone(inputs0)))[0]
        rng_dep = {i for i, (a, b) in enumerate(zip(ref_leaves, ref_other))
                   if isinstance(a, torch.Tensor) and not bool(torch.equal(a, b))}
    trivial = [trivial_reason(o) for o in ref_leaves]
    row["out_trivial"] = list(trivial)
    if ref_leaves and all(t is not None for t in trivial):
        row.update(status="excluded", scored=False, error_message=f"trivial reference outputs: {sorted(set(trivial))}")
        return row
    if cand.kind == "eager":
        cs = chunked_comparisons(ref, ref)
        row.update(status="ok", speedup=1.0, min_pass_t=sample_min_pass_t(c.min_pass_t for c in cs),
                   out_dtypes=[c.dtype for c in cs], out_min_pass_t=[c.min_pass_t for c in cs],
                   out_max_abs_diff=[0.0 for _ in cs], stable=True, compile_s=0.0)
        try:
            _reference_only(row, gm, sub, inputs0, cfg, rng, tick)
        except Exception as exc:  # noqa: BLE001 - eager is the reference: its failure is the harness's
            return _reference_failed(row, exc)
        return row
    watch = ThreadWatch()  # before the candidate file is imported
    try:
        fn, compile_s, matches, used = build_candidate(cand, gm, inputs0, cfg)
    except Exception as exc:  # noqa: BLE001 - every failure of the candidate is a result
        code = ERROR_COMPILE if (cand.kind == "pass" or _is_compile_error(exc)) else ERROR_RUNTIME
        if type(exc).__name__ == "DispatchGuardError":
            row["violations"].append(f"dispatch_guard: {exc}")
            row.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None, error_message=str(exc)[:500])
            return row
        row.update(status="compile_failure" if code == ERROR_COMPILE else "runtime_crash", error_code=code,
                   error_message=f"{type(exc).__name__}: {exc}"[:500])
        return row
    row["compile_s"], row["matches"], row["replacements_used"] = compile_s, matches, used
    row["violations"] += watch.check("after import and compile")
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
        torch.manual_seed(0)
        out2 = fn(*_clone(inputs0))
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
    row["violations"] += watch.check("after the checked calls")
    cs, cs_f = chunked_comparisons(out1, ref), chunked_comparisons(out_f, ref_f)
    if rng_dep:  # outputs that change with the seed: statistics, not elements
        o1 = tree_flatten(out1)[0]
        for i in rng_dep:
            if cs[i].min_pass_t is None or cs[i].min_pass_t > FRESH_CHECK_LEVEL:
                ok = rng_stats_agree(o1[i], ref_leaves[i], ref_other[i])
                cs[i].min_pass_t = cs_f[i].min_pass_t = -10 if ok else None
                row["flags"].append(f"rng_stats_{'match' if ok else 'differ'}:{i}")
    else:
        row["violations"] += _output_checks(out1, out_f, ref, ref_f, trivial)
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
        row["flags"].append("no_match")
        if cfg.get("no_match", "one") == "floor":
            row["floor"] = True
            row["flags"].append("no_match_floor")
        _reference_only(row, gm, sub, inputs0, cfg, rng, tick)
    elif cfg.get("timing", True):
        dyn = None
        if cfg.get("dynamo_reference", True):
            try:
                dyn = dynamo_reference(gm, inputs0)
            except Exception as exc:  # noqa: BLE001 - our reference failed, not the candidate
                row["flags"].append("dynamo_reference_failed")
                row["dynamo_error"] = f"{type(exc).__name__}: {exc}"[:300]
        try:
            pt = measure_accountable(gm, fn, sub.make_inputs, _timing_config(cfg, rng, tick is not None), tick=tick, dynamo=dyn)
        except Exception as exc:  # noqa: BLE001
            row.update(status="runtime_crash", error_code=ERROR_RUNTIME, error_message=f"{type(exc).__name__}: {exc}"[:500])
            return row
        if not rng:
            row["violations"] += pt.violations
            before, timed = row["min_pass_t"], pt.checked_min_pass_t
            if before is not None and (timed is None or timed > before + FRESH_MARGIN):
                row["violations"].append(f"timed_output_mismatch: checked calls pass from t={before} before timing, "
                                         f"the worst of {pt.n_checked} checked timed calls from t={timed}")
            row["min_pass_t"] = None if before is None or timed is None else max(before, timed)
        row.update(_timed_fields(pt))
        if pt.n_sets < pt.inner:
            row["flags"].append("input_reuse")
        row["flags"].append("clock_parent" if tick else "clock_child")
    else:
        row.update(status="ok", speedup=1.0, stable=True)
        if cfg.get("dynamo_reference", True):
            row["speedup_vs_dynamo"] = 1.0
    patched = integrity.timers_intact()
    if patched:
        row["violations"].append(f"timer_patched: {patched}")
    row["violations"] += watch.check("after timing")
    if row["violations"]:
        row.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)
    return row


def _reference_failed(row: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """``row`` as a ``reference_failed`` row (in place): not scored, no error code, the error class
    (``oom`` for an allocation failure, else ``exception:<Type>``) and message kept."""

    msg = f"eager reference failed: {type(exc).__name__}: {exc}"[:500]
    cls = "oom" if isinstance(exc, MemoryError) or error_class_of(msg) == "oom" else f"exception:{type(exc).__name__}"
    row.update(status="reference_failed", scored=False, error_code=None, error_message=msg, error_class=cls)
    row["flags"].append("reference_failed")
    return row


def retime_subgraph(sub, cand: Candidate, cfg: dict, tick=None) -> dict[str, Any]:
    """Speedup of one subgraph measured again in this (fresh) process, with the same accountable
    protocol (and the Dynamo-only side when ``dynamo_reference``); returns ``{"speedup",
    "timing_attempt", "inner", "violations"}`` plus the vs-Dynamo fields when timed."""
    from curate.score.clock import measure_accountable

    gm = sub.build()
    inputs0 = sub.make_inputs(0)
    fn, _, _, _ = build_candidate(cand, gm, inputs0, cfg)
    dyn = dynamo_reference(gm, inputs0) if cfg.get("dynamo_reference", True) else None
    pt = measure_accountable(gm, fn, sub.make_inputs, _timing_config(cfg, is_rng_graph(gm), tick is not None), tick=tick,
                             dynamo=dyn)
    f = _timed_fields(pt)
    out = {"speedup": pt.speedup, "timing_attempt": pt.attempt, "inner": pt.inner,
           "violations": [] if is_rng_graph(gm) else pt.violations}
    out.update({k: f[k] for k in ("speedup_vs_dynamo", "speedup_vs_dynamo_ci_low", "speedup_vs_dynamo_ci_high",
                                  "speedup_ci_low", "speedup_ci_high", "dynamo_ms") if k in f})
    return out
