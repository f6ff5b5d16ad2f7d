"""benchmarks/proxy_fidelity_seeds: the params override and the per-fault summary of the stage's metrics."""

from pathlib import Path

import yaml

from benchmarks.proxy_fidelity_seeds import summarise, write_params


def test_params_override_sets_only_the_fault_seeds(tmp_path):
    dst = tmp_path / "p.yaml"
    write_params(Path("params.yaml"), dst, 7)
    got, ref = yaml.safe_load(dst.read_text()), yaml.safe_load(open("params.yaml").read())
    assert got["proxy"]["grpo"]["fault_seeds"] == [0, 1, 2, 3, 4, 5, 6]
    got["proxy"]["grpo"]["fault_seeds"] = ref["proxy"]["grpo"]["fault_seeds"]
    assert got == ref


def test_summary_keeps_the_stage_verdicts_and_drops_fix_runs():
    def ctl(rate, passes, beaten):
        return {"score": {"rate": rate}, "passes": passes, "beaten": beaten, "diff_ci95": [0.1, 0.5] if beaten else [-0.2, 0.3]}

    fid = {"controls": {"r0.5": {"rule": {"min_score": 0.75}, "reproduces": ["none"], "faults": {
        "none": {"base_self": {"rate": 0.9, "n": 50, "tolerance": {"kl_max": 0.3}}, "proxy": {"score": {"rate": 0.8}}, "passes": True,
                 "controls": {"control_random_experts": ctl(0.2, False, True), "control_dense": ctl(0.0, False, True)}},
        "lr_spike+fix": {"base_self": {"rate": 1.0, "n": 10}, "proxy": {"score": {"rate": 1.0}}, "passes": True, "controls": {}}}}}}
    s = summarise(fid, ["random_experts"])
    assert list(s["faults"]) == ["none"] and s["reproduces"] == ["none"] and s["rule"] == {"min_score": 0.75}
    assert s["faults"]["none"] == {"base_self_rate": 0.9, "base_self_n": 50, "tolerance": {"kl_max": 0.3},
                                   "proxy_rate": 0.8, "proxy_passes": True,
                                   "controls": {"random_experts": {"rate": 0.2, "passes": False, "beaten": True,
                                                                   "diff_ci95": [0.1, 0.5]}}}
