"""Reading and validating ``params.yaml``: one namespaced block per stage family (DVC
convention).

No block is defined here. Each family declares its blocks as typed configs beside its code
(:mod:`passnet_common.config`: ``extract/config.py``, ``curate/config.py``, ``proxy_artifacts/config.py``,
``passnet_common.summary``), which register their derived schemas with :func:`register_block` when
imported. :func:`load_params` validates every registered block it returns, so a typo
(``extract.capture.seqlen``) or a value of the wrong type (``extract.workers: "two"``) is an error
naming the key and what it expects, never silently ignored.

Schema specs (types, :class:`~passnet_common.spec.Block`, validators) and the check that applies
them are in :mod:`passnet_common.spec`; ``Block`` and ``ParamsError`` are handed on from here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from passnet_common.spec import Block, ParamsError, check

BLOCKS: dict[str, Any] = {}


def register_block(name: str, spec: Any) -> None:
    """Register the schema of top-level block ``name`` (replaces an earlier one)."""
    BLOCKS[name] = spec


def extend_block(name: str, fields: dict[str, Any]) -> None:
    """Add keys to a registered :class:`Block` schema (e.g. a new catalog source's switches)."""
    spec = BLOCKS[name]
    if not isinstance(spec, Block):
        raise TypeError(f"params block {name!r} is not a Block schema")
    spec.fields.update(fields)


def validate_params(params: dict, source: str = "params") -> None:
    """Validate every registered block present in ``params``.

    Raises:
        ParamsError: the first mismatch, prefixed with ``source`` (the file).
    """
    for name, spec in BLOCKS.items():
        if name in params:
            try:
                check(params[name], spec, name)
            except ParamsError as exc:
                raise ParamsError(f"{source}: {exc}") from None


def load_params(path: str | Path = "params.yaml", section: str | None = None) -> dict[str, Any]:
    """Return the whole params file, or one top-level ``section`` of it, validated
    against the registered schemas (:func:`validate_params`).

    Raises:
        FileNotFoundError: the params file does not exist.
        KeyError: ``section`` is not a top-level key of the file.
        ParamsError: an unknown key or a value of the wrong type in a registered block.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"params file {path} not found (give --params PATH)")
    with open(path, encoding="utf-8") as fh:
        try:
            params = yaml.safe_load(fh) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise ParamsError(f"{path}:{where} not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(params, dict):
        raise ParamsError(f"{path}: expected a mapping of blocks, got {type(params).__name__}")
    if section is None:
        validate_params(params, str(path))
        return params
    if section not in params:
        raise KeyError(f"{path}: no section {section!r} (has: {sorted(params)})")
    validate_params({section: params[section]}, str(path))
    return params[section]

