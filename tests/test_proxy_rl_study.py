"""``benchmarks.proxy_rl_study.summarise``: the RL gain per model from the study's shards, with
hand-computed Student t intervals (t(0.975, 2) = 4.302653)."""

from __future__ import annotations

import json

import pytest

from benchmarks.proxy_rl_study import summarise


def _shard(out, name, seed, before, after, shares):
    rec = {"model": name, "seed": seed,
           "summary": {"edge_reward_before": before, "edge_reward_after": after,
                       "heldout_acc_before": 1.0, "heldout_acc_after": 1.0},
           "steps": [{"step": i, "nonzero_advantage_share": s} for i, s in enumerate(shares)]}
    (out / f"{name}.s{seed}.json").write_text(json.dumps(rec))


def test_gain_in_points_with_a_t_interval_over_seeds_and_the_zero_verdict(tmp_path):
    # base: gains 10, 15, 5 points -> mean 10, sd 5, half-width 4.302653 * 5 / sqrt(3) = 12.4207
    for s, after in enumerate((0.30, 0.35, 0.25)):
        _shard(tmp_path, "base", s, 0.20, after, [0.5, 1.0])
    # proxy: gains 10, 12, 14 -> mean 12, sd 2, half-width 4.968
    for s, after in enumerate((0.30, 0.32, 0.34)):
        _shard(tmp_path, "r0.5", s, 0.20, after, [0.25, 0.75])
    res = summarise(tmp_path, ["base", "r0.5"], [0, 1, 2])
    g = res["base"]["rl_gain_edge"]
    assert g["mean"] == pytest.approx(10.0) and g["n"] == 3
    assert g["ci95"] == pytest.approx([10 - 12.4207, 10 + 12.4207], abs=1e-3)
    assert res["base"]["gain_excludes_zero"] is False
    p = res["r0.5"]["rl_gain_edge"]
    assert p["ci95"] == pytest.approx([12 - 4.9683, 12 + 4.9683], abs=1e-3)
    assert res["r0.5"]["gain_excludes_zero"] is True
    assert res["base"]["nonzero_advantage_share"]["mean"] == pytest.approx(0.75)  # mean of per-run means
    assert res["r0.5"]["nonzero_advantage_share"]["mean"] == pytest.approx(0.5)


def test_a_missing_shard_is_left_out_not_counted_as_zero(tmp_path):
    _shard(tmp_path, "base", 0, 0.2, 0.3, [1.0])
    _shard(tmp_path, "base", 2, 0.2, 0.4, [1.0])
    res = summarise(tmp_path, ["base"], [0, 1, 2])
    assert res["base"]["seeds"] == [0, 2] and res["base"]["rl_gain_edge"]["mean"] == pytest.approx(15.0)
