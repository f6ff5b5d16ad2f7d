"""Integrity defenses for scoring candidates (after PassNet's pass_bench and the exploits catalogued
against KernelBench-style harnesses): the static check and the slot checks the parent runs.

The defense is the process boundary (:mod:`curate.score.boundary.parent`): the candidate runs in a
sandbox that holds no reference, expected output, check, tolerance code or deciding clock. What
is here:

1. **Static** (:func:`check_source`), a speed bump before anything runs: the candidate's source
   is parsed (never imported) and refused, with the line of each finding, for imports of the
   evaluator and of every route to frames, modules, threads, processes, files, raw memory
   (:data:`FORBIDDEN_MODULES`, top-level private modules such as ``_pickle``, and another module's
   private alias of one: ``from collections import _sys``); any *reference* to ``exec`` / ``eval`` / ``compile`` /
   ``__import__`` / ``globals`` / ``vars``... (:data:`FORBIDDEN_NAMES`: ``_e = exec`` is refused as
   well as ``exec(...)``); ``getattr`` / ``setattr`` / ``delattr`` / ``hasattr`` except as a direct
   call with a literal, allowed attribute name; frame, traceback, closure and object-internals
   attributes, timers, streams, RNG state, thread counts, raw storage (:data:`FORBIDDEN_ATTRS`); a forbidden
   module name as an attribute of any object (``torch.os``, ``torch.sys``: :data:`MODULE_ATTRS`);
   ``operator.attrgetter`` / ``methodcaller`` except as a direct call with literal, allowed names
   (:data:`LITERAL_GETTERS`); assignments to attributes of ``torch`` / ``time`` / ``F`` / ...
   (monkey-patching).
2. **Slot checks** used by :mod:`curate.score.defenses.checks` on the parent's copies of the inputs and
   outputs: inputs unchanged after the call (:func:`inputs_unchanged`), outputs not aliasing
   inputs or an earlier call's outputs (:func:`aliased_outputs`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Iterable

import torch
from torch.utils._pytree import tree_flatten

FORBIDDEN_MODULES = (
    "curate", "passnet_common", "sandbox", "boundary", "__main__", "time", "timeit", "threading", "_thread",
    "multiprocessing", "subprocess", "concurrent", "asyncio", "socket", "urllib", "requests", "http", "httpx",
    "pathlib", "shutil", "pickle", "importlib", "ctypes", "cffi", "sys", "os", "posix", "inspect", "gc",
    "traceback", "builtins", "signal", "resource", "io", "tempfile", "weakref", "code", "codeop", "runpy",
    "faulthandler", "atexit", "types", "mmap", "pydoc", "pkgutil", "zipimport", "marshal",
    "psutil", "select", "selectors", "fcntl", "pty", "termios", "glob", "fsspec", "filelock", "zipfile", "tarfile",
    "shelve", "dbm", "sqlite3", "_posixsubprocess", "_multiprocessing", "_posixshmem", "_signal", "_socket",
)
"""Top-level module names a candidate may not import (any submodule included): the evaluator's
packages and the sandbox script, timers, threads and processes, files and network, and every
route to frames, loaded modules or raw memory."""

FORBIDDEN_NAMES = ("open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint", "input",
                   "memoryview", "__builtins__", "__loader__", "__spec__", "__build_class__")
"""Builtins a candidate may not *reference* at all: calling them, binding them to another name
(``_e = exec``), passing them or storing them are all refused."""

LITERAL_ONLY = ("getattr", "setattr", "delattr", "hasattr")
"""Builtins allowed only as a direct call with a string-literal attribute name that is not
itself forbidden (``getattr(mod, "PATTERNS", None)``); any other reference is refused."""

FORBIDDEN_ATTRS = ("perf_counter", "perf_counter_ns", "monotonic", "process_time", "thread_time", "Stream", "stream",
                   "Event", "synchronize", "set_stream", "Thread", "fork", "manual_seed", "set_rng_state",
                   "set_num_threads", "set_num_interop_threads",
                   "__dict__", "__globals__", "__code__", "__class__", "__subclasses__", "__builtins__", "__bases__",
                   "__mro__", "__closure__", "__self__", "__func__", "__wrapped__", "__loader__", "__spec__", "__import__",
                   "f_back", "f_locals", "f_globals", "f_code", "f_builtins", "f_trace", "f_lasti", "gi_frame", "gi_code",
                   "cr_frame", "cr_code", "ag_frame", "tb_frame", "tb_next", "__traceback__", "_getframe",
                   "sys", "modules", "meta_path", "__setattr__", "__getattribute__", "__delattr__", "__getattr__",
                   "_ORIGINAL_TIMERS", "get_field", "_import_dotted_name", "import_module", "attrgetter", "methodcaller",
                   "untyped_storage", "storage", "typed_storage", "_typed_storage", "_untyped_storage", "set_",
                   "from_file", "UntypedStorage", "TypedStorage",
                   "setprofile", "settrace", "_current_frames", "setswitchinterval", "stride_tricks",
                   "__array_interface__", "__array_struct__", "frombuffer", "_fork", "forkpty")
"""Attribute names a candidate may not touch (timers, streams, RNG state and thread counts;
frames, tracebacks, closures and object internals: every route to the evaluator's objects; ``sys``
and ``modules`` because ``torch.sys.modules[...]`` reaches every loaded module; a tensor's raw
storage and the tensor re-pointed at a storage (``untyped_storage``, ``set_``, ``from_file``):
the memory beside a tensor's own view, where the boundary's slots are; numpy's ``stride_tricks``,
``__array_interface__`` and ``frombuffer``, which view any address); profile and trace hooks
(``setprofile``, ``settrace``: a hook sees the sandbox loop's own calls, its output slots among
them) and ``_fork`` / ``forkpty``."""

MODULE_ATTRS = tuple(m for m in FORBIDDEN_MODULES if m not in ("code", "io", "types", "time", "select"))
"""Forbidden module names refused also as an *attribute* of any object: ``torch.os``,
``torch.sys``, ``np.ctypes`` reach the module that cannot be imported, and so do the same names as
a part of an imported module's dotted name (``import torch.multiprocessing``) or as a name imported
from any module (``from torch.serialization import os``, checked against every
:data:`FORBIDDEN_MODULES` name). (``code``, ``io``, ``types``, ``time`` and ``select`` (``Tensor.select``)
are common attribute names of honest objects; the routes through them are refused by
:data:`FORBIDDEN_ATTRS`.)"""

LITERAL_GETTERS = ("attrgetter", "methodcaller")
"""``operator`` helpers that fetch attributes by string: allowed only as a direct call whose
arguments are string literals naming allowed attributes (each dotted part)."""

PATCHABLE_ROOTS = ("torch", "time", "F", "nn", "operator", "math")
"""Names whose attributes a candidate may not assign to (monkey-patching)."""


@dataclass(frozen=True)
class Violation:
    """One static finding: ``line`` (1-based), ``rule`` (import | name | call | attribute | patch
    | syntax), ``detail``."""

    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.detail}"


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_attr_call(node: ast.Call) -> bool:
    """``getattr(x, "name"...)``-style call with a literal, allowed attribute name."""
    if len(node.args) < 2 or node.keywords:
        return False
    name = node.args[1]
    return isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value not in FORBIDDEN_ATTRS \
        and name.value not in MODULE_ATTRS and not name.value.startswith("__")


def _literal_getter_call(node: ast.Call) -> bool:
    """``attrgetter("a.b")`` / ``methodcaller("name", ...)``: string literals naming allowed attributes
    (``methodcaller``'s later arguments are the call's, any value)."""
    names = node.args if _callee(node) == "attrgetter" else node.args[:1]
    if not names or node.keywords and _callee(node) == "attrgetter":
        return False
    for a in names:
        if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
            return False
        for part in a.value.split("."):
            if part in FORBIDDEN_ATTRS or part in MODULE_ATTRS or part.startswith("__") or part in FORBIDDEN_NAMES:
                return False
    return True


def _callee(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def check_source(source: str, filename: str = "<candidate>") -> list[Violation]:
    """Static check of a candidate's Python source; returns violations (empty = allowed).

    A speed bump, not the defense: the candidate runs in a sandbox process that holds nothing of
    the evaluator (:mod:`curate.score.boundary.parent`). The source is parsed with :mod:`ast`, never
    executed, and refused for: imports of :data:`FORBIDDEN_MODULES` (and relative imports); any
    *reference* to a name of :data:`FORBIDDEN_NAMES` (a call, an alias such as ``_e = exec``, an
    argument); :data:`LITERAL_ONLY` builtins other than as a direct call with a literal, allowed
    attribute name; attributes of :data:`FORBIDDEN_ATTRS` (loads, stores, deletes);
    assignments to attributes of :data:`PATCHABLE_ROOTS`. A syntax error is one violation.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, "syntax", str(exc.msg))]
    out: list[Violation] = []

    def bad_module(name: str | None) -> bool:
        parts = (name or "").split(".")
        return bool(name) and (parts[0] in FORBIDDEN_MODULES or parts[0].startswith("_")
                               or any(p in MODULE_ATTRS for p in parts[1:]))

    allowed_funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id in LITERAL_ONLY and _literal_attr_call(n)}
    allowed_getters = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) in LITERAL_GETTERS
                       and _literal_getter_call(n)}
    for n in ast.walk(tree):  # setattr(torch, "isnan", f): a patch even with a literal name
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") and n.args:
            if _root(n.args[0]) in PATCHABLE_ROOTS:
                out.append(Violation(n.lineno, "patch", f"{n.func.id} on {ast.unparse(n.args[0])}"))
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
            else:
                for a in node.names:
                    if a.name in FORBIDDEN_NAMES or a.name in LITERAL_ONLY or a.name in FORBIDDEN_ATTRS:
                        out.append(Violation(node.lineno, "name", f"from {node.module} import {a.name}"))
                    elif a.name in FORBIDDEN_MODULES:  # another module's reference to it: ``from torch.serialization import os``
                        out.append(Violation(node.lineno, "import", f"from {node.module} import {a.name} (a forbidden module)"))
                    elif a.name.startswith("_") and a.name.lstrip("_").split("_")[0] in FORBIDDEN_MODULES + ("pickle", "io"):
                        # a module's private alias of a forbidden one: ``from collections import _sys``, ``from random import _os``
                        out.append(Violation(node.lineno, "import", f"from {node.module} import {a.name} (a forbidden module's alias)"))
        elif isinstance(node, ast.Name):
            if node.id in LITERAL_GETTERS:
                if id(node) not in allowed_getters:
                    out.append(Violation(node.lineno, "name", f"{node.id} (only as {node.id}(\"literal.name\") of allowed names)"))
            elif node.id in FORBIDDEN_NAMES:
                out.append(Violation(node.lineno, "name", node.id))
            elif node.id in LITERAL_ONLY and id(node) not in allowed_funcs:
                out.append(Violation(node.lineno, "name", f"{node.id} (only as {node.id}(obj, \"literal name\"))"))
        elif isinstance(node, ast.Attribute):
            if node.attr in LITERAL_GETTERS:
                if id(node) not in allowed_getters:
                    out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (only as "
                                         f"{node.attr}(\"literal.name\") of allowed names)"))
            elif node.attr in FORBIDDEN_ATTRS:
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr}"))
            elif node.attr in MODULE_ATTRS:
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (a forbidden module)"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in FORBIDDEN_NAMES + LITERAL_ONLY:
            out.append(Violation(node.lineno, "name", f"definition of {node.name}"))
        elif isinstance(node, ast.arg) and node.arg in FORBIDDEN_NAMES + LITERAL_ONLY:
            out.append(Violation(node.lineno, "name", f"argument named {node.arg}"))
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


def _leaves(x: Any) -> list[torch.Tensor]:
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
