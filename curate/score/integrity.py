"""Integrity defenses for scoring candidates (DESIGN.md §4 "Integrity"), in layers.

1. **Static** (:func:`check_source`): the candidate's source is parsed (never imported) and
   rejected, with the line of each violation, if it imports or calls what an honest compiler
   pass or backend never needs: the reference / eager results and our scoring code
   (``curate``, ``passnet_common``), timers (``time``, ``timeit``, ``perf_counter``...), threads
   and processes (``threading``, ``multiprocessing``, ``subprocess``, ``concurrent``,
   ``asyncio``, ``os.fork``), device streams (``torch.cuda.Stream``, ``torch.cuda.stream``),
   file and network access (``open``, ``socket``, ``urllib``, ``requests``, ``http``,
   ``pathlib``, ``shutil``, ``pickle``), dynamic code (``exec``, ``eval``, ``compile``,
   ``__import__``, ``importlib``, ``ctypes``, ``sys``, ``os``, ``inspect``, ``gc``), and
   assignments to attributes of ``torch`` / ``time`` (monkey-patching), or ``setattr`` on them.
2. **Runtime** (used by :mod:`curate.score.evaluate` inside an isolated child with a timeout and an
   address-space cap): inputs must be unmodified after the call (:func:`inputs_unchanged`);
   outputs must not alias inputs or the outputs of an earlier call
   (:func:`aliased_outputs`: a candidate returning cached tensors); outputs are re-checked on
   fresh inputs drawn with a new seed (cached or input-independent outputs fail there); the
   timer functions are compared with the originals captured before the candidate was imported
   (:func:`timers_intact`; a candidate that reaches this module can patch both, so the figures
   scored come from the parent process's clock, :mod:`curate.score.clock`); speedups above ``retime_above`` are re-timed in a fresh process;
   reference outputs that are constant or near zero are flagged (:func:`curate.tolerance.trivial_reason`).
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass
from typing import Any, Iterable

import torch

FORBIDDEN_MODULES = (
    "curate", "passnet_common", "time", "timeit", "threading", "_thread", "multiprocessing", "subprocess",
    "concurrent", "asyncio", "socket", "urllib", "requests", "http", "httpx", "pathlib", "shutil", "pickle",
    "importlib", "ctypes", "sys", "os", "inspect", "gc", "builtins", "signal", "resource", "io", "tempfile",
)
"""Top-level module names a candidate may not import (any submodule included)."""

FORBIDDEN_CALLS = ("open", "exec", "eval", "compile", "__import__", "setattr", "delattr", "globals", "vars",
                   "getattr", "breakpoint", "input")
"""Builtins a candidate may not call."""

FORBIDDEN_ATTRS = ("perf_counter", "perf_counter_ns", "monotonic", "process_time", "Stream", "stream",
                   "Event", "synchronize", "set_stream", "Thread", "fork", "manual_seed", "set_rng_state",
                   "__dict__", "__globals__", "__code__", "__class__", "__subclasses__", "__builtins__",
                   "f_back", "f_locals", "f_globals", "gi_frame", "sys", "modules", "__setattr__", "__getattribute__",
                   "__delattr__", "_ORIGINAL_TIMERS")
"""Attribute names a candidate may not touch (timers, streams, RNG state, introspection; ``sys`` and
``modules`` because ``torch.sys.modules[...]`` reaches every loaded module, the evaluator's too)."""

PATCHABLE_ROOTS = ("torch", "time", "F", "nn", "operator", "math")
"""Names whose attributes a candidate may not assign to (monkey-patching)."""


@dataclass(frozen=True)
class Violation:
    """One static finding: ``line`` (1-based), ``rule`` (import | call | attribute | patch | syntax), ``detail``."""

    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.detail}"


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def check_source(source: str, filename: str = "<candidate>") -> list[Violation]:
    """Static check of a candidate's Python source; returns violations (empty = allowed).

    The source is parsed with :mod:`ast`, never executed. A syntax error is one violation.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, "syntax", str(exc.msg))]
    out: list[Violation] = []

    def bad_module(name: str | None) -> bool:
        return bool(name) and name.split(".")[0] in FORBIDDEN_MODULES

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if bad_module(a.name):
                    out.append(Violation(node.lineno, "import", a.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level and node.level > 0:
                out.append(Violation(node.lineno, "import", "relative import (reaches the evaluator's package)"))
            elif bad_module(node.module):
                out.append(Violation(node.lineno, "import", node.module))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in FORBIDDEN_CALLS:
                out.append(Violation(node.lineno, "call", f.id))
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRS:
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__loader__", "__spec__"):
            out.append(Violation(node.lineno, "attribute", node.id))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for tgt in targets:
                for sub in ast.walk(tgt):
                    if isinstance(sub, ast.Attribute) and _root(sub) in PATCHABLE_ROOTS:
                        out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(sub)}"))
                    elif isinstance(sub, ast.Subscript) and _root(sub.value) in PATCHABLE_ROOTS:
                        out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(sub)}"))
    out.sort(key=lambda v: (v.line, v.rule, v.detail))
    return out


# --- runtime ------------------------------------------------------------------------------

_ORIGINAL_TIMERS = {name: getattr(time, name) for name in ("perf_counter", "perf_counter_ns", "monotonic", "time", "process_time")}


def timers_intact() -> list[str]:
    """Names of :mod:`time` functions that are no longer the originals captured at import of this
    module (which the evaluator imports before any candidate). Empty = intact."""
    return [n for n, f in _ORIGINAL_TIMERS.items() if getattr(time, n) is not f]


def original_perf_counter():
    """The ``time.perf_counter`` captured before any candidate was imported (the timer we use)."""
    return _ORIGINAL_TIMERS["perf_counter"]


def _leaves(x: Any) -> list[torch.Tensor]:
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(x)[0] if isinstance(t, torch.Tensor)]


def snapshot(inputs: Iterable[Any]) -> list[Any]:
    """Deep copies of the tensor inputs, to check later with :func:`inputs_unchanged`."""
    return [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in inputs]


def inputs_unchanged(inputs: Iterable[Any], before: list[Any]) -> list[int]:
    """Indices of inputs whose values, shape or dtype changed since ``before`` (NaN == NaN)."""
    bad = []
    for i, (now, then) in enumerate(zip(inputs, before)):
        if isinstance(now, torch.Tensor):
            if now.shape != then.shape or now.dtype != then.dtype or not torch.equal(
                torch.nan_to_num(now.detach(), nan=0.0) if now.is_floating_point() else now.detach(),
                torch.nan_to_num(then, nan=0.0) if then.is_floating_point() else then,
            ):
                bad.append(i)
    return bad


def _storage_ptr(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr() if t.numel() else None
    except Exception:  # noqa: BLE001 - tensors without storage (sparse, functional) cannot alias
        return None


def aliased_outputs(outputs: Any, inputs: Iterable[Any], earlier_outputs: Any = None) -> list[str]:
    """Outputs sharing storage with an input or with an output of an earlier call.

    Returns descriptions such as ``"output 0 aliases input 2"`` / ``"output 1 aliases an earlier
    call's output 1"`` (a candidate returning cached tensors). A reference may itself return views
    of its inputs; :mod:`curate.score.evaluate` only reports aliases the reference does not have.
    """
    found = []
    in_ptrs = {_storage_ptr(t): i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)}
    in_ptrs.pop(None, None)
    early = {}
    if earlier_outputs is not None:
        early = {_storage_ptr(t): i for i, t in enumerate(_leaves(earlier_outputs))}
        early.pop(None, None)
    for j, t in enumerate(_leaves(outputs)):
        p = _storage_ptr(t)
        if p is None:
            continue
        if p in in_ptrs:
            found.append(f"output {j} aliases input {in_ptrs[p]}")
        if p in early:
            found.append(f"output {j} aliases an earlier call's output {early[p]}")
    return found
