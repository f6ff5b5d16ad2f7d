"""Timing protocol: eager vs a candidate (Inductor or any ``torch.compile`` backend / callable).

Protocol (DESIGN.md §4: GraphNet's benchmark and PyTorch's dynamo benchmark harness):

1. compile the candidate (wall seconds recorded; an exception is error code 3, compile failure);
2. one untimed call per side (first-call costs: lazy init, cache loads);
3. ``warmup`` calls per side;
4. ``trials`` interleaved trials, eager then candidate, so clock drift and neighbours' load hit
   both sides alike; each trial times ``inner`` back-to-back calls with
   :func:`time.perf_counter` and records the mean per call (ms). ``inner`` is chosen once from
   the warm eager time so a trial lasts at least ``min_trial_ms``;
5. per side the median; ``speedup = median(eager) / median(candidate)``;
6. noise gate: when IQR/median of either side exceeds ``max_iqr_ratio`` (GraphNet: 0.2) the
   trials are repeated (up to ``retries`` times); if still noisy the result is ``unstable``
   and the least noisy attempt (smallest max IQR/median of the two sides) is kept.

Every side gets its own fresh clones of the inputs (``make_inputs`` is called per side), so
an in-place op of one side never feeds the other; the RNG is re-seeded before each call with
``seed``, so random ops draw the same numbers on both sides (Inductor additionally needs
``torch._inductor.config.fallback_random = True``, set by :func:`compile_candidate`).

The scorer reuses :func:`compile_candidate` + :func:`measure_pair` with its own candidate.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import torch

Timer = Callable[[], float]
"""Returns seconds (``time.perf_counter`` by default; tests inject noisy timers)."""


@dataclass
class TimingConfig:
    """Knobs of the protocol (defaults: GraphNet warm-up 3; 30 trials like PyTorch's dynamo
    benchmark harness rather than GraphNet's 5, so the bootstrap interval of the long-tail
    test has something to resample).

    Attributes:
        warmup: untimed calls per side after the first untimed call.
        trials: interleaved timed trials per side.
        min_trial_ms: a trial lasts at least this long (ms); sets ``inner``.
        max_inner: cap on calls per trial.
        max_iqr_ratio: noise gate threshold on IQR / median (per side).
        retries: re-measurements when the gate fires before ``unstable``.
        seed: RNG seed set before every call.
    """

    warmup: int = 3
    trials: int = 30
    min_trial_ms: float = 10.0
    max_inner: int = 1000
    max_iqr_ratio: float = 0.2
    retries: int = 2
    seed: int = 0


@dataclass
class PairTiming:
    """Result of :func:`measure_pair` (times in ms per call).

    Attributes:
        eager_ms, candidate_ms: per-trial times (paired by index) of the first stable attempt,
            else of the least noisy one.
        speedup: median(eager_ms) / median(candidate_ms).
        stable: False when the noise gate still fired after all retries.
        attempts: measurement attempts made (1 + retries used).
        inner: calls per trial.
        iqr_ratio_eager, iqr_ratio_candidate: IQR / median of the final attempt.
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


def _call(fn: Callable, inputs: list, seed: int) -> Any:
    torch.manual_seed(seed)
    return fn(*inputs)


def measure_pair(eager: Callable, candidate: Callable, make_inputs: Callable[[], list], cfg: TimingConfig | None = None,
                 timer: Timer = time.perf_counter) -> PairTiming:
    """Time ``eager`` vs ``candidate`` with the module's protocol (steps 2-6).

    Args:
        eager, candidate: callables taking the inputs positionally.
        make_inputs: returns a fresh list of input tensors (called once per side per attempt).
        cfg: protocol knobs.
        timer: clock in seconds.

    Raises:
        Whatever a side raises (the caller classifies it as a runtime crash).
    """
    cfg = cfg or TimingConfig()
    ins_e, ins_c = make_inputs(), make_inputs()
    for fn, ins in ((eager, ins_e), (candidate, ins_c)):
        _call(fn, ins, cfg.seed)  # untimed first call
        for _ in range(cfg.warmup):
            _call(fn, ins, cfg.seed)
    t0 = timer()
    _call(eager, ins_e, cfg.seed)
    one_ms = max((timer() - t0) * 1e3, 1e-6)
    inner = int(min(cfg.max_inner, max(1, math.ceil(cfg.min_trial_ms / one_ms))))
    history = []
    best = None
    for attempt in range(1, cfg.retries + 2):
        if attempt > 1:
            ins_e, ins_c = make_inputs(), make_inputs()
        e_ms, c_ms = [], []
        for _ in range(cfg.trials):
            for fn, ins, acc in ((eager, ins_e, e_ms), (candidate, ins_c, c_ms)):
                torch.manual_seed(cfg.seed)
                t0 = timer()
                for _ in range(inner):
                    fn(*ins)
                acc.append((timer() - t0) * 1e3 / inner)
        re, rc = iqr_ratio(e_ms), iqr_ratio(c_ms)
        history.append({"attempt": attempt, "iqr_ratio_eager": re, "iqr_ratio_candidate": rc})
        stable = re <= cfg.max_iqr_ratio and rc <= cfg.max_iqr_ratio
        if best is None or max(re, rc) < max(best[2], best[3]):
            best = (e_ms, c_ms, re, rc)
        if stable or attempt == cfg.retries + 1:
            e_ms, c_ms, re, rc = best  # the gate still fires: keep the least noisy attempt
            me, mc = statistics.median(e_ms), statistics.median(c_ms)
            return PairTiming(e_ms, c_ms, me / mc if mc > 0 else math.inf, stable, attempt, inner, re, rc, history)
    raise AssertionError("unreachable")


def compile_candidate(gm: torch.nn.Module, example_inputs: list, backend: Any = "inductor",
                      options: dict | None = None) -> tuple[Callable, float]:
    """Compile ``gm`` for ``backend`` and force compilation with one call.

    Args:
        backend: a ``torch.compile`` backend name (``"inductor"``, ``"eager"``...), a backend
            callable ``(gm, example_inputs) -> callable``, or ``None`` to run ``gm`` as is.
        options: ``torch.compile(options=...)`` (Inductor only).

    Returns:
        ``(compiled, seconds)``: the callable and the wall seconds of compile + first call.

    Raises:
        CompileError: ``torch.compile`` or the backend raised (Dynamo's
            ``BackendCompilerFailed``): error code 3.
        RunError: compilation succeeded but the first call of the compiled code raised:
            error code 2.
    """
    import torch._dynamo
    import torch._inductor.config as ic

    ic.fallback_random = True
    if backend is None:
        return gm, 0.0
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


def bootstrap_speedup_ci(eager_ms: list[float], candidate_ms: list[float], n_boot: int = 2000, level: float = 0.95,
                         seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of median(eager) / median(candidate).

    Resamples trial indices with replacement (pairs stay together: interleaved trials share
    their moment's load). Efron & Tibshirani, *An Introduction to the Bootstrap*, ch. 13.

    Returns:
        ``(low, high)`` at ``level`` (two-sided).
    """
    import numpy as np

    e, c = np.asarray(eager_ms, dtype=float), np.asarray(candidate_ms, dtype=float)
    if len(e) == 0 or len(e) != len(c):
        raise ValueError(f"bootstrap needs paired trials, got {len(e)} eager and {len(c)} candidate")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(e), size=(n_boot, len(e)))
    ratios = np.median(e[idx], axis=1) / np.median(c[idx], axis=1)
    a = (1 - level) / 2
    return float(np.quantile(ratios, a)), float(np.quantile(ratios, 1 - a))
