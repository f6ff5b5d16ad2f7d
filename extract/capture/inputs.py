"""Synthesise a model's example inputs from what it declares, and record the input spec.

Transformers models: the arguments of ``model.forward`` that have no default, plus the
ones a family needs in practice (``attention_mask`` beside ``input_ids``, decoder ids for
encoder-decoders, ``pixel_values`` for models with a vision tower). Sizes come from the
config (``image_size``, ``num_channels``, ``num_mel_bins``, ``max_source_positions``) and
from the capture params (``batch_size``, ``seq_len``). Multimodal families get their own
layouts: image tiles (Mllama with ``aspect_ratio_ids``; the Idefics3 family with a tile or
pixel ``pixel_attention_mask``), video clips (``pixel_values_videos``), Q-Former prompts,
and one image/video token per feature row spliced into ``input_ids`` (counted from the
config, or from the model's own ``get_video_features`` run on fake tensors), Qwen2-VL style
vision towers on their own (packed patches with ``grid_thw``), keypoint matchers' image pairs
``[b, 2, C, H, W]`` and LXMERT's detector region features and boxes. All inputs
are shapes first: whatever a model derives from input values (token counts) is made
consistent by construction, so the same rules hold on the meta device. timm and
torchvision models take images (or video clips, image pairs for optical flow, image lists
for detection).

Every input is described by a spec entry ``{name, shape, dtype, kind, low, high}`` (token
ids are drawn uniformly from ``[low, high)``); the spec is stored with the extraction so a
stored graph can be fed again.

The transformers rules are two tables, one row per argument x family, read by :func:`hf_inputs`:

- :data:`COMPANIONS`: which arguments a family adds to the required ones and the main input
  (``attention_mask`` beside ``input_ids``, ``image_grid_thw`` beside Qwen2-VL pixels, ...);
  every row whose ``when`` holds adds its arguments, in table order;
- :data:`INPUT_RULES`: how each argument is built; for each wanted argument the first row of
  that argument whose ``when`` holds builds it, in table order (the order of the rows of one
  argument is its precedence: Qwen2-VL patches before Mllama tiles before plain pixels).

Adding a family is adding rows (and a test), not a branch. The rows read the model's config only
through their ``when`` and ``build`` functions, so the config attributes a capture reads
(:mod:`extract.capture.config_reads`) are those of the rows tried.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch

from extract.capture.multimodal import (
    CLASSES_PER_IMAGE,
    VIDEO_FRAMES,
    VISUAL_OBJECTS,
    codec_channels,
    documented_shapes,
    full_tile_ratio_id,
    grid_patches,
    grid_tower,
    grid_vision,
    image_pairs,
    insert_image_tokens,
    naflex,
    num_patches,
    tile_kind,
    video_frames,
    video_lm,
)
from extract.capture.synth import UnsupportedInput, config_attr, make_input, size2
from extract.config import CaptureConfig, capture_config


@dataclass
class HfInputs:
    """What the input rules of one transformers model read and write: the model, its config and
    ``forward`` parameters, the capture sizes (``b`` batch, ``s`` tokens per sequence), the
    seeded generator every random input draws from, and the inputs made so far (``kwargs``,
    ``spec``, in the order made)."""

    model: torch.nn.Module
    config: Any
    capture: CaptureConfig
    device: Any
    params: Mapping[str, inspect.Parameter]
    required: list[str]
    main: str
    b: int
    s: int
    gen: torch.Generator
    vision_lm: bool = False  # the config has a vision_config
    tiles: str | None = None  # multimodal.tile_kind: "aspect_ratio", "tile_mask", "pixel_mask" or None
    vocab: int = 1000
    spec: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)

    def random(self, name: str, shape: list[int], dtype: torch.dtype, kind: str, **bounds) -> torch.Tensor:
        """Input ``name`` drawn from :attr:`gen` (ints uniform in ``[low, high)``, floats normal)."""
        return make_input(self.spec, name, shape, dtype, kind, self.device, gen=self.gen, **bounds)

    def const(self, name: str, shape: list[int], dtype: torch.dtype, kind: str, fill, **bounds) -> torch.Tensor:
        """Input ``name`` filled with ``fill``."""
        return make_input(self.spec, name, shape, dtype, kind, self.device, fill=fill, **bounds)

    def cfg(self, *names: str, default: Any = None) -> Any:
        """:func:`extract.capture.synth.config_attr` of the model's config."""
        return config_attr(self.config, *names, default=default)

    def present(self, *names: str) -> list[str]:
        """Those of ``names`` that ``forward`` takes."""
        return [n for n in names if n in self.params]


@dataclass(frozen=True)
class Companion:
    """A row of :data:`COMPANIONS`: when ``when(x, wanted)`` holds, ``names(x)`` are wanted too
    and ``drop(x)`` are no longer wanted."""

    family: str
    when: Callable[[HfInputs, list[str]], bool]
    names: Callable[[HfInputs], list[str]]
    drop: Callable[[HfInputs], list[str]] | None = None


@dataclass(frozen=True)
class InputRule:
    """A row of :data:`INPUT_RULES`: argument ``arg`` of the models of ``family`` is
    ``build(x, arg)`` when ``when(x, arg)`` holds (always when None)."""

    arg: str
    family: str
    build: Callable[[HfInputs, str], Any]
    when: Callable[[HfInputs, str], bool] | None = None


_NOT_TOKENS = ("pixel_values", "input_values", "input_features")  # main inputs of models without text

# Which arguments each family adds to the main input(s) and the required ones, in this order.
COMPANIONS: tuple[Companion, ...] = (
    Companion("text", lambda x, w: "input_ids" in x.params and ("input_ids" in w or x.vision_lm or x.main not in _NOT_TOKENS),
              lambda x: ["input_ids"]),
    Companion("vision-language", lambda x, w: x.vision_lm and "pixel_values" in x.params, lambda x: ["pixel_values"]),
    Companion("text", lambda x, w: "input_ids" in w and "attention_mask" in x.params, lambda x: ["attention_mask"]),
    Companion("encoder-decoder", lambda x, w: getattr(x.config, "is_encoder_decoder", False) and "decoder_input_ids" in x.params,
              lambda x: ["decoder_input_ids"]),
    # decision transformers take the whole trajectory
    Companion("decision transformer", lambda x, w: x.main == "states",
              lambda x: x.present("actions", "rewards", "returns_to_go", "timesteps", "attention_mask")),
    Companion("Q-Former", lambda x, w: "qformer_input_ids" in w and "qformer_attention_mask" in x.params,
              lambda x: ["qformer_attention_mask"]),
    Companion("NaFlex (SigLIP2)", lambda x, w: "pixel_attention_mask" in x.params and "pixel_values" in w and naflex(x.config),
              lambda x: ["pixel_attention_mask", "spatial_shapes"]),
    # Longformer QA/MC heads otherwise derive it from separator tokens of a real question
    Companion("Longformer QA / multiple choice",
              lambda x, w: "global_attention_mask" in x.params
              and type(x.model).__name__.endswith(("ForQuestionAnswering", "ForMultipleChoice")),
              lambda x: ["global_attention_mask"]),
    Companion("Qwen2-VL", lambda x, w: "image_grid_thw" in x.params and grid_vision(x.config),
              lambda x: ["pixel_values", "image_grid_thw"] + (["mm_token_type_ids"] if "mm_token_type_ids" in x.params else [])),
    # LXMERT: optional by signature only
    Companion("LXMERT", lambda x, w: "visual_feats" in x.params and x.cfg("visual_feat_dim") is not None,
              lambda x: x.present("visual_feats", "visual_pos")),
    Companion("time series", lambda x, w: "past_values" in w,
              lambda x: [n for n in ("past_time_features", "past_observed_mask") if n in x.required]),
    # Mllama: image tiles with aspect-ratio ids, read by cross-attention
    Companion("Mllama", lambda x, w: x.tiles == "aspect_ratio",
              lambda x: x.present("pixel_values", "aspect_ratio_ids", "aspect_ratio_mask", "cross_attention_mask")),
    # Idefics3 family: [b, tiles, C, H, W] with a pixel or tile mask
    Companion("Idefics3", lambda x, w: x.tiles not in (None, "aspect_ratio"), lambda x: ["pixel_values", "pixel_attention_mask"]),
    # video LLMs; any-resolution image paths count patches from the VALUES of image_sizes (not
    # known on meta); the video path carries the vision tower, so images are left out
    Companion("video LLM", lambda x, w: video_lm(x.config, x.params), lambda x: ["pixel_values_videos"],
              drop=lambda x: ["pixel_values"] if "image_sizes" in x.params and "pixel_values" not in x.required else []),
)


def _token_ids(x: HfInputs, name: str):
    return x.random(name, [x.b, x.s], torch.long, "token_ids", low=0, high=min(int(x.vocab), 1000))


def _text_mask(x: HfInputs, name: str):
    return x.const(name, [x.b, x.s], torch.long, "mask", 1)


def _token_types(x: HfInputs, name: str):
    return x.const(name, [x.b, x.s], torch.long, "token_type_ids", 0)


def _grid_pixels(x: HfInputs, name: str):
    # a Qwen2-VL style tower: packed patches [b * t * h * w, C * tp * p * p] with grid_thw
    t, h, w, dim = grid_patches(x.config)
    return x.random(name, [x.b * t * h * w, dim], torch.float32, "pixel_patches")


def _patch_grid(x: HfInputs, name: str):
    t, h, w, _ = grid_patches(x.config)
    grid = x.const(name, [x.b, 3], torch.long, "patch_grid", 0)
    if grid.device.type != "meta":
        grid[:] = torch.tensor([t, h, w])  # one image per sample
    return grid


def _flattened_patches(x: HfInputs, name: str):
    # Pix2Struct: [b, patches, 2 + C * p * p]; columns 0/1 hold 1-based row/column ids
    dim = int(x.cfg("patch_embed_hidden_size", default=768))
    side = 16
    fp = x.random(name, [x.b, side * side, 2 + dim], torch.float32, "flattened_patches")
    if fp.device.type != "meta":
        idx = torch.arange(side * side)
        fp[:, :, 0] = (idx // side + 1).float()
        fp[:, :, 1] = (idx % side + 1).float()
    return fp


def _global_first_token(x: HfInputs, name: str):
    gm = x.const(name, [x.b, x.s], torch.long, "global_first_token", 0)
    if gm.device.type != "meta":
        gm[:, 0] = 1  # the first token attends globally, as for a [CLS] question token
    return gm


def _mllama_tiles(x: HfInputs, name: str):
    # Mllama: [b, images, tiles, C, H, W], every tile of one image in use
    h, w = size2(x.cfg("image_size", default=448))
    c = int(x.cfg("num_channels", default=3))
    n_tiles = int(x.cfg("max_num_tiles", default=4))
    return x.random(name, [x.b, 1, n_tiles, c, h, w], torch.float32, "image_tiles")


def _aspect_ratio_ids(x: HfInputs, name: str):
    # 1-based index into supported_aspect_ratios of a layout using all max_num_tiles tiles
    return x.const(name, [x.b, 1], torch.long, "aspect_ratio_ids", full_tile_ratio_id(x.config))


def _aspect_ratio_mask(x: HfInputs, name: str):
    n_tiles = int(x.cfg("max_num_tiles", default=4))
    return x.const(name, [x.b, 1, n_tiles], torch.long, "mask", 1)


def _cross_attention_mask(x: HfInputs, name: str):
    n_tiles = int(x.cfg("max_num_tiles", default=4))
    return x.const(name, [x.b, x.s, 1, n_tiles], torch.long, "mask", 1)


def _idefics_tiles(x: HfInputs, name: str):
    # Idefics3 family: [b, tiles, C, H, W] at the vision tower's size, one tile per sample
    h, w = size2(x.config.vision_config.image_size)
    c = int(getattr(x.config.vision_config, "num_channels", None) or 3)
    return x.random(name, [x.b, 1, c, h, w], torch.float32, "image_tiles")


def _tile_mask(x: HfInputs, name: str):
    return x.const(name, [x.b, 1], torch.bool, "tile_mask", True)


def _pixel_mask(x: HfInputs, name: str):
    h, w = size2(x.config.vision_config.image_size)
    return x.const(name, [x.b, 1, h, w], torch.bool, "pixel_mask", True)


def _video_llm_clip(x: HfInputs, name: str):
    # video LLMs: [b, frames, C, H, W] at the vision tower's image size
    t = video_frames(x.model, x.config) or VIDEO_FRAMES
    h, w = size2(getattr(x.config.vision_config, "image_size", None) or 224)
    c = int(getattr(x.config.vision_config, "num_channels", None) or 3)
    return x.random(name, [x.b, t, c, h, w], torch.float32, "video")


def _task_inputs(x: HfInputs, name: str):
    # OneFormer: the tokenised task prompt ("the task is semantic"), task_seq_len ids
    n = int(x.cfg("task_seq_len", default=77))
    v = int(x.cfg("text_encoder_vocab_size", default=1000))
    return x.random(name, [x.b, n], torch.long, "token_ids", low=0, high=min(v, 1000))


# open-vocabulary detection (OmDet-Turbo): CLASSES_PER_IMAGE class prompts per image [b * k, s];
# their grouping per image is classes_structure
def _class_prompts(x: HfInputs, name: str):
    return x.random(name, [x.b * CLASSES_PER_IMAGE, x.s], torch.long, "token_ids", low=0, high=min(int(x.vocab), 1000))


def _class_prompt_mask(x: HfInputs, name: str):
    return x.const(name, [x.b * CLASSES_PER_IMAGE, x.s], torch.long, "mask", 1)


def _class_groups(x: HfInputs, name: str):
    return x.const(name, [x.b], torch.long, "group_sizes", CLASSES_PER_IMAGE)


def _naflex_patches(x: HfInputs, name: str):
    # NaFlex (SigLIP2): flattened patches [b, max_patches, C * patch * patch]
    n, pch = int(x.cfg("num_patches", default=256)), int(x.cfg("patch_size", default=16))
    c = int(x.cfg("num_channels", default=3))
    return x.random(name, [x.b, n, c * pch * pch], torch.float32, "pixel_patches")


def _naflex_mask(x: HfInputs, name: str):
    n = int(x.cfg("num_patches", default=256))
    return x.const(name, [x.b, n], torch.long, "mask", 1)


def _spatial_shapes(x: HfInputs, name: str):
    side = int(round(int(x.cfg("num_patches", default=256)) ** 0.5))
    return x.const(name, [x.b, 2], torch.long, "patch_grid", side)


def _video_clip(x: HfInputs, name: str):
    t = video_frames(x.model, x.config) or 8
    h, w = size2(x.cfg("image_size", "crop_size", "img_size", default=224))
    c = int(x.cfg("num_channels", "in_channels", default=3))
    return x.random(name, [x.b, t, c, h, w], torch.float32, "video")


def _image_pair(x: HfInputs, name: str):
    # keypoint matchers: [b, 2, C, H, W], the two images to match
    h, w = size2(x.cfg("image_size", "img_size", default=224))
    c = int(x.cfg("num_channels", "in_channels", default=3))
    return x.random(name, [x.b, 2, c, h, w], torch.float32, "image_pair")


def _region_features(x: HfInputs, name: str):
    # LXMERT: region features [b, objects, visual_feat_dim] of an object detector
    return x.random(name, [x.b, VISUAL_OBJECTS, int(x.cfg("visual_feat_dim"))], torch.float32, "region_features")


def _region_boxes(x: HfInputs, name: str):
    # their boxes, normalised to [0, 1] (x0, y0, x1, y1)
    return x.const(name, [x.b, VISUAL_OBJECTS, int(x.cfg("visual_pos_dim"))], torch.float32, "boxes", 0.5,
                   low=0.0, high=1.0)


def _pixels(x: HfInputs, name: str):
    h, w = size2(x.cfg("image_size", "img_size", default=224))
    c = int(x.cfg("num_channels", "in_channels", default=3))
    return x.random(name, [x.b, c, h, w], torch.float32, "pixels")


def _masked_patches(x: HfInputs, name: str):
    n = num_patches(x.model, x.config)
    mask = x.const(name, [x.b, n], torch.bool, "mask_half", False)
    if mask.device.type != "meta":
        mask[:, : n // 2] = True  # the same number of masked patches in every sample
    return mask


def _qformer_ids(x: HfInputs, name: str):
    qv = getattr(getattr(x.config, "qformer_config", None), "vocab_size", None) or 1000
    return x.random(name, [x.b, x.s], torch.long, "token_ids", low=0, high=min(int(qv), 1000))


def _past_values(x: HfInputs, name: str):
    ctx = int(x.cfg("context_length", default=32) or 32)
    lags = x.cfg("lags_sequence", default=None)
    length = ctx + (max(lags) if lags else 0)
    if getattr(x.config, "model_type", None) == "timesfm":  # one series per sample, as a list
        return [x.random(f"{name}.{i}", [length], torch.float32, "time_series") for i in range(x.b)]
    ch = int(x.cfg("num_input_channels", "input_size", default=1) or 1)
    shape = [x.b, length, ch] if ch > 1 or x.cfg("num_input_channels") is not None else [x.b, length]
    return x.random(name, shape, torch.float32, "time_series")


def _past_time_features(x: HfInputs, name: str):
    past = x.kwargs.get("past_values")
    length = int(past.shape[1]) if isinstance(past, torch.Tensor) else x.s
    nf = int(x.cfg("num_time_features", default=1) or 0) + int(x.cfg("num_dynamic_real_features", default=0) or 0)
    return x.random(name, [x.b, length, max(nf, 1)], torch.float32, "time_features")


def _past_observed_mask(x: HfInputs, name: str):
    return x.const(name, list(x.kwargs["past_values"].shape), torch.float32, "mask", 1.0)


def _states(x: HfInputs, name: str):
    return x.random(name, [x.b, x.s, int(x.cfg("state_dim", default=17))], torch.float32, "states")


def _actions(x: HfInputs, name: str):
    return x.random(name, [x.b, x.s, int(x.cfg("act_dim", default=4))], torch.float32, "actions")


def _returns(x: HfInputs, name: str):
    return x.random(name, [x.b, x.s, 1], torch.float32, name)


def _timesteps(x: HfInputs, name: str):
    hi = int(x.cfg("max_ep_len", default=1000))
    return x.random(name, [x.b, x.s], torch.long, "timesteps", low=0, high=hi)


def _embeddings(x: HfInputs, name: str):
    return x.random(name, [x.b, x.s, int(x.cfg("d_model"))], torch.float32, "embeddings")


def _stacked_filter_banks(x: HfInputs, name: str):
    # stacked filter banks (SeamlessM4T: 2 x 80 mel bins per frame)
    dim = int(x.cfg("feature_projection_input_dim"))
    return x.random(name, [x.b, 4 * x.s, dim], torch.float32, "audio_features")


def _mel_features(x: HfInputs, name: str):
    mel = x.cfg("num_mel_bins", "feature_size", "input_feat_per_channel", default=80)
    src = x.cfg("max_source_positions", default=None)
    if src is not None and x.cfg("num_mel_bins") is not None:  # Whisper: [b, mel, 2 * max_source_positions]
        return x.random(name, [x.b, int(mel), 2 * int(src)], torch.float32, "audio_features")
    return x.random(name, [x.b, 4 * x.s, int(mel)], torch.float32, "audio_features")


def _codec_waveform(x: HfInputs, name: str):
    # audio codecs / acoustic tokenizers take waveforms [b, channels, samples]
    hop = x.cfg("hop_length", default=None)
    n = x.capture.audio_samples
    if isinstance(hop, int) and hop > 0:
        n = max(hop, n - n % hop)
    return x.random(name, [x.b, codec_channels(x.config), n], torch.float32, "audio_waveform")


def _waveform(x: HfInputs, name: str):
    mel, frames = x.cfg("num_mel_bins"), x.cfg("max_length")
    if mel is not None and frames is not None:  # spectrogram transformers (AST)
        return x.random(name, [x.b, int(frames), int(mel)], torch.float32, "audio_features")
    n = x.capture.audio_samples
    # waveforms with a channel axis documented as (batch_size, 1, num_samples) (OmniASR)
    channel = any(len(d) == 3 and d[1] == "1" for d in documented_shapes(x.model, name))
    return x.random(name, [x.b, 1, n] if channel else [x.b, n], torch.float32, "audio_waveform")


def _boxes(x: HfInputs, name: str):
    return x.const(name, [x.b, x.s, 4], torch.long, "bbox", 0)


def _grid_tower(x: HfInputs, name: str) -> bool:
    return grid_tower(x.config, x.params)


def _naflex(x: HfInputs, name: str) -> bool:
    return naflex(x.config)


# How each argument is built, one row per argument x family; per argument the first row whose
# ``when`` holds wins (rows of one argument in order of precedence).
INPUT_RULES: tuple[InputRule, ...] = (
    InputRule("input_ids", "text", _token_ids),
    InputRule("decoder_input_ids", "encoder-decoder", _token_ids),
    InputRule("attention_mask", "text", _text_mask),
    InputRule("decoder_attention_mask", "encoder-decoder", _text_mask),
    InputRule("token_type_ids", "text", _token_types),
    InputRule("pixel_values", "Qwen2-VL", _grid_pixels, lambda x, n: grid_vision(x.config) and "image_grid_thw" in x.params),
    InputRule("hidden_states", "Qwen2-VL tower", _grid_pixels, _grid_tower),
    InputRule("pixel_values", "Qwen2-VL tower", _grid_pixels, _grid_tower),
    InputRule("image_grid_thw", "Qwen2-VL", _patch_grid),
    InputRule("grid_thw", "Qwen2-VL tower", _patch_grid, _grid_tower),
    InputRule("mm_token_type_ids", "Qwen2-VL", _token_types),
    InputRule("flattened_patches", "Pix2Struct", _flattened_patches),
    InputRule("global_attention_mask", "Longformer", _global_first_token),
    InputRule("pixel_values", "Mllama", _mllama_tiles, lambda x, n: x.tiles == "aspect_ratio"),
    InputRule("aspect_ratio_ids", "Mllama", _aspect_ratio_ids),
    InputRule("aspect_ratio_mask", "Mllama", _aspect_ratio_mask),
    InputRule("cross_attention_mask", "Mllama", _cross_attention_mask),
    InputRule("pixel_values", "Idefics3", _idefics_tiles, lambda x, n: x.tiles is not None),
    InputRule("pixel_attention_mask", "Idefics3 (tile mask)", _tile_mask, lambda x, n: x.tiles == "tile_mask"),
    InputRule("pixel_attention_mask", "Idefics3 (pixel mask)", _pixel_mask, lambda x, n: x.tiles == "pixel_mask"),
    InputRule("pixel_values_videos", "video LLM", _video_llm_clip, lambda x, n: video_lm(x.config, x.params)),
    InputRule("task_inputs", "OneFormer", _task_inputs),
    InputRule("classes_input_ids", "OmDet-Turbo", _class_prompts),
    InputRule("classes_attention_mask", "OmDet-Turbo", _class_prompt_mask),
    InputRule("tasks_input_ids", "OmDet-Turbo", _token_ids),
    InputRule("tasks_attention_mask", "OmDet-Turbo", _text_mask),
    InputRule("classes_structure", "OmDet-Turbo", _class_groups),
    InputRule("pixel_values", "NaFlex (SigLIP2)", _naflex_patches, _naflex),
    InputRule("pixel_attention_mask", "NaFlex (SigLIP2)", _naflex_mask, _naflex),
    InputRule("spatial_shapes", "NaFlex (SigLIP2)", _spatial_shapes),
    InputRule("pixel_values", "video", _video_clip, lambda x, n: bool(video_frames(x.model, x.config))),
    InputRule("pixel_values_videos", "video", _video_clip),
    InputRule("pixel_values", "keypoint matcher", _image_pair, lambda x, n: image_pairs(x.model)),
    InputRule("visual_feats", "LXMERT", _region_features, lambda x, n: x.cfg("visual_feat_dim") is not None),
    InputRule("visual_pos", "LXMERT", _region_boxes, lambda x, n: x.cfg("visual_pos_dim") is not None),
    InputRule("pixel_values", "vision", _pixels),
    InputRule("bool_masked_pos", "masked image modeling", _masked_patches),
    InputRule("qformer_input_ids", "Q-Former", _qformer_ids),
    InputRule("qformer_attention_mask", "Q-Former", _text_mask),
    InputRule("past_values", "time series", _past_values),
    InputRule("past_time_features", "time series", _past_time_features),
    InputRule("past_observed_mask", "time series", _past_observed_mask,
              lambda x, n: isinstance(x.kwargs.get("past_values"), torch.Tensor)),
    InputRule("states", "decision transformer", _states),
    InputRule("actions", "decision transformer", _actions),
    InputRule("rewards", "decision transformer", _returns),
    InputRule("returns_to_go", "decision transformer", _returns),
    InputRule("timesteps", "decision transformer", _timesteps),
    InputRule("inputs", "Perceiver (no preprocessor)", _embeddings, lambda x, n: x.cfg("d_model") is not None),
    InputRule("input_features", "SeamlessM4T", _stacked_filter_banks,
              lambda x, n: x.cfg("feature_projection_input_dim") is not None),
    InputRule("input_features", "speech", _mel_features),
    InputRule("input_values", "audio codec", _codec_waveform, lambda x, n: codec_channels(x.config) is not None),
    InputRule("hidden_states", "audio codec", _codec_waveform, lambda x, n: codec_channels(x.config) is not None),
    InputRule("input_values", "audio", _waveform),
    InputRule("bbox", "LayoutLM", _boxes),
)

_RULES_BY_ARG: dict[str, tuple[InputRule, ...]] = {}
for _rule in INPUT_RULES:
    _RULES_BY_ARG[_rule.arg] = _RULES_BY_ARG.get(_rule.arg, ()) + (_rule,)


def input_rule(x: HfInputs, name: str) -> InputRule | None:
    """The row of :data:`INPUT_RULES` that builds argument ``name`` of ``x``'s model: the first
    of that argument whose ``when`` holds; None when none does."""
    for rule in _RULES_BY_ARG.get(name, ()):
        if rule.when is None or rule.when(x, name):
            return rule
    return None


def wanted_inputs(x: HfInputs, mains: list[str]) -> list[str]:
    """The arguments to synthesise, in order: the main input(s), the required ones, then those
    the :data:`COMPANIONS` rows add (duplicates dropped, first place kept)."""
    wanted = list(dict.fromkeys([*mains, *x.required]))
    for row in COMPANIONS:
        if row.when(x, wanted):
            wanted += row.names(x)
            if row.drop is not None:
                dropped = row.drop(x)
                wanted = [n for n in wanted if n not in dropped]
    return list(dict.fromkeys(wanted))


def text_length(x: HfInputs) -> int:
    """Tokens per sequence: ``capture.seq_len``, shortened to a CLIP-style text tower's position
    table when it is shorter (OWL-ViT: 16), lengthened for BigBird's block-sparse attention."""
    s = x.s
    text_pos = getattr(getattr(x.config, "text_config", None), "max_position_embeddings", None)
    if isinstance(text_pos, int) and not isinstance(text_pos, bool) and 0 < text_pos < s and "pixel_values" in x.params:
        s = text_pos  # CLIP-style text towers with short position tables (OWL-ViT: 16)
    if x.cfg("attention_type") == "block_sparse":
        # BigBird: at most (5 + 2 * num_random_blocks) * block_size tokens make the model switch
        # to full attention inside forward (it builds new attention modules and Parameters
        # there, frames Dynamo cannot trace); one block more keeps the block-sparse model
        blk, rnd = int(x.cfg("block_size", default=64)), int(x.cfg("num_random_blocks", default=3))
        s = max(s, (6 + 2 * rnd) * blk)
    return s


def hf_inputs(model: torch.nn.Module, config: Any, capture: CaptureConfig | dict, device) -> tuple[dict, list]:
    """Keyword inputs for a transformers model and their spec: the arguments of
    :func:`wanted_inputs`, each built by its :func:`input_rule`, then image / video tokens spliced
    into the text (:func:`extract.capture.multimodal.insert_image_tokens`) and multiple-choice
    inputs given two choices.

    Args:
        model: the built model (its ``forward`` signature is read).
        config: its ``PretrainedConfig``.
        capture: the ``extract.capture`` params (:class:`extract.config.CaptureConfig` or its
            mapping): ``batch_size``, ``seq_len``, ``audio_samples``.
        device: ``"meta"`` or ``"cpu"``.

    Returns:
        (kwargs, spec): tensors keyed by argument name; spec entries as in the module doc.

    Raises:
        UnsupportedInput: a required argument has no rule (the message says when it is a
            stateful non-tensor object, e.g. a video inference session), or the model defines
            no ``forward`` at all (e.g. a VQ-VAE with only ``encode``).
    """
    cap = capture_config(capture)
    if type(model).forward is torch.nn.Module.forward:
        entry = sorted(n for n, v in vars(type(model)).items()
                       if callable(v) and not isinstance(v, type) and not n.startswith("_"))
        raise UnsupportedInput(f"{type(model).__name__} defines no forward(); a module call cannot be captured "
                               f"(its own entry points: {entry})")
    params = inspect.signature(model.forward).parameters
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    main = getattr(model, "main_input_name", "input_ids")
    mains = [str(m) for m in main] if isinstance(main, (list, tuple)) else [main]  # OneFormer: pixels + task
    x = HfInputs(model, config, cap, device, params, required, mains[0], cap.batch_size, cap.seq_len,
                 torch.Generator().manual_seed(0), vision_lm=getattr(config, "vision_config", None) is not None,
                 tiles=tile_kind(model, config, params))
    wanted = wanted_inputs(x, mains)
    x.vocab = config_attr(config, "vocab_size", default=1000) or 1000
    x.s = text_length(x)
    for name in wanted:
        if name not in params:
            continue
        rule = input_rule(x, name)
        if rule is not None:
            x.kwargs[name] = rule.build(x, name)
        elif name in required:
            ann = params[name].annotation
            if isinstance(ann, type) and not issubclass(ann, torch.Tensor) and ann.__module__.startswith("transformers"):
                raise UnsupportedInput(
                    f"required input {name!r} of {type(model).__name__} is of type {ann.__name__}, a stateful object "
                    "(frames, prompts and memory kept across calls, built by the processor), not a tensor: "
                    "no single-call input can be synthesised")
            raise UnsupportedInput(f"no synthesis rule for required input {name!r} of {type(model).__name__}")
    kwargs, spec = x.kwargs, x.spec
    insert_image_tokens(kwargs, spec, config, device, model)
    if type(model).__name__.endswith("ForMultipleChoice"):
        # Multiple-choice heads take [batch, num_choices, seq]; two choices.
        for entry in spec:
            if len(entry["shape"]) == 2 and entry["name"] in kwargs:
                kwargs[entry["name"]] = kwargs[entry["name"]].unsqueeze(1).expand(-1, 2, -1).contiguous()
                entry["shape"] = [entry["shape"][0], 2, entry["shape"][1]]
    if not kwargs:
        raise UnsupportedInput(f"{type(model).__name__}: no known input among {list(params)[:8]}")
    return kwargs, spec


def vision_inputs(conf: dict, capture: CaptureConfig | dict, device) -> tuple[tuple, list]:
    """Positional inputs for a timm / torchvision model from its catalog config.

    ``conf`` has ``input_size`` ([C, H, W], timm) or ``kind`` and ``image_shape``
    (torchvision: classification, segmentation, video [C, T, H, W], detection (a list of
    images), optical_flow (two images)).
    """
    gen = torch.Generator().manual_seed(0)
    b = capture_config(capture).batch_size
    spec: list = []
    if "input_size" in conf:
        shape = [b, *conf["input_size"]]
        return (make_input(spec, "x", shape, torch.float32, "pixels", device, gen=gen),), spec
    kind = conf.get("kind", "classification")
    shape = conf["image_shape"]
    if kind == "detection":
        imgs = [make_input(spec, f"images.{i}", list(shape), torch.float32, "pixels", device, gen=gen) for i in range(b)]
        return (imgs,), spec
    if kind == "optical_flow":
        a = make_input(spec, "image1", [b, *shape], torch.float32, "pixels", device, gen=gen)
        c = make_input(spec, "image2", [b, *shape], torch.float32, "pixels", device, gen=gen)
        return (a, c), spec
    return (make_input(spec, "x", [b, *shape], torch.float32, "pixels" if kind != "video" else "video", device, gen=gen),), spec
