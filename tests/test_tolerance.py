"""GraphNet tolerance levels and per-output comparison (curate.tolerance)."""

import math

import pytest
import torch
from torch.testing._comparison import _DTYPE_PRECISIONS

from curate.tolerance import (
    LEVELS,
    compare_output,
    compare_outputs,
    passes_at,
    sample_min_pass_t,
    tolerance,
    trivial_reason,
)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_level_minus5_is_assert_close_default(dtype):
    rtol, atol = _DTYPE_PRECISIONS[dtype]
    assert tolerance(-5, dtype) == (atol, rtol)


def test_formulas_at_other_levels():
    # hand-computed: fp32 t=-2 -> atol 1e-2, rtol 10^(-2*5.886/5)=10^-2.3544=4.42e-3
    assert tolerance(-2, "float32") == (0.01, 0.00442)
    assert tolerance(1, torch.float16) == (10.0, 3.98)  # 10^(3/5)=3.981
    assert tolerance(-10, torch.float64) == (1e-14, 1e-14)
    assert tolerance(0, torch.bfloat16) == (1.0, 1.0)
    assert tolerance(3, torch.int64) == (0.0, 0.0)
    assert tolerance(3, torch.bool) == (0.0, 0.0)
    assert tolerance(-5, torch.complex64) == tolerance(-5, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_minus5_verdict_matches_assert_close(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, generator=g, dtype=dtype)
    atol, rtol = tolerance(-5, dtype)
    for factor, ok in [(0.5, True), (2.0, False)]:
        y = x + factor * (atol + rtol * x.abs())
        c = compare_output(y, x)
        try:
            torch.testing.assert_close(y, x)
            ref = True
        except AssertionError:
            ref = False
        assert ref is ok and c.passes[-5] is ok


def test_min_pass_t_is_first_level_and_monotone():
    x = torch.ones(10)
    c = compare_output(x + 3e-3, x)  # fp32: passes when 1e^t + rtol(t) >= 3e-3
    # t=-3: atol 1e-3 + rtol 10^-3.53=2.96e-4 -> 1.3e-3 < 3e-3 fails; t=-2: 1e-2 passes
    assert c.min_pass_t == -2
    assert [c.passes[t] for t in LEVELS] == [t >= -2 for t in LEVELS]
    assert math.isclose(c.max_abs_diff, 3e-3, rel_tol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_dtypes(dtype):
    x = torch.full((4,), 2.0, dtype=dtype)
    y = x.clone()
    y[0] = 2.0 + 2 ** -6  # representable in fp16 and bf16: rel diff 0.0078
    c = compare_output(y, x)
    # fp16: t=-3 allows 1e-3 + 2*0.0158 -> passes; t=-4 allows 1e-4 + 2*0.00398 = 0.008 < 0.0156 fails
    # bf16: t=-5 allows 1e-5 + 2*0.016 = 0.032 passes; t=-6 allows 1e-6 + 2*0.007 = 0.014 fails
    assert c.min_pass_t == (-3 if dtype == torch.float16 else -5)
    assert c.dtype == str(dtype).split(".")[1]


def test_integers_and_bools_exact():
    a = torch.tensor([1, 2, 3])
    assert compare_output(a.clone(), a).min_pass_t == -10
    c = compare_output(torch.tensor([1, 2, 4]), a)
    assert c.min_pass_t is None and not any(c.passes.values())
    b = torch.tensor([True, False])
    assert compare_output(torch.tensor([True, True]), b).min_pass_t is None


def test_shape_or_dtype_mismatch_fails_everywhere():
    x = torch.ones(3)
    assert compare_output(torch.ones(4), x).min_pass_t is None
    assert compare_output(torch.ones(3, dtype=torch.float64), x).min_pass_t is None
    assert compare_outputs((x,), (x, x))[0].min_pass_t is None


def test_nan_agreement_and_disagreement():
    x = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare_output(x.clone(), x).min_pass_t == -10
    y = torch.tensor([1.0, 0.0, float("inf")])
    c = compare_output(y, x)
    assert c.min_pass_t is None and c.max_abs_diff == math.inf


def test_trivial_reference_flags():
    assert trivial_reason(torch.full((5,), 3.0)) == "constant"
    assert trivial_reason(torch.full((5,), 1e-7)) == "near_zero"
    assert trivial_reason(torch.zeros(0)) == "empty"
    assert trivial_reason(torch.randn(5)) is None
    assert trivial_reason(torch.tensor([2.0])) is None  # a single element is not "constant"
    assert trivial_reason(torch.tensor([4, 4, 4])) == "constant"


def test_sample_level_aggregation():
    assert sample_min_pass_t([-7, -3, -10]) == -3
    assert sample_min_pass_t([-7, None]) is None
    assert sample_min_pass_t([]) == -10
    assert passes_at(-3, -3) and not passes_at(-3, -4) and not passes_at(None, 5)


def test_pytree_outputs():
    x = {"a": torch.ones(2), "b": (torch.tensor([1]), None)}
    cs = compare_outputs({"a": torch.ones(2) + 1e-3, "b": (torch.tensor([1]), None)}, x)
    assert [c.min_pass_t for c in cs][1:] == [-10, -10]
    # 1e-3 diff on 1.0: t=-3 allows 1e-3 + 2.96e-4 -> passes; t=-4 allows 1e-4 + 6.6e-5 -> fails
    assert cs[0].min_pass_t == -3


def _fields(c):
    d = c.to_dict()
    return {k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


@pytest.mark.parametrize("case", ["close", "far", "nan_inf", "near_zero", "constant", "zeros_ref", "one_bad", "bf16"])
def test_chunked_comparison_gives_every_field_of_the_whole_tensor_comparison(case):
    """compare_output per chunk (large outputs) against the whole-tensor computation: every
    field equal, on outputs that exercise each rule (NaN / inf pairs, a reference without a
    non-zero element, near-zero and constant references, one far element in one chunk)."""
    g = torch.Generator().manual_seed(0)
    e = torch.randn(1000, generator=g)
    a = e + 1e-6 * torch.randn(1000, generator=g)
    if case == "far":
        a = e + 0.1 * torch.randn(1000, generator=g)
    elif case == "nan_inf":
        e[[3, 500]] = float("nan")
        a[[3, 500]] = float("nan")
        e[700], a[700] = float("inf"), float("inf")
        e[900], a[900] = float("-inf"), 1.0  # a non-finite pair that fails every level
    elif case == "near_zero":
        e = 1e-7 * torch.randn(1000, generator=g)
        a = e.clone()
    elif case == "constant":
        e = torch.full((1000,), 2.5)
        a = e + 1e-7
    elif case == "zeros_ref":
        e = torch.zeros(1000)
        a = 1e-4 * torch.randn(1000, generator=g)
    elif case == "one_bad":
        a[777] += 1.0
    elif case == "bf16":
        e, a = e.to(torch.bfloat16), a.to(torch.bfloat16)
    whole = compare_output(a.reshape(10, 100), e.reshape(10, 100), 2, chunk=None)
    for chunk in (7, 128, 999):
        assert _fields(compare_output(a.reshape(10, 100), e.reshape(10, 100), 2, chunk=chunk)) == _fields(whole), chunk
    if case == "near_zero":
        assert whole.trivial == "near_zero"
    if case == "constant":
        assert whole.trivial == "constant"
    if case == "one_bad":
        assert whole.min_pass_t > compare_output(e + 1e-6, e, chunk=None).min_pass_t
