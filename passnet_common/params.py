"""Reading ``params.yaml``: one namespaced block per stage (DVC convention)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def load_params(path: str | Path = "params.yaml", section: str | None = None) -> dict[str, Any]:
    """Return the whole params file, or one top-level ``section`` of it.

    Raises:
        FileNotFoundError: the params file does not exist.
        KeyError: ``section`` is not a top-level key of the file.
    """
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        params = yaml.safe_load(fh) or {}
    if section is None:
        return params
    if section not in params:
        raise KeyError(f"{path}: no section {section!r} (has: {sorted(params)})")
    return params[section]
