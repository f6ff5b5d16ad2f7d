"""GraphNet tolerance levels, per-output correctness at every level, error codes.

Source of the levels: GraphNet ``graph_net_bench/test_compiler_util.py``
(``tolerance_generator`` / ``calculate_tolerance_pair``). At level ``t`` (an integer, -10..5):

============  ==================  ===================
dtype         atol                rtol
============  ==================  ===================
float16       10^t                10^(3t/5)
bfloat16      10^t                10^(1.796t/5)
float32       10^t                10^(5.886t/5)
float64       10^(7t/5)           10^(7t/5)
int / bool    0 (exact)           0 (exact)
============  ==================  ===================

Both values are rounded to 3 significant digits, as GraphNet's benchmark does; with that
rounding t = -5 gives *exactly* the defaults of ``torch.testing.assert_close`` (fp16 1e-3/1e-5,
bf16 1.6e-2/1e-5, fp32 1.3e-6/1e-5, fp64 1e-7/1e-7, as (rtol, atol)). Complex dtypes use the
level of their real component (complex32 -> fp16, complex64 -> fp32, complex128 -> fp64);
any other dtype (float8 variants, quantized) is compared exactly, like ``assert_close``'s
fallback of (0, 0) and GraphNet's ``get_precision``.

The element test is ``torch.isclose``'s: ``|actual - expected| <= atol + rtol * |expected|``,
evaluated in float64; NaN matches NaN and an infinity matches the same infinity (our choice:
eager and compiled both producing NaN is agreement, not a compiler error). Tolerances grow
with ``t``, so a pass at ``t`` implies a pass at every larger level: each output is summarised by
``min_pass_t``, the smallest level it passes (``None``: fails at every level, e.g. a shape or
dtype mismatch). A sample passes at ``t`` iff every output's ``min_pass_t <= t``; scores
(:mod:`curate.score.scoring`) are recomputed from these integers without re-running anything.

Error codes (GraphNet / PassNet ES_t): :data:`ERROR_ACCURACY` = 1, :data:`ERROR_RUNTIME` = 2,
:data:`ERROR_COMPILE` = 3. A failed sample with code ``c`` is forgiven at levels ``t >= c``.

Trivial reference outputs (where a tolerance check passes almost any candidate):
``"constant"`` (>= 2 elements, all equal), ``"near_zero"`` (an all-zero output would pass at
``TRIVIAL_LEVEL`` = -5, i.e. ``max|expected| <= atol(-5)``), ``"empty"`` (no elements). Each
output also records ``zeros_pass_t``, the smallest level at which an all-zeros output passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

import torch
from torch.utils._pytree import tree_flatten

LEVELS: tuple[int, ...] = tuple(range(-10, 6))
"""Tolerance levels scored, t = -10 .. 5 (GraphNet)."""

ERROR_ACCURACY = 1
ERROR_RUNTIME = 2
ERROR_COMPILE = 3
ERROR_NAMES: dict[int, str] = {ERROR_ACCURACY: "accuracy", ERROR_RUNTIME: "runtime_crash", ERROR_COMPILE: "compile_failure"}
"""Error code -> name; the code is also the first level at which the failure is forgiven."""

TRIVIAL_LEVEL = -5
"""Level at which "an all-zero output would pass" makes a reference output ``near_zero``."""

# dtype name -> (atol exponent factor, rtol exponent factor): atol = 10^(a*t), rtol = 10^(r*t)
EXPONENTS: dict[str, tuple[float, float]] = {
    "float16": (1.0, 3 / 5),
    "bfloat16": (1.0, 1.796 / 5),
    "float32": (1.0, 5.886 / 5),
    "float64": (7 / 5, 7 / 5),
}
_COMPLEX_TO_REAL = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
_EXACT_KINDS = ("int", "uint", "bool")


def dtype_name(dtype: torch.dtype | str) -> str:
    """``torch.float32`` / ``"torch.float32"`` / ``"float32"`` -> ``"float32"``."""
    s = str(dtype)
    return s[len("torch."):] if s.startswith("torch.") else s


def _sig3(x: float) -> float:
    return float(f"{x:.3g}")


def tolerance(t: int, dtype: torch.dtype | str) -> tuple[float, float]:
    """``(atol, rtol)`` at level ``t`` for ``dtype`` (see the module table); (0, 0) = exact.

    Args:
        t: tolerance level (any integer; the scored range is -10..5).
        dtype: a ``torch.dtype`` or its name (``"float32"``, ``"torch.bfloat16"``...).
    """
    name = dtype_name(dtype)
    name = _COMPLEX_TO_REAL.get(name, name)
    if name not in EXPONENTS:
        return 0.0, 0.0
    a, r = EXPONENTS[name]
    return _sig3(10 ** (a * t)), _sig3(10 ** (r * t))


def is_exact_dtype(dtype: torch.dtype | str) -> bool:
    """True when outputs of ``dtype`` must match exactly at every level (ints, bool, others)."""
    name = _COMPLEX_TO_REAL.get(dtype_name(dtype), dtype_name(dtype))
    return name not in EXPONENTS


@dataclass
class OutputComparison:
    """Comparison of one output (a flattened leaf of the output pytree).

    Attributes:
        index: position in the flattened outputs.
        dtype: dtype name of the expected (reference) output ("none"/"int"/... for non-tensors).
        shape: expected shape (``[]`` for scalars).
        match_structure: shapes and dtypes agree (False: fails at every level).
        max_abs_diff: max |actual - expected| (float64; inf when non-finite values disagree,
            nan when not comparable).
        max_rel_diff: max |actual - expected| / |expected| over elements with expected != 0.
        min_pass_t: smallest level in ``LEVELS`` at which the output passes, None if none.
        passes: level -> pass (bool), for every level in ``LEVELS``.
        trivial: None, "constant", "near_zero" or "empty" (see module docstring).
        zeros_pass_t: smallest level at which an all-zero output would pass, None if none.
    """

    index: int
    dtype: str
    shape: list[int]
    match_structure: bool
    max_abs_diff: float
    max_rel_diff: float
    min_pass_t: int | None
    passes: dict[int, bool] = field(repr=False)
    trivial: str | None
    zeros_pass_t: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        d = asdict(self)
        d["passes"] = {str(k): v for k, v in self.passes.items()}
        return d


def _as_tensor(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor):
        t = x.detach()
        if t.is_quantized:
            t = t.dequantize()
        return t.cpu()
    if isinstance(x, bool):
        return torch.tensor(x, dtype=torch.bool)
    if isinstance(x, int):
        return torch.tensor(x, dtype=torch.int64)
    if isinstance(x, float):
        return torch.tensor(x, dtype=torch.float64)
    return None


def _close_mask(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """Element-wise isclose in float64 with NaN == NaN and matching infinities."""
    if expected.is_complex():
        a, e = actual.to(torch.complex128), expected.to(torch.complex128)
    else:
        a, e = actual.to(torch.float64), expected.to(torch.float64)
    return torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def first_pass(check, levels: Sequence[int]) -> tuple[dict[int, bool], int | None]:
    """Smallest level in ascending ``levels`` where ``check(t)`` holds, by bisection, and the
    pass of every level. ``check`` must be monotone in ``t`` (true at ``t`` -> true at every
    larger level: the module docstring's argument, tolerances grow with ``t``), so about
    log2(16) = 4 full-tensor checks replace 16 with the same answer."""
    levels = list(levels)
    lo, hi = 0, len(levels)  # invariant: levels[:lo] fail, levels[hi:] pass
    while lo < hi:
        mid = (lo + hi) // 2
        if bool(check(levels[mid])):
            hi = mid
        else:
            lo = mid + 1
    first = levels[lo] if lo < len(levels) else None
    return {t: first is not None and t >= first for t in levels}, first


def level_check(actual64: torch.Tensor, expected64: torch.Tensor, dtype: torch.dtype):
    """``t -> torch.isclose(actual, expected, *tolerance(t, dtype), equal_nan=True).all()``
    for real float64 tensors, with the float64 differences computed once instead of per level.

    Same element rule as ``torch.isclose``: NaN matches NaN, an infinity only the same
    infinity, any other non-finite pair fails at every level; finite pairs pass when
    ``|a - e| <= atol + rtol * |e|``.
    """
    both_nan = torch.isnan(actual64) & torch.isnan(expected64)
    same_inf = torch.isinf(actual64) & (actual64 == expected64)
    special = both_nan | same_inf
    finite = torch.isfinite(actual64) & torch.isfinite(expected64)
    if bool((~special & ~finite).any()):
        return lambda t: False
    diff = (actual64 - expected64).abs()
    abs_e = expected64.abs()

    def check(t: int) -> bool:
        atol, rtol = tolerance(t, dtype)
        return bool(((diff <= atol + rtol * abs_e) | special).all())

    return check


def trivial_reason(expected: Any, level: int = TRIVIAL_LEVEL) -> str | None:
    """Why a reference output makes tolerance checks meaningless, or None.

    Returns ``"empty"`` (no elements), ``"constant"`` (>= 2 elements, all equal, NaN-aware),
    ``"near_zero"`` (all-zeros would pass at ``level``: ``max|expected| <= atol(level) +
    rtol(level)*|expected|`` element-wise), else None. Non-tensor outputs are never trivial.
    """
    e = _as_tensor(expected)
    if e is None:
        return None
    if e.numel() == 0:
        return "empty"
    atol, rtol = tolerance(level, e.dtype)
    if bool(_close_mask(torch.zeros_like(e), e, atol, rtol).all()):
        return "near_zero"
    if e.numel() >= 2:
        flat = e.reshape(-1)
        first = flat[:1].expand_as(flat)
        if e.is_floating_point() or e.is_complex():
            if bool(_close_mask(flat, first, 0.0, 0.0).all()):
                return "constant"
        elif bool((flat == first).all()):
            return "constant"
    return None


CHUNK = 1 << 18
"""Elements per chunk of :func:`compare_output` on large real floating outputs."""


def _compare_chunked(a: torch.Tensor, e: torch.Tensor, index: int, levels: list[int], chunk: int) -> OutputComparison:
    """:func:`compare_output` of real floating ``a`` and ``e`` of one shape and dtype, computed per
    chunk of ``chunk`` elements: every field equal to the whole-tensor computation. Exact because
    every quantity is element-wise and then reduced: a level passes iff it passes on every chunk,
    so a first passing level (``min_pass_t``, ``zeros_pass_t``) is the largest of the chunks' (None
    dominates); ``max_abs_diff`` is the largest of the chunks'; ``max_rel_diff`` the largest over
    chunks with a non-zero reference element (NaN when one chunk's is, as torch's ``max``; none
    anywhere: 0 when every difference is 0, else inf, as the whole-tensor rule); ``near_zero`` holds
    iff it holds on every chunk, ``constant`` iff every chunk equals the tensor's first element (NaN-aware). Keeps the float64 working set
    of one chunk in cache (an 8.4 M-element float32 output: 3.8-6.5 s whole on this machine)."""
    af, ef = a.detach().reshape(-1), e.detach().reshape(-1)
    n = ef.numel()
    first_e = ef[:1].to(torch.float64)
    zt_atol, zt_rtol = tolerance(TRIVIAL_LEVEL, e.dtype)
    near_zero = constant = True
    max_abs, rels, firsts, zfirsts = 0.0, [], [], []
    for k in range(0, n, chunk):
        a64, e64 = af[k:k + chunk].to(torch.float64), ef[k:k + chunk].to(torch.float64)
        zeros = torch.zeros_like(e64)
        if near_zero:
            near_zero = bool(_close_mask(zeros, e64, zt_atol, zt_rtol).all())
        if constant:
            constant = bool(torch.isclose(e64, first_e.expand_as(e64), rtol=0.0, atol=0.0, equal_nan=True).all())
        both_nan = torch.isnan(a64) & torch.isnan(e64)
        same_inf = torch.isinf(a64) & (a64 == e64)
        diff = (a64 - e64).abs()
        diff = torch.where(both_nan | same_inf, zeros, diff)
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        max_abs = max(max_abs, float(diff.max()))
        nz = e64.abs() > 0
        if bool(nz.any()):
            rels.append(float((diff[nz] / e64.abs()[nz]).max()))
        firsts.append(first_pass(level_check(a64, e64, e.dtype), levels)[1])
        zfirsts.append(first_pass(level_check(zeros, e64, e.dtype), levels)[1])
    if any(math.isnan(r) for r in rels):  # torch's max propagates NaN (inf / inf at a -inf vs finite pair)
        max_rel = math.nan
    else:
        max_rel = max(rels) if rels else (0.0 if max_abs == 0 else math.inf)
    first = None if any(f is None for f in firsts) else max(firsts)
    zp = None if any(f is None for f in zfirsts) else max(zfirsts)
    trivial = "near_zero" if near_zero else ("constant" if constant and n >= 2 else None)
    return OutputComparison(index, dtype_name(e.dtype), list(e.shape), True, max_abs, max_rel, first,
                            {t: first is not None and t >= first for t in levels}, trivial, zp)


def compare_output(actual: Any, expected: Any, index: int = 0, levels: Sequence[int] = LEVELS,
                   chunk: int | None = CHUNK) -> OutputComparison:
    """Compare one candidate output with its reference at every level.

    Args:
        actual: candidate output (tensor, Python number or None).
        expected: reference (eager) output of the same kind.
        index: position of this output in the flattened outputs.
        levels: levels to evaluate (ascending), default -10..5.
        chunk: real floating outputs of one shape and dtype above this many elements are
            compared per chunk (:func:`_compare_chunked`: the same fields); None: whole.

    Tensors must agree in shape and dtype (GraphNet counts a dtype mismatch as a failure at
    every level); integer/bool (and unknown) dtypes must match exactly.
    """
    levels = list(levels)
    e, a = _as_tensor(expected), _as_tensor(actual)
    if (chunk and e is not None and a is not None and e.numel() > chunk and a.shape == e.shape and a.dtype == e.dtype
            and e.is_floating_point() and not is_exact_dtype(e.dtype)):
        return _compare_chunked(a, e, index, levels, chunk)
    nan = float("nan")
    if e is None or a is None:  # None / non-numeric leaves: exact equality
        same = (expected is None and actual is None) or (e is None and a is None and expected == actual)
        passes = {t: same for t in levels}
        dname = dtype_name(e.dtype) if e is not None else type(expected).__name__.lower()
        return OutputComparison(index, dname, list(e.shape) if e is not None else [], same, 0.0 if same else nan, 0.0 if same else nan,
                                levels[0] if same else None, passes, None, None)
    dname = dtype_name(e.dtype)
    shape = list(e.shape)
    structure = a.shape == e.shape and a.dtype == e.dtype
    trivial = trivial_reason(e)
    if is_exact_dtype(e.dtype):
        zeros = torch.zeros_like(e)
        zp = levels[0] if bool((zeros == e).all()) else None
    elif e.is_complex():
        _, zp = first_pass(lambda t: _close_mask(torch.zeros_like(e), e, *tolerance(t, e.dtype)).all(), levels)
    else:
        e64_ = e.to(torch.float64)
        _, zp = first_pass(level_check(torch.zeros_like(e64_), e64_, e.dtype), levels)
    if not structure:
        return OutputComparison(index, dname, shape, False, nan, nan, None, {t: False for t in levels}, trivial, zp)
    if is_exact_dtype(e.dtype):
        same = bool((a == e).all()) if e.numel() else True
        diff = (a.to(torch.float64) - e.to(torch.float64)).abs() if e.numel() else torch.zeros(1, dtype=torch.float64)
        max_abs = float(diff.max()) if diff.numel() else 0.0
        nz = e.to(torch.float64).abs() > 0
        max_rel = float((diff[nz] / e.to(torch.float64).abs()[nz]).max()) if e.numel() and bool(nz.any()) else 0.0
        return OutputComparison(index, dname, shape, True, max_abs, max_rel, levels[0] if same else None,
                                {t: same for t in levels}, trivial, zp)
    cdt = torch.complex128 if e.is_complex() else torch.float64
    a64, e64 = a.to(cdt), e.to(cdt)
    if e.numel():
        both_nan = torch.isnan(a64) & torch.isnan(e64) if not e.is_complex() else torch.zeros_like(e64, dtype=torch.bool)
        same_inf = torch.isinf(a64) & (a64 == e64)
        diff = (a64 - e64).abs()
        diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        max_abs = float(diff.max())
        nz = e64.abs() > 0
        max_rel = float((diff[nz] / e64.abs()[nz]).max()) if bool(nz.any()) else (0.0 if max_abs == 0 else math.inf)
    else:
        max_abs = max_rel = 0.0
    if e.is_complex():
        passes, first = first_pass(lambda t: _close_mask(a, e, *tolerance(t, e.dtype)).all(), levels)
    else:
        passes, first = first_pass(level_check(a64, e64, e.dtype), levels)
    return OutputComparison(index, dname, shape, True, max_abs, max_rel, first, passes, trivial, zp)


def flatten_outputs(outputs: Any) -> tuple[list[Any], Any]:
    """Flatten an output pytree (tuple/list/dict of tensors) into ``(leaves, spec)``."""
    return tree_flatten(outputs)


def compare_outputs(actual: Any, expected: Any, levels: Sequence[int] = LEVELS) -> list[OutputComparison]:
    """Compare every output leaf of ``actual`` with ``expected`` (pytrees).

    A different number of leaves or tree structure makes every output fail at every level
    (returned comparisons then carry ``match_structure=False``).
    """
    a_leaves, a_spec = flatten_outputs(actual)
    e_leaves, e_spec = flatten_outputs(expected)
    if len(a_leaves) != len(e_leaves) or str(a_spec) != str(e_spec):
        out = []
        for i, e in enumerate(e_leaves):
            c = compare_output(None if not isinstance(e, torch.Tensor) else torch.empty(0), e, i, levels)
            c.match_structure, c.min_pass_t, c.passes = False, None, {t: False for t in levels}
            out.append(c)
        if not out:  # expected no outputs, candidate returned some
            out.append(OutputComparison(0, "none", [], False, float("nan"), float("nan"), None,
                                        {t: False for t in levels}, None, None))
        return out
    return [compare_output(a, e, i, levels) for i, (a, e) in enumerate(zip(a_leaves, e_leaves))]


def sample_min_pass_t(min_pass_ts: Iterable[int | None]) -> int | None:
    """Smallest level at which a sample passes, given its outputs' ``min_pass_t`` (None: never).

    A sample with no outputs passes at every level (returns -10).
    """
    worst = LEVELS[0]
    for m in min_pass_ts:
        if m is None:
            return None
        worst = max(worst, m)
    return worst


def passes_at(min_pass_t: int | None, t: int) -> bool:
    """Whether a sample (or output) summarised by ``min_pass_t`` is correct at level ``t``."""
    return min_pass_t is not None and min_pass_t <= t
