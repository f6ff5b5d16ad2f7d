"""Hand-computed S_t / ES_t (curate.score.scoring) on small sample sets."""

import math

import pytest
import torch

from curate.score.scoring import parse_graphnet_log, score_curve, score_samples, score_table
from curate.tolerance import LEVELS, compare_outputs, sample_min_pass_t


def ok(s, mp=-10, task="a"):
    return {"speedup": s, "error_code": None, "min_pass_t": mp, "task_id": task}


def fail(code, task="a"):
    return {"speedup": None, "error_code": code, "min_pass_t": None, "task_id": task}


def close(x, y):
    return math.isclose(x, y, rel_tol=1e-12)


def test_all_correct_with_a_slowdown():
    rows = [ok(2.0), ok(0.5)]
    d = score_samples(rows, t=0, p=0.1, b=0.1)
    expect = math.sqrt(2.0 * 0.5 ** 1.1)  # slow sample rectified to s^(p+1)
    assert close(d["S_t"], expect) and close(d["ES_t"], expect)
    assert d["lambda"] == 1.0 and d["eta"] == 0.5 and close(d["alpha"], 1.0) and close(d["beta"], 0.5)
    # p = 0 (GraphNet code): plain geometric mean
    assert close(score_samples(rows, 0, p=0.0)["ES_t"], 1.0)


def test_speedup_exactly_one_scores_one_everywhere():
    for d in score_curve([ok(1.0), ok(1.0)]):
        assert d["S_t"] == 1.0 and d["ES_t"] == 1.0 and d["eta"] == 0.0


def test_each_error_code_below_and_above_its_level_paper():
    rows = [ok(2.0), fail(2), fail(3), ok(4.0, mp=0)]  # last: accuracy error below t=0
    c = {d["t"]: d for d in score_curve(rows, p=0.1, b=0.1, convention="paper")}
    b = 0.1
    assert close(c[-1]["S_t"], (2 * b ** 3) ** 0.25) and close(c[-1]["ES_t"], (2 * b ** 3) ** 0.25)
    assert c[-1]["pi_1"] == pytest.approx(1 / 3)
    assert close(c[0]["ES_t"], (2 * 4 * b * b) ** 0.25)
    assert close(c[1]["ES_t"], (2 * 4 * b * b) ** 0.25)  # runtime crash not forgiven below t=2
    assert close(c[2]["ES_t"], (2 * 4 * 1 * b) ** 0.25)  # ... forgiven from t=2
    assert close(c[3]["ES_t"], (2 * 4) ** 0.25)  # compile failure forgiven from t=3
    for t in LEVELS:  # S_t never forgives
        assert close(c[t]["S_t"], (2 * (4 if t >= 0 else b) * b * b) ** 0.25)


def test_accuracy_error_forgiven_from_one_and_graphnet_convention():
    rows = [ok(2.0), fail(2), ok(4.0, mp=3)]  # third passes only at t >= 3
    paper = {d["t"]: d for d in score_curve(rows, convention="paper")}
    gn = {d["t"]: d for d in score_curve(rows, convention="graphnet")}
    b = 0.1
    assert close(paper[0]["ES_t"], (2 * b * b) ** (1 / 3))
    assert close(paper[1]["ES_t"], (2 * b * 1) ** (1 / 3))  # accuracy forgiven from t=1
    assert close(paper[2]["ES_t"], (2 * 1 * 1) ** (1 / 3))  # crash forgiven from 2 (paper)
    assert close(paper[3]["ES_t"], (2 * 1 * 4) ** (1 / 3))  # correct at t=3: its speedup counts
    assert close(gn[2]["ES_t"], (2 * b * 1) ** (1 / 3))  # graphnet: crash forgiven only from 3
    assert close(gn[3]["ES_t"], (2 * 1 * 1) ** (1 / 3))  # judged at t=1: still a forgiven failure
    assert gn[3]["convention"] == "graphnet" and paper[3]["convention"] == "paper"


def test_dtypes_through_real_comparisons():
    x64 = torch.linspace(1, 2, 8, dtype=torch.float64)
    x16 = torch.full((4,), 2.0, dtype=torch.float16)
    y16 = x16.clone()
    y16[0] = 2.0 + 2 ** -6  # fp16: passes from t=-3 (see test_tolerance)
    xb = torch.full((4,), 2.0, dtype=torch.bfloat16)
    yb = xb.clone()
    yb[0] = 2.0 + 2 ** -6  # bf16: passes from t=-5
    xi = torch.tensor([1, 2, 3])

    def row(actual, expected, s):
        return {"speedup": s, "error_code": None, "min_pass_t": sample_min_pass_t(c.min_pass_t for c in compare_outputs(actual, expected))}

    rows = [row((x64.clone(),), (x64,), 2.0), row((y16,), (x16,), 2.0), row((yb,), (xb,), 2.0),
            row((xi + 1,), (xi,), 2.0)]
    assert [r["min_pass_t"] for r in rows] == [-10, -3, -5, None]
    b = 0.1
    c = {d["t"]: d for d in score_curve(rows)}
    assert close(c[-6]["S_t"], (2 * b * b * b) ** 0.25)
    assert close(c[-5]["S_t"], (2 * b * 2 * b) ** 0.25)
    assert close(c[-3]["S_t"], (2 * 2 * 2 * b) ** 0.25)
    assert close(c[1]["ES_t"], (2 * 2 * 2 * 1) ** 0.25)  # the integer mismatch is an accuracy error


def test_empty_set_rejected():
    with pytest.raises(ValueError, match="empty sample set"):
        score_samples([], 0)
    with pytest.raises(ValueError, match="empty"):
        score_table([], "eager")


def test_correct_sample_without_speedup_rejected():
    with pytest.raises(ValueError, match="speedup"):
        score_samples([ok(None)], 0)


def test_task_aggregation_weights():
    rows = [ok(4.0, task="a"), ok(4.0, task="a"), ok(4.0, task="a"), ok(1.0, task="b")]
    table = [r for r in score_table(rows, "x", conventions=["paper"]) if r["t"] == 0]
    by = {(r["scope"], r["task_id"]): r for r in table}
    assert close(by[("set", None)]["ES_t"], (4 ** 3) ** 0.25)  # every sample weight 1/N
    assert close(by[("task", "a")]["ES_t"], 4.0) and close(by[("task", "b")]["ES_t"], 1.0)
    assert close(by[("task_mean", None)]["ES_t"], 2.0)  # every task weight 1/T


GRAPHNET_LOG = """\
x [Processing] /s/good
x [Config] compiler: inductor
x [Datatype][eager]: float32 int64
x [Datatype][compiled]: float32 int64
x [DataType] eager:['float32', 'int64'] compiled:['float32', 'int64'] match:True
x [Correctness][equal]: 0 1
{allclose}
x [Result] status: success
x [Speedup][e2e]: 0.50000
x [Processing] /s/compile_broken
x [Datatype][eager]: float32
Compiled model execution failed: boom
x [Result] status: failed
x [Processing] /s/eager_broken
Eager model execution failed: boom
x [Result] status: failed
"""


def _allclose_lines():
    from curate.score.scoring import _graphnet_key

    lines = []
    for t in LEVELS:
        for dt in ("float16", "bfloat16", "float32", "float64"):
            key = _graphnet_key(t, dt)
            passes = dt != "float32" or t >= -4  # the fp32 output passes from t = -4 on
            lines.append(f"x [Correctness]{key}: {int(passes)} 1")
    return "\n".join(lines)


def test_graphnet_log_parsed_and_scored():
    rows = parse_graphnet_log(GRAPHNET_LOG.format(allclose=_allclose_lines()))
    assert [r["status"] for r in rows] == ["correct", "compile_fail", "eager_fail"]
    assert [r["error_code"] for r in rows] == [None, 3, 2]
    assert rows[0]["out_min_pass_t"] == [-4, -10] and rows[0]["speedup"] == 0.5
    gn = {d["t"]: d for d in score_curve(rows, p=0.0, b=0.1, convention="graphnet")}
    assert close(gn[-5]["ES_t"], 0.1)
    assert close(gn[-4]["ES_t"], (0.5 * 0.1 * 0.1) ** (1 / 3))
    assert close(gn[2]["ES_t"], (0.5 * 0.1 * 0.1) ** (1 / 3))
    assert close(gn[3]["ES_t"], 0.5 ** (1 / 3))


def test_not_a_graphnet_log():
    with pytest.raises(ValueError, match="Processing"):
        parse_graphnet_log("hello\n")


def _block(name, passes_from, speed, dts=("float32",)):
    from curate.score.scoring import _graphnet_key

    lines = [f"x [Processing] /s/{name}", f"x [Datatype][eager]: {' '.join(dts)}", f"x [Datatype][compiled]: {' '.join(dts)}",
             f"x [DataType] eager:{list(dts)} compiled:{list(dts)} match:True", "x [Correctness][equal]: " + " ".join("0" for _ in dts)]
    for t in LEVELS:
        for dt in ("float16", "bfloat16", "float32", "float64"):
            lines.append(f"x [Correctness]{_graphnet_key(t, dt)}: " + " ".join(str(int(t >= passes_from)) for _ in dts))
    return lines + ["x [Result] status: success", f"x [Speedup][e2e]: {speed}"]


def test_graphnet_convention_on_a_log_with_failures():
    """Values hand-computed below; the same log scored by GraphNet's own analysis_util.calculate_scores
    (p=0, b=0.1, default interpretation) gave identical numbers at every t (checked by hand, 2026-11-30)."""
    lines = _block("a", -6, 1.7) + _block("b", 3, 0.6) + _block("c", 0, 0.8) + _block("d", -9, 2.5, ("float64", "float32"))
    lines += ["x [Processing] /s/cf", "x [Datatype][eager]: float32", "Compiled model execution failed: x", "x [Result] status: failed"]
    lines += ["x [Processing] /s/ef", "Eager model execution failed: boom", "x [Result] status: failed"]
    lines += _block("rt", -8, 1.2) + ["RuntimeError: something"]
    rows = parse_graphnet_log("\n".join(lines))
    assert [r["status"] for r in rows] == ["correct"] * 4 + ["compile_fail", "eager_fail", "runtime_fail"]
    gn = {d["t"]: d for d in score_curve(rows, p=0.0, b=0.1, convention="graphnet")}
    b = 0.1
    assert close(gn[-6]["ES_t"], (1.7 * 2.5 * b ** 5) ** (1 / 7))
    assert close(gn[0]["ES_t"], (1.7 * 0.8 * 2.5 * b ** 4) ** (1 / 7))
    # t=1: b fails accuracy (passes only from 3) and is forgiven; the three crashes are not (graphnet: from 3)
    assert close(gn[1]["ES_t"], (1.7 * 1 * 0.8 * 2.5 * b ** 3) ** (1 / 7))
    assert close(gn[2]["ES_t"], gn[1]["ES_t"])
    assert close(gn[3]["ES_t"], (1.7 * 0.8 * 2.5) ** (1 / 7))  # b still judged at t=1: forgiven, not 0.6
    assert close(gn[3]["S_t"], (1.7 * 0.6 * 0.8 * 2.5 * b ** 3) ** (1 / 7))  # S_t judges b at t=3 itself
    paper = {d["t"]: d for d in score_curve(rows, p=0.0, b=0.1, convention="paper")}
    assert close(paper[2]["ES_t"], (1.7 * 1 * 0.8 * 2.5 * 1 * 1 * 1) ** (1 / 7) * (b ** 1) ** (1 / 7))  # compile still b
    assert close(paper[3]["ES_t"], (1.7 * 0.6 * 0.8 * 2.5) ** (1 / 7))
