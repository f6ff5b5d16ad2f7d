"""curate.profile.replicates: the random-effects pool of a variant's timing children, with values
worked out by hand, and profile_all timing every protocol variant in separate replicate children."""

from __future__ import annotations

import math

import pytest

from curate.profile.replicates import MIN_REPLICATES, log_se, pool, pool_replicates


def test_children_that_agree_give_the_fixed_effect_interval_with_t_quantile():
    # k = 3, x = 0.1, s = 0.02 each: tau 0, SE = 0.02 / sqrt(3) = 0.011547 (the HK SE is 0: floored at it),
    # half-width t_{2, 0.975} = 4.302653 x 0.011547 = 0.049683
    p = pool([0.1, 0.1, 0.1], [0.02, 0.02, 0.02], 0.95)
    assert p["tau"] == 0.0 and p["mu"] == pytest.approx(0.1)
    assert p["se"] == pytest.approx(0.02 / math.sqrt(3))
    assert p["hi"] - p["mu"] == pytest.approx(4.302653 * 0.02 / math.sqrt(3), rel=1e-5)


def test_children_that_disagree_widen_the_interval_by_the_between_child_spread():
    # x = 0 and 0.2 with s = 0.01: w = 1e4 each, Q = 200, c = 2e4 - 2e8 / 2e4 = 1e4, tau^2 = (200 - 1) / 1e4 = 0.0199;
    # weights 1 / 0.02 = 50 each: SE_RE = sqrt(1 / 100) = 0.1, SE_HK = sqrt((50 * 0.01 * 2) / (1 * 100)) = 0.1;
    # half-width t_{1, 0.975} = 12.706205 x 0.1
    p = pool([0.0, 0.2], [0.01, 0.01], 0.95)
    assert p["tau"] == pytest.approx(math.sqrt(0.0199)) and p["mu"] == pytest.approx(0.1)
    assert p["se"] == pytest.approx(0.1) and p["hi"] == pytest.approx(0.1 + 1.2706205, rel=1e-6)
    # each child alone said [0 +- 0.0196] and [0.2 +- 0.0196]: the pooled interval holds both, one child's does not
    assert p["lo"] < 0.0 and p["hi"] > 0.2


def test_log_se_reads_the_interval_and_refuses_a_non_positive_one():
    x, s = log_se(1.0, math.exp(-0.196), math.exp(0.196), 0.95)
    assert x == 0.0 and s == pytest.approx(0.196 / 1.959964, rel=1e-5)
    with pytest.raises(ValueError, match="0 < lo <= hi"):
        log_se(0.9, 0.0, 1.0, 0.95)
    with pytest.raises(ValueError, match=">= 2 replicates"):
        pool([0.1], [0.01], 0.95)


def _child(c: float, lo: float, hi: float, **kw) -> dict:
    return {"status": None, "stable": True, **{f"{r}{s}": v for r in ("speedup_e2e", "speedup_compiler", "speedup_dynamo")
                                               for s, v in (("", c), ("_ci_low", lo), ("_ci_high", hi))}, **kw}


def test_pool_replicates_needs_two_stable_children_and_says_so():
    got = pool_replicates([_child(0.8, 0.78, 0.82), _child(0.5, 0.4, 0.6, stable=False)], 0.95, 0.05)
    assert MIN_REPLICATES == 2 and got["stable"] is False and got["replicates"] == 1 and got["replicates_timed"] == 2
    assert got["speedup_compiler"] is None and got["speedup_compiler_replicates"] == [0.8]
    both = pool_replicates([_child(0.8, 0.78, 0.82), _child(0.8, 0.78, 0.82)], 0.95, 0.05)
    assert both["stable"] is True and both["speedup_compiler"] == pytest.approx(0.8)
    assert both["speedup_compiler_ci_high"] > 0.82  # t_{1} = 12.7: two children say little about the spread
    assert both["overhead_bound"] is (both["speedup_dynamo_ci_high"] < 0.95)


def test_with_replicates_keeps_the_check_status_only_when_the_pool_is_stable():
    from curate.profile.run import with_replicates

    row0 = {**_child(0.8, 0.79, 0.81), "status": "ok"}
    assert with_replicates(row0, [row0, _child(0.82, 0.81, 0.83)], 0.95, 0.05)["status"] == "ok"
    assert with_replicates(row0, [row0], 0.95, 0.05)["status"] == "unstable"
    unstable0 = {**row0, "status": "unstable", "stable": False}
    got = with_replicates(unstable0, [unstable0, _child(0.8, 0.79, 0.81), _child(0.81, 0.8, 0.82)], 0.95, 0.05)
    assert got["status"] == "ok" and got["replicates"] == 2
    crash = {"status": "runtime_crash", "error_code": 2}
    assert with_replicates(crash, [crash], 0.95, 0.05)["status"] == "runtime_crash"


def test_profile_all_times_every_protocol_variant_in_separate_replicate_children(tmp_path, monkeypatch):
    """Fake children (tests/test_profile_remeasure._fake_profile): the screen makes every variant of
    the first subgraph a candidate; with 3 replicates each of them is timed by 3 children (its attempt
    folder, rep1/, rep2/), one round per replicate, and its run-0 row pools them: replicate r reports
    [0.99 + 0.01 r, 1.01 + 0.01 r], so the pooled ratio is 1.01 (the middle one)."""
    from tests.test_profile_remeasure import _fake_profile

    rows, stats, calls = _fake_profile(tmp_path, monkeypatch, overlap=False, replicates=3)
    prot = [r for r in rows if r["run"] == 0 and r.get("phase") == "protocol"]
    assert prot and all(r["replicates"] == 3 and r["replicates_timed"] == 3 for r in prot)
    for r in prot:
        assert r["speedup_compiler_replicates"] == pytest.approx([1.0, 1.01, 1.02])
        assert r["speedup_compiler"] == pytest.approx(1.01, rel=1e-3) and r["status"] == "ok"
    folders = [str(c[0]) for c in calls]
    reps = [f for f in folders if f.endswith(("rep1", "rep2"))]
    assert len(reps) == 2 * len(prot) and stats["screen"]["replicate_attempts"] == len(reps)
    # rounds: every variant's replicate 1 before any replicate 2
    assert max(i for i, f in enumerate(folders) if f.endswith("rep1")) < min(i for i, f in enumerate(folders) if f.endswith("rep2"))
    # screen-only rows are not replicated
    assert all(r.get("replicates") is None for r in rows if r["run"] == 0 and r.get("phase") == "screen")


def test_undecided_is_an_interval_that_holds_the_edge():
    from curate.profile.run import undecided

    def row(lo, hi, status="ok"):
        return {"status": status, "speedup_compiler_ci_low": lo, "speedup_compiler_ci_high": hi}
    assert undecided(row(0.90, 0.97), 0.05, 0.0) and undecided(row(0.90, 0.95), 0.05, 0.0)  # hi == edge: not below it
    assert not undecided(row(0.80, 0.94), 0.05, 0.0) and not undecided(row(0.95, 1.10), 0.05, 0.0)  # lo == edge: decided
    assert not undecided(row(0.90, 0.97, status="unstable"), 0.05, 0.0) and not undecided({"status": "ok"}, 0.05, 0.0)


def test_undecided_targets_the_edge_the_widened_label_reads():
    """With ``build_spread`` s the label is ci_high x exp(s) < 0.95, so the interval's edge is
    0.95 exp(-s) (0.9127 at s = 0.04): an interval [0.72, 0.944] is settled against 0.95 but not against
    the label's edge, and [0.80, 0.90] is settled below both."""
    import math

    from curate.profile.run import undecided

    def row(lo, hi):
        return {"status": "ok", "speedup_compiler_ci_low": lo, "speedup_compiler_ci_high": hi}
    edge = 0.95 * math.exp(-0.04)
    assert round(edge, 4) == 0.9127
    assert not undecided(row(0.72, 0.944), 0.05, 0.0) and undecided(row(0.72, 0.944), 0.05, 0.04)
    assert not undecided(row(0.80, 0.90), 0.05, 0.04) and not undecided(row(0.92, 0.99), 0.05, 0.04)
    assert undecided(row(0.90, edge), 0.05, 0.04)  # hi == the edge: not below it


def test_profile_all_gives_more_children_only_to_variants_whose_interval_holds_the_edge(tmp_path, monkeypatch):
    """Two replicates, two extra. The screen's candidates are the first subgraph's variants. When their
    protocol children report [0.90 + 0.01 r, 0.97 + 0.01 r] (ratio 0.93 + 0.01 r), the pool of 2 children
    (t_1 = 12.7) holds 0.95, so each gets children rep2 and rep3 and pools all four (ratios 0.93-0.96:
    centre 0.945); when they report [0.50, 0.52] and [0.51, 0.53] the label is decided and 2 children stay."""
    from tests.test_profile_remeasure import _fake_profile

    rows, stats, calls = _fake_profile(tmp_path, monkeypatch, overlap=False, replicates=2, extra_replicates=2,
                                       straddle=0)
    prot = [r for r in rows if r["run"] == 0 and r.get("phase") == "protocol"]
    assert prot and all(r["replicates_extended"] for r in prot)
    for r in prot:
        assert r["replicates"] == 4 and r["speedup_compiler_replicates"] == pytest.approx([0.93, 0.94, 0.95, 0.96])
        assert r["speedup_compiler"] == pytest.approx(0.945, abs=1e-3)
    folders = [str(c[0]) for c in calls]
    assert sum(f.endswith(("rep2", "rep3")) for f in folders) == 2 * len(prot)
    assert stats["screen"]["extended_variants"] == len(prot) and stats["screen"]["extended_attempts"] == 2 * len(prot)
    # decided intervals: nothing extended, no rep2 child, 2 children pooled
    rows1, stats1, calls1 = _fake_profile(tmp_path / "decided", monkeypatch, overlap=False, replicates=2,
                                          extra_replicates=2, slow_protocol=0)
    prot1 = [r for r in rows1 if r["run"] == 0 and r.get("phase") == "protocol"]
    assert prot1 and not any(r["replicates_extended"] for r in prot1) and all(r["replicates"] == 2 for r in prot1)
    assert stats1["screen"]["extended_variants"] == 0 and not any(str(c[0]).endswith("rep2") for c in calls1)
