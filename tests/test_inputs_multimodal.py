"""Input rules for the failures of the seed-7 transformers coverage sample:
LXMERT region features (``visual_feats``/``visual_pos``), keypoint matchers' image pairs
(EfficientLoFTR), and Qwen2-VL style vision towers on their own (Qwen2.5-VL's
``hidden_states``, Cosmos3-Edge's ``grid_thw``). The spec each rule records on transformers'
default configs (meta), and small CPU runs showing the model accepts the inputs."""

from __future__ import annotations

import pytest
import torch

from extract.capture.build import build_model
from extract.capture.multimodal import GRID_THW, VISUAL_OBJECTS
from tests.hf_rows import default_row


def _spec(model_type: str, arch: str, **overrides) -> dict:
    _, _, kwargs, spec = build_model(default_row(model_type, arch, **overrides), "meta", {"seq_len": 32})
    return {s["name"]: s for s in spec}


def _run_cpu(model_type: str, arch: str, **overrides):
    """Build a small config of ``arch`` on the CPU, synthesise its inputs, run forward."""
    model, _, kwargs, spec = build_model(default_row(model_type, arch, **overrides), "cpu", {"seq_len": 8})
    with torch.no_grad():
        return model(**kwargs), {s["name"]: s for s in spec}


def test_lxmert_region_features_and_boxes():
    spec = _spec("lxmert", "LxmertForQuestionAnswering")
    assert spec["visual_feats"]["shape"] == [1, VISUAL_OBJECTS, 2048]  # visual_feat_dim
    assert spec["visual_pos"]["shape"] == [1, VISUAL_OBJECTS, 4] and spec["visual_pos"]["kind"] == "boxes"
    assert (spec["visual_pos"]["low"], spec["visual_pos"]["high"]) == (0.0, 1.0)
    assert spec["input_ids"]["shape"] == [1, 32]


def test_lxmert_small_config_runs_on_the_cpu():
    out, spec = _run_cpu("lxmert", "LxmertForQuestionAnswering", hidden_size=32, num_attention_heads=2,
                         intermediate_size=64, l_layers=1, x_layers=1, r_layers=1, num_qa_labels=5,
                         visual_feat_dim=16)
    assert spec["visual_feats"]["shape"] == [1, VISUAL_OBJECTS, 16]
    assert out.question_answering_score.shape == (1, 5)


def test_keypoint_matcher_takes_an_image_pair():
    spec = _spec("efficientloftr", "EfficientLoFTRForKeypointMatching")
    assert spec["pixel_values"]["shape"] == [1, 2, 3, 224, 224] and spec["pixel_values"]["kind"] == "image_pair"
    # a single-image model of a neighbouring family (SuperPoint detects, it does not match) keeps [b, C, H, W]
    sp = _spec("superpoint", "SuperPointForKeypointDetection")
    assert sp["pixel_values"]["shape"] == [1, 3, 224, 224] and sp["pixel_values"]["kind"] == "pixels"


@pytest.mark.parametrize("model_type,arch,pixel,dim", [
    # Qwen2.5-VL: in_channels 3 * temporal_patch_size 2 * 14 * 14
    ("qwen2_5_vl_vision", "Qwen2_5_VisionTransformerPretrainedModel", "hidden_states", 3 * 2 * 14 * 14),
    # Cosmos3-Edge's SigLIP2 tower: no temporal patches, num_channels 3 * 16 * 16
    ("cosmos3_edge_vision", "Cosmos3EdgeVisionModel", "pixel_values", 3 * 16 * 16),
])
def test_grid_vision_tower_alone_packed_patches_and_grid(model_type, arch, pixel, dim):
    spec = _spec(model_type, arch)
    t, h, w = GRID_THW  # 8 x 8 is a multiple of the merge size 2: kept
    assert spec[pixel]["shape"] == [t * h * w, dim] and spec[pixel]["kind"] == "pixel_patches"
    assert spec["grid_thw"]["shape"] == [1, 3] and spec["grid_thw"]["kind"] == "patch_grid"


def test_grid_vision_tower_small_config_runs_on_the_cpu():
    out, spec = _run_cpu("qwen2_5_vl_vision", "Qwen2_5_VisionTransformerPretrainedModel", depth=2, hidden_size=32,
                         intermediate_size=64, num_heads=2, out_hidden_size=48, fullatt_block_indexes=[1])
    t, h, w = GRID_THW
    # the merger folds spatial_merge_size ** 2 = 4 patches into one row of out_hidden_size
    assert out.pooler_output.shape == (t * h * w // 4, 48)
    out2, _ = _run_cpu("cosmos3_edge_vision", "Cosmos3EdgeVisionModel", hidden_size=32, intermediate_size=64,
                       num_hidden_layers=1, num_attention_heads=2)
    assert out2.last_hidden_state.shape[-2:] == (t * h * w, 32)
