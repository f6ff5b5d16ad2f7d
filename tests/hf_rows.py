"""Catalog rows of transformers' shipped default configs, for tests that build models."""

from __future__ import annotations

from extract.sources.rows import row_from_hf_config


def default_row(model_type: str, arch: str, **overrides) -> dict:
    """The ``models`` row of ``AutoConfig.for_model(model_type)``'s default config for class
    ``arch``, through the catalog's repairs; ``overrides`` replace top-level keys (a dict
    updates a sub-config)."""
    from transformers import AutoConfig

    conf = AutoConfig.for_model(model_type).to_dict()
    for key, value in overrides.items():
        conf[key] = {**conf[key], **value} if isinstance(value, dict) else value
    return row_from_hf_config(conf, f"transformers:{arch}", arch, "transformers", architecture=arch)
