"""Input synthesis rules for the failure classes of the seeded transformers sample, the
LLaVA image-token repair, and the coverage metrics. Models are built
from transformers' default configs on the meta device (no weights)."""

from __future__ import annotations

import json

import pytest

from extract.capture.build import build_model
from extract.runs.coverage import coverage_metrics
from extract.sources.repairs import repair_config
from extract.sources.rows import row_from_hf_config
from tests.hf_rows import default_row


@pytest.mark.parametrize("model_type,arch,expect", [
    pytest.param("videomae", "VideoMAEForPreTraining", {"pixel_values": [1, 16, 3, 224, 224],
                                                        "bool_masked_pos": [1, 8 * 14 * 14]}, marks=pytest.mark.slow),
    pytest.param("vjepa2", "VJEPA2ForVideoClassification", {"pixel_values_videos": [1, 64, 3, 256, 256]},
                 marks=pytest.mark.slow),
    ("decision_transformer", "DecisionTransformerModel", {"states": [1, 8, 17], "actions": [1, 8, 4], "rewards": [1, 8, 1],
                                                          "returns_to_go": [1, 8, 1], "timesteps": [1, 8], "attention_mask": [1, 8]}),
    ("patchtst", "PatchTSTModel", {"past_values": [1, 32, 1]}),
    pytest.param("timesfm", "TimesFmModelForPrediction", {"past_values.0": [512]}, marks=pytest.mark.slow),
    ("siglip2_vision_model", "Siglip2VisionModel", {"pixel_values": [1, 256, 768], "pixel_attention_mask": [1, 256],
                                                    "spatial_shapes": [1, 2]}),
])
def test_input_rules(model_type, arch, expect):
    _, _, kwargs, spec = build_model(default_row(model_type, arch), "meta", {"seq_len": 8})
    assert {s["name"]: s["shape"] for s in spec} == expect


@pytest.mark.slow
def test_qformer_ids_for_instructblip_video():
    _, _, kwargs, spec = build_model(default_row("instructblipvideo", "InstructBlipVideoModel"), "meta", {"seq_len": 8})
    shapes = {s["name"]: s["shape"] for s in spec}
    assert shapes["pixel_values"] == [1, 4, 3, 224, 224]
    assert shapes["qformer_input_ids"] == [1, 8] and shapes["qformer_attention_mask"] == [1, 8]


def test_llava_default_image_token_repair_is_stated():
    from transformers import LlavaConfig

    cfg = LlavaConfig().to_dict()
    assert cfg["image_token_index"] == cfg["text_config"]["vocab_size"] == 32000
    fixed, notes = repair_config(cfg)
    assert fixed["text_config"]["vocab_size"] == 32001 and cfg["text_config"]["vocab_size"] == 32000
    assert len(notes) == 1 and "image_token_index 32000" in notes[0]
    row = row_from_hf_config(cfg, "transformers:LlavaForConditionalGeneration", "Llava", "transformers",
                             architecture="LlavaForConditionalGeneration")
    assert json.loads(row["config_json"])["text_config"]["vocab_size"] == 32001 and "32001" in row["catalog_note"]
    # a published config that already has the token in its vocabulary is untouched
    ok = dict(cfg, text_config=dict(cfg["text_config"], vocab_size=32064))
    assert repair_config(ok) == (ok, [])


def test_coverage_metrics_count_by_source_and_class():
    models = [{"model_id": f"t:{i}", "source": "transformers"} for i in range(4)] + [{"model_id": "v:0", "source": "timm"}]
    ext = [{"model_id": "t:0", "status": "ok", "error_class": None},
           {"model_id": "t:1", "status": "incomplete", "error_class": "incomplete"},
           {"model_id": "t:2", "status": "failed", "error_class": "timeout"},
           {"model_id": "t:3", "status": "failed", "error_class": "timeout"},
           {"model_id": "v:0", "status": "ok", "error_class": None}]
    m = coverage_metrics(ext, models, 0, {"transformers": 4, "timm": 1})
    t = m["sources"]["transformers"]
    assert (t["sample_size"], t["captured"], t["captured_share"], t["complete"], t["complete_share"]) == (4, 2, 0.5, 1, 0.25)
    assert t["failures_by_class"] == {"timeout": 2, "incomplete": 1} and t["not_run"] == 0
    assert m["sources"]["timm"]["captured_share"] == 1.0
