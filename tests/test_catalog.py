"""Catalog sources and the models table."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from extract.catalog import build_catalog, local_catalog, row_from_hf_config, timm_catalog, torchvision_catalog
from passnet_common.schema import to_table
from tests.conftest import TINY_CONFIGS, write_config_folder


def test_local_folder_both_layouts(tmp_path):
    write_config_folder(tmp_path, {"a": TINY_CONFIGS["tiny-llama"]})
    (tmp_path / "flat.json").write_text(json.dumps(TINY_CONFIGS["tiny-bert"]))
    rows = local_catalog(tmp_path)
    assert [r["name"] for r in rows] == ["a/config.json", "flat.json"]
    assert all(r["model_id"].startswith("local:") and len(r["model_id"]) == 6 + 16 for r in rows)
    assert rows[0]["architecture"] == "LlamaForCausalLM" and rows[1]["model_type"] == "bert"
    assert not any(r["trust_remote_code"] for r in rows)
    # same config, same hash; the table accepts the rows
    again = local_catalog(tmp_path)
    assert [r["config_hash"] for r in again] == [r["config_hash"] for r in rows]
    assert to_table("models", rows).num_rows == 2


def test_local_folder_bad_json_names_the_file(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        local_catalog(tmp_path)
    (tmp_path / "broken.json").write_text(json.dumps({"hidden_size": 3}))
    with pytest.raises(ValueError, match="model_type"):
        local_catalog(tmp_path)


def test_unknown_model_type_needs_remote_code():
    row = row_from_hf_config({"model_type": "my_private_arch"}, "hf:org/x@abc", "org/x", "hf")
    assert row["trust_remote_code"] is True


def test_vision_catalogs_cover_the_registries():
    import timm
    import torchvision

    tv = torchvision_catalog()
    assert len(tv) == len(torchvision.models.list_models())
    assert {"torchvision:resnet18", "torchvision:raft_small"} <= {r["model_id"] for r in tv}
    tm = timm_catalog()
    assert len(tm) == len(timm.list_models())
    r50 = next(r for r in tm if r["model_id"] == "timm:resnet50")
    assert json.loads(r50["config_json"])["input_size"] == [3, 224, 224]


def test_build_catalog_default_and_errors(tmp_path):
    rows = build_catalog({"mode": "default", "default": ["torchvision:resnet18", "timm:resnet18"]})
    assert [r["model_id"] for r in rows] == ["timm:resnet18", "torchvision:resnet18"]
    with pytest.raises(ValueError, match="not found in their sources"):
        build_catalog({"mode": "default", "default": ["torchvision:no_such_net"]})
    with pytest.raises(ValueError, match="unknown source"):
        build_catalog({"mode": "default", "default": ["nosuch:thing"]})
    with pytest.raises(ValueError, match="mode"):
        build_catalog({"mode": "everything"})
    write_config_folder(tmp_path, {"x": TINY_CONFIGS["tiny-gpt2"]})
    rows = build_catalog({"mode": "default", "default": [], "local_dir": str(tmp_path)})
    assert len(rows) == 1 and rows[0]["source"] == "local"


def test_schema_rejects_null_in_required_column_naming_it():
    with pytest.raises(ValueError, match="config_hash"):
        to_table("models", [{"model_id": "x", "source": "local", "name": "x", "library": "t",
                             "library_version": "1", "trust_remote_code": False}])
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError), match="num_graphs"):
        to_table("extractions", [{"model_id": "x", "attempt_key": "k", "config_hash": "h", "status": "ok",
                                  "num_graphs": "three", "torch_version": "t", "library_version": "l",
                                  "canonical_version": 1}])


def test_catalog_params_typos_and_all_missing_ids_are_reported():
    with pytest.raises(ValueError, match="lmit"):
        build_catalog({"mode": "default", "default": [], "lmit": 3})
    with pytest.raises(ValueError) as err:
        build_catalog({"mode": "default", "default": ["timm:no_such_model", "timm:resnet18", "torchvision:nope"]})
    assert "timm:no_such_model" in str(err.value) and "torchvision:nope" in str(err.value)


def test_remote_code_reason_names_the_cause():
    from extract.catalog import remote_code_reason

    auto = row_from_hf_config({"model_type": "llama", "auto_map": {"AutoModel": "m.M"}}, "local:a", "a", "local")
    unknown = row_from_hf_config({"model_type": "my_arch"}, "local:b", "b", "local")
    assert "auto_map" in remote_code_reason(auto)
    assert "'my_arch' is not shipped" in remote_code_reason(unknown)
