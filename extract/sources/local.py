"""The ``local`` source: a folder of Hugging Face style ``config.json`` files -> ``local:<path-hash>``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from extract.sources.rows import row_from_config_file


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
