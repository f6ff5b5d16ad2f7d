"""Synthesise a model's example inputs from what it declares, and record the input spec.

Transformers models: the arguments of ``model.forward`` that have no default, plus the
ones a family needs in practice (``attention_mask`` beside ``input_ids``, decoder ids for
encoder-decoders, ``pixel_values`` for models with a vision tower). Sizes come from the
config (``image_size``, ``num_channels``, ``num_mel_bins``, ``max_source_positions``) and
from the capture params (``batch_size``, ``seq_len``). Multimodal families get their own
layouts: image tiles (Mllama with ``aspect_ratio_ids``; the Idefics3 family with a tile or
pixel ``pixel_attention_mask``), video clips (``pixel_values_videos``), Q-Former prompts,
and one image/video token per feature row spliced into ``input_ids`` (counted from the
config, or from the model's own ``get_video_features`` run on fake tensors). All inputs
are shapes first: whatever a model derives from input values (token counts) is made
consistent by construction, so the same rules hold on the meta device. timm and
torchvision models take images (or video clips, image pairs for optical flow, image lists
for detection).

Every input is described by a spec entry ``{name, shape, dtype, kind, low, high}`` (token
ids are drawn uniformly from ``[low, high)``); the spec is stored with the extraction so a
stored graph can be fed again.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch


class UnsupportedInput(ValueError):
    """The model requires an input this synthesiser does not know how to build."""


def _size2(value: Any, default: int = 224) -> tuple[int, int]:
    if value is None:
        return default, default
    if isinstance(value, (list, tuple)):
        if len(value) >= 2:
            return int(value[-2]), int(value[-1])
        return int(value[0]), int(value[0])
    if isinstance(value, dict):
        h = value.get("height") or value.get("shortest_edge") or default
        w = value.get("width") or value.get("shortest_edge") or default
        return int(h), int(w)
    return int(value), int(value)


# Sub-configs searched for sizes, in this order, after the config itself.
SUB_CONFIG_KEYS = ("vision_config", "text_config", "audio_config", "encoder_config", "model_config")


def _get(config: Any, *names: str, default: Any = None) -> Any:
    for sub in (config, *(getattr(config, k, None) for k in SUB_CONFIG_KEYS)):
        if sub is None:
            continue
        for n in names:
            v = getattr(sub, n, None)
            if v is not None:
                return v
    return default


def _make(spec: list, name: str, shape: list[int], dtype: torch.dtype, kind: str, device, low=None, high=None, fill=None, gen=None):
    spec.append({"name": name, "shape": list(shape), "dtype": str(dtype).replace("torch.", ""), "kind": kind, "low": low, "high": high})
    return synth_tensor(shape, dtype, device, low=low, high=high, fill=fill, gen=gen)


def synth_tensor(shape, dtype, device, low=None, high=None, fill=None, gen=None) -> torch.Tensor:
    """A tensor of ``shape``/``dtype`` on ``device``: ``fill`` constant, ints uniform in
    ``[low, high)``, floats standard normal. On the meta device only metadata exists."""
    if str(device) == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if fill is not None:
        return torch.full(shape, fill, dtype=dtype, device=device)
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device, generator=gen)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype, device=device)
    return torch.randint(int(low or 0), int(high or 2), shape, dtype=dtype, device=device, generator=gen)


def hf_inputs(model: torch.nn.Module, config: Any, capture: dict, device) -> tuple[dict, list]:
    """Keyword inputs for a transformers model and their spec.

    Args:
        model: the built model (its ``forward`` signature is read).
        config: its ``PretrainedConfig``.
        capture: capture params: ``batch_size``, ``seq_len``, ``audio_samples``.
        device: ``"meta"`` or ``"cpu"``.

    Returns:
        (kwargs, spec): tensors keyed by argument name; spec entries as in the module doc.

    Raises:
        UnsupportedInput: a required argument has no known synthesis rule (the message says
            when it is a stateful non-tensor object, e.g. a video inference session), or the
            model defines no ``forward`` at all (e.g. a VQ-VAE with only ``encode``).
    """
    gen = torch.Generator().manual_seed(0)
    b, s = int(capture.get("batch_size", 1)), int(capture.get("seq_len", 32))
    if type(model).forward is torch.nn.Module.forward:
        entry = sorted(n for n, v in vars(type(model)).items()
                       if callable(v) and not isinstance(v, type) and not n.startswith("_"))
        raise UnsupportedInput(f"{type(model).__name__} defines no forward(); a module call cannot be captured "
                               f"(its own entry points: {entry})")
    sig = inspect.signature(model.forward)
    params = sig.parameters
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    main = getattr(model, "main_input_name", "input_ids")
    mains = [str(m) for m in main] if isinstance(main, (list, tuple)) else [main]  # OneFormer: pixels + task
    main = mains[0]
    wanted = list(dict.fromkeys([*mains, *required]))
    is_vision_lm = getattr(config, "vision_config", None) is not None
    if "input_ids" in params and ("input_ids" in wanted or is_vision_lm or main not in ("pixel_values", "input_values", "input_features")):
        wanted.append("input_ids")
    if is_vision_lm and "pixel_values" in params:
        wanted.append("pixel_values")
    if "input_ids" in wanted and "attention_mask" in params:
        wanted.append("attention_mask")
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        wanted.append("decoder_input_ids")
    if main == "states":  # decision transformers take the whole trajectory
        wanted += [n for n in ("actions", "rewards", "returns_to_go", "timesteps", "attention_mask") if n in params]
    if "qformer_input_ids" in wanted and "qformer_attention_mask" in params:
        wanted.append("qformer_attention_mask")
    if "pixel_attention_mask" in params and "pixel_values" in wanted and _naflex(config):
        wanted += ["pixel_attention_mask", "spatial_shapes"]
    if "global_attention_mask" in params and type(model).__name__.endswith(("ForQuestionAnswering", "ForMultipleChoice")):
        # Longformer QA/MC heads otherwise derive it from separator tokens of a real question
        wanted.append("global_attention_mask")
    if "image_grid_thw" in params and _grid_vision(config):
        wanted += ["pixel_values", "image_grid_thw"] + (["mm_token_type_ids"] if "mm_token_type_ids" in params else [])
    if "past_values" in wanted:
        wanted += [n for n in ("past_time_features", "past_observed_mask") if n in required]
    tiles = _tile_kind(model, config, params)
    if tiles == "aspect_ratio":  # Mllama: image tiles with aspect-ratio ids, read by cross-attention
        wanted += [n for n in ("pixel_values", "aspect_ratio_ids", "aspect_ratio_mask", "cross_attention_mask")
                   if n in params]
    elif tiles is not None:  # Idefics3 family: [b, tiles, C, H, W] with a pixel or tile mask
        wanted += ["pixel_values", "pixel_attention_mask"]
    if _video_lm(config, params):
        wanted.append("pixel_values_videos")
        if "image_sizes" in params and "pixel_values" not in required:
            # any-resolution image paths count patches from the VALUES of image_sizes (not
            # known on meta); the video path carries the vision tower, so images are left out
            wanted = [n for n in wanted if n != "pixel_values"]
    wanted = list(dict.fromkeys(wanted))

    vocab = _get(config, "vocab_size", default=1000) or 1000
    text_pos = getattr(getattr(config, "text_config", None), "max_position_embeddings", None)
    if isinstance(text_pos, int) and not isinstance(text_pos, bool) and 0 < text_pos < s and "pixel_values" in params:
        s = text_pos  # CLIP-style text towers with short position tables (OWL-ViT: 16)
    if _get(config, "attention_type") == "block_sparse":
        # BigBird: at most (5 + 2 * num_random_blocks) * block_size tokens make the model switch
        # to full attention inside forward (it builds new attention modules and Parameters
        # there, frames Dynamo cannot trace); one block more keeps the block-sparse model
        blk, rnd = int(_get(config, "block_size", default=64)), int(_get(config, "num_random_blocks", default=3))
        s = max(s, (6 + 2 * rnd) * blk)
    spec: list = []
    kwargs: dict = {}
    for name in wanted:
        if name not in params:
            continue
        if name in ("input_ids", "decoder_input_ids"):
            kwargs[name] = _make(spec, name, [b, s], torch.long, "token_ids", device, low=0, high=min(int(vocab), 1000), gen=gen)
        elif name in ("attention_mask", "decoder_attention_mask"):
            kwargs[name] = _make(spec, name, [b, s], torch.long, "mask", device, fill=1)
        elif name == "token_type_ids":
            kwargs[name] = _make(spec, name, [b, s], torch.long, "token_type_ids", device, fill=0)
        elif name == "pixel_values" and _grid_vision(config) and "image_grid_thw" in params:
            t, h, w, dim = _grid_patches(config)
            kwargs[name] = _make(spec, name, [b * t * h * w, dim], torch.float32, "pixel_patches", device, gen=gen)
        elif name == "image_grid_thw":
            t, h, w, _ = _grid_patches(config)
            grid = _make(spec, name, [b, 3], torch.long, "patch_grid", device, fill=0)
            if grid.device.type != "meta":
                grid[:] = torch.tensor([t, h, w])  # one image per sample
            kwargs[name] = grid
        elif name == "mm_token_type_ids":
            kwargs[name] = _make(spec, name, [b, s], torch.long, "token_type_ids", device, fill=0)
        elif name == "flattened_patches":
            # Pix2Struct: [b, patches, 2 + C * p * p]; columns 0/1 hold 1-based row/column ids
            dim = int(_get(config, "patch_embed_hidden_size", default=768))
            side = 16
            fp = _make(spec, name, [b, side * side, 2 + dim], torch.float32, "flattened_patches", device, gen=gen)
            if fp.device.type != "meta":
                idx = torch.arange(side * side)
                fp[:, :, 0] = (idx // side + 1).float()
                fp[:, :, 1] = (idx % side + 1).float()
            kwargs[name] = fp
        elif name == "global_attention_mask":
            gm = _make(spec, name, [b, s], torch.long, "global_first_token", device, fill=0)
            if gm.device.type != "meta":
                gm[:, 0] = 1  # the first token attends globally, as for a [CLS] question token
            kwargs[name] = gm
        elif name == "pixel_values" and tiles == "aspect_ratio":
            # Mllama: [b, images, tiles, C, H, W], every tile of one image in use
            h, w = _size2(_get(config, "image_size", default=448))
            c = int(_get(config, "num_channels", default=3))
            n_tiles = int(_get(config, "max_num_tiles", default=4))
            kwargs[name] = _make(spec, name, [b, 1, n_tiles, c, h, w], torch.float32, "image_tiles", device, gen=gen)
        elif name == "aspect_ratio_ids":
            # 1-based index into supported_aspect_ratios of a layout using all max_num_tiles tiles
            kwargs[name] = _make(spec, name, [b, 1], torch.long, "aspect_ratio_ids", device, fill=_full_tile_ratio_id(config))
        elif name == "aspect_ratio_mask":
            n_tiles = int(_get(config, "max_num_tiles", default=4))
            kwargs[name] = _make(spec, name, [b, 1, n_tiles], torch.long, "mask", device, fill=1)
        elif name == "cross_attention_mask":
            n_tiles = int(_get(config, "max_num_tiles", default=4))
            kwargs[name] = _make(spec, name, [b, s, 1, n_tiles], torch.long, "mask", device, fill=1)
        elif name == "pixel_values" and tiles is not None:
            # Idefics3 family: [b, tiles, C, H, W] at the vision tower's size, one tile per sample
            h, w = _size2(config.vision_config.image_size)
            c = int(getattr(config.vision_config, "num_channels", None) or 3)
            kwargs[name] = _make(spec, name, [b, 1, c, h, w], torch.float32, "image_tiles", device, gen=gen)
        elif name == "pixel_attention_mask" and tiles == "tile_mask":
            kwargs[name] = _make(spec, name, [b, 1], torch.bool, "tile_mask", device, fill=True)
        elif name == "pixel_attention_mask" and tiles == "pixel_mask":
            h, w = _size2(config.vision_config.image_size)
            kwargs[name] = _make(spec, name, [b, 1, h, w], torch.bool, "pixel_mask", device, fill=True)
        elif name == "pixel_values_videos" and _video_lm(config, params):
            # video LLMs: [b, frames, C, H, W] at the vision tower's image size
            t = _video_frames(model, config) or VIDEO_FRAMES
            h, w = _size2(getattr(config.vision_config, "image_size", None) or 224)
            c = int(getattr(config.vision_config, "num_channels", None) or 3)
            kwargs[name] = _make(spec, name, [b, t, c, h, w], torch.float32, "video", device, gen=gen)
        elif name == "task_inputs":
            # OneFormer: the tokenised task prompt ("the task is semantic"), task_seq_len ids
            n = int(_get(config, "task_seq_len", default=77))
            v = int(_get(config, "text_encoder_vocab_size", default=1000))
            kwargs[name] = _make(spec, name, [b, n], torch.long, "token_ids", device, low=0, high=min(v, 1000), gen=gen)
        elif name in ("classes_input_ids", "classes_attention_mask"):
            # open-vocabulary detection (OmDet-Turbo): CLASSES_PER_IMAGE class prompts per image
            # [b * k, s]; their grouping per image is classes_structure
            if name == "classes_input_ids":
                kwargs[name] = _make(spec, name, [b * CLASSES_PER_IMAGE, s], torch.long, "token_ids", device,
                                     low=0, high=min(int(vocab), 1000), gen=gen)
            else:
                kwargs[name] = _make(spec, name, [b * CLASSES_PER_IMAGE, s], torch.long, "mask", device, fill=1)
        elif name == "tasks_input_ids":
            kwargs[name] = _make(spec, name, [b, s], torch.long, "token_ids", device, low=0, high=min(int(vocab), 1000), gen=gen)
        elif name == "tasks_attention_mask":
            kwargs[name] = _make(spec, name, [b, s], torch.long, "mask", device, fill=1)
        elif name == "classes_structure":
            kwargs[name] = _make(spec, name, [b], torch.long, "group_sizes", device, fill=CLASSES_PER_IMAGE)
        elif name == "pixel_values" and _naflex(config):
            # NaFlex (SigLIP2): flattened patches [b, max_patches, C * patch * patch]
            n, pch = int(_get(config, "num_patches", default=256)), int(_get(config, "patch_size", default=16))
            c = int(_get(config, "num_channels", default=3))
            kwargs[name] = _make(spec, name, [b, n, c * pch * pch], torch.float32, "pixel_patches", device, gen=gen)
        elif name == "pixel_attention_mask" and _naflex(config):
            n = int(_get(config, "num_patches", default=256))
            kwargs[name] = _make(spec, name, [b, n], torch.long, "mask", device, fill=1)
        elif name == "spatial_shapes":
            side = int(round(int(_get(config, "num_patches", default=256)) ** 0.5))
            kwargs[name] = _make(spec, name, [b, 2], torch.long, "patch_grid", device, fill=side)
        elif name in ("pixel_values", "pixel_values_videos") and (name == "pixel_values_videos" or _video_frames(model, config)):
            t = _video_frames(model, config) or 8
            h, w = _size2(_get(config, "image_size", "crop_size", "img_size", default=224))
            c = int(_get(config, "num_channels", "in_channels", default=3))
            kwargs[name] = _make(spec, name, [b, t, c, h, w], torch.float32, "video", device, gen=gen)
        elif name == "pixel_values":
            h, w = _size2(_get(config, "image_size", "img_size", default=224))
            c = int(_get(config, "num_channels", "in_channels", default=3))
            kwargs[name] = _make(spec, name, [b, c, h, w], torch.float32, "pixels", device, gen=gen)
        elif name == "bool_masked_pos":
            n = _num_patches(model, config)
            mask = _make(spec, name, [b, n], torch.bool, "mask_half", device, fill=False)
            if mask.device.type != "meta":
                mask[:, : n // 2] = True  # the same number of masked patches in every sample
            kwargs[name] = mask
        elif name in ("qformer_input_ids",):
            qv = getattr(getattr(config, "qformer_config", None), "vocab_size", None) or 1000
            kwargs[name] = _make(spec, name, [b, s], torch.long, "token_ids", device, low=0, high=min(int(qv), 1000), gen=gen)
        elif name == "qformer_attention_mask":
            kwargs[name] = _make(spec, name, [b, s], torch.long, "mask", device, fill=1)
        elif name == "past_values":
            ctx = int(_get(config, "context_length", default=32) or 32)
            lags = _get(config, "lags_sequence", default=None)
            length = ctx + (max(lags) if lags else 0)
            if getattr(config, "model_type", None) == "timesfm":
                kwargs[name] = [_make(spec, f"{name}.{i}", [length], torch.float32, "time_series", device, gen=gen)
                                for i in range(b)]
            else:
                ch = int(_get(config, "num_input_channels", "input_size", default=1) or 1)
                shape = [b, length, ch] if ch > 1 or _get(config, "num_input_channels") is not None else [b, length]
                kwargs[name] = _make(spec, name, shape, torch.float32, "time_series", device, gen=gen)
        elif name == "past_time_features":
            length = int(kwargs["past_values"].shape[1]) if isinstance(kwargs.get("past_values"), torch.Tensor) else s
            nf = int(_get(config, "num_time_features", default=1) or 0) + int(_get(config, "num_dynamic_real_features", default=0) or 0)
            kwargs[name] = _make(spec, name, [b, length, max(nf, 1)], torch.float32, "time_features", device, gen=gen)
        elif name == "past_observed_mask" and isinstance(kwargs.get("past_values"), torch.Tensor):
            kwargs[name] = _make(spec, name, list(kwargs["past_values"].shape), torch.float32, "mask", device, fill=1.0)
        elif name == "states":
            kwargs[name] = _make(spec, name, [b, s, int(_get(config, "state_dim", default=17))], torch.float32, "states", device, gen=gen)
        elif name == "actions":
            kwargs[name] = _make(spec, name, [b, s, int(_get(config, "act_dim", default=4))], torch.float32, "actions", device, gen=gen)
        elif name in ("rewards", "returns_to_go"):
            kwargs[name] = _make(spec, name, [b, s, 1], torch.float32, name, device, gen=gen)
        elif name == "timesteps":
            hi = int(_get(config, "max_ep_len", default=1000))
            kwargs[name] = _make(spec, name, [b, s], torch.long, "timesteps", device, low=0, high=hi, gen=gen)
        elif name == "inputs" and _get(config, "d_model") is not None:  # Perceiver without a preprocessor
            kwargs[name] = _make(spec, name, [b, s, int(_get(config, "d_model"))], torch.float32, "embeddings", device, gen=gen)
        elif name == "input_features" and _get(config, "feature_projection_input_dim") is not None:
            # stacked filter banks (SeamlessM4T: 2 x 80 mel bins per frame)
            dim = int(_get(config, "feature_projection_input_dim"))
            kwargs[name] = _make(spec, name, [b, 4 * s, dim], torch.float32, "audio_features", device, gen=gen)
        elif name == "input_features":
            mel = _get(config, "num_mel_bins", "feature_size", "input_feat_per_channel", default=80)
            src = _get(config, "max_source_positions", default=None)
            if src is not None and _get(config, "num_mel_bins") is not None:
                kwargs[name] = _make(spec, name, [b, int(mel), 2 * int(src)], torch.float32, "audio_features", device, gen=gen)
            else:
                kwargs[name] = _make(spec, name, [b, 4 * s, int(mel)], torch.float32, "audio_features", device, gen=gen)
        elif name in ("input_values", "hidden_states") and _codec_channels(config) is not None:
            # audio codecs / acoustic tokenizers take waveforms [b, channels, samples]
            hop = _get(config, "hop_length", default=None)
            n = int(capture.get("audio_samples", 16000))
            if isinstance(hop, int) and hop > 0:
                n = max(hop, n - n % hop)
            kwargs[name] = _make(spec, name, [b, _codec_channels(config), n], torch.float32, "audio_waveform", device, gen=gen)
        elif name == "input_values":
            mel, frames = _get(config, "num_mel_bins"), _get(config, "max_length")
            if mel is not None and frames is not None:  # spectrogram transformers (AST)
                kwargs[name] = _make(spec, name, [b, int(frames), int(mel)], torch.float32, "audio_features", device, gen=gen)
            else:
                n = int(capture.get("audio_samples", 16000))
                # waveforms with a channel axis documented as (batch_size, 1, num_samples) (OmniASR)
                channel = any(len(d) == 3 and d[1] == "1" for d in _documented_shapes(model, name))
                shape = [b, 1, n] if channel else [b, n]
                kwargs[name] = _make(spec, name, shape, torch.float32, "audio_waveform", device, gen=gen)
        elif name == "bbox":
            kwargs[name] = _make(spec, name, [b, s, 4], torch.long, "bbox", device, fill=0)
        elif name in required:
            ann = params[name].annotation
            if isinstance(ann, type) and not issubclass(ann, torch.Tensor) and ann.__module__.startswith("transformers"):
                raise UnsupportedInput(
                    f"required input {name!r} of {type(model).__name__} is of type {ann.__name__}, a stateful object "
                    "(frames, prompts and memory kept across calls, built by the processor), not a tensor: "
                    "no single-call input can be synthesised")
            raise UnsupportedInput(f"no synthesis rule for required input {name!r} of {type(model).__name__}")
    _insert_image_tokens(kwargs, spec, config, device, model)
    if type(model).__name__.endswith("ForMultipleChoice"):
        # Multiple-choice heads take [batch, num_choices, seq]; two choices.
        for entry in spec:
            if len(entry["shape"]) == 2 and entry["name"] in kwargs:
                kwargs[entry["name"]] = kwargs[entry["name"]].unsqueeze(1).expand(-1, 2, -1).contiguous()
                entry["shape"] = [entry["shape"][0], 2, entry["shape"][1]]
    if not kwargs:
        raise UnsupportedInput(f"{type(model).__name__}: no known input among {list(params)[:8]}")
    return kwargs, spec


# Frames of a synthetic clip for video LLMs whose config names no frame count.
VIDEO_FRAMES = 8
# Class prompts per image for open-vocabulary detectors (OmDet-Turbo classes_input_ids).
CLASSES_PER_IMAGE = 2


def _tile_kind(model: Any, config: Any, params: Any) -> str | None:
    """How a vision-language model takes its image as tiles, or None.

    ``"aspect_ratio"``: Mllama style, pixels ``[b, images, tiles, C, H, W]`` with
    ``aspect_ratio_ids`` / ``aspect_ratio_mask`` (config ``max_num_tiles``).
    ``"tile_mask"`` / ``"pixel_mask"``: Idefics3 family (Idefics3, SmolVLM, ModernVBERT,
    GraniteDocling), pixels ``[b, tiles, C, H, W]`` with ``pixel_attention_mask`` documented
    as ``(batch_size, num_tiles)`` (real tiles) or else per pixel ``[b, tiles, H, W]``.
    """
    if "aspect_ratio_ids" in params and _get(config, "max_num_tiles") is not None:
        return "aspect_ratio"
    vc = getattr(config, "vision_config", None)
    if vc is None or "pixel_attention_mask" not in params or "pixel_values" not in params or _naflex(config):
        return None
    if not isinstance(getattr(vc, "image_size", None), int) or not isinstance(getattr(vc, "patch_size", None), int):
        return None  # NaFlex-style towers without a fixed tile size (LFM2-VL)
    docs = _documented_shapes(model, "pixel_attention_mask")
    return "tile_mask" if any(len(d) == 2 and "tile" in d[1] for d in docs) else "pixel_mask"


def _full_tile_ratio_id(config: Any) -> int:
    """``aspect_ratio_ids`` value of an image using all ``max_num_tiles`` tiles: the 1-based
    index of the first ``[rows, cols]`` in ``supported_aspect_ratios`` with rows * cols ==
    max_num_tiles (0 is padding), 1 when there is none."""
    n = int(_get(config, "max_num_tiles", default=4))
    for i, ratio in enumerate(_get(config, "supported_aspect_ratios", default=None) or []):
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


def _video_lm(config: Any, params: Any) -> bool:
    """Video LLMs that take ``pixel_values_videos`` [b, frames, C, H, W] with a video token
    in the text (LLaVA-NeXT-Video, Video-LLaVA, LLaVA-OneVision); Qwen2-VL style patch-grid
    towers (``video_grid_thw``) are not of this kind."""
    return "pixel_values_videos" in params and getattr(config, "vision_config", None) is not None \
        and _token_id(config, "video") is not None and not _grid_vision(config)


def _documented_shapes(model: Any, name: str) -> list[tuple[str, ...]]:
    """The shapes transformers documents for input ``name`` (``name (`... of shape `(a, b)`)``)
    in the docstrings of the ``forward`` methods of the model's modeling module, e.g.
    ``[("batch_size", "sequence_length"), ("batch_size", "1", "num_samples")]``. All of the
    module's classes are read: a base model's docstring often holds only auto_docstring's
    generic shape while its task head documents the real one."""
    import re
    import sys

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
    from torch._subclasses.fake_tensor import FakeTensorMode

    fn = getattr(model, method, None) or getattr(getattr(model, "model", None), method, None)
    if fn is None:
        return None
    import logging

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


def _codec_channels(config: Any) -> int | None:
    """Channels of a waveform codec's input (EnCodec ``audio_channels``, VibeVoice
    ``channels``; 1 for DAC), None for models that take flat waveforms [b, samples]."""
    for key in ("audio_channels", "channels"):
        v = getattr(config, key, None)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    if getattr(config, "model_type", None) == "dac":
        return 1
    return None


def _grid_vision(config: Any) -> bool:
    """Qwen2-VL style vision towers: pixels as a flat list of temporal x spatial patches
    with a per-image ``(t, h, w)`` patch grid."""
    vc = getattr(config, "vision_config", None)
    return vc is not None and isinstance(getattr(vc, "temporal_patch_size", None), int) \
        and isinstance(getattr(vc, "spatial_merge_size", None), int)


# Patch grid of the synthetic image of a Qwen2-VL style model (one frame of 8 x 8 patches).
GRID_THW = (1, 8, 8)


def _grid_patches(config: Any) -> tuple[int, int, int, int]:
    """``(t, h, w, dim)``: the patch grid of :data:`GRID_THW` (h, w rounded to the merge
    size) and the flattened patch size ``C * temporal_patch * patch * patch``."""
    vc = config.vision_config
    merge = int(vc.spatial_merge_size)
    t, h, w = GRID_THW
    h, w = max(merge, h - h % merge), max(merge, w - w % merge)
    c = int(getattr(vc, "in_channels", None) or getattr(vc, "in_chans", None) or getattr(vc, "num_channels", None) or 3)
    p = int(vc.patch_size)
    return t, h, w, c * int(vc.temporal_patch_size) * p * p


def _naflex(config: Any) -> bool:
    """SigLIP2-style NaFlex vision towers: patches flattened, a patch mask and grid shapes."""
    return _get(config, "num_patches") is not None and _get(config, "image_size") is None \
        and "siglip2" in str(getattr(config, "model_type", ""))


def _video_frames(model: Any, config: Any) -> int | None:
    """Frames of a video model's clip (``num_frames`` / ``frames_per_clip``), 4 for video
    Q-Former models, None for image models."""
    frames = _get(config, "num_frames", "frames_per_clip")
    if frames is not None and _get(config, "tubelet_size") is not None:
        return int(frames)
    if "video" in str(getattr(config, "model_type", "")) and "qformer_config" in type(config).__dict__.get("sub_configs", {}):
        return 4
    if getattr(config, "model_type", None) == "instructblipvideo":
        return 4
    return None


def _num_patches(model: Any, config: Any) -> int:
    """Patch tokens of a (video) ViT: ``(T / tubelet) * (H / p) * (W / p)``."""
    h, w = _size2(_get(config, "image_size", "crop_size", default=224))
    p = int(_get(config, "patch_size", default=16))
    n = (h // p) * (w // p)
    frames = _video_frames(model, config)
    if frames:
        n *= frames // int(_get(config, "tubelet_size", default=1))
    return n


def _insert_image_tokens(kwargs: dict, spec: list, config: Any, device, model: Any = None) -> None:
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
        if grid is not None and _grid_vision(config):
            t, h, w, _ = _grid_patches(config)
            n = t * h * w // int(vc.spatial_merge_size) ** 2  # merged patches, one token each
        elif qformer:
            n = int(config.num_query_tokens) * (int(pixels.shape[1]) if is_video else 1)
        elif "pixel_attention_mask" in kwargs and pixels.dim() == 5:
            per_tile = _model_attr(model, "image_seq_len") if model is not None else None
            if not isinstance(per_tile, int) and isinstance(size, int) and isinstance(patch, int) and patch > 0:
                scale = _get(config, "scale_factor", "pixel_shuffle_factor", default=1)
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


def vision_inputs(conf: dict, capture: dict, device) -> tuple[tuple, list]:
    """Positional inputs for a timm / torchvision model from its catalog config.

    ``conf`` has ``input_size`` ([C, H, W], timm) or ``kind`` and ``image_shape``
    (torchvision: classification, segmentation, video [C, T, H, W], detection (a list of
    images), optical_flow (two images)).
    """
    gen = torch.Generator().manual_seed(0)
    b = int(capture.get("batch_size", 1))
    spec: list = []
    if "input_size" in conf:
        shape = [b, *conf["input_size"]]
        return (_make(spec, "x", shape, torch.float32, "pixels", device, gen=gen),), spec
    kind = conf.get("kind", "classification")
    shape = conf["image_shape"]
    if kind == "detection":
        imgs = [_make(spec, f"images.{i}", list(shape), torch.float32, "pixels", device, gen=gen) for i in range(b)]
        return (imgs,), spec
    if kind == "optical_flow":
        a = _make(spec, "image1", [b, *shape], torch.float32, "pixels", device, gen=gen)
        c = _make(spec, "image2", [b, *shape], torch.float32, "pixels", device, gen=gen)
        return (a, c), spec
    return (_make(spec, "x", [b, *shape], torch.float32, "pixels" if kind != "video" else "video", device, gen=gen),), spec
