"""Synthesise a model's example inputs from what it declares, and record the input spec.

Transformers models: the arguments of ``model.forward`` that have no default, plus the
ones a family needs in practice (``attention_mask`` beside ``input_ids``, decoder ids for
encoder-decoders, ``pixel_values`` for models with a vision tower). Sizes come from the
config (``image_size``, ``num_channels``, ``num_mel_bins``, ``max_source_positions``) and
from the capture params (``batch_size``, ``seq_len``). timm and torchvision models take
images (or video clips, image pairs for optical flow, image lists for detection).

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
        UnsupportedInput: a required argument has no known synthesis rule.
    """
    gen = torch.Generator().manual_seed(0)
    b, s = int(capture.get("batch_size", 1)), int(capture.get("seq_len", 32))
    sig = inspect.signature(model.forward)
    params = sig.parameters
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    main = getattr(model, "main_input_name", "input_ids")
    wanted = list(dict.fromkeys([main, *required]))
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
                kwargs[name] = _make(spec, name, [b, n], torch.float32, "audio_waveform", device, gen=gen)
        elif name == "bbox":
            kwargs[name] = _make(spec, name, [b, s, 4], torch.long, "bbox", device, fill=0)
        elif name in required:
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


def _image_feature_tokens(model: Any, kwargs: dict, config: Any) -> int | None:
    """Image tokens per sample that ``model`` needs for the synthesised pixels, asked of the
    model itself: the rows its ``get_image_features`` yields, counted as transformers'
    ``get_placeholder_mask`` checks them (features ``numel`` = tokens x the text hidden
    size). For vision towers whose token count the config does not give (FastVLM's
    FastViT: a 224 image -> 16 tokens). Runs the tower once (shapes only on meta); None
    when the model has no such method or it fails on these inputs."""
    fn = getattr(model, "get_image_features", None)
    text = getattr(config, "text_config", None) or config
    hidden = getattr(text, "hidden_size", None)
    if fn is None or not isinstance(hidden, int) or hidden <= 0:
        return None
    accepted = inspect.signature(fn).parameters
    extra = {k: kwargs[k] for k in ("image_grid_thw", "image_sizes", "pixel_attention_mask", "spatial_shapes")
             if k in kwargs and k in accepted}
    try:
        with torch.no_grad():
            out = fn(pixel_values=kwargs["pixel_values"], **extra)
    except Exception:  # noqa: BLE001 - no count from the model; the caller leaves the ids as they are
        return None
    feats = out if isinstance(out, (torch.Tensor, list, tuple)) else getattr(out, "pooler_output", None)
    tensors = [feats] if isinstance(feats, torch.Tensor) else [t for t in (feats or []) if isinstance(t, torch.Tensor)]
    numel = sum(t.numel() for t in tensors)
    b = int(kwargs["input_ids"].shape[0])
    if not numel or numel % (hidden * b):
        return None
    return numel // (hidden * b)


def _insert_image_tokens(kwargs: dict, spec: list, config: Any, device, model: Any = None) -> None:
    """Vision-language models that splice image features into the text (LLaVA style) need
    one image token per patch feature in ``input_ids``: ``(image_size // patch_size) ** 2``
    (plus one with ``vision_feature_select_strategy == "full"``), placed first; where the
    config gives no patch grid, the count comes from the model (:func:`_image_feature_tokens`)."""
    token = getattr(config, "image_token_id", None)
    if token is None:
        token = getattr(config, "image_token_index", None)
    vc = getattr(config, "vision_config", None)
    if token is None or vc is None or "input_ids" not in kwargs or "pixel_values" not in kwargs:
        return
    size, patch = getattr(vc, "image_size", None), getattr(vc, "patch_size", None)
    grid = kwargs.get("image_grid_thw")
    if grid is not None and _grid_vision(config):
        t, h, w, _ = _grid_patches(config)
        n = t * h * w // int(vc.spatial_merge_size) ** 2  # merged patches, one token each
    elif not isinstance(size, int) or not isinstance(patch, int) or patch <= 0:
        n = _image_feature_tokens(model, kwargs, config) if model is not None else None
        if n is None:
            return
    else:
        n = (size // patch) ** 2 + (1 if getattr(config, "vision_feature_select_strategy", "default") == "full" else 0)
    ids = kwargs["input_ids"]
    b, s = ids.shape
    image = torch.full((b, n), int(token), dtype=ids.dtype, device=ids.device)
    kwargs["input_ids"] = torch.cat([image, ids], dim=1)
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
            entry["image_tokens"] = {"token_id": int(token), "count": n, "position": "prefix"}


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
