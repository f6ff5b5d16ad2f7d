"""The reference model's fault seeds (``proxy.grpo.reference_fault_seeds``, ``grpo --reference``): the base
runs each fault on more seeds than a proxy is judged on, so the magnitude tolerance (the base's seed-to-seed
SD) is estimated from them, while a proxy's cells stay paired seed by seed with the base's runs."""

from __future__ import annotations

import statistics

import pytest
import yaml

from proxy_artifacts import controls
from proxy_artifacts.__main__ import main
from proxy_artifacts.rl import reference_plan

CP = {"sd_factor": 3.0, "log_floor": 0.30103, "abs_floor": 0.05, "log_max": 1.0, "min_score": 0.75}


def test_reference_plan_runs_the_base_on_the_reference_seeds():
    gp = {"fault_seeds": [0, 1, 2], "reference_fault_seeds": [0, 1, 2, 3, 4, 5], "healthy_seeds": [0, 1]}
    got = reference_plan(gp)
    assert got["fault_seeds"] == [0, 1, 2, 3, 4, 5] and got["healthy_seeds"] == [0, 1]
    assert gp["fault_seeds"] == [0, 1, 2]  # the caller's plan is not changed
    with pytest.raises(ValueError, match=r"lacks fault_seeds \[2\]"):
        reference_plan({"fault_seeds": [0, 1, 2], "reference_fault_seeds": [0, 1, 5]})


def test_a_proxy_on_three_seeds_is_judged_with_the_tolerance_of_all_base_seeds():
    """Base reward on six seeds, the proxy on the first three: the tolerance is 3 x the SD of all six,
    the cells are the three paired seeds; the same proxy against the first three base seeds alone gets
    the (here much tighter) tolerance of those three and fails where it passed."""
    base_r = [0.50, 0.51, 0.52, 0.30, 0.70, 0.45]
    base = {s: {"reward_mean": r} for s, r in enumerate(base_r)}
    proxy = {s: {"reward_mean": base_r[s] + 0.2} for s in range(3)}
    wide = controls.magnitude_score(base, proxy, CP)
    assert wide["tolerance"]["reward_mean"] == round(3 * statistics.stdev(base_r), 6)
    assert wide["by_quantity"]["reward_mean"] == [3, 3] and wide["by_seed"] == {"0": [1, 1], "1": [1, 1], "2": [1, 1]}
    narrow = controls.magnitude_score({s: base[s] for s in range(3)}, proxy, CP)
    assert narrow["tolerance"]["reward_mean"] == 0.05  # 3 x SD 0.01 = 0.03, below the abs_floor
    assert narrow["by_quantity"]["reward_mean"] == [0, 3]


def test_grpo_cli_refuses_a_bad_reference_plan(tmp_path, capsys):
    p = yaml.safe_load(open("params.yaml").read())
    p["proxy"]["grpo"]["reference_fault_seeds"] = [0, 1]
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump(p))
    args = ["grpo", "--params", str(bad), "--model", str(tmp_path), "--name", "base", "--out", str(tmp_path / "o")]
    assert main([*args, "--reference"]) == 2
    assert "lacks fault_seeds [2]" in capsys.readouterr().err
    assert main([*args, "--reference", "--control"]) == 2
    assert not (tmp_path / "o").exists()
