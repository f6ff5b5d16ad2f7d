"""Schema specs for ``params.yaml`` blocks and the check that applies them.

A spec is a Python type (``int``, ``float`` -- ints accepted --, ``bool``, ``str``; ``bool`` is
never an ``int``), :class:`Optional`, :class:`ListOf`, :class:`DictOf`, :class:`Choice`,
:class:`AnyOf`, :class:`Block` (a mapping with a fixed set of keys, some ``required``), or a
validator such as :func:`positive`, :func:`non_negative`, :func:`interval` (any callable
``(value, path) -> None`` raising :class:`ParamsError`). :func:`check` raises
:class:`ParamsError` naming the key path and what it expects. The blocks themselves are the
families' typed configs (:mod:`passnet_common.config`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


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
    """A mapping with known keys only; missing keys take the stage's defaults, except the
    ``required`` ones."""

    fields: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnyOf:
    """A value matching at least one of ``specs`` (tried in order)."""

    specs: tuple


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
    if isinstance(spec, AnyOf):
        return " or ".join(describe(s) for s in spec.specs)
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
    if callable(spec) and not isinstance(spec, (type, Optional, ListOf, DictOf, Choice, Block, AnyOf)):
        spec(value, path)
        return
    if isinstance(spec, AnyOf):
        for s in spec.specs:
            try:
                check(value, s, path)
                return
            except ParamsError:
                continue
        raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}")
    if isinstance(spec, Optional):
        if value is not None:
            try:
                check(value, spec.spec, path)
            except ParamsError as exc:
                if str(exc).startswith(f"{path}: expected "):  # this value, not a nested key: say null is fine too
                    raise ParamsError(f"{path}: expected {describe(spec)}, got {_got(value)}") from None
                raise
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
        missing = [k for k in getattr(spec, "required", ()) if k not in value]
        if missing:
            raise ParamsError(f"{path}: missing required key(s) {missing}")
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


def interval(kind: type, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
             hi_open: bool = False, name: str | None = None) -> Callable[[Any, str], None]:
    """Spec: a ``kind`` value within ``[lo, hi]`` (an open end with ``lo_open`` / ``hi_open``;
    None: unbounded), e.g. ``interval(float, 0, 1, lo_open=True)`` is a share in (0, 1]."""
    left = "-inf" if lo is None else f"{lo:g}"
    right = "inf" if hi is None else f"{hi:g}"
    name = name or f"{describe(kind)} in {'(' if lo_open or lo is None else '['}{left}, {right}{')' if hi_open or hi is None else ']'}"

    def validator(value: Any, path: str) -> None:
        try:
            check(value, kind, path)
        except ParamsError:
            raise ParamsError(f"{path}: expected {name}, got {_got(value)}") from None
        bad = (lo is not None and (value < lo or (lo_open and value == lo))) or \
            (hi is not None and (value > hi or (hi_open and value == hi)))
        if bad:
            raise ParamsError(f"{path}: expected {name}, got {value!r}")

    validator.__name__ = name
    return validator


def non_negative(kind: type) -> Callable[[Any, str], None]:
    """Spec: a ``kind`` value >= 0."""
    return interval(kind, 0, name=f"non-negative {describe(kind)}")


def any_value(value: Any, path: str) -> None:
    """Spec: any value (options passed through to a library, e.g. ``ray.init``)."""

