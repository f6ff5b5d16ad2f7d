"""The libraries' own architectures as sources.

* ``transformers``: every architecture class in transformers' auto-model mappings
  (``MODEL_*_MAPPING_NAMES``), its config built from the library's defaults
  (``AutoConfig.for_model(model_type)``) -> ``transformers:<ClassName>``;
* ``timm``: every name in ``timm.list_models()`` -> ``timm:<name>``;
* ``torchvision``: every name in ``torchvision.models.list_models()`` -> ``torchvision:<name>``.
"""

from __future__ import annotations

from extract.sources.rows import hash_config, row_from_hf_config
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


def own_model_type(cls_name: str, listed_types: set[str] | list[str]) -> str | None:
    """Of the model types an auto-mapping lists a class under, the one of the class's own
    config class (``cls.config_class.model_type``); None when that is not among them or
    the class is unknown (the caller keeps the first listed type)."""
    import transformers  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    typ = getattr(getattr(getattr(transformers, cls_name, None), "config_class", None), "model_type", None)
    return typ if typ in set(listed_types) else None


def transformers_catalog(only: set[str] | None = None) -> list[dict]:
    """Every architecture class of transformers' auto-model mappings with its default config.

    Model types whose default config cannot be built still get a row (``config_json`` is
    ``{"model_type": ..., "_config_error": ...}``) so the failure is recorded at capture.
    ``only`` (class names): build the rows of these classes alone, each identical to its row in
    the whole catalog (the mappings are still read in full to decide its model type and task);
    a name no mapping lists gets no row. It spares importing every config and model module
    (``catalog.mode: default``).
    """
    import transformers  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
    import transformers.models.auto.modeling_auto as ma  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
    from transformers import AutoConfig  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

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
        if only is not None and cls not in only:
            continue
        if len(types) > 1 and (typ := own_model_type(cls, types)) is not None:
            own_type[cls] = typ
    for mapping_name, task in mappings:
        for model_type, classes in sorted(getattr(ma, mapping_name).items()):
            for cls in (classes if isinstance(classes, (list, tuple)) else [classes]):
                model_id = f"transformers:{cls}"
                if (only is not None and cls not in only) or model_id in rows or own_type.get(cls, model_type) != model_type:
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
    import timm  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    out = []
    for name in timm.list_models():
        cfg = timm.models.get_pretrained_cfg(name)
        input_size = list(cfg.input_size) if cfg is not None and cfg.input_size else [3, 224, 224]
        conf = {"name": name, "input_size": input_size}
        cj = canonical_json(conf).rstrip("\n")
        out.append({
            "model_id": f"timm:{name}", "source": "timm", "name": name, "architecture": name,
            "model_type": None, "task": "image-classification", "modality": "vision",
            "config_json": cj, "config_hash": hash_config(cj), "library": "timm",
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
    import torchvision  # noqa: PLC0415  (per source: a library is imported only when params list its source; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    out = []
    for name in torchvision.models.list_models():
        conf = {"name": name, **_torchvision_input(name)}
        cj = canonical_json(conf).rstrip("\n")
        out.append({
            "model_id": f"torchvision:{name}", "source": "torchvision", "name": name, "architecture": name,
            "model_type": None, "task": conf["kind"], "modality": "video" if conf["kind"] == "video" else "vision",
            "config_json": cj, "config_hash": hash_config(cj), "library": "torchvision",
            "library_version": torchvision.__version__, "trust_remote_code": False,
        })
    return out
