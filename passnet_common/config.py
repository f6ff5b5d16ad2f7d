"""Typed params configs: every knob of ``params.yaml`` has one home, its family's config class.

A params block is a frozen dataclass that subclasses :class:`ParamsConfig`. Its fields are the
block's keys, each with its default; :func:`knob` attaches a rule (a :mod:`passnet_common.spec`
validator such as ``positive(int)``) and a one-line doc. The schema that ``check_params`` applies
is derived from the fields (:meth:`ParamsConfig.spec`), so the key list, the types and the defaults
are written once, beside the code that reads them::

    @dataclass(frozen=True)
    class DecomposeConfig(ParamsConfig):
        max_nodes: int = knob(24, rule=positive(int), doc="FX nodes per subgraph")
        variants: list[int] = knob(factory=lambda: [1], rule=ListOf(positive(int)))

    cfg = DecomposeConfig.from_params(params["curate"]["decompose"], "curate.decompose")

Type annotations map to specs: ``int``, ``float`` (ints accepted), ``bool``, ``str``, ``X | None``,
``list[X]`` (items may be configs), ``dict[str, X]``, ``Literal[...]`` (a choice), ``Any`` (passed through), and another
:class:`ParamsConfig` (a nested block, defaults filled recursively). A knob's ``rule`` replaces the
spec its annotation gives.

Each stage family registers its top-level blocks from its own ``<family>/config.py`` with
:func:`register`; ``python -m passnet_common.check_params --families ...`` imports those modules by
name (a plugin list in ``dvc.yaml``, so the core never imports a stage family).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import MISSING, field
from typing import Any, Callable, Literal, TypeVar

from passnet_common.params import BLOCKS, register_block
from passnet_common.spec import AnyOf, Block, Choice, DictOf, ListOf, Optional, ParamsError, any_value, check

C = TypeVar("C", bound="ParamsConfig")

#: top-level block name -> its config class (filled by :func:`register`)
CONFIGS: dict[str, type[ParamsConfig]] = {}


def knob(default: Any = MISSING, *, factory: Callable[[], Any] | None = None, rule: Any = None,
         doc: str = "") -> Any:
    """A config field: its default (or ``factory`` for a mutable one), an optional spec ``rule``
    that replaces the one its annotation gives, and a one-line ``doc`` (units in it)."""
    meta = {"rule": rule, "doc": doc}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _spec_of_type(hint: Any) -> Any:
    """The :mod:`passnet_common.spec` spec of a type annotation (see the module docstring)."""
    if hint is Any:
        return any_value
    if isinstance(hint, type) and issubclass(hint, ParamsConfig):
        return hint.spec()
    if hint in (int, float, bool, str):
        return hint
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Literal:
        return Choice(tuple(args))
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = _spec_of_type(rest[0]) if len(rest) == 1 else AnyOf(tuple(_spec_of_type(a) for a in rest))
        return Optional(inner) if len(rest) < len(args) else inner
    if origin is list:
        return ListOf(_spec_of_type(args[0]) if args else any_value)
    if origin is dict:
        return DictOf(_spec_of_type(args[1]) if args else any_value)
    raise TypeError(f"no params spec for annotation {hint!r}")


def _config_type(hint: Any) -> type[ParamsConfig] | None:
    """The ParamsConfig class inside ``hint`` (``Cfg`` or ``Cfg | None``), else None."""
    if isinstance(hint, type) and issubclass(hint, ParamsConfig):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(inner) == 1:
            return _config_type(inner[0])
    return None


def _list_item_config(hint: Any) -> type[ParamsConfig] | None:
    """The ParamsConfig class of ``list[Cfg]`` items, else None."""
    if typing.get_origin(hint) is list:
        args = typing.get_args(hint)
        return _config_type(args[0]) if args else None
    return None


class ParamsConfig:
    """Base of a typed params block (subclasses are frozen dataclasses)."""

    @classmethod
    def _hints(cls) -> dict[str, Any]:
        return typing.get_type_hints(cls)

    @classmethod
    def spec(cls) -> Block:
        """The :class:`~passnet_common.spec.Block` schema of this block, derived from the fields."""
        hints = cls._hints()
        out = {}
        for f in dataclasses.fields(cls):
            rule = f.metadata.get("rule")
            out[f.name] = rule if rule is not None else _spec_of_type(hints[f.name])
        return Block(out)

    @classmethod
    def from_params(cls: type[C], value: dict | None, path: str) -> C:
        """Validate ``value`` (a params mapping, None = all defaults) and return the config with
        every missing key at its default.

        Raises:
            ParamsError: an unknown key or a value of the wrong type, named by its ``path``.
        """
        value = {} if value is None else value
        check(value, cls.spec(), path)
        hints = cls._hints()
        kwargs = {}
        for key, raw in value.items():
            sub = _config_type(hints[key])
            item = _list_item_config(hints[key])
            if sub is not None and raw is not None:
                raw = sub.from_params(raw, f"{path}.{key}")
            elif item is not None and raw is not None:
                raw = [item.from_params(v, f"{path}.{key}[{i}]") for i, v in enumerate(raw)]
            kwargs[key] = raw
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in kwargs and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise ParamsError(f"{path}: missing required key(s) {missing}")
        return cls(**kwargs)

    def to_params(self) -> dict[str, Any]:
        """The block as a plain mapping (nested configs as mappings): what ``params.yaml`` would hold."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, ParamsConfig):
                v = v.to_params()
            elif isinstance(v, list):
                v = [x.to_params() if isinstance(x, ParamsConfig) else x for x in v]
            out[f.name] = v
        return out

    def replace(self: C, **changes: Any) -> C:
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def docs(cls, prefix: str = "") -> list[tuple[str, Any, str]]:
        """``(key path, default, doc)`` for every knob, nested blocks flattened (for docs pages)."""
        rows = []
        hints = cls._hints()
        for f in dataclasses.fields(cls):
            name = f"{prefix}{f.name}"
            sub = _config_type(hints[f.name])
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            if sub is not None and isinstance(default, ParamsConfig):
                rows.extend(sub.docs(name + "."))
            else:
                rows.append((name, default, f.metadata.get("doc", "")))
        return rows


def register(name: str, cls: type[ParamsConfig]) -> None:
    """Register config class ``cls`` as top-level params block ``name`` (its derived schema goes
    to :data:`passnet_common.params.BLOCKS`, which ``load_params`` validates)."""
    CONFIGS[name] = cls
    register_block(name, cls.spec())


__all__ = ["BLOCKS", "CONFIGS", "ParamsConfig", "ParamsError", "knob", "register"]
