"""The committed proxy metrics meet the bars the proxy line promises (docs/proxies.md): a competent base on
every seed with a partly solved edge, healthy RL that raises the edge reward with an interval excluding 0
for the base and the keep-0.5 proxy, a catalogued fault table with base rates over >= 3 seeds, and a
re-initialised control that fails wherever the real proxy passes. These read the files `dvc repro`,
`benchmarks/proxy_base_seeds.py` and `benchmarks/proxy_fidelity_seeds.py` commit, so a rebuild that no
longer meets a bar cannot be committed
with a green suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passnet_common.params import load_params

ROOT = Path(__file__).resolve().parents[1]
PROXY = load_params(ROOT / "params.yaml", "proxy")


def _m(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text())


def test_the_base_is_competent_on_every_seed_and_its_edge_is_partly_solved():
    base = _m("metrics/proxy_base.json")
    assert base["task_acc_heldout"] >= PROXY["base"]["min_task_acc"]
    seeds = _m("metrics/bench/proxy_base_seeds.json")
    assert seeds["seeds"] == [0, 1, 2] and not seeds["missing"]
    assert seeds["competent_every_seed"] and seeds["task_acc_heldout_min"] >= 0.8
    # every seed's own figure, not only the stored summary
    assert sorted(seeds["task_acc_heldout"]) == ["0", "1", "2"]
    assert all(v >= PROXY["base"]["min_task_acc"] for v in seeds["task_acc_heldout"].values()), seeds["task_acc_heldout"]
    assert seeds["task_acc_heldout_min"] == min(seeds["task_acc_heldout"].values())
    lo, hi = seeds["edge_band"]
    assert all(lo <= v <= hi for v in seeds["task_reward_edge"].values()), seeds["task_reward_edge"]
    assert seeds["edge_in_band_every_seed"]
    # the pipeline's base is the seeds' seed 0 (same params and code): its figures agree
    assert base["task_reward_edge"] == seeds["task_reward_edge"]["0"]


@pytest.mark.parametrize("model", ["base", "r0.5"])
def test_healthy_rl_raises_the_edge_reward_with_an_interval_excluding_zero(model):
    fid = _m("metrics/fidelity.json")
    gain = fid["rl_gain_edge"][model]
    assert gain["n"] >= 3 and gain["mean"] >= 10 and gain["ci95"][0] > 0, gain
    # the summary is the per-seed values' mean and t interval (recomputed, not read)
    import statistics

    from scipy.stats import t as student_t

    v = gain["values"]
    assert len(v) == gain["n"] and statistics.mean(v) == pytest.approx(gain["mean"], abs=1e-3)
    half = float(student_t.ppf(0.975, len(v) - 1)) * statistics.stdev(v) / len(v) ** 0.5
    assert statistics.mean(v) - half == pytest.approx(gain["ci95"][0], abs=1e-3) and statistics.mean(v) - half > 0
    assert fid["nonzero_advantage_share"][model] > 0.5
    study = _m("metrics/bench/proxy_rl_study.json")
    assert study["gain_excludes_zero"][model] and len(study["plan"]["seeds"]) >= 3


def test_every_fault_has_its_row_with_base_rates_over_three_seeds():
    fid = _m("metrics/fidelity.json")
    assert sorted(fid["faults"]) == sorted(PROXY["grpo"]["faults"])
    for f, row in fid["faults"].items():
        assert all(row[k] for k in ("trigger", "signature", "source", "fix")), f
        assert len(row["source"]) >= 20 and "TODO" not in row["source"].upper(), (f, row["source"])
        assert row["base_rate"]["n"] >= 3, f
        # the bar: the base shows the signature on >= 2 of 3 seeds and the fix removes it (fix_removes
        # True: the fix runs show it on no seed), or the fault is reported without a signature (None)
        if row["fix_removes"] is True:
            assert row["base_rate"]["k"] >= 2 and row["fix_rate"]["k"] == 0, (f, row["base_rate"], row["fix_rate"])
        elif row["fix_removes"] is None:
            assert row["base_rate"]["k"] < 2 or row.get("fix_run_exists") is False, (f, row["base_rate"])
        # a fault the base shows is removed by its fix; one it never shows, or whose fix no run applies, says
        # so (fix_removes None)
        assert row["fix_removes"] in (True, None), (f, row["fix_removes"])
        if row.get("fix_run_exists") is False:
            assert row["fix_removes"] is None and row["fix_rate"] is None, f


def test_the_reinit_control_fails_wherever_the_real_proxy_passes():
    """In the pipeline's 3-seed verdicts the re-initialised control passes no fault the proxy passes (there the
    proxy may pass none: 3 x a 3-seed standard deviation is a strict tolerance); the committed 10-seed study
    (``benchmarks/proxy_fidelity_seeds.py``, the stage's rule on more seeds) is the evidence that is not
    vacuous: the proxy passes at least one fault, and on each the re-initialised control fails and is
    beaten with an interval."""
    fid = _m("metrics/fidelity.json")
    assert fid["controls"], "no controls block"
    for proxy, blk in fid["controls"].items():
        passed = [f for f, r in blk["faults"].items() if r["proxy"]["passes"]]
        reinit = [c for c in blk["controls"] if c.endswith("reinit")]
        assert reinit, blk["controls"]
        for c in reinit:
            assert not set(blk["controls_passing"][c]) & set(passed), (proxy, c, blk["controls_passing"][c])
    study = _m("metrics/bench/proxy_fidelity_seeds.json")
    assert study["fault_seeds"] > len(PROXY["grpo"]["fault_seeds"]) and "reinit" in study["controls"]
    assert study["rule"]["min_score"] == PROXY["fidelity"]["controls"]["min_score"]
    passed = [f for f, v in study["faults"].items() if v["proxy_passes"]]
    assert passed, "the proxy passes no fault in the seed study"
    for f in passed:
        r = study["faults"][f]["controls"]["reinit"]
        assert not r["passes"] and r["beaten"] and r["diff_ci95"][0] > 0, (f, r)


def test_the_keep_ratio_proxy_has_a_column_for_every_control_kind_and_reproduces_only_beyond_all():
    """Issue item 4: the proxy of ``proxy.fidelity.controls.keep_ratio`` is judged beside one control of each
    kind (random experts, random + output merge, re-initialised weights, a dense model of its active size),
    and a fault counts as reproduced only where the proxy passes and the interval of its paired magnitude
    distance difference to every control that ran the fault lies above 0."""
    from proxy_artifacts.controls import CONTROL_KINDS

    fid = _m("metrics/fidelity.json")
    proxy = f"r{PROXY['fidelity']['controls']['keep_ratio']}"
    blk = fid["controls"][proxy]
    assert blk["controls"] == [f"control_{k}" for k in CONTROL_KINDS]
    for f, row in blk["faults"].items():
        assert sorted(row["controls"]) == sorted(blk["controls"]), f
        for c, e in row["controls"].items():
            d = e["distance_diff"]
            assert e["beaten"] == bool(d and d["ci95"][0] > 0 and d["mean"] >= blk["rule"]["min_effect"]), (f, c)
        ran = [e for e in row["controls"].values() if e["ran"]]
        # a row no control ran (the +fix rows: controls run no fix runs) is judged on the proxy alone
        assert ran or f.endswith("+fix"), f
        want = (row["proxy"]["passes"] and all(e["beaten"] for e in ran)) if ran else None
        assert row["reproduces"] == want, f
    assert blk["reproduces"] == [f for f, r in blk["faults"].items() if r["reproduces"]]
    assert blk["passed_without_controls"] == [f for f, r in blk["faults"].items()
                                              if r["reproduces"] is None and r["passes"]]
    assert not [(f, c) for f, r in blk["faults"].items() for c, e in r["controls"].items() if e["incomplete"]]


def test_pooled_over_every_fault_the_proxy_is_closer_to_the_base_than_every_control():
    """The headline the per-fault verdicts cannot carry on 3 seeds: over the runs of every fault a control ran
    (all but the ``+fix`` rows, which controls do not run), the keep-ratio proxy's run distance to the base is
    below each control's with a 95% t interval above 0 and a mean of at least ``min_effect``; the same holds in
    the 10-seed study for each control it ran."""
    fid = _m("metrics/fidelity.json")
    proxy = f"r{PROXY['fidelity']['controls']['keep_ratio']}"
    blk = fid["controls"][proxy]
    rows = sorted(f for f in blk["faults"] if not f.endswith("+fix"))
    for c in blk["controls"]:
        o = blk["overall"][c]
        assert o and sorted(o["faults"]) == rows and not o["incomplete"], (c, o)
        assert o["beaten"] and o["ci95"][0] > 0 and o["mean"] >= blk["rule"]["min_effect"], (c, o)
    study = _m("metrics/bench/proxy_fidelity_seeds.json")
    assert study["rule"]["min_effect"] == PROXY["fidelity"]["controls"]["min_effect"]
    for c in study["controls"]:
        o = study["overall"][c]
        assert o["beaten"] and o["ci95"][0] > 0 and o["mean"] >= study["rule"]["min_effect"], (c, o)
