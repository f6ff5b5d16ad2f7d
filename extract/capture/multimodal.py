"""Input rules of multimodal families.

Image tiles (Mllama with ``aspect_ratio_ids``; the Idefics3 family with a tile or pixel
``pixel_attention_mask``), video clips (``pixel_values_videos``), Q-Former prompts, spatial
grids (``grid_thw``), and one image/video token per feature row spliced into ``input_ids``
(counted from the config, or from the model's own ``get_video_features`` run on fake tensors),
so whatever a model derives from input values is consistent by construction, on meta too.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from extract.capture.synth import config_attr, size2

# Frames of a synthetic clip for video LLMs whose config names no frame count.
VIDEO_FRAMES = 8


# Class prompts per image for open-vocabulary detectors (OmDet-Turbo classes_input_ids).
CLASSES_PER_IMAGE = 2


def tile_kind(model: Any, config: Any, params: Any) -> str | None:
    """How a vision-language model takes its image as tiles, or None.

    ``"aspect_ratio"``: Mllama style, pixels ``[b, images, tiles, C, H, W]`` with
    ``aspect_ratio_ids`` / ``aspect_ratio_mask`` (config ``max_num_tiles``).
    ``"tile_mask"`` / ``"pixel_mask"``: Idefics3 family (Idefics3, SmolVLM, ModernVBERT,
    GraniteDocling), pixels ``[b, tiles, C, H, W]`` with ``pixel_attention_mask`` documented
    as ``(batch_size, num_tiles)`` (real tiles) or else per pixel ``[b, tiles, H, W]``.
    """
    if "aspect_ratio_ids" in params and config_attr(config, "max_num_tiles") is not None:
        return "aspect_ratio"
    vc = getattr(config, "vision_config", None)
    if vc is None or "pixel_attention_mask" not in params or "pixel_values" not in params or naflex(config):
        return None
    if not isinstance(getattr(vc, "image_size", None), int) or not isinstance(getattr(vc, "patch_size", None), int):
        return None  # NaFlex-style towers without a fixed tile size (LFM2-VL)
    docs = documented_shapes(model, "pixel_attention_mask")
    return "tile_mask" if any(len(d) == 2 and "tile" in d[1] for d in docs) else "pixel_mask"


def full_tile_ratio_id(config: Any) -> int:
    """``aspect_ratio_ids`` value of an image using all ``max_num_tiles`` tiles: the 1-based
    index of the first ``[rows, cols]`` in ``supported_aspect_ratios`` with rows * cols ==
    max_num_tiles (0 is padding), 1 when there is none."""
    n = int(config_attr(config, "max_num_tiles", default=4))
    for i, ratio in enumerate(config_attr(config, "supported_aspect_ratios", default=None) or []):
        if len(ratio) == 2 and int(ratio[0]) * int(ratio[1]) == n:
            return i + 1
    return 1


def _token_id(config: Any, kind: str) -> int | None:
    """``{kind}_token_id`` (or the older ``{kind}_token_index``) of a multimodal config."""
    for key in (f"{kind}_token_id", f"{kind}_token_index"):
        v = getattr(config, key, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def video_lm(config: Any, params: Any) -> bool:
    """Video LLMs that take ``pixel_values_videos`` [b, frames, C, H, W] with a video token
    in the text (LLaVA-NeXT-Video, Video-LLaVA, LLaVA-OneVision); Qwen2-VL style patch-grid
    towers (``video_grid_thw``) are not of this kind."""
    return "pixel_values_videos" in params and getattr(config, "vision_config", None) is not None \
        and _token_id(config, "video") is not None and not grid_vision(config)


def documented_shapes(model: Any, name: str) -> list[tuple[str, ...]]:
    """The shapes transformers documents for input ``name`` (``name (`... of shape `(a, b)`)``)
    in the docstrings of the ``forward`` methods of the model's modeling module, e.g.
    ``[("batch_size", "sequence_length"), ("batch_size", "1", "num_samples")]``. All of the
    module's classes are read: a base model's docstring often holds only auto_docstring's
    generic shape while its task head documents the real one."""
    pat = re.compile(rf"{re.escape(name)} \(`[^`]*`[^\n]*?of shape `?\(([^)]*)\)")
    docs = [type(model).forward.__doc__ or ""]
    module = sys.modules.get(type(model).__module__)
    for obj in vars(module).values() if module is not None else ():
        if isinstance(obj, type) and obj.__module__ == type(model).__module__ and "forward" in vars(obj):
            docs.append(vars(obj)["forward"].__doc__ or "")
    shapes = []
    for doc in docs:
        for m in pat.finditer(doc):
            shape = tuple(x.strip().strip("`") for x in m.group(1).split(",") if x.strip())
            if shape not in shapes:
                shapes.append(shape)
    return shapes


def _model_attr(model: Any, name: str) -> Any:
    """``model.name`` or, for task heads, ``model.model.name``."""
    v = getattr(model, name, None)
    return v if v is not None else getattr(getattr(model, "model", None), name, None)


def _feature_rows(model: Any, method: str, tensor: torch.Tensor) -> int | None:
    """Feature rows (tokens) the model's own ``method`` (``get_video_features``,
    ``get_image_features``) makes of ``tensor``, computed on fake tensors (shapes only, no
    values, parameters untouched); None when the method is missing or needs values
    (data-dependent shapes)."""
    fn = getattr(model, method, None) or getattr(getattr(model, "model", None), method, None)
    if fn is None:
        return None

    fake_log = logging.getLogger("torch._subclasses.fake_tensor")
    level = fake_log.level
    fake_log.setLevel(logging.CRITICAL)  # a failed fake kernel is an expected answer here, not an error
    try:
        with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
            out = fn(tensor)
    except Exception:  # noqa: BLE001 - the caller falls back to the config formula
        return None
    finally:
        fake_log.setLevel(level)
    feats = out if isinstance(out, (torch.Tensor, list, tuple)) else getattr(out, "pooler_output", None)
    if isinstance(feats, torch.Tensor):
        feats = [feats]
    if not feats or not all(isinstance(f, torch.Tensor) and f.dim() >= 1 for f in feats):
        return None
    return sum(f.numel() // f.shape[-1] for f in feats)


def codec_channels(config: Any) -> int | None:
    """Channels of a waveform codec's input (EnCodec ``audio_channels``, VibeVoice
    ``channels``; 1 for DAC), None for models that take flat waveforms [b, samples]."""
    for key in ("audio_channels", "channels"):
        v = getattr(config, key, None)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    if getattr(config, "model_type", None) == "dac":
        return 1
    return None


def grid_vision(config: Any) -> bool:
    """Qwen2-VL style vision towers: pixels as a flat list of temporal x spatial patches
    with a per-image ``(t, h, w)`` patch grid."""
    vc = getattr(config, "vision_config", None)
    return vc is not None and isinstance(getattr(vc, "temporal_patch_size", None), int) \
        and isinstance(getattr(vc, "spatial_merge_size", None), int)


# Patch grid of the synthetic image of a Qwen2-VL style model (one frame of 8 x 8 patches).
GRID_THW = (1, 8, 8)


def grid_tower(config: Any, params: Any) -> bool:
    """A Qwen2-VL style vision tower on its own (its config is the vision config: no
    ``vision_config``): packed patches (``hidden_states``, Qwen2.5-VL; ``pixel_values``,
    Cosmos3-Edge's SigLIP2 tower) with a ``grid_thw`` patch grid, ``spatial_merge_size`` and
    ``patch_size`` in the config (``temporal_patch_size`` optional: 1 without)."""
    return "grid_thw" in params and getattr(config, "vision_config", None) is None \
        and isinstance(getattr(config, "spatial_merge_size", None), int) \
        and isinstance(getattr(config, "patch_size", None), int)


def grid_patches(config: Any) -> tuple[int, int, int, int]:
    """``(t, h, w, dim)``: the patch grid of :data:`GRID_THW` (h, w rounded to the merge
    size) and the flattened patch size ``C * temporal_patch * patch * patch``, from
    ``config.vision_config`` or, for a tower on its own (:func:`grid_tower`), ``config``."""
    vc = getattr(config, "vision_config", None) or config
    merge = int(vc.spatial_merge_size)
    t, h, w = GRID_THW
    h, w = max(merge, h - h % merge), max(merge, w - w % merge)
    c = int(getattr(vc, "in_channels", None) or getattr(vc, "in_chans", None) or getattr(vc, "num_channels", None) or 3)
    p = int(vc.patch_size)
    tp = getattr(vc, "temporal_patch_size", None)
    return t, h, w, c * (int(tp) if isinstance(tp, int) else 1) * p * p


# Region features per image of LXMERT-style models (``visual_feats`` / ``visual_pos``): the 36
# Faster R-CNN boxes per image of LXMERT's pre-training (Tan & Bansal 2019, section 3.1).
VISUAL_OBJECTS = 36


def image_pairs(model: Any) -> bool:
    """Keypoint matchers (EfficientLoFTR, SuperGlue, LightGlue) take ``pixel_values`` as image
    pairs ``[b, 2, C, H, W]``: the model's modeling module defines a ``...ForKeypointMatching``
    class (a matcher family; the base model of the family takes the same pairs)."""
    module = sys.modules.get(type(model).__module__)
    return module is not None and any(isinstance(o, type) and n.endswith("ForKeypointMatching")
                                      for n, o in vars(module).items())


def naflex(config: Any) -> bool:
    """SigLIP2-style NaFlex vision towers: patches flattened, a patch mask and grid shapes."""
    return config_attr(config, "num_patches") is not None and config_attr(config, "image_size") is None \
        and "siglip2" in str(getattr(config, "model_type", ""))


def video_frames(model: Any, config: Any) -> int | None:
    """Frames of a video model's clip (``num_frames`` / ``frames_per_clip``), 4 for video
    Q-Former models, None for image models."""
    frames = config_attr(config, "num_frames", "frames_per_clip")
    if frames is not None and config_attr(config, "tubelet_size") is not None:
        return int(frames)
    if "video" in str(getattr(config, "model_type", "")) and "qformer_config" in type(config).__dict__.get("sub_configs", {}):
        return 4
    if getattr(config, "model_type", None) == "instructblipvideo":
        return 4
    return None


def num_patches(model: Any, config: Any) -> int:
    """Patch tokens of a (video) ViT: ``(T / tubelet) * (H / p) * (W / p)``."""
    h, w = size2(config_attr(config, "image_size", "crop_size", default=224))
    p = int(config_attr(config, "patch_size", default=16))
    n = (h // p) * (w // p)
    frames = video_frames(model, config)
    if frames:
        n *= frames // int(config_attr(config, "tubelet_size", default=1))
    return n


def insert_image_tokens(kwargs: dict, spec: list, config: Any, device, model: Any = None) -> None:
    """Vision-language models that splice image (video) features into the text need one
    image (video) token per feature row in ``input_ids``, placed first. The count is, by family:

    - Qwen2-VL style patch grids: ``t * h * w / spatial_merge_size ** 2``;
    - Q-Former models (InstructBLIP(-Video)): ``num_query_tokens`` per image or frame;
    - Idefics3 family tiles: the model's ``image_seq_len`` per tile
      (``(image_size // patch_size) ** 2 / scale_factor ** 2``);
    - video LLMs: the rows the model's own ``get_video_features`` makes of the clip
      (computed on fake tensors, so it also holds on meta);
    - LLaVA style: ``(image_size // patch_size) ** 2`` (plus one with
      ``vision_feature_select_strategy == "full"``); where the config gives no patch grid
      (FastVLM's FastViT), the rows the model's ``get_image_features`` makes of the pixels.

    Cross-attention models (Mllama: ``aspect_ratio_ids``) read the image in cross-attention
    layers and get no spliced tokens. Counts are shapes, never values, so they hold on meta.
    """
    vc = getattr(config, "vision_config", None)
    if vc is None or "input_ids" not in kwargs or "aspect_ratio_ids" in kwargs:
        return
    segments: list[tuple[str, int, int]] = []  # (spec key, token id, count)
    pixels, videos = kwargs.get("pixel_values"), kwargs.get("pixel_values_videos")
    qformer = isinstance(getattr(config, "num_query_tokens", None), int) and getattr(config, "qformer_config", None) is not None
    if isinstance(pixels, torch.Tensor):
        is_video = pixels.dim() == 5 and qformer
        token = _token_id(config, "video") if is_video else _token_id(config, "image")
        size, patch = getattr(vc, "image_size", None), getattr(vc, "patch_size", None)
        grid = kwargs.get("image_grid_thw")
        n = None
        if grid is not None and grid_vision(config):
            t, h, w, _ = grid_patches(config)
            n = t * h * w // int(vc.spatial_merge_size) ** 2  # merged patches, one token each
        elif qformer:
            n = int(config.num_query_tokens) * (int(pixels.shape[1]) if is_video else 1)
        elif "pixel_attention_mask" in kwargs and pixels.dim() == 5:
            per_tile = _model_attr(model, "image_seq_len") if model is not None else None
            if not isinstance(per_tile, int) and isinstance(size, int) and isinstance(patch, int) and patch > 0:
                scale = config_attr(config, "scale_factor", "pixel_shuffle_factor", default=1)
                per_tile = (size // patch) ** 2 // int(scale) ** 2
            n = per_tile * int(pixels.shape[1]) if isinstance(per_tile, int) else None
        elif isinstance(size, int) and isinstance(patch, int) and patch > 0:
            n = (size // patch) ** 2 + (1 if getattr(config, "vision_feature_select_strategy", "default") == "full" else 0)
        elif model is not None:  # no patch grid in the config (FastVLM's FastViT): ask the model
            rows = _feature_rows(model, "get_image_features", pixels)
            n = rows // int(pixels.shape[0]) if rows else None
        if token is not None and n:
            segments.append(("video_tokens" if is_video else "image_tokens", int(token), int(n)))
    if isinstance(videos, torch.Tensor) and _token_id(config, "video") is not None and model is not None:
        rows = _feature_rows(model, "get_video_features", videos)
        if rows:
            segments.append(("video_tokens", _token_id(config, "video"), rows // int(videos.shape[0])))
        else:  # no count without values: leave the clip out rather than feed mismatched tokens
            del kwargs["pixel_values_videos"]
            spec[:] = [e for e in spec if e["name"] != "pixel_values_videos"]
    if not segments:
        return
    ids = kwargs["input_ids"]
    b, s = ids.shape
    n = sum(c for _, _, c in segments)
    prefix = torch.cat([torch.full((b, c), tok, dtype=ids.dtype, device=ids.device) for _, tok, c in segments], dim=1)
    kwargs["input_ids"] = torch.cat([prefix, ids], dim=1)
    if "attention_mask" in kwargs:
        kwargs["attention_mask"] = torch.ones((b, n + s), dtype=kwargs["attention_mask"].dtype, device=ids.device)
    if "mm_token_type_ids" in kwargs:  # 1 marks an image token (M-RoPE position ids)
        tt = torch.zeros((b, n + s), dtype=kwargs["mm_token_type_ids"].dtype, device=ids.device)
        if tt.device.type != "meta":
            tt[:, :n] = 1
        kwargs["mm_token_type_ids"] = tt
    for entry in spec:
        if entry["name"] in ("input_ids", "attention_mask", "mm_token_type_ids"):
            entry["shape"] = [b, n + s]
        if entry["name"] == "input_ids":
            start = 0
            for key, tok, c in segments:
                entry[key] = {"token_id": tok, "count": c, "position": "prefix" if start == 0 else f"after {start}"}
                start += c
