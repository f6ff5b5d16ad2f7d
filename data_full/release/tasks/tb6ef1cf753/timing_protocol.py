"""Timing protocol: eager, Dynamo-only and a compiled candidate, interleaved in one loop.

This module needs only ``torch`` and ``numpy``; it is copied as ``timing_protocol.py`` into every
task folder, so ``run_task.py`` times with exactly the protocol ``profile`` used.

Protocol (GraphNet's and PassNet's pass_bench timing; PyTorch's dynamo benchmark harness interleaves eager
and compiled, GraphNet / PassBench keep eager as the reference and gate on IQR/median > 0.2):

1. compile each side on its own copy of the graph (:func:`compile_candidate`; wall seconds
   recorded; an exception is error code 3);
2. per side one untimed call and ``warmup`` calls, each side on its own fresh input clones
   (``make_inputs`` is called per side: an in-place op of one side never feeds another);
3. ``inner`` per side: calls per trial, ``ceil(min_trial_ms / t_call)`` from a calibration
   call, then **re-derived**: a trial that lasted less than ``min_trial_ms`` is discarded
   (kept in ``history`` with ``short: true``), ``inner`` grows by ``min_trial_ms / trial_ms``
   and the trial is repeated, so every kept trial lasts >= ``min_trial_ms`` (unless
   ``max_inner`` caps it: ``capped`` in ``history``);
4. trials are interleaved: trial k times every side once, in an order rotated by k (so no side
   always runs right after another); each trial records the mean ms per call by the **clock**
   ``TimingConfig.clock``: ``thread_cpu`` (the profile's; ``time.thread_time``, i.e.
   ``CLOCK_THREAD_CPUTIME_ID``: the timed work runs on the timing thread alone, torch threads 1,
   so its CPU time is the work, and time the scheduler gives a neighbour on the same core is not
   counted) or ``wall`` (``time.perf_counter``; the scorer's, since a candidate could defer work
   to another thread). Wall ms per call is recorded beside it on every trial; the median wall /
   clock ratio over the kept trials is ``clock_gap``, and ``clock_flag`` marks a result whose gap
   exceeds ``1 + max_clock_gap`` (it flags the row, it does not decide it). A hog that shares the
   timing core still slows the work itself through shared caches and frequency: the CPU clock
   removes preemption, not contention;
5. **adaptive count**: after ``min_trials`` trials, and every ``check_every`` trials after,
   the bootstrap intervals of the ``decide`` ratios are computed; trials stop once each is
   *settled*, at ``trials`` at most. ``stop = "decided"``: the interval lies beyond
   ``1 -+ min_effect`` or inside ``1 +- decided_width`` (:func:`decided`); ``stop = "label"``
   (the profile's): the interval answers the one question a label asks of it, "is the ratio
   below ``1 - min_effect``?", i.e. it lies wholly below or wholly at/above ``1 - min_effect``
   (:func:`resolved`; a ratio of 1.02 +- 0.06 is settled "not slower" without being decided);
   **time cap** (``max_variant_s``, None = none): once the variant's measured time (the sum of
   every timed trial of every side and attempt, short ones included) exceeds the cap, the
   trial in progress is finished and the timing stops (``time_capped``; no retry follows; a
   calls-of-0.4-s workload variant otherwise takes its full ``trials``). The gate below judges
   the trials it got; a capped attempt with fewer than ``cap_min_trials`` trials is unstable;
6. noise gate (``gate = "iqr"``, the scorer's) on the **paired ratios**: for every gated ratio ``a / b`` the per-trial ratios
   ``a_k / b_k`` (trial k of both sides ran within milliseconds of each other, so a neighbour's
   load hits both) must have IQR/median <= ``max_iqr_ratio`` (PassBench's 0.2, applied where
   it measures the figure we label); else the measurement is repeated on fresh inputs
   (``retries`` times); still noisy = ``stable False`` (the least noisy attempt is kept, every
   attempt's trials stay in ``history``). Each side's own IQR/median is recorded too. The
   profile uses ``gate = "ci"``: stable = every interval it labels from is settled (as in step 5)
   or narrower than ``max_ci_width`` (under load the paired IQR/median of 10-ms trials is 0.2-0.4 on 2
   shared cores while the intervals over 10-40 trials still decide; measured, docs/curation.md);
7. per side the median; a ratio is the median of the per-trial ratios, with a paired
   percentile-bootstrap interval (:func:`bootstrap_ratio_ci` over :func:`paired_bootstrap`: trial indices resampled;
   Efron & Tibshirani, *An Introduction to the Bootstrap*, ch. 13).

CUDA (``device = "cuda..."``): every call of a trial is timed with CUDA events *and* host wall
time (PassBench: 25 warm-ups, 100 trials, ``inner`` 1), optionally after writing an
``l2_flush_mb`` buffer (evicts L2). The CUDA path is code-reviewed only: it was not run on a GPU.

**Allocator state** (:func:`pin_allocator`, called by every process that times: the profile's timing
child, the scorer's child, ``run_task.py``): glibc's ``malloc`` serves a block of at least its *mmap
threshold* with a fresh ``mmap`` (page faults on first touch, ``munmap`` on free) and raises that
threshold, up to 32 MiB, each time such a block is freed. So whether an eager call that allocates
outputs of 128 KiB-32 MiB page-faults on every call depends on what the process allocated before:
measured on a conv-BN-GELU at batch 8 (three 25.7-MB outputs), eager took 9.4 ms a call in one fresh
process and 22-31 ms in another, which flipped that variant's label between runs of two builds
(``benchmarks/agreement_flips.py``, docs/curation.md). Pinned, the thresholds are those glibc's
dynamic rule reaches at most (mmap 32 MiB, trim 64 MiB: ``DEFAULT_MMAP_THRESHOLD_MAX`` and twice
it, glibc ``malloc/malloc.c``), i.e. a long-running process's steady state, the same in every process.

The RNG is re-seeded with ``seed`` before every call so random ops draw the same numbers on
every side (Inductor also needs ``torch._inductor.config.fallback_random``, set by
:func:`compile_candidate`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal

import numpy as np
import torch

try:  # in the repository the protocol's knobs are a typed params block; a task folder's copy
    # (``timing_protocol.py``, torch and numpy only) has no passnet_common and uses a plain base
    from passnet_common import spec as _spec
    from passnet_common.config import ParamsConfig as _ConfigBase
except ImportError:  # pragma: no cover - exercised by the task folders
    _spec = None

    class _ConfigBase:  # type: ignore[no-redef]
        """Stand-in base of :class:`TimingConfig` outside the repository."""


def _knob(default: Any, rule: Callable[[Any], Any] | None = None) -> Any:
    """A :class:`TimingConfig` field; ``rule(spec_module)`` gives its params rule where
    :mod:`passnet_common.spec` exists (the repository), none in a task folder."""
    return field(default=default, metadata={"rule": rule(_spec) if rule and _spec else None, "doc": ""})

Timer = Callable[[], float]
"""Returns seconds (tests inject fake timers)."""

CLOCKS = {"thread_cpu": time.thread_time, "wall": time.perf_counter}
"""``TimingConfig.clock`` -> the clock trials are labelled from: ``thread_cpu`` is the calling
thread's CPU time (``CLOCK_THREAD_CPUTIME_ID``: time the scheduler gives another process is not
counted, so preemption by a neighbour cannot inflate it), ``wall`` is ``time.perf_counter``."""


@dataclass(frozen=True)
class TimingConfig(_ConfigBase):
    """Knobs of the protocol.

    Attributes:
        warmup: untimed calls per side after the first untimed call (GraphNet 3; PassBench 25).
        trials: most interleaved trials per side (PassBench 100; adaptive runs stop earlier).
        min_trials: trials before the first adaptive check (``trials`` = fixed count when equal).
        check_every: trials between adaptive checks.
        min_trial_ms: every kept trial lasts at least this long (ms); sets and re-derives ``inner``.
        max_inner: cap on calls per trial.
        max_iqr_ratio: noise gate on IQR / median per side (GraphNet / PassBench: 0.2).
        retries: re-measurements when the gate fires, before ``stable = False``.
        seed: RNG seed set before every call.
        ci_level: two-sided level of the bootstrap intervals.
        n_boot: bootstrap resamples.
        min_effect: smallest relative difference that counts (``slower`` = interval below
            ``1 - min_effect``): the equivalence margin that keeps a no-op control out of
            the long tail under load (measured: docs/curation.md).
        decided_width: an interval inside ``[1 - w, 1 + w]`` counts as decided (no difference).
        stop: what settles an interval for the adaptive count and the ``ci`` gate: ``decided``
            (:func:`decided`) or ``label`` (:func:`resolved`: on one side of ``1 - min_effect``).
        gate: ``iqr`` (IQR/median of the paired ratios <= ``max_iqr_ratio``) or ``ci`` (every
            gated interval decided, or ``high / low - 1 <= max_ci_width``): the profile's gate,
            since its labels are read from those intervals.
        max_ci_width: relative width of an undecided interval that still counts as stable.
        device: ``cpu`` or ``cuda[:i]`` (CUDA events + host wall time).
        l2_flush_mb: CUDA only: MiB written before every timed call (0: no flush).
        max_variant_s: per-variant time cap (seconds; None or 0 = none): once the measured time (the
            sum of every timed trial of every side and attempt, discarded short trials included;
            warm-up and calibration calls are not counted) exceeds it, the current interleaved
            trial is finished and the timing stops (``time_capped``; no further retry). The gate
            then judges the trials it got: undecided = ``stable False``.
        cap_min_trials: a capped attempt with fewer paired trials is ``stable False`` whatever
            its interval says (a percentile bootstrap over a handful of trials is too coarse).
        clock: what a trial is measured with (:data:`CLOCKS`): ``wall`` (the scorer's: a candidate
            that defers work to another thread cannot hide it from wall time) or ``thread_cpu``
            (the profile's: the timed work is single-threaded, so the timing thread's CPU time is
            the work and a neighbour's preemption does not count). Wall time is recorded beside
            it on every CPU trial either way (``wall_ms``, ``clock_gap``).
        max_clock_gap: a result whose median per-trial wall / CPU ratio exceeds ``1 +
            max_clock_gap`` is flagged (``clock_flag``): the row was preempted (or its work ran
            off the timing thread); the flag is recorded, it does not change the labels.
    """

    warmup: int = _knob(3, lambda S: S.non_negative(int))
    trials: int = _knob(30, lambda S: S.positive(int))
    min_trials: int = _knob(20, lambda S: S.positive(int))
    check_every: int = _knob(5, lambda S: S.positive(int))
    min_trial_ms: float = _knob(10.0, lambda S: S.non_negative(float))
    max_inner: int = _knob(100000, lambda S: S.positive(int))
    max_iqr_ratio: float = _knob(0.2, lambda S: S.positive(float))
    retries: int = _knob(2, lambda S: S.non_negative(int))
    seed: int = 0
    ci_level: float = _knob(0.95, lambda S: S.interval(float, 0, 1, lo_open=True, hi_open=True))
    n_boot: int = _knob(1000, lambda S: S.positive(int))
    decided_width: float = _knob(0.03, lambda S: S.non_negative(float))
    min_effect: float = _knob(0.05, lambda S: S.non_negative(float))
    gate: Literal["iqr", "ci"] = "iqr"
    stop: Literal["decided", "label"] = "decided"
    max_ci_width: float = _knob(0.1, lambda S: S.positive(float))
    device: str = "cpu"
    l2_flush_mb: float = _knob(0.0, lambda S: S.non_negative(float))
    max_variant_s: float | None = _knob(None, lambda S: S.Optional(S.positive(float)))
    cap_min_trials: int = _knob(10, lambda S: S.positive(int))
    clock: Literal["thread_cpu", "wall"] = "wall"
    max_clock_gap: float = _knob(0.5, lambda S: S.non_negative(float))

    def __post_init__(self):
        object.__setattr__(self, "min_trials", min(self.min_trials, self.trials))  # frozen
        if self.clock not in CLOCKS:
            raise ValueError(f"TimingConfig.clock must be one of {sorted(CLOCKS)}, got {self.clock!r}")
        if self.stop not in ("decided", "label"):
            raise ValueError(f"TimingConfig.stop must be 'decided' or 'label', got {self.stop!r}")

    def settled(self, ci: tuple[float, float]) -> bool:
        """Whether interval ``ci`` stops the adaptive count (:attr:`stop`)."""
        if self.stop == "label":
            return resolved(ci, self.min_effect)
        return decided(ci, self.decided_width, self.min_effect)


@dataclass
class SidesTiming:
    """Result of :func:`measure_sides` (ms per call).

    Attributes:
        trials_ms: side -> per-trial ms per call of the kept attempt, by ``cfg.clock`` (index k =
            trial k on every side).
        wall_ms: side -> wall ms per call per trial of the kept attempt (CUDA: host wall time;
            CPU: ``time.perf_counter`` around the same calls).
        medians_ms: side -> median of ``trials_ms``.
        inner: side -> calls per trial at the end of the kept attempt.
        iqr_ratio: side -> IQR / median of the kept attempt.
        ratio_iqr: ``"a/b"`` -> IQR / median of the per-trial ratios of a gated pair.
        stable: the noise gate passed on every gated pair.
        attempts: measurement attempts made.
        history: every trial of every attempt: ``{attempt, trial, side, ms, inner, trial_ms,
            short, capped}`` (short = discarded and repeated with a larger ``inner``).
        min_trial_ms_kept: shortest kept trial (ms) over all sides.
        time_capped: ``max_variant_s`` stopped the timing (the kept attempt may be short).
        elapsed_s: seconds of ``timer`` from the start of :func:`measure_sides` to its end
            (warm-up and calibration included).
        clock: the clock ``trials_ms`` was measured with (``TimingConfig.clock``, or ``timer``
            when a caller injected one).
        clock_gap: CPU only: median over the kept trials of every side of wall ms / ``clock`` ms
            (1.0 on an idle core; 2 when a neighbour held the timing core half the time); None
            on CUDA or when the clock is wall time.
        clock_flag: ``clock_gap`` exceeds ``1 + cfg.max_clock_gap`` (recorded, not a label).
        wall_elapsed_s: wall seconds from the start of :func:`measure_sides` to its end.
    """

    trials_ms: dict[str, list[float]]
    medians_ms: dict[str, float]
    inner: dict[str, int]
    iqr_ratio: dict[str, float]
    stable: bool
    attempts: int
    history: list[dict] = field(default_factory=list)
    min_trial_ms_kept: float = 0.0
    wall_ms: dict[str, list[float]] = field(default_factory=dict)
    ratio_iqr: dict[str, float] = field(default_factory=dict)
    time_capped: bool = False
    elapsed_s: float = 0.0
    clock: str = "wall"
    clock_gap: float | None = None
    clock_flag: bool = False
    wall_elapsed_s: float = 0.0

    def ratio(self, num: str, den: str) -> float:
        """Median of the per-trial ratios ``num_k / den_k``."""
        return paired_ratio(self.trials_ms[num], self.trials_ms[den])

    def ratio_ci(self, num: str, den: str, level: float = 0.95, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
        """Paired bootstrap interval of :meth:`ratio`."""
        return bootstrap_ratio_ci(self.trials_ms[num], self.trials_ms[den], n_boot=n_boot, level=level, seed=seed)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


@dataclass
class PairTiming:
    """Two-sided view of :func:`measure_sides` kept for the scorer (:func:`measure_pair`).

    Attributes:
        eager_ms, candidate_ms: per-trial ms (paired by index).
        speedup: median of the per-trial ratios eager_k / candidate_k.
        stable, attempts, history: as in :class:`SidesTiming`.
        inner: eager side's calls per trial.
        iqr_ratio_eager, iqr_ratio_candidate: IQR / median of the kept attempt.
    """

    eager_ms: list[float]
    candidate_ms: list[float]
    speedup: float
    stable: bool
    attempts: int
    inner: int
    iqr_ratio_eager: float
    iqr_ratio_candidate: float
    history: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def iqr_ratio(xs: list[float]) -> float:
    """(Q3 - Q1) / median of ``xs`` (quartiles: ``statistics.quantiles``, method inclusive)."""
    if len(xs) < 2:
        return 0.0
    q1, med, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return (q3 - q1) / med if med > 0 else math.inf


def paired_ratio(num_ms: list[float], den_ms: list[float]) -> float:
    """Median of ``num_k / den_k`` over paired trials (inf where a denominator is 0)."""
    return statistics.median(a / b if b > 0 else math.inf for a, b in zip(num_ms, den_ms))


def paired_bootstrap(a: list[float], b: list[float], stat: Callable, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0) -> tuple[float, float]:
    """Paired percentile-bootstrap interval of ``stat`` over trials ``a``, ``b`` (ms, paired by index).

    One resample = ``len(a)`` trial indices drawn with replacement, the *same* indices for both
    sides (trial k of both ran within milliseconds of each other, so load that hits one hits
    the other; Efron & Tibshirani, *An Introduction to the Bootstrap*, ch. 13). All ``n_boot``
    index rows are drawn at once from ``numpy.random.default_rng(seed)``. Seeded: the same trials
    give the same interval.

    Args:
        stat: vectorised statistic ``stat(A, B) -> (n_boot,)`` over resampled arrays ``A``, ``B``
            of shape ``(n_boot, len(a))`` (row i = resample i of both sides).

    Returns:
        ``(low, high)``: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
        resampled statistic (two-sided at ``level``).

    Raises:
        ValueError: empty or unpaired trial lists.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(x) != len(y):
        raise ValueError(f"bootstrap needs paired trials, got {len(x)} and {len(y)}")
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    vals = stat(x[idx], y[idx])
    q = (1 - level) / 2
    return float(np.quantile(vals, q)), float(np.quantile(vals, 1 - q))


def median_of_ratios(A, B):
    """``median_k(A_k / B_k)`` per row (inf where a denominator is <= 0): :func:`paired_ratio`."""
    with np.errstate(divide="ignore"):
        return np.median(np.where(B > 0, A / np.where(B > 0, B, 1.0), np.inf), axis=1)


def ratio_of_medians(A, B):
    """``median(A) / median(B)`` per row (inf where the denominator's median is <= 0)."""
    den = np.median(B, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.median(A, axis=1) / np.where(den > 0, den, 1.0), np.inf)


def bootstrap_ratio_ci(num_ms: list[float], den_ms: list[float], n_boot: int = 1000, level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`paired_ratio` (median of ``num_k / den_k``):
    :func:`paired_bootstrap` with :func:`median_of_ratios`.

    Returns:
        ``(low, high)`` at ``level`` (two-sided).

    Raises:
        ValueError: empty or unpaired trial lists.
    """
    return paired_bootstrap(num_ms, den_ms, median_of_ratios, n_boot, level, seed)


def bootstrap_speedup_ci(eager_ms: list[float], candidate_ms: list[float], n_boot: int = 2000, level: float = 0.95,
                         seed: int = 0) -> tuple[float, float]:
    """Interval of the paired eager / candidate ratio: :func:`bootstrap_ratio_ci`."""
    return bootstrap_ratio_ci(eager_ms, candidate_ms, n_boot=n_boot, level=level, seed=seed)


def decided(ci: tuple[float, float], width: float, margin: float = 0.0) -> bool:
    """An interval is decided when it lies beyond ``1 -+ margin`` (a difference of more than
    the smallest effect that counts) or inside ``[1 - width, 1 + width]`` (no difference)."""
    lo, hi = ci
    return hi < 1.0 - margin or lo > 1.0 + margin or (lo >= 1.0 - width and hi <= 1.0 + width)


def resolved(ci: tuple[float, float], margin: float) -> bool:
    """An interval answers "is the ratio below ``1 - margin``?" when it lies wholly below
    ``1 - margin`` (yes: :func:`slower`) or wholly at or above it (no). Every label of a profile
    row (``slower_e2e``, ``slower_compiler``, ``overhead_bound``) asks exactly this question."""
    lo, hi = ci
    return hi < 1.0 - margin or lo >= 1.0 - margin


def slower(ci_high: float | None, margin: float) -> bool:
    """``a / b`` is below 1 *with confidence*: the interval's upper end lies below ``1 - margin``."""
    return ci_high is not None and ci_high < 1.0 - margin


MMAP_THRESHOLD_BYTES = 32 * 2**20
"""glibc's ``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit: the highest mmap threshold its dynamic rule sets."""
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES
"""The trim threshold glibc's dynamic rule pairs with it (twice the mmap threshold)."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters, glibc <malloc.h>


@functools.lru_cache(maxsize=1)
def _glibc_mallopt():
    """``(gnu_get_libc_version, mallopt)`` of this process's C library through ctypes, looked up
    once per process (``ctypes.util.find_library`` runs ``ldconfig``, about 1 ms), or the
    ``"default (...)"`` text :func:`pin_allocator` returns where there is no glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        gnu = libc.gnu_get_libc_version
        mallopt = libc.mallopt
    except (OSError, AttributeError) as exc:
        return f"default (no glibc mallopt: {type(exc).__name__})"
    gnu.restype = ctypes.c_char_p
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return gnu, mallopt


def pin_allocator(mmap_threshold: int = MMAP_THRESHOLD_BYTES, trim_threshold: int = TRIM_THRESHOLD_BYTES) -> str:
    """Fix glibc malloc's mmap and trim thresholds (bytes) in this process, which also turns off
    their dynamic adjustment (``mallopt``; module docstring, "Allocator state"), so an eager call's
    page faults do not depend on the process's history. Call it before timing; it holds for the
    rest of the process.

    Returns:
        what holds now, for the row: ``"glibc mmap_threshold=<bytes> trim_threshold=<bytes>"``, or
        ``"default (<reason>)"`` where there is no glibc (macOS, musl) or ``mallopt`` refused.
    """
    found = _glibc_mallopt()
    if isinstance(found, str):
        return found
    gnu, mallopt = found
    if mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) != 1 or mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)) != 1:
        return f"default (mallopt refused on glibc {gnu().decode()})"
    return f"glibc mmap_threshold={int(mmap_threshold)} trim_threshold={int(trim_threshold)}"


def _call(fn: Callable, inputs: list, seed: int) -> Any:
    torch.manual_seed(seed)
    return fn(*inputs)


class _CudaClock:
    """Per-call CUDA event timing plus host wall time (PassBench); optional L2 flush."""

    def __init__(self, device: str, l2_flush_mb: float):
        self.device = torch.device(device)
        n = int(l2_flush_mb * 2**20 // 4)
        self.flush = torch.empty(n, dtype=torch.float32, device=self.device) if n else None

    def trial(self, fn: Callable, ins: list, seed: int, inner: int) -> tuple[float, float]:
        """Mean ms per call by events and by host wall time over ``inner`` calls."""
        ev, wall = 0.0, 0.0
        for _ in range(inner):
            if self.flush is not None:
                self.flush.zero_()
            torch.cuda.synchronize(self.device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.manual_seed(seed)
            t0 = time.perf_counter()
            start.record()
            fn(*ins)
            end.record()
            torch.cuda.synchronize(self.device)
            wall += (time.perf_counter() - t0) * 1e3
            ev += start.elapsed_time(end)
        return ev / inner, wall / inner


def measure_sides(sides: dict[str, Callable], make_inputs: Callable[[], list], cfg: TimingConfig | None = None,
                  timer: Timer | None = None, decide: tuple[tuple[str, str], ...] = (),
                  gate: tuple[tuple[str, str], ...] | None = None) -> SidesTiming:
    """Time every side of ``sides`` with the module's protocol (steps 2-7).

    Args:
        sides: name -> callable taking the inputs positionally (e.g. ``eager``, ``dynamo``,
            ``inductor``); insertion order is trial 0's order.
        make_inputs: returns a fresh list of inputs (called once per side per attempt).
        cfg: protocol knobs.
        timer: clock in seconds the CPU trials are labelled from (None: ``cfg.clock``,
            :data:`CLOCKS`; tests inject fake clocks). Wall time (``time.perf_counter``) is
            recorded beside it on every trial.
        decide: ``(num, den)`` ratios whose intervals stop the trials early once decided
            (empty: always ``cfg.trials`` trials).
        gate: ratio pairs of the noise gate (default: ``decide``, else consecutive sides).

    Raises:
        Whatever a side raises (the caller classifies it as a runtime crash).
    """
    cfg = cfg or TimingConfig()
    clock_name = cfg.clock if timer is None else getattr(timer, "__name__", "injected")
    timer = CLOCKS[cfg.clock] if timer is None else timer
    wall_clock = time.perf_counter
    w_start = wall_clock()
    names = list(sides)
    gate = tuple(gate or decide or zip(names, names[1:]))
    cuda = _CudaClock(cfg.device, cfg.l2_flush_mb) if str(cfg.device).startswith("cuda") else None
    t_start = timer()
    time_capped, measured_ms = False, 0.0
    ins = {n: make_inputs() for n in names}
    inner: dict[str, int] = {}
    for n in names:
        _call(sides[n], ins[n], cfg.seed)  # untimed first call
        for _ in range(cfg.warmup):
            _call(sides[n], ins[n], cfg.seed)
    for n in names:
        if cuda is not None:
            inner[n] = 1
            continue
        t0 = timer()
        _call(sides[n], ins[n], cfg.seed)
        one_ms = max((timer() - t0) * 1e3, 1e-6)
        inner[n] = int(min(cfg.max_inner, max(1, math.ceil(cfg.min_trial_ms / one_ms))))
    history: list[dict] = []
    best = None
    for attempt in range(1, cfg.retries + 2):
        if attempt > 1:
            ins = {n: make_inputs() for n in names}
            for n in names:
                _call(sides[n], ins[n], cfg.seed)
        acc: dict[str, list[float]] = {n: [] for n in names}
        wall: dict[str, list[float]] = {n: [] for n in names}
        k = 0
        while k < cfg.trials:
            order = names[k % len(names):] + names[:k % len(names)]
            for n in order:
                while True:
                    if cuda is not None:
                        ms, wms = cuda.trial(sides[n], ins[n], cfg.seed, inner[n])
                        trial_ms, short, capped = ms * inner[n], False, False
                    else:
                        torch.manual_seed(cfg.seed)
                        w0 = wall_clock()
                        t0 = timer()
                        for _ in range(inner[n]):
                            sides[n](*ins[n])
                        trial_ms = (timer() - t0) * 1e3
                        wms = (wall_clock() - w0) * 1e3 / inner[n]
                        ms = trial_ms / inner[n]
                        capped = inner[n] >= cfg.max_inner
                        short = trial_ms < cfg.min_trial_ms and not capped
                    history.append({"attempt": attempt, "trial": k, "side": n, "ms": ms, "wall_ms": wms,
                                    "inner": inner[n], "trial_ms": trial_ms, "short": short, "capped": capped})
                    measured_ms += trial_ms
                    if not short:
                        break
                    grow = cfg.min_trial_ms / max(trial_ms, 1e-9)
                    inner[n] = int(min(cfg.max_inner, max(inner[n] + 1, math.ceil(inner[n] * grow * 1.1))))
                acc[n].append(ms)
                wall[n].append(wms)
            k += 1
            if cfg.max_variant_s and measured_ms > cfg.max_variant_s * 1e3:
                time_capped = True  # the trial in progress was finished: every side has k trials
                break
            if decide and k >= cfg.min_trials and (k - cfg.min_trials) % cfg.check_every == 0:
                if all(cfg.settled(bootstrap_ratio_ci(acc[a], acc[b], cfg.n_boot, cfg.ci_level, cfg.seed))
                       for a, b in decide):
                    break
        ratios = {n: iqr_ratio(acc[n]) for n in names}
        pair_iqr = {f"{a}/{b}": iqr_ratio([x / y if y > 0 else math.inf for x, y in zip(acc[a], acc[b])]) for a, b in gate}
        if cfg.gate == "ci":  # 0 = decided or narrow; else the relative width of the worst interval
            widths = []
            for a, b in gate:
                lo, hi = bootstrap_ratio_ci(acc[a], acc[b], cfg.n_boot, cfg.ci_level, cfg.seed)
                w = hi / lo - 1 if lo > 0 else math.inf
                widths.append(0.0 if cfg.settled((lo, hi)) or w <= cfg.max_ci_width else w)
            worst = max(widths) if widths else 0.0
        else:
            worst = max(pair_iqr.values()) if pair_iqr else 0.0
        if time_capped and k < cfg.cap_min_trials:
            worst = math.inf
        limit = 0.0 if cfg.gate == "ci" else cfg.max_iqr_ratio
        if best is None or worst < best[0]:
            best = (worst, acc, wall, ratios, dict(inner), pair_iqr)
        if worst <= limit or attempt == cfg.retries + 1 or time_capped:
            _, acc, wall, ratios, inner_kept, pair_iqr = best
            kept = [h["trial_ms"] for h in history if not h["short"]]
            gap = None
            if cuda is None and clock_name != "wall":
                gaps = [w / c for n in names for c, w in zip(acc[n], wall[n]) if c > 0]
                gap = statistics.median(gaps) if gaps else None
            return SidesTiming(acc, {n: statistics.median(acc[n]) for n in names}, inner_kept, ratios,
                               best[0] <= limit, attempt, history, min(kept) if kept else 0.0,
                               wall, pair_iqr, time_capped, timer() - t_start, clock_name, gap,
                               gap is not None and gap > 1 + cfg.max_clock_gap, wall_clock() - w_start)
    raise AssertionError("unreachable")


def measure_pair(eager: Callable, candidate: Callable, make_inputs: Callable[[], list], cfg: TimingConfig | None = None,
                 timer: Timer | None = None) -> PairTiming:
    """Eager vs one candidate with :func:`measure_sides` (fixed trial count): the scorer's view.

    Raises:
        Whatever a side raises (the caller classifies it as a runtime crash).
    """
    s = measure_sides({"eager": eager, "candidate": candidate}, make_inputs, cfg, timer)
    return PairTiming(s.trials_ms["eager"], s.trials_ms["candidate"], s.ratio("eager", "candidate"), s.stable, s.attempts,
                      s.inner["eager"], s.iqr_ratio["eager"], s.iqr_ratio["candidate"], s.history)


def compile_candidate(gm: torch.nn.Module, example_inputs: list, backend: Any = "inductor",
                      options: dict | None = None, reset: bool = True) -> tuple[Callable, float]:
    """Compile ``gm`` for ``backend`` and force compilation with one call.

    Args:
        backend: a ``torch.compile`` backend name (``"inductor"``, ``"eager"``...), a backend
            callable ``(gm, example_inputs) -> callable``, or ``None`` to run ``gm`` as is.
        options: ``torch.compile(options=...)`` (Inductor only).
        reset: ``torch._dynamo.reset()`` first (False when compiling a second side in the
            same process: give each side its own copy of the graph instead).

    Returns:
        ``(compiled, seconds)``: the callable and the wall seconds of compile + first call.

    Raises:
        CompileError: ``torch.compile`` or the backend raised (Dynamo's
            ``BackendCompilerFailed``): error code 3.
        RunError: compilation succeeded but the first call of the compiled code raised:
            error code 2.
    """
    import torch._dynamo  # noqa: PLC0415  (env: torch._dynamo reads TORCHINDUCTOR_CACHE_DIR at import, which the profile CLI and its children set first; the params check imports this module through ProfileConfig)
    import torch._inductor.config as ic  # noqa: PLC0415  (env: imports torch._dynamo, as above)

    ic.fallback_random = True
    if backend is None:
        return gm, 0.0
    if reset:
        torch._dynamo.reset()
    t0 = time.perf_counter()
    try:
        compiled = torch.compile(gm, backend=backend, options=options, fullgraph=False, dynamic=False)
    except Exception as exc:  # noqa: BLE001 - bad backend name / options
        raise CompileError(f"{type(exc).__name__}: {exc}") from exc
    torch.manual_seed(0)
    try:
        compiled(*example_inputs)
    except torch._dynamo.exc.BackendCompilerFailed as exc:
        raise CompileError(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - compiled code ran and failed
        raise RunError(f"{type(exc).__name__}: {exc}") from exc
    return compiled, time.perf_counter() - t0


class CompileError(RuntimeError):
    """The candidate failed to compile (GraphNet error code 3)."""


class RunError(RuntimeError):
    """The compiled candidate raised when called (GraphNet error code 2)."""
