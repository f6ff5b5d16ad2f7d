"""Config repairs of the coverage sample: one test per kind of fault, each on
the real shipped default config of a model that has it, checking the repaired value and
that the repaired config (or the reduced-depth config) builds."""

import json

import pytest
import torch
import transformers
from transformers import AutoConfig

from extract.capture.build import hf_config, reduce_depth
from extract.sources.builtin import own_model_type
from extract.sources.repairs import repair_config

transformers.logging.set_verbosity_error()


def _default(model_type: str) -> dict:
    return json.loads(json.dumps(AutoConfig.for_model(model_type).to_dict(), default=str))


def _repaired(model_type: str) -> tuple[dict, list[str]]:
    fixed, notes = repair_config(_default(model_type))
    return json.loads(json.dumps(fixed)), notes


def test_published_value_at_a_dotted_path_of_a_sub_dict():
    # DbrxConfig(): attn_config.clip_qkv None -> qkv.clamp(min=None, max=None) raises, in eager too
    fixed, notes = _repaired("dbrx")
    assert fixed["attn_config"]["clip_qkv"] == 8
    assert any("attn_config.clip_qkv None -> 8 (values of databricks/dbrx-base)" in n for n in notes)
    assert hf_config(fixed).attn_config.clip_qkv == 8


def test_published_values_of_a_nested_sub_config_with_a_per_layer_list_from_the_layer_count():
    # DeepseekOcr2Config(): text_config.mlp_layer_types None (indexed per layer in __init__),
    # num_experts_per_tok None
    fixed, notes = _repaired("deepseek_ocr2")
    text = fixed["text_config"]
    assert text["num_experts_per_tok"] == 6
    assert text["mlp_layer_types"] == ["dense"] + ["sparse"] * (text["num_hidden_layers"] - 1)
    assert any("text_config.mlp_layer_types None -> 1 dense then sparse" in n for n in notes)
    cfg = hf_config(fixed)
    assert len(cfg.text_config.mlp_layer_types) == cfg.text_config.num_hidden_layers == 32


def test_sub_config_width_follows_its_sibling_output_width():
    # DeepseekOcr2Config(): the SAM neck outputs 896 channels, the vision encoder default is 4096 wide
    fixed, notes = _repaired("deepseek_ocr2")
    vision = fixed["vision_config"]
    assert vision["encoder_config"]["hidden_size"] == vision["sam_config"]["downsample_channels"][-1] == 896
    assert vision["encoder_config"]["num_attention_heads"] == 14
    assert len(vision["encoder_config"]["layer_types"]) == vision["encoder_config"]["num_hidden_layers"] == 24
    assert any("encoder_config.hidden_size 4096 -> 896" in n for n in notes)
    hf_config(fixed)


def test_absent_key_of_rope_parameters_from_the_published_checkpoint():
    # HunYuanVLTextConfig(): rope_parameters has no mrope_section; the rotary forward takes len() of it
    fixed, notes = _repaired("hunyuan_vl_text")
    section = fixed["rope_parameters"]["mrope_section"]
    assert section == [16, 16, 16, 16]
    assert sum(section) == fixed["hidden_size"] // fixed["num_attention_heads"] // 2
    assert hf_config(fixed).rope_parameters["mrope_section"] == [16, 16, 16, 16]


def test_table_left_none_builds_the_model():
    # PPOCRV5ServerDetConfig(): intraclass_block_config / kernel_list / scale_factor_list None
    fixed, notes = _repaired("pp_ocrv5_server_det")
    assert fixed["kernel_list"] == [3, 2, 2] and fixed["scale_factor_list"] == [1, 2, 4, 8]
    assert fixed["intraclass_block_config"]["symmetric_conv_long_longratio"] == [[7, 7], [1, 1], [3, 3]]
    with torch.device("meta"):
        model = transformers.PPOCRV5ServerDetForObjectDetection._from_config(hf_config(fixed))
    assert sum(p.numel() for p in model.parameters()) > 0


def test_derived_token_table_chameleon_vocabulary_map():
    # ChameleonConfig(): vocabulary_map None -> ChameleonImageVocabularyMapping(None).get fails
    from transformers.models.chameleon.modeling_chameleon import ChameleonImageVocabularyMapping

    fixed, notes = _repaired("chameleon")
    vmap = fixed["vocabulary_map"]
    n = fixed["vq_config"]["num_embeddings"]
    assert vmap["<image>"] == 8711 and len(vmap) == n + 1
    mapping = ChameleonImageVocabularyMapping(vmap)
    assert mapping.image_tokens == list(range(4, 4 + n))
    assert mapping.bpe2img[4] == 0 and mapping.bpe2img[4 + 123] == 123
    assert hf_config(fixed).image_token_id == 8711


def test_pixel_shuffle_grid_divisible_by_downsample_factor():
    # AyaVisionConfig(): SigLIP 384 / patch 14 = 27 patches, pixel shuffle by 2 cannot reshape
    fixed, notes = _repaired("aya_vision")
    vision = fixed["vision_config"]
    assert vision["image_size"] == 364
    assert (vision["image_size"] // vision["patch_size"]) % fixed["downsample_factor"] == 0
    assert any("vision_config.image_size 384 -> 364" in n for n in notes)
    ok = {"model_type": "aya_vision", "downsample_factor": 2, "vision_config": {"image_size": 364, "patch_size": 14}}
    assert repair_config(ok) == (ok, [])


def test_class_listed_under_several_model_types_uses_its_own_config_class():
    # MODEL_FOR_DECISION_MAPPING_NAMES lists JevForDecision under gemma4 first; Llama under exaone first
    assert own_model_type("JevForDecision", {"gemma4", "jev", "qwen2", "qwen3_5"}) == "jev"
    assert own_model_type("LlamaForCausalLM", ["exaone", "internlm3", "llama"]) == "llama"
    assert own_model_type("LlamaForCausalLM", ["exaone"]) is None


def test_reduce_depth_keeps_per_layer_config_of_kept_layers():
    # Gemma4 text default: per_layer_config for layers 5, 11, .., 29; a 2-layer copy must drop them
    cfg = _default("gemma4")
    small = reduce_depth(cfg, 2)
    assert small["text_config"]["per_layer_config"] == {}
    assert hf_config(small).text_config.num_hidden_layers == 2
    kept = reduce_depth(cfg, 6)["text_config"]["per_layer_config"]
    assert [int(k) for k in kept] == [5]


def test_reduce_depth_moves_backbone_out_features_to_a_kept_stage():
    # VitPoseConfig(): backbone out_features ['stage4'] of 12 layers; 2 layers keep stem..stage2
    small = reduce_depth(_default("vitpose"), 2)
    backbone = small["backbone_config"]
    assert backbone["stage_names"] == ["stem", "stage1", "stage2"]
    assert backbone["out_features"] == ["stage2"] and backbone["out_indices"] == [2]
    cfg = hf_config(small)
    assert cfg.backbone_config.out_features == ["stage2"]
    with torch.device("meta"):
        transformers.VitPoseForPoseEstimation._from_config(cfg)


@pytest.mark.parametrize("model_type,key,default,fixed", [
    ("modernvbert", "pixel_shuffle_factor", 224, 192),  # patch 16: grid 14 -> 12, divisible by 4
    ("idefics3", "scale_factor", 224, 192),  # patch 32: grid 7 -> 6, divisible by 2
])
def test_pixel_shuffle_grid_repair_reads_every_name_of_the_factor(model_type, key, default, fixed):
    assert _default(model_type)["vision_config"]["image_size"] == default
    repaired, notes = _repaired(model_type)
    size, patch = repaired["vision_config"]["image_size"], repaired["vision_config"]["patch_size"]
    assert size == fixed and (size // patch) % repaired[key] == 0
    assert any(f"divisible by {key}" in n for n in notes)


def test_video_token_index_left_none_becomes_the_first_id_after_the_text_vocabulary():
    default = _default("instructblipvideo")
    assert default["video_token_index"] is None
    vocab = default["text_config"]["vocab_size"]
    repaired, notes = _repaired("instructblipvideo")
    assert repaired["video_token_index"] == vocab
    assert repaired["text_config"]["vocab_size"] == vocab + 1  # the token has an embedding row


def test_blip2_image_token_index_left_none_gets_the_published_id_and_the_model_captures():
    # Blip2Config(): image_token_index None; transformers 5's get_placeholder_mask then compares
    # input_ids == None (a Python bool) and `.unsqueeze` fails, in eager too
    from extract.capture import capture_row
    from extract.sources.rows import row_from_hf_config
    from passnet_common.params import load_params

    assert _default("blip-2")["image_token_index"] is None
    fixed, notes = _repaired("blip-2")
    assert fixed["image_token_index"] == 50265 < fixed["text_config"]["vocab_size"]
    assert any("Salesforce/blip2-opt-2.7b" in n for n in notes)
    fixed["architectures"] = ["Blip2Model"]
    row = row_from_hf_config(fixed, "transformers:Blip2Model", "Blip2Model", "transformers")
    res = capture_row(row, dict(load_params("params.yaml", "extract")["capture"]))
    assert res.completeness.complete and len(res.graphs) == 1


def test_average_pool_projector_grid_is_a_multiple_of_the_token_side():
    # Gemma3Config(): SigLIP 224 / patch 16 = 14 patches, 256 image tokens (side 16): kernel 0
    fixed, notes = _repaired("gemma3")
    vision = fixed["vision_config"]
    side = int(fixed["mm_tokens_per_image"] ** 0.5)
    assert vision["image_size"] == 256 and (vision["image_size"] // vision["patch_size"]) % side == 0
    assert any("vision_config.image_size 224 -> 256" in n and "kernel 0 -> 1" in n for n in notes)
    published = {"model_type": "gemma3", "mm_tokens_per_image": 256, "vision_config": {"image_size": 896, "patch_size": 14}}
    assert repair_config(published) == (published, [])  # google/gemma-3-4b-it: 64 patches, kernel 4
    from transformers import Gemma3Config
    from transformers.models.gemma3.modeling_gemma3 import Gemma3MultiModalProjector

    cfg = Gemma3Config(**{k: v for k, v in fixed.items() if k in ("mm_tokens_per_image", "vision_config", "text_config")})
    with torch.device("meta"):
        proj = Gemma3MultiModalProjector(cfg)
    assert proj.kernel_size == 1
    grid = vision["image_size"] // vision["patch_size"]
    out = proj(torch.empty(1, grid * grid, cfg.vision_config.hidden_size, device="meta"))
    assert tuple(out.shape) == (1, fixed["mm_tokens_per_image"], cfg.text_config.hidden_size)
