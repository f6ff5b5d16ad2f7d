"""The attempt key of a capture, the one definition of what shapes a result.

Each attempt has a key (:func:`attempt_details`, as Inductor's ``FxGraphHashDetails``
defines its cache key): model id, config hash, library and torch versions, canonical version,
the capture params with the Dynamo settings resolved, and a content hash of the code that
shapes a capture (:data:`CODE_GLOBS`). Its work folder ends with ``result.json``, written last.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import torch

from extract.config import CaptureConfig, capture_config
from passnet_common.canonical import CANONICAL_VERSION
from passnet_common.io import canonical_json

_SITE = re.compile(r"[^\s\"'(`]*/site-packages/")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# A line number in one of this project's own files (after the checkout prefix is removed): Dynamo
# writes the harness frame of a node into the generated code's ``# File: ...:171 in ...`` comments,
# so an edit that moves a line of extract/capture/build.py changed the stored model.py of graphs it
# did not otherwise touch. The file and function names stay; the number goes.
_OWN_LINE = re.compile(r"(?<![\w/.-])((?:extract|passnet_common|curate|dedupe|proxy_artifacts)/[\w/]+\.py):\d+")


def portable_text(text: str | None) -> str | None:
    """``text`` with machine-specific parts removed: path prefixes (``.../site-packages/``, the
    working directory and this checkout's root) and object addresses (``<function f at
    0x7f..>`` -> ``<function f>``), and the line numbers of this project's own files
    (``extract/capture/build.py:171`` -> ``extract/capture/build.py``), so stored code, break
    reasons and error messages do not depend on where the checkout or the virtualenv lives, on
    the run, nor on edits elsewhere in our code."""
    if text is None:
        return None
    text = _SITE.sub("", text)
    text = _ADDRESS.sub("", text)
    for prefix in {os.getcwd().rstrip("/") + "/", str(ROOT).rstrip("/") + "/"}:
        text = text.replace(prefix, "")
    return _OWN_LINE.sub(r"\1", text)


ROOT = Path(__file__).resolve().parents[2]


# The code that shapes a capture: every module of extract/, the canonical form, the graph
# record and store, and the isolated worker.
CODE_GLOBS = ("extract/**/*.py", "passnet_common/canonical/**/*.py", "passnet_common/canonical/**/*.pyx", "passnet_common/record.py",
              "passnet_common/store.py", "passnet_common/worker.py")


# Failure classes caused by the machine (load, memory) rather than the model: retried within
# the same run (``extract.retries``) and on a re-run (``retry_transient``).
TRANSIENT_ERRORS = ("timeout", "oom", "hang")


def code_hash(root: Path | None = None) -> str:
    """sha256 (hex, 16 chars) of the files of :data:`CODE_GLOBS` under ``root`` (default:
    this checkout): relative path and bytes of each, in sorted order."""
    root = Path(root) if root is not None else ROOT
    if root == ROOT and _CODE_HASH:
        return _CODE_HASH[0]
    h = hashlib.sha256()
    files = sorted({p for g in CODE_GLOBS for p in root.glob(g) if p.is_file()})
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    digest = h.hexdigest()[:16]
    if root == ROOT:
        _CODE_HASH.append(digest)
    return digest


_CODE_HASH: list[str] = []


def attempt_details(row: dict, capture: CaptureConfig | dict) -> dict:
    """Everything that enters the attempt key of a row, the one definition of it.

    Returns:
        ``{model_id, config_hash, library, library_version, torch, canonical_version,
        capture, dynamo, code}``: ``capture`` is the ``extract.capture`` block with every
        default filled (:class:`extract.config.CaptureConfig`, so a key is the same whether a
        default is written in params or not), ``dynamo`` its resolved Dynamo settings,
        ``code`` :func:`code_hash`.
    """
    cap = capture_config(capture)
    return {
        "model_id": row["model_id"], "config_hash": row["config_hash"], "library": row.get("library"),
        "library_version": row["library_version"], "torch": torch.__version__,
        "canonical_version": CANONICAL_VERSION, "capture": cap.to_params(), "dynamo": cap.dynamo.to_params(),
        "code": code_hash(),
    }


def attempt_key(row: dict, capture: CaptureConfig | dict) -> str:
    """Hex key (24 chars) of one capture attempt: sha256 of :func:`attempt_details`."""
    blob = canonical_json(attempt_details(row, capture))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def work_dir(work: Path, key: str) -> Path:
    """The work folder of attempt ``key`` under ``work``: ``work/<key[:2]>/<key>``."""
    return work / key[:2] / key
