"""Which config attributes a model reads: a recorder on the config object.

    with recorded_reads(config) as reads:
        model = Model(config); model(**inputs)
    reads  ->  {"eos_token_id", "hidden_size", "text_config.vocab_size", ...}

The config instance's class is swapped for a subclass whose ``__getattribute__`` records every
public attribute name looked up on it (sub-configs returned by it are recorded too, under
``<name>.``); the class is restored on exit, the object is otherwise untouched. It records
what ``__init__`` and ``forward`` actually look up, in the process that builds the model, so
it is the ground truth the config dedupe key (:func:`extract.sources.hub_configs.model_reads`,
a static scan of the modeling code) is checked against: every key the key ignores must be one
no model of that type reads.
"""

from __future__ import annotations

from contextlib import contextmanager


def _recording_class(cls, reads: set, prefix: str, swapped: list):
    def __getattribute__(self, name):
        value = cls.__getattribute__(self, name)
        if not name.startswith("_"):
            reads.add(prefix + name)
            if _is_config(value) and type(value).__name__ != "_Recording":
                _swap(value, reads, f"{prefix}{name}.", swapped)
        return value

    return type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__module__": cls.__module__,
                                       "_Recording": True})


def _is_config(obj) -> bool:
    try:
        from transformers import PretrainedConfig
    except ImportError:  # pragma: no cover - transformers is a dependency of the capture
        return False
    return isinstance(obj, PretrainedConfig)


def _swap(config, reads: set, prefix: str, swapped: list) -> None:
    if getattr(type(config), "_Recording", False):
        return
    cls = type(config)
    swapped.append((config, cls))
    object.__setattr__(config, "__class__", _recording_class(cls, reads, prefix, swapped))


@contextmanager
def recorded_reads(config):
    """Record the public attributes looked up on ``config`` (a ``transformers.PretrainedConfig``)
    and its sub-configs while the block runs; yields the set (names, sub-config ones dotted).

    Raises:
        TypeError: ``config`` is not a ``PretrainedConfig``.
    """
    if not _is_config(config):
        raise TypeError(f"recorded_reads: expected a transformers PretrainedConfig, got {type(config).__name__}")
    reads: set = set()
    swapped: list = []
    _swap(config, reads, "", swapped)
    try:
        yield reads
    finally:
        for obj, cls in reversed(swapped):
            object.__setattr__(obj, "__class__", cls)
