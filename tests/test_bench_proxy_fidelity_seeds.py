"""benchmarks/proxy_fidelity_seeds: the params override and the per-fault summary of the stage's metrics."""

from pathlib import Path

import pytest
import yaml

from benchmarks.proxy_fidelity_seeds import summarise, write_params


def test_params_override_sets_only_the_fault_seeds(tmp_path):
    dst = tmp_path / "p.yaml"
    write_params(Path("params.yaml"), dst, 7)
    got, ref = yaml.safe_load(dst.read_text()), yaml.safe_load(open("params.yaml").read())
    for key in ("fault_seeds", "reference_fault_seeds"):  # the base on the same seeds as every other model
        assert got["proxy"]["grpo"][key] == [0, 1, 2, 3, 4, 5, 6]
        got["proxy"]["grpo"][key] = ref["proxy"]["grpo"][key]
    assert got == ref


def test_summary_keeps_the_stage_verdicts_and_drops_fix_runs():
    def ctl(rate, passes, beaten):
        return {"score": {"rate": rate}, "distance": {"distance": 1.5}, "passes": passes, "beaten": beaten,
                "diff_ci95": [0.1, 0.5] if beaten else [-0.2, 0.3]}

    pooled = {"mean": 1.2, "ci95": [1.0, 1.4], "n": 30}
    fid = {"controls": {"r0.5": {"rule": {"min_score": 0.75}, "reproduces": ["none"],
                                 "overall": {"control_random_experts": pooled, "control_dense": None}, "faults": {
        "none": {"base_self": {"rate": 0.9, "n": 50, "tolerance": {"kl_max": 0.3}},
                 "proxy": {"score": {"rate": 0.8}, "distance": {"distance": 0.3}}, "passes": True,
                 "controls": {"control_random_experts": ctl(0.2, False, True), "control_dense": ctl(0.0, False, True)}},
        "lr_spike+fix": {"base_self": {"rate": 1.0, "n": 10}, "proxy": {"score": {"rate": 1.0}}, "passes": True, "controls": {}}}}}}
    s = summarise(fid, ["random_experts"])
    assert list(s["faults"]) == ["none"] and s["reproduces"] == ["none"] and s["rule"] == {"min_score": 0.75}
    assert s["overall"] == {"random_experts": pooled}
    assert s["faults"]["none"] == {"base_self_rate": 0.9, "base_self_n": 50, "tolerance": {"kl_max": 0.3},
                                   "proxy_rate": 0.8, "proxy_passes": True, "proxy_distance": 0.3,
                                   "controls": {"random_experts": {"rate": 0.2, "distance": 1.5, "passes": False,
                                                                   "beaten": True, "diff_ci95": [0.1, 0.5]}}}


def test_grpo_runs_are_reused_across_fidelity_rule_changes_only(tmp_path):
    """The reuse stamp covers the proxy block without proxy.fidelity: a new fidelity rule keeps the runs, a
    GRPO change does not."""
    import yaml

    from benchmarks.proxy_fidelity_seeds import grpo_digest

    p = {"proxy": {"grpo": {"steps": 10}, "fidelity": {"controls": {"sd_factor": 3.0}}}, "curate": {"x": 1}}
    a, b, c = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    a.write_text(yaml.safe_dump(p))
    b.write_text(yaml.safe_dump({**p, "proxy": {**p["proxy"], "fidelity": {"controls": {"sd_factor": 2.0}}}, "curate": {}}))
    c.write_text(yaml.safe_dump({**p, "proxy": {**p["proxy"], "grpo": {"steps": 11}}}))
    assert grpo_digest(a) == grpo_digest(b) != grpo_digest(c)


def test_tolerance_by_seed_count_known_ratios(tmp_path):
    """A base folder with one fault on 4 seeds, reward 0.1 / 0.2 / 0.3 / 0.4 (the only quantity logged, no
    floors): all 4 seeds give SD 0.1291 (x 3) and range 0.3 (x 2); the four 3-seed subsets give SD 0.1, 0.1528,
    0.1528, 0.1 (mean 0.1264) and ranges 0.2, 0.3, 0.3, 0.2 (mean 0.25). Ratios: 1.0215 and 1.2. A fault run on
    another seed count is left out."""
    import json

    from benchmarks.proxy_fidelity_seeds import tolerance_by_seed_count
    from proxy_artifacts.config import ControlsConfig

    runs = {}
    for s, r in enumerate((0.1, 0.2, 0.3, 0.4)):
        (tmp_path / f"lr_spike.s{s}.jsonl").write_text(json.dumps({"step": 1, "reward": r}) + "\n")
        runs[f"lr_spike.s{s}"] = {"fault": "lr_spike"}
    for s in range(2):
        (tmp_path / f"none.s{s}.jsonl").write_text(json.dumps({"step": 1, "reward": 0.5 + s}) + "\n")
        runs[f"none.s{s}"] = {"fault": "none"}
    (tmp_path / "summary.json").write_text(json.dumps({"runs": runs, "heldout_healthy_seeds": []}))
    got = tolerance_by_seed_count(tmp_path, ControlsConfig().to_params(), seeds=4)
    assert got["cells"] == 1 and list(got["per_fault"]) == ["lr_spike"]
    assert got["per_fault"]["lr_spike"]["reward_mean"] == pytest.approx([1.0215, 1.2], abs=1e-3)
    assert got["median_ratio_sd"] == pytest.approx(1.0215, abs=1e-3) and got["median_ratio_range"] == pytest.approx(1.2)


def _grpo(folder, reward, entropy, kl, grad, seeds=4, reward_step=0.02):
    import json

    folder.mkdir(parents=True)
    runs = {}
    for s in range(seeds):
        rows = [{"step": t, "reward": reward + s * reward_step, "entropy": entropy, "kl": kl * t, "grad_norm_trl": grad}
                for t in range(1, 5)]
        (folder / f"lr_spike.s{s}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs[f"lr_spike.s{s}"] = {"fault": "lr_spike"}
    (folder / "summary.json").write_text(json.dumps({"runs": runs, "heldout_healthy_seeds": []}))


def test_verdict_stability_counts_the_subsets_that_reach_min_score(tmp_path):
    """A copy of the base matches every cell on every 3-seed subset (share 1.0); a dead model (reward 0, another
    entropy, KL and gradient scale) on none (0.0); a model with no run of the fault gets None."""
    from benchmarks.proxy_fidelity_seeds import quantities, verdict_stability
    from proxy_artifacts.config import ControlsConfig

    _grpo(tmp_path / "base", 0.4, 0.8, 1e-3, 1.0)
    _grpo(tmp_path / "copy", 0.4, 0.8, 1e-3, 1.0)
    _grpo(tmp_path / "dead", 0.0, 5.5, 1e-6, 0.01, reward_step=0.0)
    _grpo(tmp_path / "none", 0.4, 0.8, 1e-3, 1.0, seeds=0)
    models = ["copy", "dead", "none"]
    got = verdict_stability(quantities(tmp_path, models), models, ControlsConfig().to_params(), seeds=4, sizes=(3,))
    assert got == {"3": {"lr_spike": {"copy": 1.0, "dead": 0.0, "none": None}}}


def test_perfect_proxy_pass_probability_known_limits():
    """Probability 1 when any share passes (min_score 0) or the tolerance is huge, 0 when the tolerance is ~0;
    otherwise it rises with the seed count (the sample SD's noise shrinks)."""
    from benchmarks.proxy_fidelity_seeds import perfect_proxy_pass_probability
    from proxy_artifacts.config import ControlsConfig

    cp = ControlsConfig().to_params()
    assert perfect_proxy_pass_probability(dict(cp, min_score=0.0), draws=500) == {"3": 1.0, "5": 1.0, "10": 1.0}
    assert perfect_proxy_pass_probability(dict(cp, sd_factor=1e6), draws=500) == {"3": 1.0, "5": 1.0, "10": 1.0}
    assert perfect_proxy_pass_probability(dict(cp, sd_factor=1e-9), draws=500) == {"3": 0.0, "5": 0.0, "10": 0.0}
    p = perfect_proxy_pass_probability(cp, draws=4000)
    assert p["3"] < p["5"] < p["10"]


def test_verdict_by_reference_seeds_known_shares():
    """Four seeds; a model 0.1 above the base on every seed, judged on 3. With the base's tolerance from the
    3 judged seeds, the one subset without the base's outlying seed 3 has a tolerance at the 0.05 floor
    (SD 0.01), so it fails: 3 of 4 subsets pass. From all 4 seeds (SD 0.196) every subset passes."""
    from benchmarks.proxy_fidelity_seeds import verdict_by_reference_seeds

    ent = [2.0, 2.01, 2.02, 2.4]
    q = {"base": {"lr_spike": {s: {"entropy_mean": e} for s, e in enumerate(ent)},
                  "lr_spike+fix": {s: {"entropy_mean": e} for s, e in enumerate(ent)}},
         "m": {"lr_spike": {s: {"entropy_mean": e + 0.1} for s, e in enumerate(ent)}}}
    cp = {"sd_factor": 3.0, "log_floor": 0.30103, "abs_floor": 0.05, "log_max": 1.0, "min_score": 0.75}
    got = verdict_by_reference_seeds(q, ["m"], cp, seeds=4, judged=3, references=(3, 4, 5))
    assert set(got) == {"3", "4"}  # 5 > the 4 seeds there are
    assert got["3"]["faults"] == {"lr_spike": {"m": 0.75}} and got["3"]["models"] == {"m": [0.75, 0.75]}
    assert got["4"]["faults"] == {"lr_spike": {"m": 1.0}}
