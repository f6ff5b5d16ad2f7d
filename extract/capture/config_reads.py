"""Which config attributes a model reads: a recorder on the config object, and the key built from it.

    rec = Recorder()
    rec.track(config)
    with rec.active():
        model = Model(config); model(**inputs)
    rec.reads  ->  {"eos_token_id", "hidden_size", "text_config.vocab_size", "dtype", ...}

While a :class:`Recorder` is active, every tracked config instance's class is swapped for a
subclass whose ``__getattribute__`` records each attribute name looked up on it (before the
lookup, so ``hasattr(config, "x")`` of an absent ``x`` is a read too); sub-configs returned by it
are tracked under ``<name>.``, deep copies of a tracked config are tracked like it, and a read
of the whole object (``to_dict``, ``to_diff_dict``, ``to_json_string``, ``__dict__``) is
recorded as ``<prefix>*``. Outside ``active()`` the objects have their own classes again, so
the TorchDynamo trace between two recording windows sees the model untouched. What
``transformers.generation`` reads (the generation config built in ``PreTrainedModel.__init__``
from the model config) is not recorded: it is used by ``generate()``, never by ``forward``.

The capture (:func:`extract.runs.scheduler.capture_task`) records what building the model, its
inputs, and the op account's eager run of ``forward`` read (:mod:`extract.capture.completeness`;
the same Python code the traced run executes), and writes it beside the result. The config
dedupe of the capture stage (:mod:`extract.runs.reads_dedupe`) then keys other configs of the
same architecture by :func:`reads_key`: two configs that agree on every attribute a capture read
run that capture's code path exactly, so they give the same graphs.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import json
import sys
from contextlib import contextmanager

from extract.sources.rows import PROVENANCE  # provenance strings: not part of a key even when read

# Methods that hand out the whole config at once: a call records ``<prefix>*``.
WHOLE_OBJECT = frozenset({"to_dict", "to_diff_dict", "to_json_string", "__dict__"})

_CURRENT: list["Recorder"] = []


_CONFIG_CLASS: list[type] = []


def _is_config(obj) -> bool:
    if not _CONFIG_CLASS:
        try:
            from transformers import PretrainedConfig  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
        except ImportError:  # pragma: no cover - transformers is a dependency of the capture
            return False
        _CONFIG_CLASS.append(PretrainedConfig)
    return isinstance(obj, _CONFIG_CLASS[0])


def _from_generation_code() -> bool:
    """True when the attribute lookup comes from ``transformers.generation`` (2-3 frames up)."""
    f = sys._getframe(2)
    for _ in range(3):
        if f is None:
            return False
        if str(f.f_globals.get("__name__", "")).startswith("transformers.generation"):
            return True
        f = f.f_back
    return False


class Recorder:
    """The config attributes read while :meth:`active`; ``reads`` is a set of dotted names
    (``"text_config.eos_token_id"``; ``"*"`` / ``"vision_config.*"``: the whole (sub-)config)."""

    def __init__(self):
        self.reads: set[str] = set()
        self.forward_runs = 0  # eager runs of forward recorded in full (the op account's, extract/capture/dynamo.py)
        self._tracked: dict[int, tuple[object, type, str]] = {}  # id -> (config, own class, prefix)
        self._classes: dict[tuple[type, str], type] = {}
        self._on = False

    def track(self, config, prefix: str = "") -> None:
        """Record the reads of ``config`` (a ``PretrainedConfig``) under ``prefix`` from now on
        (immediately when active).

        Raises:
            TypeError: ``config`` is not a ``PretrainedConfig``.
        """
        if not _is_config(config):
            raise TypeError(f"config_reads: expected a transformers PretrainedConfig, got {type(config).__name__}")
        if id(config) in self._tracked:
            return
        cls = type(config)
        if getattr(cls, "_passnet_recording", False):  # a copy made while active: keep its own class
            cls = cls.__mro__[1]
        self._tracked[id(config)] = (config, cls, prefix)
        if self._on:
            object.__setattr__(config, "__class__", self._recording_class(cls, prefix))

    def _recording_class(self, cls: type, prefix: str) -> type:
        key = (cls, prefix)
        if key in self._classes:
            return self._classes[key]
        rec = self

        def __getattribute__(obj, name):
            if name == "__class__":
                return cls
            if not (name.startswith("__") and name.endswith("__")) or name == "__dict__":
                if rec._on and not _from_generation_code():
                    rec.reads.add(prefix + ("*" if name in WHOLE_OBJECT else name))
            value = cls.__getattribute__(obj, name)
            if rec._on and _is_config(value) and id(value) not in rec._tracked and not name.startswith("__"):
                rec.track(value, f"{prefix}{name}.")
            return value

        def __deepcopy__(obj, memo):
            object.__setattr__(obj, "__class__", cls)
            try:
                new = copy.deepcopy(obj, memo)
            finally:
                object.__setattr__(obj, "__class__", rec._classes[key])
            rec.track(new, prefix)
            return new

        sub = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__deepcopy__": __deepcopy__,
                                          "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                          "_passnet_recording": True})
        self._classes[key] = sub
        return sub

    @contextmanager
    def active(self):
        """Swap every tracked config to its recording class for the block; restore after.
        Re-entrant (an inner ``active()`` of an active recorder does nothing)."""
        if self._on:
            yield self
            return
        self._on = True
        for obj, cls, prefix in list(self._tracked.values()):
            object.__setattr__(obj, "__class__", self._recording_class(cls, prefix))
        try:
            yield self
        finally:
            self._on = False
            for obj, cls, _ in self._tracked.values():
                object.__setattr__(obj, "__class__", cls)


@contextmanager
def recording(recorder: "Recorder | None" = None):
    """Make ``recorder`` (a new one by default) the current recorder of this process for the
    block (what :func:`track` and :func:`active` use); yields it."""
    rec = recorder or Recorder()
    _CURRENT.append(rec)
    try:
        yield rec
    finally:
        _CURRENT.remove(rec)


def track(config) -> None:
    """Track ``config`` in the current recorder; nothing when none is current or ``config`` is
    not a ``PretrainedConfig``."""
    if _CURRENT and _is_config(config):
        _CURRENT[-1].track(config)


@contextmanager
def active():
    """The current recorder's :meth:`Recorder.active` window; a no-op block when none is current."""
    if not _CURRENT:
        yield None
        return
    with _CURRENT[-1].active() as rec:
        yield rec


@contextmanager
def recorded_reads(config):
    """Record the attributes looked up on ``config`` (a ``transformers.PretrainedConfig``) and
    its sub-configs while the block runs; yields the set of names (sub-config ones dotted).

    Raises:
        TypeError: ``config`` is not a ``PretrainedConfig``.
    """
    rec = Recorder()
    rec.track(config)
    with rec.active():
        yield rec.reads


# --- the key --------------------------------------------------------------------------------


class _Absent:
    pass


def _resolve(config, path: str):
    obj = config
    for part in path.split("."):
        if part == "*":
            d = obj.to_dict() if _is_config(obj) else obj
            return {k: v for k, v in d.items() if k not in PROVENANCE} if isinstance(d, dict) else d
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return _Absent
        except Exception as exc:  # noqa: BLE001 - a property that raises is a value of its own
            return f"<raises {type(exc).__name__}>"
    return obj


def _encode(value):
    if value is _Absent:
        return "<absent>"
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    if _is_config(value):
        return f"<config {type(value).__mro__[1 if getattr(type(value), '_passnet_recording', False) else 0].__name__}>"
    if callable(value):
        return f"<callable {getattr(value, '__qualname__', type(value).__name__)}>"
    if type(value).__module__ == "torch" or isinstance(value, enum.Enum):  # torch.dtype, torch.device, an enum
        return str(value)
    to_dict = getattr(value, "to_dict", None)  # a quantization / generation config object: its fields
    if callable(to_dict):
        try:
            return to_dict()
        except Exception:  # noqa: BLE001 - then by its class
            pass
    # any other object (a view of the config itself, a cache) by its class: what it holds is
    # read from the config through it, and those reads are recorded by their own names
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def reads_key(config, reads) -> str:
    """sha256 hex of the values ``config`` (a built ``PretrainedConfig``) holds at the attribute
    paths ``reads`` (what one capture read, :class:`Recorder`), :data:`PROVENANCE` left out. Two
    configs with equal keys under one capture's reads agree on everything that capture read.
    An absent attribute and a property that raises have values of their own; a ``*`` path is the
    (sub-)config's ``to_dict()``; a sub-config itself enters by its class, its fields by their
    own paths; a method by its name."""
    values = {}
    for path in sorted(set(reads)):
        if path.rsplit(".", 1)[-1] in PROVENANCE:
            continue
        values[path] = _resolve(config, path)
    blob = json.dumps(values, sort_keys=True, default=_encode, allow_nan=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()
