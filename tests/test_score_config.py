"""The ``score`` params block as a typed config: params.yaml's block loads, the names the config
repeats (conventions, references) are the scorer's own, and a partial run configuration is
completed from the config's defaults."""

import typing

import pytest
import yaml

from curate.score.config import RUN_DEFAULTS, Convention, Reference, ScoreConfig, run_config
from passnet_common.config import ParamsError
from tests.conftest import ROOT


def test_project_score_block_loads_with_its_values():
    block = yaml.safe_load((ROOT / "params.yaml").read_text())["score"]
    conf = ScoreConfig.from_params(block, "score")
    assert conf.timing.trials == block["timing"]["trials"] and conf.mem_cap_gb == block["mem_cap_gb"]
    run = conf.run_config()
    assert run["trials"] == block["timing"]["trials"] and "timing" not in run and "candidates" not in run


def test_config_names_agree_with_the_scorer():
    from curate.score.evaluate import REFERENCES
    from curate.score.scoring import CONVENTIONS

    assert set(typing.get_args(Convention)) == set(CONVENTIONS) and REFERENCES is typing.get_args(Reference)  # one home


def test_unknown_or_mistyped_keys_are_named():
    with pytest.raises(ParamsError, match="score.clock_abs_ms: unknown key"):
        ScoreConfig.from_params({"clock_abs_ms": 15.0}, "score")
    with pytest.raises(ParamsError, match="score.timing.trials"):
        ScoreConfig.from_params({"timing": {"trials": 0}}, "score")


def test_partial_run_configuration_is_completed_from_the_defaults():
    run = run_config({"timing": False, "trials": 3})
    assert run["timing"] is False and run["trials"] == 3 and run["warmup"] == ScoreConfig().timing.warmup
    assert set(RUN_DEFAULTS) >= {"roofline_factor", "cpu_rel_tol", "cpu_abs_ms", "static_check", "mem_cap_gb", "n_boot"}
