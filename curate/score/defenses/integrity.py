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
   (monkey-patching), and to attributes of any name bound to a module (``cfg.cpp.threads = 2`` after
   ``import torch._inductor.config as cfg``); string annotations (``typing.get_type_hints`` evals
   them), and every entry point of an allowed module that evaluates a string
   (:data:`STRING_EVAL_ATTRS`; sympy and dataclasses are not allowed: :data:`STRING_EVAL_MODULES`).
   Every deserialisation and code-loading entry point: an import of a module
   outside :data:`ALLOWED_MODULES` or under :data:`DENIED_MODULES`; every attribute chain rooted at
   an imported name (or a name assigned from one) **resolved against the real modules** at check
   time (:func:`resolve_chain`: static lookups, nothing of the candidate runs) whose object is a
   module outside those lists (``torch.serialization.io``, ``torch._dynamo.utils.os``) or a
   forbidden callable (:func:`bad_object`: ``builtins.exec`` under any name, anything defined in a
   denied module such as ``torch.load``, a loader by its name such as ``numpy.load``); any
   attribute or imported name that names a loader (:data:`LOADER_NAME`: ``load``, ``loads``,
   ``_load_from_bytes``, ``_forward_from_src``, ...) or a denied module (:data:`DENIED_ATTRS`);
   the keywords ``weights_only`` / ``allow_pickle`` (:data:`FORBIDDEN_KEYWORDS`); ``__reduce__`` /
   ``__reduce_ex__`` / ``__setstate__`` (:data:`REDUCE_HOOKS`), as attributes or definitions;
   star imports.
2. **Slot checks** used by :mod:`curate.score.defenses.checks` on the parent's copies of the inputs and
   outputs: inputs unchanged after the call (:func:`inputs_unchanged`), outputs not aliasing
   inputs or an earlier call's outputs (:func:`aliased_outputs`).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
import sys
import types
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
    "copyreg", "copy_reg", "pickletools", "dill", "cloudpickle", "joblib", "jsonpickle", "imp", "linecache",
    "logging", "codecs", "zipapp", "distutils", "setuptools", "site", "sysconfig", "platform", "ensurepip", "venv",
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

STRING_EVAL_ATTRS = ("get_type_hints", "ForwardRef", "_evaluate", "_eval_type", "evaluate_forward_ref", "_type_check",
                     "_type_convert", "get_annotations", "__forward_code__", "__forward_arg__", "__forward_value__",
                     "_create_fn", "_exec_body", "parse_expr", "sympify", "_sympify", "eval_expr", "stringify_expr",
                     "lambdify", "sympy", "singledispatch", "singledispatchmethod", "__annotations__", "__annotate__")
"""The part of :data:`FORBIDDEN_ATTRS` that names a string evaluator of an allowed module (or one a
torch module re-exports): ``typing.get_type_hints`` of a string annotation, ``typing.ForwardRef`` and
its ``_evaluate`` / ``__forward_code__`` (a code object a function type runs), ``dataclasses._create_fn``,
sympy's ``parse_expr`` / ``sympify`` / ``lambdify``: each evals with the real builtins. The type-hint
readers of allowed modules too (``functools.singledispatch`` / ``singledispatchmethod``: ``register``
reads a function's type hints, and evals a string inside a generic alias held by a module variable,
``T = list["..."]``, that no annotation of the source shows), and ``__annotations__`` /
``__annotate__`` (annotations set at run time, where the string-annotation rule does not look:
``torch.library.infer_schema`` / ``custom_op`` eval a string annotation, ``attack_annotations_schema.py``).
An annotation is judged by what its names hold too (:func:`_annotation_findings`). Together with
:data:`STRING_EVAL_MODULES` (refused as modules and as the ``__module__`` of a callable) and the
refusal of string annotations (``from __future__ import annotations`` or a string inside an
annotation) in :func:`check_source`."""

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
                   "__array_interface__", "__array_struct__", "frombuffer", "_fork", "forkpty",
                   "__reduce__", "__reduce_ex__", "__setstate__", "load_library", "PyCodeCache", "CppCodeCache",
                   "CppPythonBindingsCodeCache", "CppWrapperCodeCache", "AsyncCompile", "PackageImporter", "Unpickler",
                   "fromfile", "memmap", "tofile", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
                   "fetch_attr", "getattr_recursive", "_get_attr", "_get_attr_via_attr_list", "_get_submodule",
                   "EvalEnv", "_eval_no_call", "parse_type_line", "get_signature", "get_type_line",
                   "createResolutionCallbackFromEnv", "createResolutionCallbackFromFrame", "createResolutionCallbackFromClosure",
                   "createResolutionCallbackForClassMethods") \
    + STRING_EVAL_ATTRS
"""Attribute names a candidate may not touch (timers, streams, RNG state and thread counts;
frames, tracebacks, closures and object internals: every route to the evaluator's objects; ``sys``
and ``modules`` because ``torch.sys.modules[...]`` reaches every loaded module; a tensor's raw
storage and the tensor re-pointed at a storage (``untyped_storage``, ``set_``, ``from_file``):
the memory beside a tensor's own view, where the boundary's slots are; numpy's ``stride_tricks``,
``__array_interface__`` and ``frombuffer``, which view any address); profile and trace hooks
(``setprofile``, ``settrace``: a hook sees the sandbox loop's own calls, its output slots among
them) and ``_fork`` / ``forkpty``; the pickle hooks (:data:`REDUCE_HOOKS`), torch's library and
code-cache loaders (``load_library``, ``PyCodeCache``, ...), ``PackageImporter`` / ``Unpickler``,
and torch's and numpy's file readers and writers (``save``, ``tofile``, ``fromfile``, ``memmap``, ...:
a writer opens the reply pipe through ``/proc/self/fd``); torch's readers of an attribute path given
as a string (``fx.Interpreter.fetch_attr``, ``getattr_recursive``, ``_get_attr``: ``getattr`` over
``target.split(".")``, any attribute like a non-literal ``getattr``) and TorchScript's resolvers of
a name or a type comment (``torch.jit.annotations.EvalEnv(None)[name]`` is ``getattr(builtins,
name)``, ``_eval_no_call`` evals a string with the real builtins, the ``createResolutionCallback*``
helpers look a name up in a frame or the builtins: ``attack_jit_evalenv.py``); the entry points of
allowed modules that evaluate a string as code (:data:`STRING_EVAL_ATTRS`)."""

STRING_EVAL_MODULES = ("sympy", "mpmath", "dataclasses", "torch.utils._sympy")
"""Modules whose public API evaluates strings (``sympy.S("...")``, ``sympify``, ``parse_expr``;
``dataclasses._create_fn``): not allowed to a candidate, neither as an import nor as the object of
any chain, nor any callable defined in one (``torch.fx.experimental.symbolic_shapes.sympy``...)."""

MODULE_ATTRS = tuple(m for m in FORBIDDEN_MODULES if m not in ("code", "types", "time", "select"))
"""Forbidden module names refused also as an *attribute* of any object: ``torch.os``,
``torch.sys``, ``np.ctypes`` reach the module that cannot be imported, and so do the same names as
a part of an imported module's dotted name (``import torch.multiprocessing``) or as a name imported
from any module (``from torch.serialization import os``, checked against every
:data:`FORBIDDEN_MODULES` name). (``code``, ``types``, ``time`` and ``select`` (``Tensor.select``)
are common attribute names of honest objects; the routes through them are refused by
:data:`FORBIDDEN_ATTRS`, and a chain that resolves to one of those modules by :func:`bad_object`.)"""

LITERAL_GETTERS = ("attrgetter", "methodcaller")
"""``operator`` helpers that fetch attributes by string: allowed only as a direct call whose
arguments are string literals naming allowed attributes (each dotted part)."""

PATCHABLE_ROOTS = ("torch", "time", "F", "nn", "operator", "math")
"""Names whose attributes a candidate may not assign to (monkey-patching)."""

ALLOWED_MODULES = ("torch", "numpy", "math", "cmath", "operator", "functools", "itertools", "collections", "typing",
                   "typing_extensions", "enum", "abc", "numbers", "random", "statistics", "copy", "re",
                   "warnings", "contextlib", "string", "heapq", "bisect", "fractions", "decimal", "datetime", "struct",
                   "array", "functorch", "triton", "einops", "opt_einsum", "__future__")
"""Top-level modules a candidate may import or reach as an attribute (an allow-list): torch and
numpy, and the standard library's arithmetic, containers and functional helpers. A module outside
it (``io``, ``pickle``, ``os``, ``copyreg``, ``marshal``, ``logging``, ...) is refused as an
import and as the object of any attribute chain (``torch.serialization.io``: :func:`bad_object`)."""

DENIED_MODULES = (
    "torch.serialization", "torch.hub", "torch.package", "torch.jit._serialization", "torch.utils.cpp_extension",
    "torch.utils.model_zoo", "torch.utils.data", "torch.utils.tensorboard", "torch.utils.benchmark",
    "torch.utils.collect_env", "torch.utils.hipify", "torch.utils.file_baton", "torch.utils.bottleneck",
    "torch.utils._import_utils", "torch.multiprocessing", "torch.distributed", "torch._utils", "torch.storage",
    "torch._weights_only_unpickler", "torch._inductor.codecache", "torch._inductor.async_compile",
    "torch._inductor.cpp_builder", "torch._inductor.runtime.compile_tasks", "torch._inductor.compile_worker",
    "torch._dynamo.repro", "torch._dynamo.debug_utils", "torch._export.serde", "torch.export.pt2_archive",
    "torch.testing", "torch.onnx", "torch._C._monitor", "torch.utils._sympy", "torch.jit.annotations", "torch.jit.frontend",
    "numpy.lib.format", "numpy.lib._format_impl", "numpy.lib.npyio", "numpy.lib._npyio_impl", "numpy.lib._datasource",
    "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing", "numpy._pytesttester", "numpy.lib._utils_impl",
)
"""Modules under an allowed top level that a candidate may neither import nor reach (and whose
functions and classes it may not reach: :func:`bad_object` by their ``__module__``): torch's and
numpy's deserialisers and code loaders (``torch.load``, ``torch.jit.load``, ``torch.hub``,
``torch.package``, ``np.load`` and ``np.lib.format`` with pickles, Inductor's code caches that
load generated source, native extension builders), their process and file machinery."""

DENIED_ATTRS = ("serialization", "hub", "cpp_extension", "model_zoo", "tensorboard", "collect_env", "hipify",
                "file_baton", "_import_utils", "_utils", "_weights_only_unpickler", "codecache", "async_compile",
                "cpp_builder", "compile_tasks", "compile_worker", "debug_utils", "serde", "pt2_archive", "npyio",
                "_npyio_impl", "_format_impl", "_datasource", "ctypeslib", "f2py", "distutils", "_utils_impl")
"""The distinctive names of :data:`DENIED_MODULES`, refused as an attribute of any object (the
route through an expression the check cannot resolve: ``(torch,)[0].serialization``)."""

LOADER_NAME = re.compile(r"(^|_)(loads?|reload|unpickle\w*|pickle|deseriali[sz]e\w*)(_|$)|import_ir_module|_from_src$"
                         r"|exec_with_source|exec_module|reduce_\w*graph_module", re.IGNORECASE)
"""Names of deserialisers and code loaders (``load``, ``loads``, ``_load_from_bytes``,
``_pickle_load_obj``, ``import_ir_module``, ``_load_for_lite_interpreter``, ``load_library``,
``_forward_from_src``, ``reduce_graph_module``...): refused as an attribute or an imported name,
and as the name of any callable an attribute chain resolves to. Names with ``state_dict`` in
them (``nn.Module.load_state_dict``: tensors only) are not loaders."""

FORBIDDEN_KEYWORDS = ("weights_only", "allow_pickle")
"""Keyword arguments that switch a loader to unpickling arbitrary objects; refused at any call."""

REDUCE_HOOKS = ("__reduce__", "__reduce_ex__", "__setstate__")
"""Pickle hooks a candidate may neither define nor reference (they run code when an object is
pickled or unpickled)."""

CODEGEN_HOOKS = ("__repr__", "__str__", "__format__", "extra_repr", "__annotations__", "__annotate__", "__match_args__",
                 "__instancecheck__", "__subclasshook__")
"""Methods a code generator writes into source it compiles (torch.fx writes ``repr(arg)`` of any
argument of a node it does not know into the ``forward`` it execs: an object whose ``__repr__`` is
``"__import__('os')..."`` runs that; an ``nn.Module``'s repr is its class name and its
``extra_repr``) and the annotations a type-hint reader evals: a candidate may neither define nor
reference them, nor name them in a string (``type(name, bases, dict)``). With them: a class named
like a builtin (``class tuple(nn.Module)``: its repr ``tuple(...)`` calls the builtin), ``type``
with three arguments (a class of any name) and stores to ``__name__`` / ``__qualname__``
(``attack_fx_slot_direct.py``). And the hooks of ``match`` class patterns: ``__match_args__`` names
the attributes a positional pattern reads, and ``__instancecheck__`` / ``__subclasshook__`` make
any object match a class (a keyword pattern is judged as the attribute it reads: :func:`check_source`)."""

_BUILTIN_NAMES = frozenset(dir(builtins))

FX_TARGET_CALLS = {"call_method": 0, "get_attr": 0, "call_module": 0, "placeholder": 0, "create_node": 1,
                   "create_proxy": 1}
"""torch.fx graph-building methods and the position of their *target* argument (also by keyword:
``target``, ``method_name``, ``qualified_name``, ``module_name``, ``name``). fx's code generator
writes a ``call_method`` / ``get_attr`` / ``call_module`` target unescaped into
``getattr(x, "<target>")`` and a placeholder's into the ``forward`` signature of the source it
compiles and runs, so a target holding ``")`` runs any expression with the real builtins
(``attack_fx_thread_split.py``). The target must be a string literal of dotted identifiers; for
``create_node`` / ``create_proxy``, whose op is the first argument, a literal ``call_function``
op takes any target (fx writes a callable's name through its own sanitising namer)."""

FX_TARGET_KEYWORDS = ("target", "method_name", "qualified_name", "module_name", "name")

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

RESOLVE_MODULES = ("torch", "numpy", "torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.config",
                   "torch.fx.subgraph_rewriter", "torch.utils._pytree")
"""Imported in this process before a chain is resolved: what the sandbox's zygote has imported
(:func:`curate.score.boundary.sandbox.zygote`), so that a chain resolves here to what it reaches there."""


@dataclass(frozen=True)
class Violation:
    """One static finding: ``line`` (1-based), ``rule`` (import | name | call | attribute | patch
    | annotation | syntax), ``detail``."""

    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.detail}"


_MISSING = object()
_FORBIDDEN_IDS: dict[int, str] = {}


def _ensure_resolvable() -> None:
    """Import :data:`RESOLVE_MODULES` (torch's own, trusted) once, and the identities of the
    builtins a candidate may not reach under any name."""
    if _FORBIDDEN_IDS:
        return
    for m in RESOLVE_MODULES:
        try:
            importlib.import_module(m)
        except Exception:  # noqa: BLE001 - a missing optional module: chains through it stay unresolved
            pass
    for n in FORBIDDEN_NAMES + LITERAL_ONLY + ("__import__",):
        v = vars(builtins).get(n)
        if v is not None:
            _FORBIDDEN_IDS[id(v)] = f"builtins.{n}"
    _FORBIDDEN_IDS[id(importlib.import_module)] = "importlib.import_module"


def module_allowed(name: str) -> bool:
    """Whether a candidate may import or reach module ``name``: its top level in
    :data:`ALLOWED_MODULES`, not under :data:`DENIED_MODULES`, and no part of it a forbidden
    module's name (``torch.multiprocessing``)."""
    parts = name.split(".")
    return parts[0] in ALLOWED_MODULES \
        and not any(name == d or name.startswith(d + ".") for d in DENIED_MODULES + STRING_EVAL_MODULES) \
        and not any(p in MODULE_ATTRS for p in parts[1:])


def _lookup(obj: Any, attr: str) -> Any:
    """``obj.attr`` without running anything: a module's own dict (else the loaded submodule of that
    name), else :func:`inspect.getattr_static` (no ``__getattr__``, no property, no descriptor call)."""
    if isinstance(obj, types.ModuleType):
        d = obj.__dict__
        if attr in d:
            return d[attr]
        return sys.modules.get(f"{obj.__name__}.{attr}", _MISSING)
    try:
        v = inspect.getattr_static(obj, attr)
    except Exception:  # noqa: BLE001 - not there, or an object whose type cannot be read statically
        return _MISSING
    return v.__func__ if isinstance(v, (staticmethod, classmethod)) else v


_CALLABLE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodDescriptorType,
                   types.WrapperDescriptorType, types.ClassMethodDescriptorType, type)


def bad_object(obj: Any) -> str | None:
    """Why a candidate may not reach ``obj`` (None: it may): a module outside the allowed ones
    (:func:`module_allowed`); a forbidden builtin under any name (``exec``, ``getattr``...); a
    function or class defined in a denied or forbidden module (``torch.load``: ``torch.serialization``;
    ``io.BytesIO``: ``_io``), or one whose name is a loader's (:data:`LOADER_NAME`: ``numpy.load``,
    whose ``__module__`` says ``numpy``)."""
    if obj is _MISSING:
        return None
    if isinstance(obj, types.ModuleType):
        return None if module_allowed(obj.__name__) else f"module {obj.__name__}"
    if id(obj) in _FORBIDDEN_IDS:
        return _FORBIDDEN_IDS[id(obj)]
    if not isinstance(obj, _CALLABLE_TYPES):
        return None
    mod = getattr(obj, "__module__", None)
    name = getattr(obj, "__name__", None)
    if isinstance(mod, str) and mod != "builtins":
        top = mod.split(".")[0]
        if any(mod == d or mod.startswith(d + ".") for d in DENIED_MODULES + STRING_EVAL_MODULES) \
                or top in FORBIDDEN_MODULES or top.lstrip("_") in FORBIDDEN_MODULES:
            return f"{mod}.{name}"
    if isinstance(name, str) and LOADER_NAME.search(name) and "state_dict" not in name:
        return f"{mod}.{name} (a loader)"
    return None


def resolve_chain(path: list[str], module: str | None = None) -> list[tuple[str, Any]]:
    """The objects of the dotted ``path`` (a module name, then attributes) as far as it resolves
    statically against the modules loaded here (:data:`RESOLVE_MODULES` imported first): a list of
    ``(dotted prefix, object)``, empty when the module is not loaded; it stops at the first name
    that does not resolve. ``module``: the module ``path`` starts with (an ``import a.b.c as x``
    binds the module ``a.b.c`` itself, which an attribute of ``a.b`` may shadow); else its first name."""
    _ensure_resolvable()
    out: list[tuple[str, Any]] = []
    head = module.count(".") + 1 if module else 1
    name = ".".join(path[:head])
    obj = sys.modules.get(name, _MISSING)
    if obj is _MISSING:
        return out
    out.append((name, obj))
    for k, a in enumerate(path[head:], head):
        obj = _lookup(obj, a)
        if obj is _MISSING:
            break
        out.append((".".join(path[:k + 1]), obj))
    return out


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` (or ``getattr(a.b, "c")`` with a literal name) as ``["a", "b", "c"]``; None for
    any other expression."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _chain(node.value)
        return None if head is None else head + [node.attr]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        head = _chain(node.args[0])
        return None if head is None else head + [node.args[1].value]
    return None


def _bindings(tree: ast.AST) -> dict[str, set[tuple[str, tuple[str, ...]]]]:
    """Names bound to ``(module, attributes)``: by imports (``import a.b`` binds ``a``; ``import a.b
    as x`` the module ``a.b``; ``from a import b as x`` ``a`` then ``b``) and by plain assignments of
    a chain rooted at a bound name (``s = torch.serialization``), to a fixed point; a name bound
    several ways keeps every binding."""
    out: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    assigns = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                mod = a.name if a.asname else a.name.split(".")[0]
                out.setdefault(a.asname or mod, set()).add((mod, ()))
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            for a in n.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, set()).add((n.module, (a.name,)))
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    assigns.append((t.id, n.value))
    for _ in range(8):
        grew = False
        for name, value in assigns:
            ch = _chain(value)
            if ch is None or ch[0] not in out:
                continue
            for mod, attrs in list(out[ch[0]]):
                b = (mod, attrs + tuple(ch[1:]))
                if b not in out.setdefault(name, set()):
                    out[name].add(b)
                    grew = True
        if not grew:
            break
    return out


def _resolved_findings(path: str, module: str | None = None) -> tuple[str, str] | None:
    """``(prefix, why)`` of the first object of the dotted ``path`` (starting with ``module``) a
    candidate may not reach."""
    for prefix, obj in resolve_chain(path.split("."), module):
        why = bad_object(obj)
        if why:
            return prefix, why
    return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_attr_call(node: ast.Call) -> bool:
    """``getattr(x, "name"...)``-style call with a literal, allowed attribute name."""
    if len(node.args) < 2 or node.keywords:
        return False
    name = node.args[1]
    return isinstance(name, ast.Constant) and isinstance(name.value, str) and _attr_allowed(name.value) \
        and not name.value.startswith("__")


def _attr_allowed(name: str) -> bool:
    """Whether an attribute name is allowed by name alone (:data:`FORBIDDEN_ATTRS`,
    :data:`MODULE_ATTRS`, :data:`DENIED_ATTRS`, :data:`LOADER_NAME`)."""
    return name not in FORBIDDEN_ATTRS and name not in MODULE_ATTRS and name not in DENIED_ATTRS \
        and not _module_alias(name) and not (LOADER_NAME.search(name) and "state_dict" not in name)


def _module_alias(name: str) -> bool:
    """A module's private alias of a forbidden one (``_os``, ``_sys``, ``__io``): refused as an
    attribute of any object, where an expression the check cannot resolve reaches it
    (``(random,)[0]._os``: ``attack_module_alias.py``), as ``from random import _os`` is."""
    return name.startswith("_") and name.lstrip("_") in MODULE_ATTRS


ANNOTATION_BUILTINS = ("int", "float", "bool", "str", "bytes", "complex", "list", "dict", "tuple", "set", "frozenset",
                       "object", "type", "slice", "range", "None", "Ellipsis")
"""Builtin names an annotation may use without a binding in the source."""


def _names_bound(tree: ast.AST) -> tuple[dict[str, list[ast.AST | None]], set[str]]:
    """``(name -> the values of its plain assignments (None for any other binding: an argument, a
    loop or ``with`` target, a function), names of imports and classes)``."""
    values: dict[str, list[ast.AST | None]] = {}
    safe: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            safe |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ClassDef):
            safe.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                for x in ast.walk(t):
                    if isinstance(x, ast.Name):
                        values.setdefault(x.id, []).append(n.value if isinstance(t, ast.Name) else None)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            values.setdefault(n.id, [])
        elif isinstance(n, ast.arg):
            values.setdefault(n.arg, []).append(None)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            values.setdefault(n.name, []).append(None)
    stores: dict[str, int] = {}  # a Store that is no plain assignment (a loop, ``with`` or ``except`` target): run time
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    for name, k in stores.items():
        plain = sum(1 for v in values.get(name, []) if v is not None)
        if k > plain:
            values.setdefault(name, []).append(None)
    return values, safe


def _type_expr(value: ast.AST) -> bool:
    """A type expression without strings or calls: names, attribute chains, subscripts of them,
    ``|`` unions, tuples and lists of them, None."""
    for x in ast.walk(value):
        if isinstance(x, ast.Constant) and x.value is not None and x.value is not Ellipsis:
            return False
        if not isinstance(x, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.BitOr, ast.Tuple, ast.List, ast.Load,
                              ast.Constant)):
            return False
    return True


def _annotation_findings(ann: ast.AST, values: dict, safe: set[str], seen: frozenset = frozenset()) -> str | None:
    """Why annotation ``ann`` may hold a string that a type-hint reader evals (None: it cannot): a
    string or a call in it, or a name in it bound to anything but a type expression of the same
    kind (``T = list["..."]``; an argument, a loop target: values decided at run time)."""
    if not _type_expr(ann):
        return f"{ast.unparse(ann)} holds a string or a call"
    for x in ast.walk(ann):
        if not isinstance(x, ast.Name) or x.id in safe or x.id in seen:
            continue
        if x.id not in values:
            if x.id in ANNOTATION_BUILTINS:
                continue
            return f"{x.id} is bound nowhere in the source"
        for v in values[x.id]:
            if v is None:
                return f"{x.id} is bound at run time (an argument, a loop or another target)"
            why = _annotation_findings(v, values, safe, seen | {x.id})
            if why:
                return f"{x.id} = {ast.unparse(v)}: {why}"
    return None


def _literal_loop_names(tree: ast.AST) -> set[str]:
    """Names whose every binding is the target of a ``for`` / comprehension over a tuple or list of
    string literals of dotted identifiers (``for n in ("x", "w")``)."""
    good: dict[str, bool] = {}
    loops = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name):
            it = n.iter
            ok = isinstance(it, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                                and _DOTTED.match(e.value) for e in it.elts)
            good[n.target.id] = good.get(n.target.id, True) and bool(ok)
            loops.add(id(n.target))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in loops:
            good[n.id] = False
        elif isinstance(n, ast.arg) and n.arg in good:
            good[n.arg] = False
    return {k for k, v in good.items() if v}


def _fx_safe_value(value: ast.AST) -> bool:
    """A value that may be stored as a node's ``target`` / ``name``: a name or an attribute chain (a
    callable: ``torch.ops.aten.gelu.default``), a string literal of dotted identifiers, or None."""
    if isinstance(value, ast.Constant):
        return value.value is None or (isinstance(value.value, str) and bool(_DOTTED.match(value.value)))
    return _chain(value) is not None and not isinstance(value, ast.Call)


def _fx_target_ok(node: ast.Call, loop_names: frozenset = frozenset()) -> bool:
    """A call of a :data:`FX_TARGET_CALLS` method whose target is a literal of dotted identifiers,
    or a name bound only by loops over such literals (``loop_names``; ``create_node("call_function",
    ...)``: any target)."""
    callee = _callee(node)
    pos = FX_TARGET_CALLS[callee]
    if pos == 1:
        op = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("op", "kind")), None)
        if not (isinstance(op, ast.Constant) and isinstance(op.value, str)):
            return False
        if op.value == "call_function":
            return True
    tgt = node.args[pos] if len(node.args) > pos else next((k.value for k in node.keywords if k.arg in FX_TARGET_KEYWORDS), None)
    if tgt is None:
        return not any(k.arg is None for k in node.keywords) and len(node.args) <= pos  # no target given (fx's default)
    if isinstance(tgt, ast.Name) and tgt.id in loop_names:
        return True
    return isinstance(tgt, ast.Constant) and isinstance(tgt.value, str) and bool(_DOTTED.match(tgt.value))


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
            if not _attr_allowed(part) or part.startswith("__") or part in FORBIDDEN_NAMES:
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
    assignments to attributes of :data:`PATCHABLE_ROOTS` or of any name bound to a module
    (:func:`_bindings`: ``import torch._inductor.config as cfg; cfg.cpp.threads = 2``); string
    annotations and ``from __future__ import annotations`` (``typing.get_type_hints`` evals them).
    A syntax error is one violation.
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

    def module_finding(line: int, name: str) -> None:
        """An imported module: forbidden by name, outside the allowed ones, or (loaded here) a chain
        to a module or object a candidate may not reach."""
        if bad_module(name):
            out.append(Violation(line, "import", name))
        elif not module_allowed(name):
            out.append(Violation(line, "import", f"{name} (not an allowed module)"))
        else:
            bad = _resolved_findings(name, name)
            if bad:
                out.append(Violation(line, "import", f"{name}: {bad[0]} is {bad[1]}"))

    bound = _bindings(tree)
    seen_chains: set[tuple[int, str]] = set()
    loop_names = frozenset(_literal_loop_names(tree))
    ann_values, ann_safe = _names_bound(tree)

    def chain_finding(node: ast.AST) -> None:
        """An attribute chain rooted at a bound name, resolved against the real modules."""
        ch = _chain(node)
        if ch is None or ch[0] not in bound:
            return
        for mod, attrs in sorted(bound[ch[0]]):
            path = ".".join((mod,) + attrs + tuple(ch[1:]))
            found = resolve_chain(path.split("."), mod)
            if len(found) != len(path.split(".")) - mod.count("."):  # it stops short: the last name is not resolved
                continue
            why = bad_object(found[-1][1])
            if why and (node.lineno, path) not in seen_chains:
                seen_chains.add((node.lineno, path))
                out.append(Violation(node.lineno, "attribute", f"{ast.unparse(node)} resolves to {why}"))

    allowed_funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id in LITERAL_ONLY and _literal_attr_call(n)}
    allowed_getters = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) in LITERAL_GETTERS
                       and _literal_getter_call(n)}
    def patchable(node: ast.AST) -> bool:
        """A module or an object reached from one: rooted at :data:`PATCHABLE_ROOTS` or at any name
        the resolver binds to a module (``import torch._inductor.config as cfg``; ``c = torch.x``)."""
        r = _root(node)
        return r in PATCHABLE_ROOTS or r in bound

    for n in ast.walk(tree):  # setattr(torch, "isnan", f): a patch even with a literal name
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") and n.args:
            if patchable(n.args[0]):
                out.append(Violation(n.lineno, "patch", f"{n.func.id} on {ast.unparse(n.args[0])}"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                module_finding(node.lineno, a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level and node.level > 0:
                out.append(Violation(node.lineno, "import", "relative import (reaches the evaluator's package)"))
            else:
                module_finding(node.lineno, node.module or "")
                for a in node.names:
                    bad = None if a.name == "*" else _resolved_findings(f"{node.module}.{a.name}", node.module)
                    if a.name == "*":
                        out.append(Violation(node.lineno, "import", f"from {node.module} import * (names the check cannot see)"))
                    elif a.name in FORBIDDEN_NAMES or a.name in LITERAL_ONLY or a.name in FORBIDDEN_ATTRS:
                        out.append(Violation(node.lineno, "name", f"from {node.module} import {a.name}"))
                    elif a.name in FORBIDDEN_MODULES:  # another module's reference to it: ``from torch.serialization import os``
                        out.append(Violation(node.lineno, "import", f"from {node.module} import {a.name} (a forbidden module)"))
                    elif a.name.startswith("_") and a.name.lstrip("_").split("_")[0] in FORBIDDEN_MODULES + ("pickle", "io"):
                        # a module's private alias of a forbidden one: ``from collections import _sys``, ``from random import _os``
                        out.append(Violation(node.lineno, "import", f"from {node.module} import {a.name} (a forbidden module's alias)"))
                    elif not _attr_allowed(a.name):  # a denied module's or a loader's name
                        out.append(Violation(node.lineno, "name", f"from {node.module} import {a.name}"))
                    elif bad:
                        out.append(Violation(node.lineno, "import", f"from {node.module} import {a.name}: {bad[0]} is {bad[1]}"))
        elif isinstance(node, ast.Name):
            if node.id in LITERAL_GETTERS:
                if id(node) not in allowed_getters:
                    out.append(Violation(node.lineno, "name", f"{node.id} (only as {node.id}(\"literal.name\") of allowed names)"))
            elif node.id in FORBIDDEN_NAMES:
                out.append(Violation(node.lineno, "name", node.id))
            elif node.id in REDUCE_HOOKS:  # ``__reduce__ = f`` in a class body
                out.append(Violation(node.lineno, "name", f"{node.id} (a pickle hook)"))
            elif node.id in CODEGEN_HOOKS:  # ``__repr__ = f`` in a class body
                out.append(Violation(node.lineno, "name", f"{node.id} (written into generated source, or evaluated)"))
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
            elif node.attr in DENIED_ATTRS:
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (a denied module)"))
            elif node.attr in CODEGEN_HOOKS:
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (written into generated "
                                     "source, or evaluated)"))
            elif _module_alias(node.attr):
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (a forbidden module's "
                                     "private alias)"))
            elif not _attr_allowed(node.attr):
                out.append(Violation(node.lineno, "attribute", f"{_root(node) or '?'}...{node.attr} (a loader)"))
            else:
                chain_finding(node)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in FORBIDDEN_KEYWORDS:
                    out.append(Violation(node.lineno, "call", f"keyword {kw.arg} (a loader's unpickling switch)"))
            if _callee(node) in ("getattr", "hasattr") and _literal_attr_call(node):
                chain_finding(node)
            if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) + len(node.keywords) >= 3:
                out.append(Violation(node.lineno, "call", "type(name, bases, dict) (a class of any name, whose repr torch.fx "
                                     "writes into source it runs)"))
            if isinstance(node.func, ast.Attribute) and node.func.attr in FX_TARGET_CALLS and not _fx_target_ok(node, loop_names):
                out.append(Violation(node.lineno, "call", f"{ast.unparse(node.func)}(...) with a target that is not a literal "
                                     "of dotted identifiers (torch.fx writes it unescaped into source it runs)"))
        elif isinstance(node, ast.MatchClass):  # ``case object(__globals__=g)`` reads g = subject.__globals__
            for name in node.kwd_attrs:
                if name.startswith("__") or not _attr_allowed(name) or name in FORBIDDEN_NAMES:
                    out.append(Violation(node.lineno, "attribute", f"case {ast.unparse(node.cls)}({name}=...) (a class "
                                         "pattern reads that attribute: attack_match_frames.py)"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in FORBIDDEN_NAMES + LITERAL_ONLY:
            out.append(Violation(node.lineno, "name", f"definition of {node.name}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in REDUCE_HOOKS:
            out.append(Violation(node.lineno, "name", f"definition of {node.name} (a pickle hook)"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in CODEGEN_HOOKS:
            out.append(Violation(node.lineno, "name", f"definition of {node.name} (written by torch.fx into source it runs)"))
        elif isinstance(node, ast.ClassDef) and node.name in _BUILTIN_NAMES:
            out.append(Violation(node.lineno, "name", f"class {node.name} (a builtin's name: its instances' repr calls the "
                                 "builtin in source torch.fx writes and runs)"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FORBIDDEN_KEYWORDS:
            out.append(Violation(node.lineno, "name", f"the string {node.value!r} (a loader's unpickling switch)"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in REDUCE_HOOKS:
            out.append(Violation(node.lineno, "name", f"the string {node.value!r} (a pickle hook: type(name, bases, dict))"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in CODEGEN_HOOKS:
            out.append(Violation(node.lineno, "name", f"the string {node.value!r} (type(name, bases, dict) of a hook "
                                 "generated source or a type-hint reader runs)"))
        elif isinstance(node, ast.arg) and node.arg in FORBIDDEN_NAMES + LITERAL_ONLY:
            out.append(Violation(node.lineno, "name", f"argument named {node.arg}"))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            value = getattr(node, "value", None)
            for tgt in targets:
                if isinstance(tgt, ast.Attribute) and tgt.attr in ("__name__", "__qualname__"):
                    out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(tgt)} (a class renamed: its "
                                         "instances' repr is written by torch.fx into source it runs)"))
                if isinstance(tgt, ast.Attribute) and tgt.attr in ("target", "name") and value is not None \
                        and not _fx_safe_value(value):
                    out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(tgt)} of a computed or "
                                         "non-identifier string (torch.fx writes a node's target and name into source it runs)"))
                for sub in ast.walk(tgt):
                    if isinstance(sub, ast.Attribute) and patchable(sub):
                        out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(sub)}"))
                    elif isinstance(sub, ast.Subscript) and patchable(sub.value):
                        out.append(Violation(node.lineno, "patch", f"assignment to {ast.unparse(sub)}"))
        if isinstance(node, ast.ImportFrom) and node.module == "__future__" \
                and any(a.name == "annotations" for a in node.names):
            out.append(Violation(node.lineno, "annotation", "from __future__ import annotations (every annotation a "
                                 "string a type-hint resolver evals)"))
        annotations = [node.annotation] if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation else []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        for ann in annotations:
            if any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in ast.walk(ann)):
                out.append(Violation(node.lineno, "annotation", f"string annotation {ast.unparse(ann)} (evaluated "
                                     "as code by a type-hint resolver)"))
            else:
                why = _annotation_findings(ann, ann_values, ann_safe)
                if why:
                    out.append(Violation(node.lineno, "annotation", f"annotation {ast.unparse(ann)}: {why} (a string there "
                                         "is evaluated as code by a type-hint resolver: singledispatch, infer_schema)"))
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
