"""Comparisons of the scorer's checked and timed outputs with the reference's.

Used by the parent's checks (:mod:`curate.score.defenses.checks`) and by the timed-output checks
of the clock (:mod:`curate.score.defenses.clock`); nothing here times or runs anything.

- :func:`fast_min_pass_t` / :func:`chunked_comparisons`: :func:`curate.tolerance.compare_outputs`
  computed per chunk of :data:`CHECK_CHUNK` elements (exact: every level test is element-wise);
- :func:`independence_violations`: outputs that do not change with the input while the reference's do;
- :func:`rng_stats_agree`: RNG-dependent outputs compared by statistics against two reference runs.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from curate.tolerance import (
    LEVELS,
    OutputComparison,
    compare_output,
    compare_outputs,
    first_pass,
    is_exact_dtype,
    level_check,
    sample_min_pass_t,
)

#: Standard errors of sampling noise an RNG output's statistic may differ from eager's by
#: (:func:`rng_stats_agree`).
RNG_STATS_Z = 6.0


def output_leaves(out: Any) -> list:
    """The leaves of a (nested) output, in pytree order (tensors and non-tensors alike)."""
    return tree_flatten(out)[0]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
    return False


def independence_violations(cand_a: Any, cand_b: Any, ref_a: Any, ref_b: Any) -> list[int]:
    """Output indices whose candidate value is identical on two different inputs while the
    reference's differs (a constant, zero or replayed output). Only tensor leaves count."""
    ca, cb, ra, rb = (output_leaves(x) for x in (cand_a, cand_b, ref_a, ref_b))
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
    rule and level bisection (:func:`curate.tolerance.level_check`, :func:`curate.tolerance.first_pass`)
    on this chunk only."""
    check = level_check(a.to(torch.float64), e.to(torch.float64), dtype)
    if check(LEVELS[lo]):
        return lo
    _, first = first_pass(check, LEVELS[lo + 1:])
    return None if first is None else LEVELS.index(first)


def chunked_comparisons(actual: Any, expected: Any, chunk: int = CHECK_CHUNK) -> list:
    """:func:`curate.tolerance.compare_outputs` for the scorer's checked calls, computed per chunk
    for leaves above ``chunk`` elements: the same ``dtype``, ``shape``, ``match_structure``,
    ``min_pass_t``, ``passes`` and ``max_abs_diff`` (a maximum of element-wise quantities, exact per
    chunk as in :func:`fast_min_pass_t`); ``max_rel_diff`` is the largest over chunks with a
    non-zero reference element (nan when no chunk has one), ``trivial`` / ``zero_pass_t`` are not
    computed for chunked leaves (None: the scorer reads neither from these comparisons)."""
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


def rng_stats_agree(actual, ref_a, ref_b, slack: float = 4.0, z: float = RNG_STATS_Z) -> bool:
    """Compare an RNG-dependent output by statistics: shape and dtype equal, and mean, standard
    deviation and share of exact zeros each within the larger of two tolerances, plus 2% of the
    reference's magnitude:

    * ``slack`` times the gap between two reference runs with different seeds (``ref_a``,
      ``ref_b``): it carries variation the elements do not show (one random scalar broadcast);
    * ``z`` standard errors of the difference of two independent draws, from ``ref_a``'s elements
      taken as i.i.d. (n elements, mean m, standard deviation s, fourth central moment m4, zero
      share q): the mean's ``s / sqrt(n)``, the standard deviation's ``sqrt((m4 - s^4) / n) / (2 s)``
      (delta method on the sample variance), the zero share's ``sqrt(q (1 - q) / n)`` with q at
      least 1/n, each times ``sqrt(2)``.

    The gap alone is one draw of a difference, so an honest output failed whenever that draw came
    out small: about 1.6e-4 per call on a 16x256 dropout (p = 0.1, inputs 3 N(0, 1); 100,000
    simulated calls), i.e. a few tenths of a percent per evaluation of ~20 checked calls. With
    ``z`` = 6 a normal statistic's false alarm is below 2e-9 per statistic and call. Inputs with
    elements shared between the draws (dropout of one input) vary less than i.i.d. elements, so
    the standard error errs towards passing; cheats this must catch move a statistic by far more
    (a skipped dropout: zero share 0 against p; another rate, a stale or shifted output)."""
    if not (isinstance(actual, torch.Tensor) and actual.shape == ref_a.shape and actual.dtype == ref_a.dtype):
        return False
    if not actual.is_floating_point():
        return bool(torch.equal(actual.sort().values if actual.dim() else actual, ref_a.sort().values if ref_a.dim() else ref_a))

    def flat(x):
        return x.detach().double().reshape(-1)

    def stats(x):
        return [float(x.mean()), float(x.std()) if x.numel() > 1 else 0.0, float((x == 0).double().mean())]

    r = flat(ref_a)
    sa, sr, sb = stats(flat(actual)), stats(r), stats(flat(ref_b))
    scale = [abs(sr[1]) + abs(sr[0]), abs(sr[1]), 1.0]
    n = max(r.numel(), 1)
    sd, q = sr[1], min(max(sr[2], 1.0 / n), 1.0 - 1.0 / n) if n > 1 else 0.5
    m4 = float(((r - sr[0]) ** 4).mean()) if r.numel() else 0.0
    se = [sd / math.sqrt(n), math.sqrt(max(m4 - sd ** 4, 0.0) / n) / (2 * sd) if sd > 0 else 0.0, math.sqrt(q * (1 - q) / n)]
    return all(abs(x - r_) <= max(slack * abs(r_ - b), z * math.sqrt(2) * e) + 0.02 * s
               for x, r_, b, s, e in zip(sa, sr, sb, scale, se))
