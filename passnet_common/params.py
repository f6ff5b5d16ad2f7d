"""Reading and validating ``params.yaml``: one namespaced block per stage family (DVC
convention).

Each top-level block may register a schema (:func:`register_block`); :func:`load_params`
validates every registered block it returns, so a typo (``extract.capture.seqlen``) or a
value of the wrong type (``extract.workers: "two"``) is an error naming the key and what
it expects, never silently ignored. The graph blocks (``catalog``, ``extract``) are
registered here; other stage families register theirs from their own package (a schema
spec or any callable ``(value, path) -> None`` raising :class:`ParamsError`), or extend a
registered block with new keys (:func:`extend_block`).

Schema specs: a Python type (``int``, ``float`` -- ints accepted --, ``bool``, ``str``;
``bool`` is never an ``int``), :class:`Optional`, :class:`ListOf`, :class:`DictOf`,
:class:`Choice`, :class:`Block` (a mapping with a fixed set of keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml


class ParamsError(ValueError):
    """A params value does not match its schema; the message names the key path."""


@dataclass(frozen=True)
class Optional:
    """``spec`` or null."""

    spec: Any


@dataclass(frozen=True)
class ListOf:
    """A list whose items match ``spec``."""

    spec: Any


@dataclass(frozen=True)
class DictOf:
    """A mapping from ``str`` keys to values matching ``spec``."""

    spec: Any


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of values."""

    values: tuple


@dataclass
class Block:
    """A mapping with known keys only; missing keys take the stage's defaults."""

    fields: dict[str, Any] = field(default_factory=dict)


def describe(spec: Any) -> str:
    """Human-readable name of a spec (used in error messages), e.g. ``list of str``."""
    if isinstance(spec, type):
        return {float: "number", int: "int", bool: "bool", str: "str"}.get(spec, spec.__name__)
    if isinstance(spec, Optional):
        return f"{describe(spec.spec)} or null"
    if isinstance(spec, ListOf):
        return f"list of {describe(spec.spec)}"
    if isinstance(spec, DictOf):
        return f"mapping of str to {describe(spec.spec)}"
    if isinstance(spec, Choice):
        return "one of " + ", ".join(repr(v) for v in spec.values)
    if isinstance(spec, Block):
        return "mapping with keys " + ", ".join(sorted(spec.fields))
    return getattr(spec, "__name__", "valid value")


def _got(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 60 else text[:57] + '...'}"


def check(value: Any, spec: Any, path: str) -> None:
    """Check ``value`` against ``spec``.

    Raises:
        ParamsError: ``"<path>: expected <spec>, got <type> <value>"`` or
            ``"<path>.<key>: unknown key; known: [...]"``.
    """
    if callable(spec) and not isinstance(spec, (type, Optional, ListOf, DictOf, Choice, Block)):
        spec(value, path)
        return
    if isinstance(spec, Optional):
        if value is not None:
            check(value, spec.spec, path)
        return
    if isinstance(spec, Choice):
        if value not in spec.values:
            raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}")
        return
    if isinstance(spec, type):
        ok = isinstance(value, spec) and not (spec in (int, float) and isinstance(value, bool))
        if spec is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}")
        return
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}")
        for i, v in enumerate(value):
            check(v, spec.spec, f"{path}[{i}]")
        return
    if isinstance(spec, (DictOf, Block)):
        if not isinstance(value, dict):
            raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}")
        for k, v in value.items():
            if isinstance(spec, Block):
                if k not in spec.fields:
                    raise ParamsError(f"{path}.{k}: unknown key; known: {sorted(spec.fields)}")
                check(v, spec.fields[k], f"{path}.{k}")
            else:
                if not isinstance(k, str):
                    raise ParamsError(f"{path}: key {k!r} must be str")
                check(v, spec.spec, f"{path}.{k}")
        return
    raise TypeError(f"{path}: bad schema spec {spec!r}")


def positive(kind: type) -> Callable[[Any, str], None]:
    """Spec: a ``kind`` value > 0."""

    def validator(value: Any, path: str) -> None:
        try:
            check(value, kind, path)
        except ParamsError:
            raise ParamsError(f"{path}: expected positive {describe(kind)}, got {_got(value)}") from None
        if value <= 0:
            raise ParamsError(f"{path}: expected positive {describe(kind)}, got {value!r}")

    validator.__name__ = f"positive {describe(kind)}"
    return validator


def _any_value(value: Any, path: str) -> None:
    """Spec: any value (options passed through to a library, e.g. ``ray.init``)."""


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


# --- graph stages -----------------------------------------------------------------------
DYNAMO_SCHEMA = Block({
    "capture_scalar_outputs": bool,
    "capture_dynamic_output_shape_ops": bool,
    "recompile_limit": positive(int),
    "ignore_logging_functions": bool,
})
register_block("catalog", Block({
    "mode": Choice(("default", "all")),
    "default": ListOf(str),
    "all_sources": ListOf(str),
    "sample_per_source": Optional(DictOf(int)),
    "sample_seed": int,
    "local_dir": Optional(str),
    "hub_dir": Optional(str),
    "limit": Optional(positive(int)),
}))
register_block("extract", Block({
    "workers": positive(int),
    "timeout_s": positive(float),
    "mem_cap_gb": Optional(positive(float)),
    "retry_failed": bool,
    "retry_transient": bool,
    "executor": Choice(("local", "ray")),
    "ray": DictOf(_any_value),  # ray.init options, passed through
    "capture": Block({
        "meta": bool,
        "batch_size": positive(int),
        "seq_len": positive(int),
        "audio_samples": positive(int),
        "fallback_layers": positive(int),
        "dynamo": DYNAMO_SCHEMA,
    }),
}))
register_block("hub", Block({  # python -m extract crawl (extract/hub_crawl.py)
    "endpoint": Optional(str),
    "filter": Optional(str),
    "pipeline_tag": Optional(str),
    "sort": Optional(str),
    "limit": Optional(positive(int)),
    "workers": positive(int),
    "chunk": positive(int),
    "max_retries": int,
    "timeout_s": positive(float),
    "listing_restarts": int,
}))


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
    with open(path, encoding="utf-8") as fh:
        params = yaml.safe_load(fh) or {}
    if not isinstance(params, dict):
        raise ParamsError(f"{path}: expected a mapping of blocks, got {type(params).__name__}")
    if section is None:
        validate_params(params, str(path))
        return params
    if section not in params:
        raise KeyError(f"{path}: no section {section!r} (has: {sorted(params)})")
    validate_params({section: params[section]}, str(path))
    return params[section]
