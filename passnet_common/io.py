"""Atomic, deterministic writers for the pipeline's outputs.

Every output is written to a temporary name beside its final path and renamed into
place (``os.replace``), so a reader never sees half a file and an interrupted run leaves
either the old file or the new one (GraphNet's "metadata written last" convention).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def _tmp_beside(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename)."""
    path = Path(path)
    tmp = _tmp_beside(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def canonical_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys, no NaN, compact separators, trailing newline."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = None) -> None:
    """Write ``obj`` as deterministic JSON (sorted keys) atomically."""
    if indent is None:
        text = canonical_json(obj)
    else:
        text = json.dumps(obj, sort_keys=True, indent=indent, allow_nan=False, ensure_ascii=False) + "\n"
    atomic_write_text(path, text)


def write_parquet(path: str | os.PathLike, table: pa.Table) -> None:
    """Write ``table`` as zstd Parquet atomically.

    Written without statistics timestamps or writer-dependent metadata beyond the schema,
    so the same rows give byte-identical files (needed for DVC's reproducibility check).
    """
    path = Path(path)
    tmp = _tmp_beside(path)
    try:
        pq.write_table(table, tmp, compression="zstd", use_dictionary=True, write_statistics=True)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_replace_dir(staging: Path, final: Path) -> bool:
    """Move a fully written ``staging`` folder to ``final`` unless ``final`` exists.

    Returns True when ``staging`` became ``final``; False when ``final`` was already
    there (content-addressed stores: same name means same content), in which case
    ``staging`` is deleted.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(staging, ignore_errors=True)
        return False
    try:
        os.rename(staging, final)
        return True
    except OSError:
        if final.exists():
            shutil.rmtree(staging, ignore_errors=True)
            return False
        raise



def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()

