"""Config repairs: library defaults that do not build a model, made consistent.

Some default configs of transformers do not describe a buildable model (a vision tower wider
than its projection, a pixel-shuffle grid that does not divide, special token ids outside the
vocabulary, per-layer tables shorter than the depth). :func:`repair_config` fixes each kind by
a rule, or fills the published value of the family (:data:`PUBLISHED_SIZES`), and returns a
note per repair so the catalog row says what changed.
"""

from __future__ import annotations

import json
from typing import Any

SPECIAL_TOKEN_KEYS = ("image_token_id", "image_token_index", "video_token_id", "video_token_index")


class _Derived:
    """A published value that depends on the config it fills (a per-layer list, a token
    table): ``fn(level_dict) -> value`` and the words the note uses for it."""

    def __init__(self, fn, words: str):
        self.fn, self.words = fn, words

    def __call__(self, d: dict):
        return self.fn(d)


def _dense_then_sparse(first_dense: int) -> _Derived:
    """``mlp_layer_types`` of a DeepSeek-style MoE: the first ``first_dense`` layers dense,
    the rest sparse (``first_k_dense_replace`` of the published config)."""
    def fn(d):
        n = d.get("num_hidden_layers")
        return ["dense"] * min(first_dense, n) + ["sparse"] * max(0, n - first_dense) if _is_int(n) else None
    return _Derived(fn, f"{first_dense} dense then sparse for num_hidden_layers (first_k_dense_replace={first_dense})")


def _chameleon_vocabulary(d: dict) -> dict | None:
    """The image part of facebook/chameleon-7b's tokenizer vocabulary: one ``IMGIMG<code>Z``
    token per VQ code (the code's decimal digits written as letters A-J) at BPE ids
    4 .. 4 + num_embeddings - 1, and ``<image>`` at 8711 (vLLM's chameleon.py hard-codes the
    same id). Only these entries are read by the modeling code (image_token_id, image_tokens,
    bpe2img)."""
    vq = d.get("vq_config") if isinstance(d.get("vq_config"), dict) else {}
    n, vocab = vq.get("num_embeddings", 8192), d.get("vocab_size")
    if not (_is_int(n) and _is_int(vocab)) or 4 + n > vocab or vocab <= 8711:
        return None
    table = {f"IMGIMG{''.join(chr(ord('A') + int(c)) for c in str(code))}Z": 4 + code for code in range(n)}
    return {"<image>": 8711, **table}


# Values that shipped default configs leave as None (or absent) although the modeling code
# needs them (the library's own default is "no model"), filled from the published
# checkpoint named here. Keyed by the model_type of the (sub-)config they apply to, at any
# nesting level; a key may be a dotted path into a sub-dict (``attn_config.clip_qkv``).
# Only None/absent values are filled; a config that sets them keeps its own.
PUBLISHED_SIZES: dict[str, tuple[dict, str]] = {
    "esm": ({"vocab_size": 33, "pad_token_id": 1, "mask_token_id": 32}, "facebook/esm2_t6_8M_UR50D"),
    "hiera": ({"decoder_hidden_size": 512, "decoder_depth": 8, "decoder_num_heads": 16},
              "facebook/hiera-tiny-224-mae-hf"),
    "dots1": ({"n_routed_experts": 128, "num_experts_per_tok": 6, "n_shared_experts": 2},
              "rednote-hilab/dots.llm1.base"),
    "deepseek_v2": ({"num_experts_per_tok": 6}, "deepseek-ai/DeepSeek-V2-Lite"),
    # transformers' Blip2Config leaves image_token_index None, and get_placeholder_mask then compares
    # input_ids == None (a Python bool): the published checkpoint adds <image> at 50265
    "blip-2": ({"image_token_index": 50265}, "Salesforce/blip2-opt-2.7b"),
    # clamp(min=None, max=None) raises in eager PyTorch too: the default is unrunnable
    "dbrx": ({"attn_config.clip_qkv": 8}, "databricks/dbrx-base"),
    "deepseek_ocr2_text": ({"num_experts_per_tok": 6, "mlp_layer_types": _dense_then_sparse(1)},
                           "deepseek-ai/DeepSeek-OCR-2 language config"),
    "hunyuan_vl_text": ({"rope_parameters.mrope_section": [16, 16, 16, 16]},
                        "tencent/HunyuanOCR, its xdrope_section"),
    "pp_ocrv5_server_det": ({
        "intraclass_block_config": {
            "reduce_channel": [1, 1, 0], "return_channel": [1, 1, 0],
            "vertical_long_to_small_conv_longratio": [[7, 1], [1, 1], [3, 0]],
            "vertical_long_to_small_conv_midratio": [[5, 1], [1, 1], [2, 0]],
            "vertical_long_to_small_conv_shortratio": [[3, 1], [1, 1], [1, 0]],
            "horizontal_small_to_long_conv_longratio": [[1, 7], [1, 1], [0, 3]],
            "horizontal_small_to_long_conv_midratio": [[1, 5], [1, 1], [0, 2]],
            "horizontal_small_to_long_conv_shortratio": [[1, 3], [1, 1], [0, 1]],
            "symmetric_conv_long_longratio": [[7, 7], [1, 1], [3, 3]],
            "symmetric_conv_long_midratio": [[5, 5], [1, 1], [2, 2]],
            "symmetric_conv_long_shortratio": [[3, 3], [1, 1], [1, 1]],
        },
        "scale_factor_list": [1, 2, 4, 8],
        "kernel_list": [3, 2, 2],
    }, "PaddlePaddle/PP-OCRV5_server_det_safetensors (PaddleOCR's IntraCLBlock and DB head)"),
    "chameleon": ({"vocabulary_map": _Derived(
        _chameleon_vocabulary,
        "<image> 8711 and the vq_config.num_embeddings image tokens IMGIMG<code>Z at ids 4.."),
        # ChameleonConfig derives image_token_id from vocabulary_map; to_dict() kept the None
        "image_token_id": 8711},
        "facebook/chameleon-7b's tokenizer"),
}


def _fill_published(d: dict, where: str, notes: list[str]) -> dict:
    """Fill the None/absent values of :data:`PUBLISHED_SIZES` for ``d``'s model_type."""
    fill, source = PUBLISHED_SIZES.get(str(d.get("model_type")), ({}, None))
    done = []
    for key, value in fill.items():
        *parents, leaf = key.split(".")
        target = d
        for p in parents:
            target = target.get(p) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            continue
        # a top-level key must exist (the config class declares it); a dotted leaf may be absent
        if (leaf not in target and not parents) or target.get(leaf) is not None:
            continue
        new = value(d) if isinstance(value, _Derived) else json.loads(json.dumps(value))
        if new is None:
            continue
        if parents:  # copy the path so the input is not modified
            d = dict(d)
            cur = d
            for p in parents:
                cur[p] = dict(cur[p])
                cur = cur[p]
            cur[leaf] = new
        else:
            d = {**d, leaf: new}
        shown = value.words if isinstance(value, _Derived) else (
            f"a table of {len(new)} entries" if isinstance(new, dict) else json.dumps(new))
        done.append(f"{where}{key} None -> {shown}")
    if done:
        notes.append(f"{', '.join(done)} (values of {source})")
    return d


# Sub-configs whose width must equal a sibling's output width but whose shipped default is
# the library default of their own class (a 4096-wide Qwen2 where DeepSeek-OCR-2's SAM neck
# outputs 896 channels): (parent model_type, sub-config, sibling, sibling key of the width,
# published sizes of the sub-config at that width, checkpoint).
PUBLISHED_SUBCONFIG_WIDTHS = [
    ("deepseek_ocr2_vision", "encoder_config", "sam_config", "downsample_channels",
     {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
      "num_key_value_heads": 2}, "deepseek-ai/DeepSeek-OCR-2, its Qwen2-0.5B vision encoder"),
]


def _repair_subconfig_width(d: dict, where: str, notes: list[str]) -> dict:
    """Apply :data:`PUBLISHED_SUBCONFIG_WIDTHS` to one (sub-)config dict."""
    for parent, sub, sibling, key, sizes, source in PUBLISHED_SUBCONFIG_WIDTHS:
        if d.get("model_type") != parent or not isinstance(d.get(sub), dict) or not isinstance(d.get(sibling), dict):
            continue
        widths = d[sibling].get(key)
        width = widths[-1] if isinstance(widths, list) and widths else widths
        types = d[sub].get("layer_types")
        if not _is_int(width) or d[sub].get("hidden_size") == width or width != sizes["hidden_size"] \
                or (isinstance(types, list) and len(set(types)) > 1):
            continue
        old = {k: d[sub].get(k) for k in sizes}
        d = {**d, sub: {**d[sub], **sizes}}
        if isinstance(types, list) and types:  # one kind of layer: the list follows the layer count
            d[sub]["layer_types"] = types[:1] * sizes["num_hidden_layers"]
        notes.append(f"{where}{sub}.hidden_size {old['hidden_size']} -> {width}: it must equal {sibling}.{key}[-1] "
                     f"{width}; {', '.join(f'{k} {old[k]} -> {v}' for k, v in sizes.items() if k != 'hidden_size')} "
                     f"(values of {source})")
    return d


# The names transformers' configs give a pixel-shuffle factor (AyaVision, ModernVBert, Idefics3).
PIXEL_SHUFFLE_KEYS = ("downsample_factor", "pixel_shuffle_factor", "scale_factor")


def _repair_vision_grid(config: dict, notes: list[str]) -> dict:
    """A pixel-shuffle projector (:data:`PIXEL_SHUFFLE_KEYS`) needs the vision tower's patch grid
    (``image_size // patch_size``) divisible by the factor; the image size becomes the
    largest one not above the default whose grid is (AyaVision: 384 -> 364 with patch 14,
    factor 2, the size CohereForAI/aya-vision-8b uses)."""
    key = next((k for k in PIXEL_SHUFFLE_KEYS if _is_int(config.get(k))), None)
    factor, vision = config.get(key) if key else None, config.get("vision_config")
    if not (_is_int(factor) and factor > 1 and isinstance(vision, dict)):
        return config
    size, patch = vision.get("image_size"), vision.get("patch_size")
    if not (_is_int(size) and _is_int(patch) and patch > 0) or (size // patch) % factor == 0 or size // patch < factor:
        return config
    fixed = (size // patch) // factor * factor * patch
    notes.append(f"vision_config.image_size {size} -> {fixed}: the patch grid {size // patch} must be divisible by "
                 f"{key} {factor} (pixel shuffle); the largest such size not above the default")
    return {**config, "vision_config": {**vision, "image_size": fixed}}


def _repair_pooling_grid(config: dict, notes: list[str]) -> dict:
    """An average-pool projector (Gemma 3: ``mm_tokens_per_image`` image tokens from a
    ``sqrt(mm_tokens_per_image)``-square grid, pooling kernel ``(image_size // patch_size) //
    sqrt(mm_tokens_per_image)``) needs the vision patch grid to be a multiple of the token side:
    ``Gemma3Config()`` pairs a 224 / 16 = 14-patch SigLIP grid with 256 tokens (side 16, kernel 0).
    The image size becomes the smallest whose grid is a multiple of the side not below the default
    grid (224 -> 256, kernel 1; google/gemma-3-4b-it has 896 / 14 = 64, kernel 4)."""
    tokens, vision = config.get("mm_tokens_per_image"), config.get("vision_config")
    if not (_is_int(tokens) and tokens > 0 and isinstance(vision, dict)):
        return config
    side = int(tokens ** 0.5)
    size, patch = vision.get("image_size"), vision.get("patch_size")
    if side * side != tokens or not (_is_int(size) and _is_int(patch) and patch > 0):
        return config
    grid = size // patch
    if grid >= side and grid % side == 0:
        return config
    fixed_grid = max(side, -(-grid // side) * side)
    fixed = fixed_grid * patch
    notes.append(f"vision_config.image_size {size} -> {fixed}: the patch grid {grid} must be a multiple of "
                 f"sqrt(mm_tokens_per_image) = {side} (average-pool projector kernel {grid // side} -> "
                 f"{fixed_grid // side})")
    return {**config, "vision_config": {**vision, "image_size": fixed}}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _nearest_divisor(n: int, target: int) -> int:
    """The divisor of ``n`` nearest to ``target`` (the larger one on a tie)."""
    divs = [d for d in range(1, n + 1) if n % d == 0]
    return min(divs, key=lambda d: (abs(d - target), -d))


def _repair_level(d: dict, path: str, notes: list[str]) -> dict:
    """Generic repairs of one (sub-)config dict, recursing into sub-config dicts."""
    where = f"{path}." if path else ""
    out = _repair_subconfig_width(dict(d), where, notes)
    hidden, heads = out.get("hidden_size"), out.get("num_attention_heads")
    # vision towers (ViT / CLIP / SigLIP attention) split hidden_size evenly across heads;
    # text configs may size heads on their own (GLM-4.5: 96 heads of 128 on 4096)
    if "vision" in path.rsplit(".", 1)[-1] and _is_int(hidden) and _is_int(heads) and heads > 0 \
            and "head_dim" not in out and hidden % heads:
        fixed = _nearest_divisor(hidden, heads)
        notes.append(f"{where}num_attention_heads {heads} -> {fixed}: hidden_size {hidden} must be divisible by it "
                     "(no head_dim given)")
        out["num_attention_heads"] = heads = fixed
    if "head_dim" in out and out["head_dim"] is None and _is_int(hidden) and _is_int(heads) and heads > 0 \
            and hidden % heads == 0:
        out["head_dim"] = hidden // heads
        notes.append(f"{where}head_dim None -> {hidden // heads} (hidden_size / num_attention_heads)")
    if "num_key_value_heads" in out and out["num_key_value_heads"] is None and _is_int(heads):
        out["num_key_value_heads"] = heads
        notes.append(f"{where}num_key_value_heads None -> {heads} (= num_attention_heads, multi-head attention)")
    langs = out.get("languages")
    if "default_language" in out and out["default_language"] is None and isinstance(langs, list) and langs:
        out["default_language"] = langs[0]
        notes.append(f"{where}default_language None -> {langs[0]!r} (the first of languages)")
    rope = out.get("rope_parameters")
    for k, v in list(out.items()):
        if isinstance(v, dict) and k not in ("rope_parameters", "id2label", "label2id", "rope_scaling"):
            sub = _repair_level(v, f"{where}{k}", notes)
            # attention sub-configs the modeling code reads rope_theta from (DbrxAttentionConfig)
            if k == "attn_config" and "rope_theta" not in sub and isinstance(rope, dict) \
                    and isinstance(rope.get("rope_theta"), (int, float)):
                sub["rope_theta"] = rope["rope_theta"]
                notes.append(f"{where}{k}.rope_theta missing -> {rope['rope_theta']} (from rope_parameters)")
            out[k] = sub
    return _fill_published(out, where, notes)


def _match_vision_projection(d: dict, path: str, notes: list[str]) -> dict:
    """A vision tower whose merger projects to ``vision_config.out_hidden_size`` feeds the
    text model, so that size must equal ``text_config.hidden_size`` (recursing into nested
    sub-configs such as ``thinker_config``). Several shipped defaults disagree (Qwen3.5 /
    Qwen3-VL: 3584 vs 4096; Qwen3-VL-MoE: 3584 vs 2048), while every published checkpoint
    matches them (Qwen/Qwen3-VL-8B-Instruct: 4096 and 4096); the text size wins."""
    out = dict(d)
    where = f"{path}." if path else ""
    vision, text = out.get("vision_config"), out.get("text_config")
    if isinstance(vision, dict) and isinstance(text, dict):
        proj, hidden = vision.get("out_hidden_size"), text.get("hidden_size")
        if _is_int(proj) and _is_int(hidden) and proj != hidden:
            out["vision_config"] = {**vision, "out_hidden_size": hidden}
            notes.append(f"{where}vision_config.out_hidden_size {proj} -> {hidden}: the vision merger projects into "
                         f"the text model (text_config.hidden_size {hidden})")
    for k, v in list(out.items()):
        if isinstance(v, dict) and k.endswith("_config") and k not in ("vision_config", "text_config"):
            out[k] = _match_vision_projection(v, f"{where}{k}", notes)
    return out


def repair_config(config: dict) -> tuple[dict, list[str]]:
    """Repairs that make a shipped default config runnable, each stated in words.

    * Vision-language defaults whose special token id lies outside the text vocabulary
      (``LlavaConfig()``: ``image_token_index`` 32000 with ``text_config.vocab_size``
      32000; the processor adds ``<image>`` and the published checkpoints resize the
      embeddings, e.g. llava-hf/llava-1.5-7b-hf has 32064 rows) get ``vocab_size = id + 1``.
    * In a vision tower sub-config (``vision_config``): ``hidden_size`` not divisible by
      ``num_attention_heads`` (and no ``head_dim``): the heads become the divisor nearest
      to the given count (AyaVision's SigLIP tower: 1152 / 14 -> 16 heads, as
      SigLIP-so400m has). In every (sub-)config: ``head_dim: None`` -> ``hidden_size // num_attention_heads``;
      ``num_key_value_heads: None`` -> ``num_attention_heads``; ``default_language: None``
      -> the first of ``languages`` (X-MOD); an ``attn_config`` without ``rope_theta``
      gets the parent's ``rope_parameters.rope_theta`` (DBRX).
    * ``vision_config.out_hidden_size`` that differs from ``text_config.hidden_size``
      becomes the text size (:func:`_match_vision_projection`; Qwen3.5 / Qwen3-VL).
    * Values left None (or absent) in a shipped default that the modeling code needs, in
      any (sub-)config, by its model_type: the values of the published checkpoint in
      :data:`PUBLISHED_SIZES` (named in the note), derived from the config where they
      depend on it (a per-layer ``mlp_layer_types`` from the layer count, Chameleon's
      image-token table from ``vq_config.num_embeddings``).
    * A pixel-shuffle projector whose vision patch grid is not divisible by its
      ``downsample_factor``: the largest image size not above the default that is
      (:func:`_repair_vision_grid`; ``downsample_factor``, ``pixel_shuffle_factor`` or
      ``scale_factor``).
    * An average-pool projector (``mm_tokens_per_image``, Gemma 3) whose patch grid is not a
      multiple of the token grid's side: the smallest image size whose grid is
      (:func:`_repair_pooling_grid`).
    * ``video_token_index: None`` (InstructBLIP-Video) -> the first id after the text
      vocabulary, which then gets its embedding row.

    Returns:
        (repaired copy, notes); the input is not modified.
    """
    notes: list[str] = []
    config = _repair_level(config, "", notes)
    config = _match_vision_projection(config, "", notes)
    config = _repair_vision_grid(config, notes)
    config = _repair_pooling_grid(config, notes)
    text = config.get("text_config")
    if "video_token_index" in config and config["video_token_index"] is None and isinstance(text, dict) \
            and _is_int(text.get("vocab_size")):
        # InstructBLIP-Video splices query outputs at its video tokens and cannot run without
        # one; the processor appends "<video>" after the text vocabulary (the rule below then
        # adds its embedding row). BLIP-2/InstructBLIP's None image_token_index is different:
        # it selects their legacy prepend path and stays.
        config = {**config, "video_token_index": text["vocab_size"]}
        notes.append(f"video_token_index None -> {text['vocab_size']} (the processor appends <video> after the text "
                     "vocabulary)")
    text = config.get("text_config")
    if not isinstance(text, dict) or not isinstance(text.get("vocab_size"), int):
        return config, notes
    ids = [(k, config[k]) for k in SPECIAL_TOKEN_KEYS if isinstance(config.get(k), int) and not isinstance(config.get(k), bool)]
    need = max((v for _, v in ids), default=-1) + 1
    if need > text["vocab_size"]:
        key = next(k for k, v in ids if v + 1 == need)
        notes.append(f"text_config.vocab_size {text['vocab_size']} -> {need} so that {key} {need - 1} is an embedding row "
                     "(the processor adds the token; published checkpoints resize the embeddings)")
        config = {**config, "text_config": {**text, "vocab_size": need}}
    return config, notes
