"""Catalog sources and the models table."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from extract.sources.builtin import timm_catalog, torchvision_catalog
from extract.sources.catalog import build_catalog
from extract.sources.local import local_catalog
from extract.sources.rows import row_from_hf_config
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


def test_bad_config_files_become_error_rows_and_the_rest_goes_on(tmp_path):
    """A malformed JSON, a JSON list, a config without model_type that cannot be inferred
    and the real 2019 ``roberta-base`` config (no model_type, architectures
    RobertaForMaskedLM) beside a good config: 5 rows, each bad one with its class and the
    file in its message; roberta gets its type inferred, and the row says so."""
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "alist.json").write_text("[1, 2]")
    (tmp_path / "notype.json").write_text(json.dumps({"hidden_size": 3}))
    (tmp_path / "roberta-base.json").write_text(json.dumps({
        "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
        "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "num_attention_heads": 12,
        "num_hidden_layers": 12, "type_vocab_size": 1, "vocab_size": 50265}))
    write_config_folder(tmp_path, {"good": TINY_CONFIGS["tiny-llama"]})
    rows = {r["name"]: r for r in local_catalog(tmp_path)}
    assert len(rows) == 5
    assert rows["broken.json"]["catalog_error_class"] == "invalid_json"
    assert rows["alist.json"]["catalog_error_class"] == "not_a_config"
    assert rows["notype.json"]["catalog_error_class"] == "no_model_type"
    for name in ("broken.json", "alist.json", "notype.json"):
        # named by its path inside the folder, never by a machine path
        assert rows[name]["catalog_error"].startswith(f"{name}: ") and str(tmp_path) not in rows[name]["catalog_error"]
    rob = rows["roberta-base.json"]
    assert rob["catalog_error_class"] is None and rob["model_type"] == "roberta" and not rob["trust_remote_code"]
    assert "inferred from architectures" in rob["catalog_note"]
    assert rows["good/config.json"]["catalog_error_class"] is None
    assert to_table("models", list(rows.values())).num_rows == 5


def test_error_rows_are_recorded_as_failed_extractions_without_running(tmp_path):
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all

    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "broken.json").write_text("{not json")
    rows = local_catalog(tmp_path / "cfg")
    counts = capture_all(rows, {}, tmp_path / "work", workers=1, timeout_s=60, mem_cap_gb=None, progress=False)
    assert counts["ran"] == 0 and counts["skipped"] == 1
    assemble(rows, {}, tmp_path / "work", tmp_path / "out", tmp_path / "store")
    import pyarrow.parquet as pq

    ex = pq.read_table(tmp_path / "out" / "extractions.parquet").to_pylist()
    assert [(e["status"], e["error_class"], e["complete"]) for e in ex] == [("failed", "invalid_json", False)]
    assert "broken.json" in ex[0]["error_message"]


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
    from extract.sources.rows import remote_code_reason

    auto = row_from_hf_config({"model_type": "llama", "auto_map": {"AutoModel": "m.M"}}, "local:a", "a", "local")
    unknown = row_from_hf_config({"model_type": "my_arch"}, "local:b", "b", "local")
    assert "auto_map" in remote_code_reason(auto)
    assert "'my_arch' is not shipped" in remote_code_reason(unknown)


def test_config_that_fails_to_build_is_a_row_naming_the_file(tmp_path):
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all

    cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 30, "num_attention_heads": 4,
           "num_hidden_layers": 1, "intermediate_size": 8, "vocab_size": 16}  # 30 not divisible by 4 heads
    write_config_folder(tmp_path / "cfg", {"odd-heads": cfg, "good": TINY_CONFIGS["tiny-gpt2"]})
    rows = local_catalog(tmp_path / "cfg")
    capture_all(rows, {"seq_len": 4}, tmp_path / "work", workers=2, timeout_s=120, mem_cap_gb=None, progress=False)
    assemble(rows, {"seq_len": 4}, tmp_path / "work", tmp_path / "out", tmp_path / "store")
    import pyarrow.parquet as pq

    names = {r["model_id"]: r["name"] for r in rows}
    ex = {names[e["model_id"]]: e for e in pq.read_table(tmp_path / "out" / "extractions.parquet").to_pylist()}
    assert ex["good/config.json"]["status"] == "ok"
    bad = ex["odd-heads/config.json"]
    assert bad["status"] == "failed" and bad["error_class"].startswith("exception:")
    assert bad["error_message"].startswith("odd-heads/config.json: ")


def test_transformers_catalog_only_builds_the_listed_classes_with_their_own_types():
    from extract.sources.builtin import transformers_catalog

    rows = {r["model_id"]: r for r in transformers_catalog(only={"LlamaForCausalLM", "BertModel", "NoSuchModel"})}
    assert set(rows) == {"transformers:LlamaForCausalLM", "transformers:BertModel"}
    # LlamaForCausalLM is listed under several model types (exaone, internlm3, llama ...): its own config class decides
    assert rows["transformers:LlamaForCausalLM"]["model_type"] == "llama"
    assert rows["transformers:LlamaForCausalLM"]["task"] == "causal-lm"
    assert rows["transformers:BertModel"]["task"] == "base"


@pytest.mark.slow
def test_transformers_catalog_only_rows_equal_the_whole_catalogs():
    from extract.sources.builtin import transformers_catalog

    whole = {r["model_id"]: r for r in transformers_catalog()}
    names = {"LlamaForCausalLM", "BertForMaskedLM", "WhisperForConditionalGeneration", "Qwen3MoeForCausalLM", "ViTModel"}
    part = transformers_catalog(only=names)
    assert [r["model_id"] for r in part] == sorted(f"transformers:{n}" for n in names)
    assert all(r == whole[r["model_id"]] for r in part)
