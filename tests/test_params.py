"""params.yaml validation: unknown keys and wrong types name the key and what it expects."""

from __future__ import annotations

import pytest
import yaml

from passnet_common.params import Block, ParamsError, extend_block, load_params, register_block, BLOCKS
from tests.conftest import ROOT


def _write(tmp_path, params):
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump(params))
    return p


def _project():
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def test_project_params_are_valid():
    params = load_params(ROOT / "params.yaml")
    assert params["extract"]["capture"]["dynamo"]["recompile_limit"] == 64


@pytest.mark.parametrize("edit,message", [
    (lambda p: p["extract"]["capture"].update(seqlen=16), "extract.capture.seqlen: unknown key"),
    (lambda p: p["extract"].update(workers="two"), "extract.workers: expected positive int, got str 'two'"),
    (lambda p: p["extract"].update(workers=True), "extract.workers: expected positive int, got bool True"),
    (lambda p: p["extract"].update(timeout_s=-1), "extract.timeout_s: expected positive number, got -1"),
    (lambda p: p["extract"]["capture"]["dynamo"].update(recompile_limit=1.5), "extract.capture.dynamo.recompile_limit"),
    (lambda p: p["catalog"].update(mode="everything"), "catalog.mode: expected one of 'default', 'all'"),
    (lambda p: p["catalog"].update(default="transformers:BertModel"), "catalog.default: expected list of str"),
    (lambda p: p["catalog"].update(sample_per_source={"timm": "ten"}), "catalog.sample_per_source.timm: expected int"),
    (lambda p: p["catalog"].update(limt=3), "catalog.limt: unknown key"),
])
def test_bad_params_name_the_key_and_the_expected_type(tmp_path, edit, message):
    params = _project()
    edit(params)
    path = _write(tmp_path, params)
    section = message.split(".")[0]
    with pytest.raises(ParamsError) as err:
        load_params(path, section)
    assert message in str(err.value) and str(path) in str(err.value)


def test_other_blocks_register_their_own_schema(tmp_path):
    params = {"other": {"alpha": 1}}
    path = _write(tmp_path, params)
    assert load_params(path, "other") == {"alpha": 1}  # unregistered: not validated
    register_block("other", Block({"beta": int}))
    try:
        with pytest.raises(ParamsError, match="other.alpha: unknown key"):
            load_params(path, "other")
        extend_block("other", {"alpha": int})
        assert load_params(path, "other") == {"alpha": 1}
    finally:
        BLOCKS.pop("other")
