"""Timing of a scoring candidate in which every timed call is accountable, and the parent's clock.

Why not :func:`curate.timing.measure_pair` (the profile stage's protocol): it reuses the same
input objects for every call and never looks at the outputs of timed calls, so a candidate can
replay an output it cached for those inputs, or be correct while checked and return
uninitialised buffers afterwards (issue 18). Here (:func:`measure_accountable`):

1. **Fresh inputs per call.** Every call, warm-up included, gets input tensors made by
   ``make_inputs(seed)`` with a new seed from a stream drawn from :class:`random.SystemRandom`
   (new objects, new values; the candidate cannot predict them). Eager runs on clones of the
   same values, so its output *is* the reference of that call. A trial of ``inner`` calls builds
   ``inner`` input sets before its clock starts (capped by ``pool_bytes``; above the cap the
   sets are reused cyclically and the row says ``input_reuse``).
2. **Timed outputs checked.** The outputs of every call of a trial are kept; after the trial
   (so the choice cannot be seen during the call) ``check_per_trial`` calls are picked with
   ``SystemRandom`` and compared with eager's outputs at every level (:mod:`curate.tolerance`);
   the worst level over all checked calls is the sample's, and a worst level more than
   ``FRESH_MARGIN`` above the level of the calls checked before timing is a
   ``timed_output_mismatch`` violation (:mod:`curate.score.checks`). Two checked calls on different inputs
   whose candidate output is identical while eager's differs are an ``input_independent``
   violation.
3. **Interleaved trials, medians, IQR/median gate** as in :mod:`curate.timing`; the order of the
   sides rotates with the trial index (no side always runs right after another).
3a. **Two references** (issue 17). Besides eager, an optional third side ``dynamo`` is
   ``torch.compile(backend="eager")`` of the same graph (Dynamo's guards and wrapper, no code
   generation), timed in the same trials on its own clones of the same inputs. The result holds
   ``speedup`` (eager / candidate, PassNet's figure) and ``speedup_vs_dynamo`` (Dynamo-only /
   candidate: what a compiler's generated code changes, without the harness it shares with
   Dynamo), both as ratios of the medians with a paired percentile-bootstrap interval
   (:func:`median_ratio_ci`). ``candidate=None`` times eager itself as the candidate (the ``eager``
   candidate and passes that matched nothing): eager and Dynamo-only only, ``speedup`` exactly 1.
4. **A clock the candidate cannot reach.** Around each trial the child calls ``tick`` (in the
   isolated child: a message over the pipe to the parent, :mod:`curate.score.child`) with its
   own clock reading, and the parent stamps the message on *its* ``time.perf_counter_ns``, in a
   process the candidate does not run in. A child whose clock rate or per-trial figures disagree
   with the parent's (:func:`reconcile_clocks`) is a ``clock_mismatch`` violation (a patched or
   replaced timer). When they agree the child's per-trial figures are scored (they do not carry
   the parent's wake-up latency, a few ms per trial on a loaded machine); the parent's speedup
   is kept beside them (``speedup_parent``).

Residual risk of the clock: the candidate runs in the child and could, through Python object
access the static check does not see, replace the child's ``tick`` (send early / late
messages) or push work outside the ticked window (into a thread or the other side's trial);
threads are checked at several points (:mod:`curate.score.checks`), and outputs are checked after
the window closes, but a candidate that rewrites this module's functions in its own process is
only stopped by the static check. The parent's clock also includes the pipe round trip, so on a
heavily loaded machine both sides get a few ms of symmetric noise.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from curate.score import integrity
from curate.timing import iqr_ratio, paired_bootstrap, ratio_of_medians
from curate.tolerance import sample_min_pass_t

Tick = Callable[[tuple], None]
"""``tick((attempt, trial, side, edge, child_ms, child_now_s))``: edge "b" before a trial, "e"
after it; ``child_now_s`` the child's clock reading at the tick."""


@dataclass
class AccountableConfig:
    """Knobs (defaults: the ``score.timing`` block of params.yaml).

    Attributes:
        warmup: untimed calls per side (on fresh inputs too).
        trials: interleaved timed trials per side.
        min_trial_ms: a trial lasts at least this long (ms); sets ``inner``.
        max_inner: cap on calls per trial.
        max_iqr_ratio, retries: the noise gate (:mod:`curate.timing`).
        check_per_trial: timed calls per trial whose outputs are compared with eager's.
        pool_bytes: cap on the input bytes built for one trial (sets reused above it).
        seed_each_call: re-seed the RNG before every call (subgraphs with random ops).
    """

    warmup: int = 3
    trials: int = 15
    min_trial_ms: float = 5.0
    max_inner: int = 1000
    max_iqr_ratio: float = 0.2
    retries: int = 2
    check_per_trial: int = 2
    pool_bytes: int = 64 << 20
    seed_each_call: bool = False
    n_boot: int = 1000
    ci_level: float = 0.95


@dataclass
class AccountableTiming:
    """Result of :func:`measure_accountable` (ms per call; child clock).

    ``attempt`` is the kept attempt (its trials are the ones the parent reconciles);
    ``checked_min_pass_t`` the worst level over checked timed calls (None: one failed at every
    level); ``violations`` findings of the checks (``input_independent``). ``dynamo_ms``: the
    Dynamo-only side's per-trial ms (empty without that side); ``speedup_vs_dynamo`` its median
    over the candidate's (None without it); ``speedup_ci`` / ``speedup_vs_dynamo_ci``: paired
    bootstrap intervals ``(low, high)`` of the two ratios (:func:`median_ratio_ci`).
    """

    eager_ms: list[float]
    candidate_ms: list[float]
    speedup: float
    stable: bool
    attempt: int
    inner: int
    n_sets: int
    n_checked: int
    checked_min_pass_t: int | None
    violations: list[str] = field(default_factory=list)
    dynamo_ms: list[float] = field(default_factory=list)
    speedup_vs_dynamo: float | None = None
    speedup_ci: tuple[float, float] | None = None
    speedup_vs_dynamo_ci: tuple[float, float] | None = None


def median_ratio_ci(num_ms: list[float], den_ms: list[float], n_boot: int = 1000, level: float = 0.95,
                    seed: int = 0) -> tuple[float, float]:
    """Paired percentile-bootstrap interval of ``median(num) / median(den)`` (the scorer's speedup):
    :func:`curate.timing.paired_bootstrap` with :func:`curate.timing.ratio_of_medians`.

    Trial indices are resampled with replacement, the same index for both sides (trial k of both
    ran within milliseconds of each other; Efron & Tibshirani, *An Introduction to the
    Bootstrap*, ch. 13). Seeded: the same trials give the same interval. Sides that cost exactly
    the same in every trial give ``(1.0, 1.0)``.

    Returns:
        ``(low, high)`` at ``level`` (two-sided).

    Raises:
        ValueError: empty or unpaired trial lists.
    """
    return paired_bootstrap(num_ms, den_ms, ratio_of_medians, n_boot, level, seed)


def _nbytes(xs: list) -> int:
    return sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))


def _clone(xs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def _leaves(out: Any) -> list:
    from torch.utils._pytree import tree_flatten

    return tree_flatten(out)[0]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
    return False


def independence_violations(cand_a: Any, cand_b: Any, ref_a: Any, ref_b: Any) -> list[int]:
    """Output indices whose candidate value is identical on two different inputs while the
    reference's differs (a constant, zero or replayed output). Only tensor leaves count."""
    ca, cb, ra, rb = (_leaves(x) for x in (cand_a, cand_b, ref_a, ref_b))
    if not (len(ca) == len(cb) == len(ra) == len(rb)):
        return []
    return [i for i in range(len(ra)) if _same(ca[i], cb[i]) and isinstance(ra[i], torch.Tensor) and not _same(ra[i], rb[i])]


CHECK_CHUNK = 1 << 18
"""Elements per chunk of :func:`fast_min_pass_t` (2 MiB as float64: the temporaries stay in the
allocator's heap and the caches instead of being fresh page-faulted mappings per operation)."""


def fast_min_pass_t(actual: Any, expected: Any, chunk: int = CHECK_CHUNK) -> int | None:
    """The sample's smallest passing level, equal to
    ``sample_min_pass_t(c.min_pass_t for c in compare_outputs(actual, expected))`` but computed
    per chunk of ``chunk`` elements and without the fields a timed-call check does not use
    (differences, trivial / zero-output levels).

    Exact because every level test of :func:`curate.tolerance.compare_output` is element-wise
    (``isclose``-style per element, then ``all``): a tensor passes level t iff each chunk does,
    so its first passing level is the largest of its chunks' (None, never, dominates). A chunk is
    first tested at the largest level found so far (one test when it passes there; else bisection
    above it), since only a larger level can change the maximum. Measured on the loaded 2-core
    machine: a float32 output of 8.4 M elements took 16-39 s in ``compare_outputs``
    (``docs/scoring.md``).

    Returns:
        -10 .. 5, or None (fails at every level; structure or dtype mismatch).
    """
    from torch.utils._pytree import tree_flatten

    from curate.tolerance import LEVELS, compare_output, compare_outputs, is_exact_dtype

    a_leaves, a_spec = tree_flatten(actual)
    e_leaves, e_spec = tree_flatten(expected)
    if len(a_leaves) != len(e_leaves) or str(a_spec) != str(e_spec):
        return sample_min_pass_t(c.min_pass_t for c in compare_outputs(actual, expected))
    worst = 0  # index into LEVELS of the largest first-passing level so far
    for a, e in zip(a_leaves, e_leaves):
        same = isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and a.shape == e.shape and a.dtype == e.dtype
        if not (same and e.is_floating_point() and not is_exact_dtype(e.dtype)):
            m = compare_output(a, e).min_pass_t
            if m is None:
                return None
            worst = max(worst, LEVELS.index(m))
            continue
        af, ef = a.detach().reshape(-1), e.detach().reshape(-1)
        for k in range(0, max(1, ef.numel()), chunk):
            worst = _float_first(af[k:k + chunk], ef[k:k + chunk], e.dtype, worst)
            if worst is None:
                return None
    return LEVELS[worst]


def _float_first(a: torch.Tensor, e: torch.Tensor, dtype: torch.dtype, lo: int) -> int | None:
    """Index into ``LEVELS`` of the first level >= ``LEVELS[lo]`` at which real floating ``a``
    passes against ``e`` (None: at none), with :func:`curate.tolerance.compare_output`'s element
    rule and level bisection (:func:`curate.tolerance._level_check`, :func:`curate.tolerance._first_pass`)
    on this chunk only."""
    from curate.tolerance import LEVELS, _first_pass, _level_check

    check = _level_check(a.to(torch.float64), e.to(torch.float64), dtype)
    if check(LEVELS[lo]):
        return lo
    _, first = _first_pass(check, LEVELS[lo + 1:])
    return None if first is None else LEVELS.index(first)


def chunked_comparisons(actual: Any, expected: Any, chunk: int = CHECK_CHUNK) -> list:
    """:func:`curate.tolerance.compare_outputs` for the scorer's checked calls, computed per chunk
    for leaves above ``chunk`` elements: the same ``dtype``, ``shape``, ``match_structure``,
    ``min_pass_t``, ``passes`` and ``max_abs_diff`` (a maximum of element-wise quantities, exact per
    chunk as in :func:`fast_min_pass_t`); ``max_rel_diff`` is the largest over chunks with a
    non-zero reference element (nan when no chunk has one), ``trivial`` / ``zero_pass_t`` are not
    computed for chunked leaves (None: the scorer reads neither from these comparisons)."""
    from torch.utils._pytree import tree_flatten

    from curate.tolerance import LEVELS, OutputComparison, compare_output, compare_outputs

    a_leaves, a_spec = tree_flatten(actual)
    e_leaves, e_spec = tree_flatten(expected)
    if len(a_leaves) != len(e_leaves) or str(a_spec) != str(e_spec):
        return compare_outputs(actual, expected)
    out = []
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if not (isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and a.shape == e.shape and a.dtype == e.dtype
                and e.numel() > chunk):
            out.append(compare_output(a, e, i))
            continue
        af, ef = a.detach().reshape(-1), e.detach().reshape(-1)
        parts = [compare_output(af[j:j + chunk], ef[j:j + chunk]) for j in range(0, ef.numel(), chunk)]
        firsts = [c.min_pass_t for c in parts]
        first = None if any(m is None for m in firsts) else max(firsts)
        rel = [c.max_rel_diff for k, c in enumerate(parts) if bool((ef[k * chunk:(k + 1) * chunk] != 0).any())]
        out.append(OutputComparison(i, parts[0].dtype, list(e.shape), True, max(c.max_abs_diff for c in parts),
                                    max(rel) if rel else float("nan"), first,
                                    {t: first is not None and t >= first for t in LEVELS}, None, None))
    return out


def measure_accountable(eager: Callable, candidate: Callable | None, make_inputs: Callable[[int], list],
                        cfg: AccountableConfig | None = None, tick: Tick | None = None,
                        timer: Callable[[], float] | None = None, rng: random.Random | None = None,
                        dynamo: Callable | None = None) -> AccountableTiming:
    """Time ``eager`` vs ``candidate`` (and the Dynamo-only reference ``dynamo``) with fresh inputs
    per call and checked timed outputs.

    Args:
        eager, candidate: callables taking the inputs positionally; ``candidate=None``: the
            candidate is eager itself (not timed twice; ``speedup`` exactly 1, no output checks).
        make_inputs: ``seed -> list`` of inputs (tensors from a seeded generator).
        cfg: knobs. tick: the parent-clock hook (None in-process: child clock only).
        timer: the child's clock (default: the ``perf_counter`` captured by
            :mod:`curate.score.integrity` before any candidate import). rng: the source of seeds and of
            the checked calls (default ``SystemRandom``; tests pass a seeded ``Random``).
        dynamo: the Dynamo-only reference (``torch.compile(backend="eager")`` of the graph), a
            third side of every trial on its own clones; None: not timed.

    Raises:
        Whatever a side raises (the caller classifies it as a runtime crash).
    """
    cfg = cfg or AccountableConfig()
    rng = rng or random.SystemRandom()
    clock = timer or integrity.original_perf_counter()

    def fresh() -> list:
        return make_inputs(rng.randrange(2, 2**31))

    def call(fn, ins):
        if cfg.seed_each_call:
            torch.manual_seed(0)
        return fn(*ins)

    sides = [("eager", eager)] + ([("dynamo", dynamo)] if dynamo is not None else []) \
        + ([("candidate", candidate)] if candidate is not None else [])
    for _ in range(cfg.warmup + 1):
        ins = fresh()
        for name, fn in sides:
            call(fn, ins if name == "candidate" else _clone(ins))
    probe = fresh()
    t0 = clock()
    call(eager, probe)
    one_ms = max((clock() - t0) * 1e3, 1e-6)
    inner = int(min(cfg.max_inner, max(1, math.ceil(cfg.min_trial_ms / one_ms))))
    n_sets = int(max(1, min(inner, cfg.pool_bytes // max(1, len(sides) * _nbytes(probe)))))
    worst: int | None = -10
    n_checked, found = 0, []
    best = None
    for attempt in range(1, cfg.retries + 2):
        acc: dict[str, list[float]] = {name: [] for name, _ in sides}
        for trial in range(cfg.trials):
            sets = [fresh() for _ in range(n_sets)]
            pools = {name: (sets if name == "candidate" else [_clone(s) for s in sets]) for name, _ in sides}
            outs = {}
            k = trial % len(sides)
            for side, fn in sides[k:] + sides[:k]:
                pool = pools[side]
                if tick:
                    tick((attempt, trial, side, "b", None, clock()))
                t0 = clock()
                res = [call(fn, pool[i % n_sets]) for i in range(inner)]
                ms = (clock() - t0) * 1e3
                if tick:
                    tick((attempt, trial, side, "e", ms, clock()))
                acc[side].append(ms / inner)
                if side != "dynamo":
                    outs[side] = res
            if candidate is not None:
                picks = rng.sample(range(inner), k=min(cfg.check_per_trial, inner))
                for i in picks:
                    mp = fast_min_pass_t(outs["candidate"][i], outs["eager"][i])
                    n_checked += 1
                    if mp is None or worst is None:
                        worst = None
                    else:
                        worst = max(worst, mp)
                pair = [(a, b) for a in picks for b in picks if a % n_sets < b % n_sets][:1]
                if not pair and n_sets >= 2:
                    pair = [(0, 1)]
                for a, b in pair:
                    bad = independence_violations(outs["candidate"][a], outs["candidate"][b], outs["eager"][a], outs["eager"][b])
                    if bad:
                        found.append(f"input_independent: outputs {bad} identical on two fresh inputs of a timed trial; eager's differ")
            del outs, sets, pools
        noise = max(iqr_ratio(v) for v in acc.values())
        stable = noise <= cfg.max_iqr_ratio
        if best is None or noise < best[0]:
            best = (noise, attempt, acc)
        if stable or attempt == cfg.retries + 1:
            _, kept, acc = best
            e_ms = acc["eager"]
            c_ms = acc["candidate"] if candidate is not None else list(e_ms)
            d_ms = acc.get("dynamo", [])
            me, mc = statistics.median(e_ms), statistics.median(c_ms)
            sp = 1.0 if candidate is None else (me / mc if mc > 0 else math.inf)
            ci = (1.0, 1.0) if candidate is None else median_ratio_ci(e_ms, c_ms, cfg.n_boot, cfg.ci_level)
            sd = sd_ci = None
            if d_ms:
                md = statistics.median(d_ms)
                sd = md / mc if mc > 0 else math.inf
                sd_ci = median_ratio_ci(d_ms, c_ms, cfg.n_boot, cfg.ci_level)
            # one mismatch message per kind is enough for a row
            kinds: dict[str, str] = {}
            for v in found:
                kinds.setdefault(v.split(":")[0], v)
            return AccountableTiming(e_ms, c_ms, sp, best[0] <= cfg.max_iqr_ratio, kept, inner, n_sets, n_checked,
                                     worst, list(kinds.values()), d_ms, sd, ci, sd_ci)
    raise AssertionError("unreachable")


def reconcile_clocks(ticks: list[tuple[int, tuple]], attempt: int, inner: int, rel_tol: float = 0.3,
                     abs_ms: float = 15.0, rate_tol: float = 0.1, min_span_ms: float = 200.0) -> dict[str, Any]:
    """Compare the child's clock with the parent's stamps of the same ticks.

    Two checks (both must hold, else ``clock_mismatch`` messages):

    * **rate**: the child's elapsed time between its first and last tick over the parent's
      (all attempts). Pipe / wake-up latency enters this ratio once, not per trial, so it is close
      to 1 for an honest child even on a loaded machine; a clock slowed or sped up by the
      candidate moves it by its factor (checked when the parent's span is >= ``min_span_ms``);
    * **per trial** (the kept ``attempt``): the parent's median trial minus the child's is the
      wake-up latency of the "end" message (a few ms, up to ~10 ms on a loaded machine), the same
      for both sides of an honest child; the candidate side's excess may differ from eager's by at
      most ``max(rel_tol * parent's candidate median, abs_ms)`` (a clock faked only while the
      candidate runs). The scored speedup stays the child's when both checks pass. Without a
      candidate side (the candidate is eager itself) the Dynamo-only side takes its place in
      this check; Dynamo-only trials are otherwise only part of the rate check.

    Args:
        ticks: ``(parent_ns, (attempt, trial, side, edge, child_ms, child_now_s))`` in arrival order.
        attempt: the attempt the child kept. inner: calls per trial.

    Returns:
        ``eager_ms`` / ``candidate_ms`` (parent per-call medians; ``candidate_ms`` is eager's
        without a candidate side), ``dynamo_ms`` (when timed), ``speedup`` (parent's),
        ``rate`` (child / parent elapsed), ``mismatch`` (messages, empty = agree), ``n_trials``.

    Raises:
        ValueError: no complete trial of ``attempt`` among the ticks.
    """
    begin: dict[tuple, int] = {}
    per_side: dict[str, list[tuple[float, float]]] = {"eager": [], "candidate": [], "dynamo": []}
    for ns, (att, trial, side, edge, child_ms, _now) in ticks:
        if att != attempt:
            continue
        if edge == "b":
            begin[(trial, side)] = ns
        elif (trial, side) in begin and child_ms is not None:
            per_side.setdefault(side, []).append(((ns - begin[(trial, side)]) / 1e6, float(child_ms)))
    other = "candidate" if per_side["candidate"] else "dynamo"
    if not per_side["eager"] or not per_side[other]:
        raise ValueError(f"no complete parent-clocked trial of attempt {attempt}")
    out: dict[str, Any] = {"mismatch": [], "n_trials": len(per_side["candidate"])}
    span_parent = (ticks[-1][0] - ticks[0][0]) / 1e6
    span_child = (ticks[-1][1][5] - ticks[0][1][5]) * 1e3
    out["rate"] = span_child / span_parent if span_parent > 0 else math.nan
    if span_parent >= min_span_ms and abs(out["rate"] - 1) > rate_tol:
        out["mismatch"].append(f"clock_mismatch: the child's clock ran {span_child:.1f} ms while the parent's ran "
                               f"{span_parent:.1f} ms (rate {out['rate']:.3f})")
    excess = {}
    for side, pairs in per_side.items():
        if not pairs:
            continue
        parent_med = statistics.median(p for p, _ in pairs)
        child_med = statistics.median(c for _, c in pairs)
        out[f"{side}_ms"] = parent_med / inner
        excess[side] = (parent_med - child_med, parent_med, child_med)
    gap = excess[other][0] - excess["eager"][0]
    if abs(gap) > max(rel_tol * excess[other][1], abs_ms):
        out["mismatch"].append(
            f"clock_mismatch: {other} trials take {excess[other][1]:.2f} ms by the parent's clock, "
            f"{excess[other][2]:.2f} ms by the child's; eager trials {excess['eager'][1]:.2f} / {excess['eager'][2]:.2f} ms")
    out.setdefault("candidate_ms", out["eager_ms"])
    out["speedup"] = out["eager_ms"] / out["candidate_ms"] if out["candidate_ms"] > 0 else math.inf
    if "dynamo_ms" in out:
        out["speedup_vs_dynamo"] = out["dynamo_ms"] / out["candidate_ms"] if out["candidate_ms"] > 0 else math.inf
    return out
