"""Model catalogs: every source produces rows of the ``models`` table.

Sources (DESIGN.md §3 identifiers):
  * ``transformers``: every architecture class in transformers' auto-model mappings
    (``MODEL_*_MAPPING_NAMES``), its config built from the library's defaults
    (``AutoConfig.for_model(model_type)``) -> ``transformers:<ClassName>``;
  * ``timm``: every name in ``timm.list_models()`` -> ``timm:<name>``;
  * ``torchvision``: every name in ``torchvision.models.list_models()`` -> ``torchvision:<name>``;
  * ``local``: a folder of Hugging Face style ``config.json`` files -> ``local:<path-hash>``;
  * ``hub`` (``hub_dir``): a finished Hub crawl (:mod:`extract.hub_crawl`), one row per
    distinct graph config -> ``hf:org/name@<sha>``;
  * ``graphnet`` (``graphnet_dir``): samples of a GraphNet checkout (:mod:`extract.graphnet`),
    their ``model.py`` static-checked and run only in the capture's isolated child ->
    ``graphnet:<sample path>``.

A config dict from any origin (a local file, a Hub download, the library defaults) goes
through :func:`row_from_hf_config`, the single code path that later also serves the Hub
crawler (``hf:org/name@<sha>``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from passnet_common.io import canonical_json

# Mapping name -> task label; the order decides which task a class shared by several
# mappings is listed under (the first one).
_TASK_ORDER = [
    ("MODEL_MAPPING_NAMES", "base"),
    ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "causal-lm"),
    ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "masked-lm"),
    ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "seq2seq-lm"),
    ("MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", "speech-seq2seq"),
    ("MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", "image-classification"),
    ("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", "audio-classification"),
    ("MODEL_FOR_CTC_MAPPING_NAMES", "ctc"),
    ("MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES", "sequence-classification"),
    ("MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES", "token-classification"),
    ("MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES", "question-answering"),
    ("MODEL_FOR_PRETRAINING_MAPPING_NAMES", "pretraining"),
]


def config_to_json(config: dict) -> str:
    """Canonical JSON of a config (sorted keys; NaN/Infinity kept as Python's json writes them)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=True, default=str, ensure_ascii=False)


def _config_hash(config_json: str) -> str:
    return hashlib.sha256(config_json.encode()).hexdigest()


def _modality_of(config: dict) -> str:
    keys = set(config)
    has_vision = "vision_config" in keys or "image_size" in keys
    has_audio = "num_mel_bins" in keys or "audio_config" in keys or "conv_dim" in keys
    has_text = "vocab_size" in keys or "text_config" in keys
    if has_vision and has_text:
        return "multimodal"
    if has_audio:
        return "audio" if not has_vision else "multimodal"
    if has_vision:
        return "vision"
    return "text"


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
    * ``video_token_index: None`` (InstructBLIP-Video) -> the first id after the text
      vocabulary, which then gets its embedding row.

    Returns:
        (repaired copy, notes); the input is not modified.
    """
    notes: list[str] = []
    config = _repair_level(config, "", notes)
    config = _match_vision_projection(config, "", notes)
    config = _repair_vision_grid(config, notes)
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


def row_from_hf_config(
    config: dict,
    model_id: str,
    name: str,
    source: str,
    architecture: str | None = None,
    task: str | None = None,
    library_version: str | None = None,
) -> dict:
    """One ``models`` row from a Hugging Face ``config.json`` dict.

    ``architecture`` defaults to ``config["architectures"][0]``; a config that names
    custom code (``auto_map``) or a ``model_type`` transformers does not ship is marked
    ``trust_remote_code=True`` and will be recorded as skipped, never executed.

    Raises:
        ValueError: ``config`` is not a dict or has no ``model_type``; the message names
            ``model_id``.
    """
    import transformers

    if not isinstance(config, dict):
        raise ValueError(f"{model_id}: config is {type(config).__name__}, expected a JSON object")
    model_type = config.get("model_type")
    if not model_type:
        raise ValueError(f"{model_id}: config has no 'model_type' key")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    config, repairs = repair_config(config)
    archs = config.get("architectures") or []
    architecture = architecture or (archs[0] if archs else None)
    remote = bool(config.get("auto_map")) or model_type not in CONFIG_MAPPING_NAMES
    if architecture is not None and not remote and not hasattr(transformers, architecture):
        remote = True
    config_json = config_to_json(config)
    return {
        "model_id": model_id,
        "source": source,
        "name": name,
        "architecture": architecture,
        "model_type": model_type,
        "task": task,
        "modality": _modality_of(config),
        "config_json": config_json,
        "config_hash": _config_hash(config_json),
        "library": "transformers",
        "library_version": library_version or transformers.__version__,
        "trust_remote_code": remote,
        "catalog_note": "; ".join(repairs) or None,
    }


def own_model_type(cls_name: str, listed_types: set[str] | list[str]) -> str | None:
    """Of the model types an auto-mapping lists a class under, the one of the class's own
    config class (``cls.config_class.model_type``); None when that is not among them or
    the class is unknown (the caller keeps the first listed type)."""
    import transformers

    typ = getattr(getattr(getattr(transformers, cls_name, None), "config_class", None), "model_type", None)
    return typ if typ in set(listed_types) else None


def transformers_catalog() -> list[dict]:
    """Every architecture class of transformers' auto-model mappings with its default config.

    Model types whose default config cannot be built still get a row (``config_json`` is
    ``{"model_type": ..., "_config_error": ...}``) so the failure is recorded at capture.
    """
    import transformers
    from transformers import AutoConfig
    import transformers.models.auto.modeling_auto as ma

    mappings = [(n, t) for n, t in _TASK_ORDER if hasattr(ma, n)]
    seen = {n for n, _ in mappings}
    mappings += [(n, n.replace("MODEL_FOR_", "").replace("_MAPPING_NAMES", "").lower().replace("_", "-"))
                 for n in sorted(dir(ma)) if n.startswith("MODEL_FOR_") and n.endswith("_MAPPING_NAMES") and n not in seen]
    rows: dict[str, dict] = {}
    configs: dict[str, dict] = {}
    # A class listed under several model types (LlamaForCausalLM under exaone, internlm3,
    # llama; JevForDecision under gemma4, jev, qwen2...) is built from the default config of
    # its own config class (``cls.config_class.model_type``), not from the first type listed.
    own_type: dict[str, str] = {}
    listed: dict[str, set] = {}
    for mapping_name, _ in mappings:
        for model_type, classes in getattr(ma, mapping_name).items():
            for cls in (classes if isinstance(classes, (list, tuple)) else [classes]):
                listed.setdefault(cls, set()).add(model_type)
    for cls, types in listed.items():
        if len(types) > 1 and (typ := own_model_type(cls, types)) is not None:
            own_type[cls] = typ
    for mapping_name, task in mappings:
        for model_type, classes in sorted(getattr(ma, mapping_name).items()):
            for cls in (classes if isinstance(classes, (list, tuple)) else [classes]):
                model_id = f"transformers:{cls}"
                if model_id in rows or own_type.get(cls, model_type) != model_type:
                    continue
                if model_type not in configs:
                    try:
                        configs[model_type] = AutoConfig.for_model(model_type).to_dict()
                    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
                        configs[model_type] = {"model_type": model_type, "_config_error": f"{type(exc).__name__}: {exc}"[:300]}
                rows[model_id] = row_from_hf_config(
                    configs[model_type], model_id, cls, "transformers", architecture=cls, task=task,
                    library_version=transformers.__version__,
                )
                if cls in own_type:
                    others = ", ".join(sorted(listed[cls] - {model_type}))
                    note = (f"default config of model type {model_type!r}, the class's own config class "
                            f"(the auto mappings also list it under {others})")
                    row = rows[model_id]
                    row["catalog_note"] = "; ".join(n for n in (note, row.get("catalog_note")) if n)
    return [rows[k] for k in sorted(rows)]


def timm_catalog() -> list[dict]:
    """Every name of ``timm.list_models()`` with its default input size."""
    import timm

    out = []
    for name in timm.list_models():
        cfg = timm.models.get_pretrained_cfg(name)
        input_size = list(cfg.input_size) if cfg is not None and cfg.input_size else [3, 224, 224]
        conf = {"name": name, "input_size": input_size}
        cj = canonical_json(conf).rstrip("\n")
        out.append({
            "model_id": f"timm:{name}", "source": "timm", "name": name, "architecture": name,
            "model_type": None, "task": "image-classification", "modality": "vision",
            "config_json": cj, "config_hash": _config_hash(cj), "library": "timm",
            "library_version": timm.__version__, "trust_remote_code": False,
        })
    return out


def _torchvision_input(name: str) -> dict:
    if name in ("raft_large", "raft_small"):
        return {"kind": "optical_flow", "image_shape": [3, 128, 128]}
    if name in ("mc3_18", "r2plus1d_18", "r3d_18", "s3d") or name.startswith(("mvit_", "swin3d_")):
        frames = 16
        size = 224 if name.startswith(("mvit_", "swin3d_", "s3d")) else 112
        return {"kind": "video", "image_shape": [3, frames, size, size]}
    if any(k in name for k in ("rcnn", "retinanet", "fcos", "ssd")):
        return {"kind": "detection", "image_shape": [3, 320, 320]}
    if name.startswith(("deeplabv3", "fcn_", "lraspp")):
        return {"kind": "segmentation", "image_shape": [3, 224, 224]}
    size = 299 if "inception" in name else 224  # the builders' default image_size (vit_h_14 too)
    return {"kind": "classification", "image_shape": [3, size, size]}


def torchvision_catalog() -> list[dict]:
    """Every model of torchvision's registry (``torchvision.models.list_models()``)."""
    import torchvision

    out = []
    for name in torchvision.models.list_models():
        conf = {"name": name, **_torchvision_input(name)}
        cj = canonical_json(conf).rstrip("\n")
        out.append({
            "model_id": f"torchvision:{name}", "source": "torchvision", "name": name, "architecture": name,
            "model_type": None, "task": conf["kind"], "modality": "video" if conf["kind"] == "video" else "vision",
            "config_json": cj, "config_hash": _config_hash(cj), "library": "torchvision",
            "library_version": torchvision.__version__, "trust_remote_code": False,
        })
    return out


def model_type_from_architectures(architectures: Any) -> str | None:
    """The ``model_type`` whose auto mappings list the first of ``architectures`` (a class
    name such as ``RobertaForMaskedLM``), None when absent or ambiguous."""
    import transformers.models.auto.modeling_auto as ma

    if not isinstance(architectures, list) or not architectures or not isinstance(architectures[0], str):
        return None
    found = set()
    for n in dir(ma):
        if n.startswith("MODEL_") and n.endswith("_MAPPING_NAMES"):
            for model_type, classes in getattr(ma, n).items():
                if architectures[0] in (classes if isinstance(classes, (list, tuple)) else [classes]):
                    found.add(model_type)
    return found.pop() if len(found) == 1 else None


def error_row(model_id: str, name: str, source: str, error_class: str, message: str, raw: bytes) -> dict:
    """A ``models`` row for a config that cannot be used: it keeps its place in the
    catalog and is recorded as a failed extraction with ``error_class`` (the capture runs
    nothing for it)."""
    import transformers

    return {
        "model_id": model_id, "source": source, "name": name, "architecture": None, "model_type": None,
        "task": None, "modality": None, "config_json": None, "config_hash": hashlib.sha256(raw).hexdigest(),
        "library": "transformers", "library_version": transformers.__version__, "trust_remote_code": False,
        "catalog_error_class": error_class, "catalog_error": message[:2000], "catalog_note": None,
    }


def row_from_config_file(path: Path, model_id: str, name: str, source: str) -> dict:
    """One ``models`` row for a ``config.json`` file; never raises for a bad file.

    Errors become rows (:func:`error_row`) with ``catalog_error_class``: ``unreadable``,
    ``invalid_json``, ``not_a_config`` (not a JSON object), ``no_model_type`` (none and
    none inferable). A missing ``model_type`` is inferred from ``architectures`` when that
    class belongs to exactly one model type; ``catalog_note`` says so.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return error_row(model_id, name, source, "unreadable", f"{path}: cannot read: {exc}", b"")
    try:
        config = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return error_row(model_id, name, source, "invalid_json", f"{path}: not valid JSON: {exc}", raw)
    if not isinstance(config, dict):
        return error_row(model_id, name, source, "not_a_config",
                         f"{path}: config is {type(config).__name__}, expected a JSON object", raw)
    note = None
    if not config.get("model_type"):
        inferred = model_type_from_architectures(config.get("architectures"))
        if inferred is None:
            return error_row(model_id, name, source, "no_model_type",
                             f"{path}: config has no 'model_type' and none can be inferred from "
                             f"architectures={config.get('architectures')!r}", raw)
        config = {**config, "model_type": inferred}
        note = f"model_type {inferred!r} inferred from architectures {config['architectures'][:1]} (absent in the file)"
    row = row_from_hf_config(config, model_id, name, source)
    notes = [n for n in (note, row.get("catalog_note")) if n]
    row.update({"catalog_error_class": None, "catalog_error": None, "catalog_note": "; ".join(notes) or None})
    return row


def local_catalog(folder: str | Path) -> list[dict]:
    """Rows for a folder of HF-style configs: ``*/config.json`` or flat ``*.json`` files.

    ``model_id`` is ``local:<first 16 hex of sha256(relative path)>``; ``name`` is the
    relative path. A file that cannot be used (bad JSON, no ``model_type``...) becomes a
    row with ``catalog_error_class`` and a message naming the file
    (:func:`row_from_config_file`); the other files are unaffected.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"local catalog folder {folder} does not exist")
    files = sorted(set(folder.glob("*/config.json")) | set(folder.glob("*.json")))
    rows = []
    for f in files:
        rel = f.relative_to(folder).as_posix()
        mid = "local:" + hashlib.sha256(rel.encode()).hexdigest()[:16]
        rows.append(row_from_config_file(f, mid, rel, "local"))
    return rows


CATALOG_KEYS = {"mode", "default", "all_sources", "sample_per_source", "sample_seed", "local_dir", "limit", "hub_dir",
                "graphnet_dir"}


def remote_code_reason(row: dict) -> str:
    """Why a row is marked ``trust_remote_code`` (auto_map, unknown model_type or class)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    config = iter_config(row)
    if config.get("auto_map"):
        return f"config has auto_map {sorted(config['auto_map'])} (custom code in the repository)"
    if config.get("model_type") not in CONFIG_MAPPING_NAMES:
        return f"model_type {config.get('model_type')!r} is not shipped by transformers"
    return f"architecture {row.get('architecture')!r} is not a transformers class"


SOURCES = {
    "transformers": transformers_catalog,
    "timm": timm_catalog,
    "torchvision": torchvision_catalog,
}


def build_catalog(params: dict) -> list[dict]:
    """The catalog the pipeline captures, from the ``catalog`` params block.

    ``mode: default`` keeps the model ids listed under ``default``; ``mode: all`` keeps
    every model of the ``all_sources`` (``sample_per_source: {timm: 100}`` keeps a seeded
    uniform sample of a source instead). ``local_dir`` adds a local config folder;
    ``graphnet_dir`` the samples of a local GraphNet checkout (:mod:`extract.graphnet`);
    ``limit`` keeps the first N rows (sorted by model_id) for smoke runs.

    Raises:
        ValueError: unknown mode or source, or a default id absent from its source (the
            message lists the unknown ids).
    """
    unknown = sorted(set(params) - CATALOG_KEYS)
    if unknown:
        raise ValueError(f"catalog params: unknown key(s) {unknown}; known: {sorted(CATALOG_KEYS)}")
    mode = params.get("mode", "default")
    rows: list[dict] = []
    if mode == "all":
        sample = params.get("sample_per_source") or {}
        for src in params.get("all_sources", list(SOURCES)):
            if src not in SOURCES:
                raise ValueError(f"catalog.all_sources: unknown source {src!r}; known: {sorted(SOURCES)}")
            src_rows = SOURCES[src]()
            if sample.get(src):
                # A reproducible uniform sample (for estimating capture shares cheaply).
                import random

                rng = random.Random(int(params.get("sample_seed", 0)))
                src_rows = rng.sample(src_rows, min(int(sample[src]), len(src_rows)))
            rows.extend(src_rows)
    elif mode == "default":
        wanted = list(params.get("default") or [])
        by_source: dict[str, list[str]] = {}
        for mid in wanted:
            src = mid.split(":", 1)[0]
            if src not in SOURCES:
                raise ValueError(f"catalog.default: {mid!r} has unknown source {src!r}; known: {sorted(SOURCES)}")
            by_source.setdefault(src, []).append(mid)
        missing = []
        for src, ids in by_source.items():
            available = {r["model_id"]: r for r in SOURCES[src]()}
            missing += [m for m in ids if m not in available]
            rows.extend(available[m] for m in ids if m in available)
        if missing:
            raise ValueError(f"catalog.default: not found in their sources: {missing}")
    else:
        raise ValueError(f"catalog.mode must be 'default' or 'all', got {mode!r}")
    if params.get("local_dir"):
        rows.extend(local_catalog(params["local_dir"]))
    if params.get("hub_dir"):  # a finished `python -m extract crawl` (extract/hub_crawl.py)
        from extract.hub_crawl import hub_catalog

        rows.extend(hub_catalog(params["hub_dir"]))
    if params.get("graphnet_dir"):  # a local GraphNet checkout: graphnet:<sample path> (extract/graphnet.py)
        from extract.graphnet import graphnet_catalog

        rows.extend(graphnet_catalog(params["graphnet_dir"]))
    rows = sorted({r["model_id"]: r for r in rows}.values(), key=lambda r: r["model_id"])
    if params.get("limit"):
        rows = rows[: int(params["limit"])]
    return rows


def iter_config(row: dict) -> dict[str, Any]:
    """The config dict of a catalog row."""
    return json.loads(row["config_json"]) if row.get("config_json") else {}

