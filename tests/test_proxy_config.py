"""The typed ``proxy`` params block (proxy_artifacts/config.py)."""

from __future__ import annotations

import pytest
import yaml

from passnet_common.params import BLOCKS, ParamsError
from proxy_artifacts.config import GrpoConfig, ProxyConfig, grpo_params, proxy_params
from tests.conftest import ROOT


def test_the_committed_block_is_the_config_defaults():
    """Every knob of params.yaml's proxy block equals its config default, so a key the file leaves out
    behaves as the committed file does (compare.methods is the file's list: its default is empty)."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())["proxy"]
    got = proxy_params(raw)
    default = ProxyConfig().to_params()
    default["compare"]["methods"] = raw["compare"]["methods"]
    assert got == default
    assert "proxy" in BLOCKS


def test_partial_grpo_mappings_are_filled_and_typos_named():
    g = grpo_params({"steps": 3})
    assert g["steps"] == 3 and g["eval_samples"] == GrpoConfig().eval_samples and g["drop_zero_variance_groups"]
    with pytest.raises(ParamsError, match="proxy.grpo.stepz: unknown key"):
        grpo_params({"stepz": 3})
    with pytest.raises(ParamsError, match="proxy.grpo.fix_runs"):
        grpo_params({"fix_runs": ["lr_spike"]})
