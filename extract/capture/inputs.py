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
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from extract.capture.synth import UnsupportedInput, _get, _make, _size2
from extract.capture.multimodal import (
    CLASSES_PER_IMAGE, VIDEO_FRAMES, VISUAL_OBJECTS, _codec_channels, _documented_shapes, _full_tile_ratio_id,
    _grid_patches, _grid_tower, _grid_vision, _image_pairs, _insert_image_tokens, _naflex, _num_patches, _tile_kind,
    _video_frames, _video_lm,
)


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
    if "visual_feats" in params and _get(config, "visual_feat_dim") is not None:
        wanted += [n for n in ("visual_feats", "visual_pos") if n in params]  # LXMERT: optional by signature only
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
        elif name in ("hidden_states", "pixel_values") and _grid_tower(config, params):
            # a Qwen2-VL style tower alone: packed patches [b * t * h * w, C * tp * p * p] with grid_thw
            t, h, w, dim = _grid_patches(config)
            kwargs[name] = _make(spec, name, [b * t * h * w, dim], torch.float32, "pixel_patches", device, gen=gen)
        elif name == "image_grid_thw" or (name == "grid_thw" and _grid_tower(config, params)):
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
        elif name == "pixel_values" and _image_pairs(model):
            # keypoint matchers: [b, 2, C, H, W], the two images to match
            h, w = _size2(_get(config, "image_size", "img_size", default=224))
            c = int(_get(config, "num_channels", "in_channels", default=3))
            kwargs[name] = _make(spec, name, [b, 2, c, h, w], torch.float32, "image_pair", device, gen=gen)
        elif name == "visual_feats" and _get(config, "visual_feat_dim") is not None:
            # LXMERT: region features [b, objects, visual_feat_dim] of an object detector
            kwargs[name] = _make(spec, name, [b, VISUAL_OBJECTS, int(_get(config, "visual_feat_dim"))], torch.float32,
                                 "region_features", device, gen=gen)
        elif name == "visual_pos" and _get(config, "visual_pos_dim") is not None:
            # their boxes, normalised to [0, 1] (x0, y0, x1, y1)
            kwargs[name] = _make(spec, name, [b, VISUAL_OBJECTS, int(_get(config, "visual_pos_dim"))], torch.float32,
                                 "boxes", device, low=0.0, high=1.0, fill=0.5)
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
