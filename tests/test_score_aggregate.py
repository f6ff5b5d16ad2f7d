"""The aggregate score AS and the floor rule, checked against GraphNet's own code on its test log."""

import math
from pathlib import Path

import pytest

from curate.score.scoring import AS_WEIGHTS, aggregate_score, parse_graphnet_log, score_curve, score_samples

LOG = Path(__file__).parent / "fixtures" / "graphnet" / "evaluation.log"
# computed by GraphNet's own code on that log (see tests/fixtures/graphnet/README.md)
GRAPHNET_ES = {**{t: 0.7155244911585144 for t in (-10, -9)}, **{t: 0.8921293487108027 for t in range(-8, 5)}}
GRAPHNET_AS = -0.04960810174035585


def test_es_t_and_aggregate_equal_graphnets_on_its_test_log():
    rows = parse_graphnet_log(LOG.read_text())
    es = {d["t"]: d["ES_t"] for d in score_curve(rows, p=0.0, b=0.1, convention="graphnet")}
    for t, v in GRAPHNET_ES.items():
        assert abs(es[t] - v) <= 1e-12, (t, es[t], v)
    assert abs(aggregate_score(es) - GRAPHNET_AS) <= 1e-12


def test_aggregate_is_log10_of_the_weighted_geometric_mean():
    es = {t: 2.0 for t in range(-10, 6)}
    assert math.isclose(aggregate_score(es), math.log10(2.0), rel_tol=1e-12)  # constant ES_t: AS = log10(ES)
    assert aggregate_score({t: 1.0 for t in AS_WEIGHTS}) == 0.0  # eager
    es2 = {t: (10.0 if t == -5 else 1.0) for t in AS_WEIGHTS}
    assert math.isclose(aggregate_score(es2), 0.48 / sum(AS_WEIGHTS.values()), rel_tol=1e-12)
    with pytest.raises(ValueError, match="t=\\[4\\]"):
        aggregate_score({t: 1.0 for t in range(-10, 4)})


def test_floored_rows_count_b_at_every_level():
    ok = {"speedup": 2.0, "min_pass_t": -10, "error_code": None}
    floor = {"speedup": 1.0, "min_pass_t": -10, "error_code": None, "floor": True}
    for conv in ("paper", "graphnet"):
        for d in score_curve([ok, floor], p=0.1, b=0.1, convention=conv):
            assert math.isclose(d["ES_t"], math.sqrt(2.0 * 0.1), rel_tol=1e-12)  # never forgiven
            assert math.isclose(d["S_t"], math.sqrt(2.0 * 0.1), rel_tol=1e-12)
            assert d["pi_floor"] == 1.0
    # without the flag the same no-match row counts 1
    assert math.isclose(score_samples([ok, {**floor, "floor": False}], 0)["ES_t"], math.sqrt(2.0), rel_tol=1e-12)


def test_paper_convention_dips_when_a_slow_sample_becomes_correct():
    """The documented non-monotonicity: forgiven at t = 1 (counts 1), correct but slow at t = 2."""
    rows = [{"speedup": 0.5, "min_pass_t": 2, "error_code": None}, {"speedup": 2.0, "min_pass_t": -10, "error_code": None}]
    paper = {d["t"]: d["ES_t"] for d in score_curve(rows, p=0.1, b=0.1, convention="paper")}
    assert math.isclose(paper[1], math.sqrt(2.0), rel_tol=1e-12)
    assert math.isclose(paper[2], math.sqrt(2.0 * 0.5 ** 1.1), rel_tol=1e-12) and paper[2] < paper[1]
    gn = {d["t"]: d["ES_t"] for d in score_curve(rows, p=0.1, b=0.1, convention="graphnet")}
    assert gn[2] == gn[1]  # judged at t = 1 for every t >= 1


def test_scores_rows_carry_the_aggregate_of_their_curve():
    import math

    from curate.score.scoring import score_table

    # two samples correct at every level: 2x faster, and 2x slower (rectified to 0.5 ** 1.1)
    rows = [{"sample_id": "a", "speedup": 2.0, "min_pass_t": -10, "task_id": "a"},
            {"sample_id": "b", "speedup": 0.5, "min_pass_t": -10, "task_id": "b"}]
    table = score_table(rows, "c", 0.1, 0.1, ["paper"])
    expected_set = math.log10(math.sqrt(2.0 * 0.5 ** 1.1))  # ES_t is this at every t, so AS is too
    assert all(math.isclose(r["aggregate_score"], expected_set, rel_tol=1e-12) for r in table if r["scope"] == "set")
    assert all(math.isclose(r["aggregate_score"], math.log10(2.0), rel_tol=1e-12)
               for r in table if r["scope"] == "task" and r["task_id"] == "a")
