"""Catalog rows: a config from any origin becomes one row of the ``models`` table.

A config dict from any origin (a local file, a Hub download, the library defaults) goes
through :func:`row_from_hf_config`, the single code path of every config source; the row
carries ``config_json`` (canonical JSON), ``config_hash``, modality and the repairs applied
(:mod:`extract.sources.repairs`). Unreadable input becomes an :func:`error_row`, never a crash.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from extract.sources.repairs import repair_config

# Provenance strings ``save_pretrained`` writes into a config: kept on the model as text
# (``model.name_or_path``), never a value of its graph. The config dedupe leaves them out, in the
# catalog (:func:`extract.sources.catalog.dedupe_key`) and in the capture stage's key
# (:func:`extract.capture.config_reads.reads_key`).
PROVENANCE = frozenset({"_name_or_path", "name_or_path", "transformers_version", "_commit_hash"})


def config_to_json(config: dict) -> str:
    """Canonical JSON of a config (sorted keys; NaN/Infinity kept as Python's json writes them)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=True, default=str, ensure_ascii=False)


def hash_config(config_json: str) -> str:
    """``config_hash`` of a row: sha256 hex of its ``config_json`` text."""
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
    import transformers  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    if not isinstance(config, dict):
        raise ValueError(f"{model_id}: config is {type(config).__name__}, expected a JSON object")
    model_type = config.get("model_type")
    if not model_type:
        raise ValueError(f"{model_id}: config has no 'model_type' key")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

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
        "config_hash": hash_config(config_json),
        "library": "transformers",
        "library_version": library_version or transformers.__version__,
        "trust_remote_code": remote,
        "catalog_note": "; ".join(repairs) or None,
    }


def model_type_from_architectures(architectures: Any) -> str | None:
    """The ``model_type`` whose auto mappings list the first of ``architectures`` (a class
    name such as ``RobertaForMaskedLM``), None when absent or ambiguous."""
    import transformers.models.auto.modeling_auto as ma  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

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
    import transformers  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

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
    class belongs to exactly one model type; ``catalog_note`` says so. Messages name the
    file by ``name`` (its path inside the source folder), never by a machine path, so the
    same catalog built in two folders is the same table.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        return error_row(model_id, name, source, "unreadable", f"{name}: cannot read: {why}", b"")
    try:
        config = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return error_row(model_id, name, source, "invalid_json", f"{name}: not valid JSON: {exc}", raw)
    if not isinstance(config, dict):
        return error_row(model_id, name, source, "not_a_config",
                         f"{name}: config is {type(config).__name__}, expected a JSON object", raw)
    note = None
    if not config.get("model_type"):
        inferred = model_type_from_architectures(config.get("architectures"))
        if inferred is None:
            return error_row(model_id, name, source, "no_model_type",
                             f"{name}: config has no 'model_type' and none can be inferred from "
                             f"architectures={config.get('architectures')!r}", raw)
        config = {**config, "model_type": inferred}
        note = f"model_type {inferred!r} inferred from architectures {config['architectures'][:1]} (absent in the file)"
    row = row_from_hf_config(config, model_id, name, source)
    notes = [n for n in (note, row.get("catalog_note")) if n]
    row.update({"catalog_error_class": None, "catalog_error": None, "catalog_note": "; ".join(notes) or None})
    return row


def remote_code_reason(row: dict) -> str:
    """Why a row is marked ``trust_remote_code`` (auto_map, unknown model_type or class)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    config = iter_config(row)
    if config.get("auto_map"):
        return f"config has auto_map {sorted(config['auto_map'])} (custom code in the repository)"
    if config.get("model_type") not in CONFIG_MAPPING_NAMES:
        return f"model_type {config.get('model_type')!r} is not shipped by transformers"
    return f"architecture {row.get('architecture')!r} is not a transformers class"


def iter_config(row: dict) -> dict[str, Any]:
    """The config dict of a catalog row."""
    return json.loads(row["config_json"]) if row.get("config_json") else {}
