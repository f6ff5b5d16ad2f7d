"""Input rules for the seeded transformers coverage sample: one test
per kind of input rule in ``extract/capture/inputs.py``, on transformers' default configs built on
the meta device (the spec each rule records), plus small CPU runs showing that the
synthesised inputs (image/video token counts included) are what the model accepts."""

from __future__ import annotations

import pytest
import torch

from extract.capture.build import build_model
from extract.capture.inputs import hf_inputs
from extract.capture.synth import UnsupportedInput
from tests.hf_rows import default_row


def _spec(model_type: str, arch: str, capture: dict | None = None, **overrides) -> dict:
    _, _, kwargs, spec = build_model(default_row(model_type, arch, **overrides), "meta", capture or {"seq_len": 32})
    return {s["name"]: s for s in spec}


def test_model_without_forward_or_with_a_session_object_says_why():
    # GlmImageVQVAE only has encode(); EdgeTAM video takes a stateful inference session
    with pytest.raises(UnsupportedInput, match=r"GlmImageVQVAE defines no forward\(\).*\['encode'\]"):
        build_model(default_row("glm_image_vqmodel", "GlmImageVQVAE"), "meta", {})
    with pytest.raises(UnsupportedInput, match="'inference_session'.*EdgeTamVideoInferenceSession.*not a tensor"):
        build_model(default_row("edgetam_video", "EdgeTamVideoModel"), "meta", {})


def test_list_main_input_name_and_oneformer_task_inputs():
    spec = _spec("oneformer", "OneFormerModel")  # main_input_name == ["pixel_values", "task_inputs"]
    assert spec["pixel_values"]["shape"] == [1, 3, 224, 224]
    assert spec["task_inputs"]["shape"] == [1, 77] and spec["task_inputs"]["kind"] == "token_ids"  # task_seq_len


def test_open_vocabulary_detector_class_prompts():
    spec = _spec("omdet-turbo", "OmDetTurboForObjectDetection")
    from extract.capture.multimodal import CLASSES_PER_IMAGE as k

    assert spec["classes_input_ids"]["shape"] == [k, 32] and spec["classes_attention_mask"]["shape"] == [k, 32]
    assert spec["tasks_input_ids"]["shape"] == [1, 32] and spec["tasks_attention_mask"]["shape"] == [1, 32]
    assert spec["classes_structure"]["shape"] == [1] and spec["classes_structure"]["kind"] == "group_sizes"


def test_image_tiles_with_aspect_ratio_ids():
    import transformers

    from extract.capture.multimodal import full_tile_ratio_id

    spec = _spec("mllama", "MllamaModel")
    assert spec["pixel_values"]["shape"] == [1, 1, 4, 3, 448, 448] and spec["pixel_values"]["kind"] == "image_tiles"
    assert spec["aspect_ratio_ids"]["shape"] == [1, 1] and spec["aspect_ratio_mask"]["shape"] == [1, 1, 4]
    assert spec["cross_attention_mask"]["shape"] == [1, 32, 1, 4]
    assert "image_tokens" not in spec["input_ids"]  # cross-attention: no spliced image tokens
    # default supported_aspect_ratios [[1,1],[1,2],[1,3],[1,4],...]: [1,4] is the first 4-tile layout
    assert full_tile_ratio_id(transformers.MllamaConfig()) == 4

    cfg = transformers.MllamaConfig(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_global_layers": 1,
                       "attention_heads": 2, "image_size": 28, "patch_size": 14, "max_num_tiles": 4,
                       "vision_output_dim": 64, "intermediate_layers_indices": [0]},
        text_config={"vocab_size": 300, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "cross_attention_layers": [1],
                     "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0},
        image_token_index=299)
    model = transformers.MllamaModel(cfg).eval()
    kw, _ = hf_inputs(model, cfg, {"seq_len": 8}, "cpu")
    assert kw["aspect_ratio_ids"].tolist() == [[4]]
    with torch.no_grad():
        out = model(**kw)
    assert out.last_hidden_state.shape == (1, 8, 32)


@pytest.mark.parametrize("model_type,arch,mask_shape,mask_kind,tokens", [
    # GraniteDocling documents a per-tile mask; (512 // 16) ** 2 / 4 ** 2 tokens per tile
    ("granite_docling", "GraniteDoclingModel", [1, 1], "tile_mask", 64),
    # Idefics3 (at the published 364 px / 14 px patches): a per-pixel mask; 26 ** 2 / 2 ** 2 tokens
    ("idefics3", "Idefics3Model", [1, 1, 364, 364], "pixel_mask", 169),
])
def test_idefics3_family_image_tiles_and_masks(model_type, arch, mask_shape, mask_kind, tokens):
    vision = {"vision_config": {"image_size": 364, "patch_size": 14}} if model_type == "idefics3" else {}
    spec = _spec(model_type, arch, **vision)
    assert spec["pixel_values"]["shape"][:2] == [1, 1] and len(spec["pixel_values"]["shape"]) == 5
    assert spec["pixel_attention_mask"]["shape"] == mask_shape and spec["pixel_attention_mask"]["kind"] == mask_kind
    assert spec["input_ids"]["image_tokens"]["count"] == tokens and spec["input_ids"]["shape"] == [1, tokens + 32]


def test_idefics3_tiles_run_with_their_token_count():
    import transformers

    cfg = transformers.Idefics3Config(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 4},
        text_config={"vocab_size": 300, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1},
        image_token_id=299, scale_factor=2)
    model = transformers.Idefics3Model(cfg).eval()
    kw, spec = hf_inputs(model, cfg, {"seq_len": 8}, "cpu")
    n = (32 // 4) ** 2 // 2 ** 2
    assert int((kw["input_ids"] == 299).sum()) == n and list(kw["pixel_attention_mask"].shape) == [1, 1, 32, 32]
    with torch.no_grad():
        out = model(**kw)
    assert out.last_hidden_state.shape == (1, n + 8, 32)


def test_video_llm_takes_a_clip_with_tokens_counted_by_the_model():
    import transformers

    spec = _spec("llava_next_video", "LlavaNextVideoForConditionalGeneration")
    # 8 frames of (336 // 14) ** 2 patches, CLS dropped, pooled by stride 2: 8 * 12 * 12 tokens
    assert spec["pixel_values_videos"]["shape"] == [1, 8, 3, 336, 336] and spec["pixel_values_videos"]["kind"] == "video"
    assert "pixel_values" not in spec  # the any-resolution image path needs image_sizes values
    assert spec["input_ids"]["video_tokens"] == {"token_id": 32000, "count": 8 * 12 * 12, "position": "prefix"}

    cfg = transformers.LlavaNextVideoConfig(
        vision_config={"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 32, "patch_size": 4},
        text_config={"model_type": "llama", "vocab_size": 300, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1},
        image_token_index=299, video_token_index=298, vision_feature_layer=-1)
    model = transformers.LlavaNextVideoForConditionalGeneration(cfg).eval()
    kw, _ = hf_inputs(model, cfg, {"seq_len": 8}, "cpu")
    n = 8 * (32 // 4 // 2) ** 2
    assert int((kw["input_ids"] == 298).sum()) == n
    with torch.no_grad():
        out = model(**kw)
    assert out.logits.shape == (1, n + 8, 300)


def test_qformer_video_tokens_are_queries_per_frame():
    spec = _spec("instructblipvideo", "InstructBlipVideoModel", video_token_index=31999)
    assert spec["pixel_values"]["shape"] == [1, 4, 3, 224, 224] and spec["pixel_values"]["kind"] == "video"
    assert spec["input_ids"]["video_tokens"]["count"] == 32 * 4  # num_query_tokens per frame


def test_waveform_channel_axis_follows_the_documented_shape():
    # OmniASR documents input_values as (batch_size, 1, num_samples); wav2vec2 takes (batch, samples)
    assert _spec("omniasr_audio", "OmniASRAudioModel")["input_values"]["shape"] == [1, 1, 16000]
    assert _spec("wav2vec2", "Wav2Vec2Model")["input_values"]["shape"] == [1, 16000]


def test_block_sparse_attention_gets_a_sequence_past_its_bound():
    # BigBird switches to full attention inside forward (new modules and Parameters) for at most
    # (5 + 2 * num_random_blocks) * block_size = 704 tokens; one block more keeps block-sparse
    spec = _spec("big_bird", "BigBirdModel")
    assert spec["input_ids"]["shape"] == [1, (6 + 2 * 3) * 64]
    assert _spec("big_bird", "BigBirdModel", attention_type="original_full")["input_ids"]["shape"] == [1, 32]


def test_image_tokens_counted_by_the_model_without_a_patch_grid():
    # FastVLM's FastViT tower has no image_size / patch_size in its config: the count comes from
    # get_image_features on fake tensors (a 224 image -> 16 rows after the 64x downsampling).
    # On CPU tensors (the real fallback); on meta the probe meets a CPU buffer and gives no count
    # (a known gap, see README).
    # Real weights (~0.8 GiB): built in a child process so the test process stays small.
    import json
    import subprocess
    import sys

    code = """
import json, torch, transformers
transformers.logging.set_verbosity_error()
from tests.hf_rows import default_row
from extract.capture.build import build_model
row = default_row("fast_vlm", "FastVlmModel")
model, _, kwargs, spec = build_model(row, "cpu", {"seq_len": 32, "fallback_layers": 1}, reduced=True)
with torch.no_grad():
    model(**kwargs)  # transformers' own check: image tokens x hidden == feature numel
print(json.dumps({s["name"]: s for s in spec}["input_ids"]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    ids = json.loads(out.stdout.strip().splitlines()[-1])
    assert ids["image_tokens"]["count"] == 16 and ids["shape"] == [1, 16 + 32]
