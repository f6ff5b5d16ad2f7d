"""Run one PassNet task standalone: load its variants, time eager, Dynamo-only and a candidate.

Copied as ``run_task.py`` into every task folder, beside ``timing_protocol.py`` (a copy of
``curate/timing.py``: the exact protocol the ``profile`` stage used); needs only ``torch``
and ``numpy``:

    python run_task.py                                # Inductor (the default candidate)
    python run_task.py --backend eager                # the no-op control: compiles nothing
    python run_task.py --backend-module my_backend.py # a file exposing backend(gm, example_inputs)
    python run_task.py --pass-file my_pass.py         # a file exposing PATTERNS = [(pattern, replacement)]

It times with the profile's protocol (``task.json`` ``timing``: the same clock -- the timing
thread's CPU time, wall time recorded beside it --, gate, stop rule, trial counts and time cap as
the ``profile`` stage that labelled the task), so it prints PASS / FAIL wherever the profile would
have given a label. Each variant runs in its dtype (``task.json`` ``dtype``: floating inputs and
weights cast).

Per variant it prints speedup_e2e (eager / candidate, PassNet's figure) and speedup_compiler
(Dynamo-only / candidate: what the candidate changes, without Dynamo's harness) with their
bootstrap intervals, the profile's baseline, and whether the outputs pass at the task's
tolerance level t; the last line is the verdict (:func:`verdict`), and the exit status is 0
for PASS, 1 for FAIL, 2 for RERUN (a timing the noise gate could not decide).

Layout beside this script: ``task.json`` (variants, input metadata, baselines) and
``subgraphs/<hash>-<size>/graph.json`` (canonical FX node list), ``input_meta.json`` /
``weight_meta.json`` (shapes, dtypes, statistics; never values). Graphs are rebuilt by
resolving call targets against an allowlist (torch, operator, math): nothing is ``exec``-ed.
Custom operators (``torch.ops.<namespace>.*``) resolve only for torch's own namespaces and the
trusted table ``OP_NAMESPACE_MODULES`` (a copy of ``passnet_common.store.OP_NAMESPACE_MODULES``);
``task.json`` lists the modules the task needs under ``op_modules``, imported first. Inputs
are synthesised from the metadata with a fixed seed.
"""

import argparse
import builtins
import importlib
import importlib.util
import json
import keyword
import math
import sys
import types
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
from torch.fx import subgraph_rewriter
from torch.utils._pytree import tree_flatten


class UnsafeTarget(ValueError):
    """A stored graph names a call target outside the allowlist."""


# --- the graph policy: what a stored graph may call when it is rebuilt. curate/select/task_runner.py (the
# task folders' run_task.py, which runs without this package) holds a verbatim copy of this block
# (tests/test_curate.py compares them). ---

ALLOWED_PREFIXES = ("torch.", "_operator.", "operator.", "math.")
ALLOWED_BUILTINS = {"getattr", "len", "max", "min", "abs", "int", "float", "bool", "tuple", "list", "range", "slice", "round", "sum", "all", "any", "isinstance"}  # noqa: E501


DENIED_SEGMENTS = frozenset({"load", "save", "hub", "from_file", "serialization", "package", "jit", "onnx", "distributed",
                             "multiprocessing", "cpp_extension", "library", "load_library", "compile", "model_zoo",
                             "CompilationUnit", "import_ir_module", "get_file_path", "print", "inductor", "parse_ir"})
"""Dotted-name parts refused in a stored call target or ``fn`` argument even under an allowed prefix: file I/O
(``torch.load`` unpickles, ``torch.save`` writes), code loading (``torch.hub``, TorchScript, C++ extensions,
custom-op libraries), compilation, other processes. No captured graph of the census calls any of them."""
DENIED_SEGMENT_PREFIXES = ("_jit", "_load", "load_", "save_", "_import", "import_")
"""Prefixes of dotted-name parts refused likewise (``torch._C._jit_*``, ``torch._C._load_for_lite_interpreter``,
``torch.utils.model_zoo.load_url``, ...)."""


CALL_MODULES = frozenset({
    "torch", "torch.nn.functional", "torch.functional", "torch.fft", "torch.linalg", "torch.special",
    "torch._C._nn", "torch._C._fft", "torch._C._linalg", "torch._C._special", "torch._C._functorch",
    "torch._functorch.predispatch", "torch._functorch.vmap", "torch._functorch.apis", "torch._functorch.eager_transforms",
    "torch.amp.autocast_mode", "torch.autograd.grad_mode", "operator", "_operator", "math"})
"""The modules whose callables (functions, ATen ops, torch classes) a stored call target may name: where the
captured graphs' targets live (tensor ops, autocast and grad-mode switches, functorch's level switches). A name
is looked up from its module by attributes that are classes or callables, never through another module."""
C_NAMES = frozenset({"torch._C._set_grad_enabled", "torch._C._log_api_usage_once", "torch._C._autograd._get_data_attr",
                     "torch._C._autograd._saved_tensors_hooks_disable", "torch._C._autograd._saved_tensors_hooks_enable"})
"""Targets in ``torch._C`` and its ``_autograd`` (which also hold file writers, TorchScript loaders, profilers), by
name."""
OPERATOR_DENIED = frozenset({"call", "attrgetter", "methodcaller", "itemgetter"})
"""``operator`` callables that reach attributes or call their argument: refused."""
TENSOR_OPERATOR_DUNDERS = frozenset(f"__{p}{n}__" for n in (
    "add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod", "pow", "lshift", "rshift", "and", "or", "xor")
    for p in ("", "r", "i")) | frozenset(f"__{n}__" for n in (
        "neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne", "getitem", "setitem", "contains", "len",
        "bool", "float", "int", "index", "complex"))
"""Dunder methods a stored ``call_method`` may call on a graph value (operators; never ``__getattribute__``,
``__call__``, ``__reduce__``, ...)."""
PRIVATE_METHODS = frozenset({"_is_all_true", "_is_any_true"})
DENIED_METHODS = frozenset({"apply_", "map_", "map2_", "register_hook", "register_post_accumulate_grad_hook", "backward",
                            "storage", "untyped_storage", "share_memory_", "set_", "data_ptr", "pin_memory",
                            "record_stream", "numpy", "tofile", "from_file", "save", "load", "cuda", "resize_"})
"""Tensor methods refused (callbacks, raw memory and storages, files, leaving the CPU)."""


TORCH_OP_NAMESPACES = frozenset({
    "aten", "prims", "prim", "higher_order", "quantized", "rngprims", "inductor", "mkldnn", "mkl", "onednn",
    "_c10d_functional", "c10d_functional", "profiler",
})
"""``torch.ops.<namespace>`` namespaces that torch itself registers (no import needed)."""

OP_NAMESPACE_MODULES: dict[str, tuple[str, ...]] = {
    "torchvision": ("torchvision",),
    "transformers": ("transformers.integrations.moe",),
    "transformers_msa": ("transformers.integrations.msa_attention",),
}
"""Trusted ``torch.ops.<namespace>`` -> the modules whose import registers its operators
(``torch.library.custom_op`` / C++ ``TORCH_LIBRARY`` at import time): ``torchvision::nms``,
``roi_align``...; transformers' MoE ``grouped_mm_fallback`` (``transformers/integrations/moe.py``)
and MSA ``sparse_atten``. Only these modules are ever imported for a stored graph, and only
when one of its targets names their namespace; any other namespace is refused
(:class:`UnsafeTarget`), so a stored graph cannot make the loader import code it names.
Standalone task folders carry a copy (``curate/select/task_runner.py``, kept equal by a test)."""


def op_namespace(name: str) -> str | None:
    """``torch.ops.transformers.grouped_mm_fallback`` -> ``transformers``; None for a name
    outside ``torch.ops``."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[0] == "torch" and parts[1] == "ops" else None


def resolve_target(name: str) -> Any:
    """The callable behind a stored call target or ``fn`` argument: :func:`resolve_name`, which must give a
    callable.

    Raises:
        UnsafeTarget: as :func:`resolve_name`, or the name resolves to something not callable (a module
            reached through an import, a dtype).
    """
    obj = resolve_name(name)
    if not callable(obj):  # a module or any other object: a stored graph calls callables only
        raise UnsafeTarget(f"call target {name!r} resolves to a {type(obj).__name__}, not a callable")
    return obj


def resolve_name(name: str) -> Any:
    """The object behind a qualified name, if it is on the allowlist (also attributes that are not called:
    ``torch.float32`` in a PassBench ``model.py``).

    ``torch.ops.<namespace>.*`` targets are allowed for torch's own namespaces
    (:data:`TORCH_OP_NAMESPACES`) and the trusted table :data:`OP_NAMESPACE_MODULES`, whose
    registering module is imported first (e.g. ``transformers.integrations.moe`` for
    ``torch.ops.transformers.grouped_mm_fallback``).

    Raises:
        UnsafeTarget: the name is outside ``torch.*``, ``operator.*``, ``math.*`` and the
            allowed builtins, names an operator namespace outside both tables (also
            ``torch.ops.load_library`` and the like), the registering module is not
            installed, a name part is refused (:data:`DENIED_SEGMENTS`, :data:`DENIED_SEGMENT_PREFIXES`),
            or the name does not resolve.
    """
    if name.startswith("builtins.") or name in ALLOWED_BUILTINS:  # FX names a builtin by itself ("getattr")
        short = name.split(".", 1)[-1]
        if short not in ALLOWED_BUILTINS:
            raise UnsafeTarget(f"builtin {name!r} is not allowed")
        return getattr(builtins, short)
    if not name.startswith(ALLOWED_PREFIXES):
        raise UnsafeTarget(f"call target {name!r} is outside the allowlist {ALLOWED_PREFIXES}")
    parts = name.split(".")
    if parts[:2] == ["torch", "ops"]:
        ns = op_namespace(name)
        if ns not in TORCH_OP_NAMESPACES and ns not in OP_NAMESPACE_MODULES:
            raise UnsafeTarget(f"call target {name!r}: operator namespace {ns!r} is neither torch's own nor in the "
                               f"trusted table {sorted(OP_NAMESPACE_MODULES)} (passnet_common.store.OP_NAMESPACE_MODULES)")
        for mod in OP_NAMESPACE_MODULES.get(ns, ()):
            try:
                importlib.import_module(mod)
            except ImportError as exc:
                raise UnsafeTarget(f"call target {name!r} needs {mod!r} to register namespace {ns!r}, "
                                   f"which does not import ({exc})") from exc
    bad = [p for p in parts if p in DENIED_SEGMENTS or p.startswith(DENIED_SEGMENT_PREFIXES)]
    if bad:
        raise UnsafeTarget(f"call target {name!r}: {bad[0]!r} is refused (file I/O, code loading or compilation: "
                           "passnet_common.store.DENIED_SEGMENTS)")
    if any(p.startswith("__") for p in parts):
        raise UnsafeTarget(f"call target {name!r}: a dunder name part is refused")
    if parts[:2] == ["torch", "ops"]:
        obj = _walk(name, torch.ops, parts[2:])
        if not isinstance(obj, (torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)):
            raise UnsafeTarget(f"call target {name!r} is not an operator of torch.ops")
        return obj
    k = len(parts) - 1 if name in C_NAMES else \
        next((k for k in range(len(parts) - 1, 0, -1) if ".".join(parts[:k]) in CALL_MODULES), 0)
    home = ".".join(parts[:k])
    if not k:
        raise UnsafeTarget(f"call target {name!r}: not in a module stored graphs call into "
                           "(passnet_common.store.CALL_MODULES, C_NAMES)")
    try:
        mod = importlib.import_module(home)
    except ImportError as exc:
        raise UnsafeTarget(f"call target {name!r}: module {home!r} does not import ({exc})") from exc
    if any(p.startswith("_") for p in parts[k + 1:]) or (len(parts) > k + 1 and parts[-1] in DENIED_METHODS):
        raise UnsafeTarget(f"call target {name!r}: a private or refused attribute of a class")
    obj = _walk(name, mod, parts[k:])
    if home == "torch" and parts[k].startswith("_") and getattr(torch._C._VariableFunctions, parts[k], None) is not obj:
        raise UnsafeTarget(f"call target {name!r}: a private name of torch that is not an ATen op")
    if home == "torch" and parts[k].startswith(("set_", "use_", "manual_seed")):  # set_default_tensor_type imports
        raise UnsafeTarget(f"call target {name!r}: torch's global setters are refused")
    if isinstance(obj, type) and type(obj).__name__.startswith("pybind11"):  # torch.PyTorchFileWriter and the like
        raise UnsafeTarget(f"call target {name!r}: a C++ binding class (file writers and readers, serializers)")
    owner = getattr(obj, "__module__", None)  # a function, class or typing object re-exported from elsewhere
    if isinstance(owner, str) and owner.split(".")[0] not in ("torch", "operator", "_operator", "math"):
        raise UnsafeTarget(f"call target {name!r} is defined in {owner!r}, outside torch")
    if home in ("operator", "_operator") and (not isinstance(obj, types.BuiltinFunctionType) or parts[-1] in OPERATOR_DENIED):
        raise UnsafeTarget(f"call target {name!r}: only operator's plain functions")
    return obj


_OP_NAMESPACES = tuple(t for t in (getattr(torch._ops, "_OpNamespace", None), getattr(torch._ops, "_HigherOrderNamespace", None))
                       if t is not None)  # torch.ops.<namespace>: module subclasses that hold operators


def _walk(name: str, obj: Any, rest: list[str]) -> Any:
    """``getattr`` along ``rest`` from ``obj`` (a module of :data:`CALL_MODULES` or ``torch.ops``), through
    classes and operator namespaces only: a module on the way (``torch.os``, ``torch.nn.functional.torch``)
    is refused, so the walk never leaves the module it starts in."""
    for i, p in enumerate(rest):
        try:
            obj = getattr(obj, p)
        except AttributeError as exc:
            raise UnsafeTarget(f"call target {name!r} does not resolve ({exc})") from exc
        if isinstance(obj, types.ModuleType) and not isinstance(obj, _OP_NAMESPACES):
            raise UnsafeTarget(f"call target {name!r}: {p!r} is a module ({obj.__name__})")
        if i < len(rest) - 1 and not isinstance(obj, (type, *_OP_NAMESPACES, torch._ops.OpOverloadPacket)):
            raise UnsafeTarget(f"call target {name!r}: {p!r} is neither a class nor an operator namespace")
    return obj


def check_call(op: str, target: Any, args: tuple, name: str = "", kwargs: dict | None = None) -> None:
    """Refuse a rebuilt call that would reach past the allowlist at run time: a ``call_method`` whose object
    is not a node of the graph (a stored constant, e.g. a resolved function, as ``self``) or whose name
    :func:`tensor_method_ok` refuses, ``type()`` with a name (torch imports it), a ``builtins.getattr`` of
    anything but a literal public data attribute of a tensor (``__globals__`` of a function leads to its
    module; a bound method would become a callable value), and keyword names that are not identifiers (FX
    writes them into the source it runs). ``name``: the node, for the message.

    Raises:
        UnsafeTarget: any of these.
    """
    if op == "call_method":
        if not (args and isinstance(args[0], fx.Node)):
            raise UnsafeTarget(f"{name}: call_method {target!r} on {type(args[0]).__name__ if args else 'nothing'}, "
                               "not on a value of the graph")
        if not tensor_method_ok(target):
            raise UnsafeTarget(f"{name}: call_method {target!r} is not a tensor method a stored graph may call")
    if op == "call_function" and target is builtins.getattr and \
            (len(args) < 2 or not isinstance(args[1], str) or not tensor_method_ok(args[1]) or args[1].startswith("_")
             or callable(getattr(torch.Tensor, args[1], None))):  # data attributes only: no bound method as a value
        raise UnsafeTarget(f"{name}: getattr of {args[1] if len(args) > 1 else None!r}: only literal public names of "
                           "tensor data attributes")
    if op == "call_method" and target == "type" and any(isinstance(a, str) for a in (*args[1:], *(kwargs or {}).values())):
        raise UnsafeTarget(f"{name}: type() with a name: torch imports the module it names")
    bad = [k for k in (kwargs or {}) if not (isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k))]
    if bad:
        raise UnsafeTarget(f"{name}: keyword argument name {bad[0]!r} is not an identifier")


def tensor_method_ok(method: Any) -> bool:
    """Whether a stored ``call_method`` (or ``getattr``) may name ``method``: an attribute of ``torch.Tensor``
    that is public and not in :data:`DENIED_METHODS`, an operator dunder (:data:`TENSOR_OPERATOR_DUNDERS`) or
    one of :data:`PRIVATE_METHODS`."""
    if not (isinstance(method, str) and method.isidentifier()):
        return False
    if method.startswith("__"):
        return method in TENSOR_OPERATOR_DUNDERS
    if method.startswith("_"):
        return method in PRIVATE_METHODS
    return method not in DENIED_METHODS and hasattr(torch.Tensor, method)


NUMPY_MODULES = frozenset({"torch._numpy._ufuncs", "torch._numpy._funcs", "torch._numpy._funcs_impl", "torch._numpy._ndarray",
                           "torch._numpy._reductions_impl", "torch._numpy.linalg", "torch._numpy.fft"})
"""The ``torch._numpy`` modules whose public functions a stored ``wraps`` may name (not its testing helpers)."""


def call_target(node: dict) -> Any:
    """The callable of a stored ``call_function`` node: :func:`resolve_target` of its ``target``, or for a
    Dynamo numpy wrapper (``target`` ``torch._dynamo.utils.wrapped_<name>``, which names no attribute) the
    wrapper rebuilt from the node's ``wraps`` (:func:`passnet_common.canonical.stored.dynamo_wraps`):
    ``["numpy_function", name]`` wraps the public function ``name`` of a module of :data:`NUMPY_MODULES`,
    ``["numpy_method", name]`` calls the public ``torch._numpy`` ndarray method ``name``,
    ``["numpy_operator", name]`` wraps the ``operator`` function ``name``. The wrapper classes are
    ``torch._dynamo.utils``'s own; every wrapped callable is torch's or ``operator``'s.

    Raises:
        UnsafeTarget: a target outside the allowlist, or a ``wraps`` of another kind or naming a
            callable outside ``torch._numpy`` / ``operator``.
    """
    wraps = node.get("wraps")
    if wraps is None:
        return resolve_target(node["target"])
    ok = isinstance(wraps, list) and len(wraps) == 2 and isinstance(wraps[1], str)
    kind, name = (wraps[0], wraps[1]) if ok else (None, None)
    dynamo_utils = importlib.import_module("torch._dynamo.utils")  # only here: importing Dynamo costs seconds

    mod, _, attr = name.rpartition(".") if ok else ("", "", "")
    if kind == "numpy_function" and mod in NUMPY_MODULES and attr.isidentifier() and not attr.startswith("_"):
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            raise UnsafeTarget(f"wrapped numpy function {name!r} does not resolve ({exc})") from exc
        if callable(fn) and not isinstance(fn, (type, types.ModuleType)):
            return dynamo_utils.numpy_to_tensor_wrapper(fn)
    tnp = importlib.import_module("torch._numpy")
    if kind == "numpy_method" and name.isidentifier() and not name.startswith("_") and hasattr(tnp.ndarray, name):
        return dynamo_utils.numpy_method_wrapper(name)
    if kind == "numpy_operator" and name.startswith(("operator.", "_operator.")):
        return dynamo_utils.numpy_operator_wrapper(resolve_target(name))
    raise UnsafeTarget(f"call target {node.get('target')!r}: wraps {wraps!r} is not a Dynamo numpy wrapper the store "
                       "rebuilds (numpy_function of torch._numpy, numpy_method, numpy_operator of operator)")


def check_fields(nodes: list, name: str = "") -> None:
    """The fields of a stored node list that reach generated code as names: a placeholder's ``position`` and a
    ``get_attr``'s ``subgraph`` must be ints (FX writes ``arg<position>`` and ``_sub<subgraph>`` into the
    module's source; a string there is code).

    Raises:
        UnsafeTarget: a field that is not an int, or a node that is not a dict.
    """
    for i, n in enumerate(nodes):
        if not isinstance(n, dict):
            raise UnsafeTarget(f"{name}: node {i} is not a dict")
        for key in ("position", "subgraph"):
            if key in n and (type(n[key]) is not int or n[key] < 0):
                raise UnsafeTarget(f"{name}: node {i}: {key} {n[key]!r} is not a non-negative int")

# --- end of the graph policy ---


def import_op_modules(modules):
    """Import the registering modules a task lists (only those of the trusted table)."""
    trusted = {m for mods in OP_NAMESPACE_MODULES.values() for m in mods}
    for mod in modules:
        if mod not in trusted:
            raise ValueError(f"task.json asks for module {mod!r}, which is not in the trusted table {sorted(trusted)}")
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            raise SystemExit(f"this task needs {mod!r} installed (it registers custom operators): {exc}")


def decode(v, built):
    if not isinstance(v, list):
        return v
    tag, rest = v[0], v[1:]
    if tag == "%":
        return built[rest[0]]
    if tag in ("list", "tuple", "size"):
        items = [decode(x, built) for x in rest]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {k: decode(x, built) for k, x in rest}
    if tag in ("dtype", "memory_format", "layout"):
        got = getattr(torch, rest[0], None) if isinstance(rest[0], str) else None
        if not isinstance(got, {"dtype": torch.dtype, "memory_format": torch.memory_format, "layout": torch.layout}[tag]):
            raise ValueError(f"a {tag} tag that names no torch {tag}: {v!r}")
        return got
    if tag == "device":
        return torch.device("cpu")
    if tag == "slice":
        return slice(*[decode(x, built) for x in rest])
    if tag == "ellipsis":
        return Ellipsis
    if tag == "float":
        return float(rest[0])
    if tag == "complex":
        return complex(decode(rest[0], built), decode(rest[1], built))
    if tag == "fn":
        return resolve_target(rest[0])
    raise ValueError(f"cannot rebuild argument {v!r}")


def synth(meta, kind, stats, int_high, gen):
    _, dtype_name, shape = meta
    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype)
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=gen)
        if stats and stats.get("mean") is not None:
            t = t * float(stats.get("std") or 0.0) + float(stats["mean"])
            if stats.get("min") is not None and stats.get("max") is not None:
                t = t.clamp(float(stats["min"]), float(stats["max"]))
        elif kind == "buffer":
            t = (1.0 + 0.02 * t).abs()
        elif kind == "parameter":
            t = t * 0.02
        return t.to(dtype)
    if stats and stats.get("min") is not None and stats.get("max") is not None:
        return torch.randint(int(stats["min"]), int(stats["max"]) + 1, shape, generator=gen, dtype=dtype)
    if kind == "input":
        return torch.randint(0, int(int_high or 2), shape, generator=gen, dtype=dtype)
    return torch.zeros(shape, dtype=dtype)


def load(folder, seed=0):
    data = json.loads((folder / "graph.json").read_text())
    imeta = json.loads((folder / "input_meta.json").read_text())
    wmeta = json.loads((folder / "weight_meta.json").read_text())
    stats = {p["position"]: p.get("stats") for p in imeta["placeholders"] + wmeta["placeholders"]}
    gen = torch.Generator().manual_seed(seed)
    nodes = data["nodes"]
    check_fields(nodes, str(folder))
    g, built, phs = fx.Graph(), [None] * len(nodes), []
    # placeholders in calling order (their position), as passnet_common.store.load_graph builds them
    for i in sorted((i for i, n in enumerate(nodes) if n["op"] == "placeholder"), key=lambda i: nodes[i]["position"]):
        n = nodes[i]
        built[i] = g.placeholder(f"arg{n['position']}")
        phs.append((n["position"], synth(n["meta"], n.get("kind", "input"), stats.get(n["position"]), imeta.get("int_high"), gen)))
    for i, n in enumerate(nodes):
        if n["op"] == "placeholder":
            continue
        if n["op"] in ("call_function", "call_method"):
            target = call_target(n) if n["op"] == "call_function" else n["target"]
            args, kwargs = tuple(decode(n["args"], built)), decode(n["kwargs"], built)
            check_call(n["op"], target, args, f"node {i}", kwargs)
            node = g.create_node(n["op"], target, args, kwargs)
        elif n["op"] == "output":
            node = g.output(decode(n["args"], built)[0])
        else:
            raise ValueError(f"op {n['op']} not supported")
        built[i] = node
    return fx.GraphModule(torch.nn.Module(), g), [v for _, v in sorted(phs, key=lambda pv: pv[0])]


# dtype -> (atol exponent factor, rtol exponent factor), as curate/tolerance.py
EXPONENTS = {"float16": (1.0, 3 / 5), "bfloat16": (1.0, 1.796 / 5), "float32": (1.0, 5.886 / 5), "float64": (7 / 5, 7 / 5)}


def correct_at(out, ref, t):
    """Every tensor output of ``out`` within ``atol + rtol |ref|`` at level ``t`` (ints exact)."""
    fo, fr = tree_flatten(out)[0], tree_flatten(ref)[0]
    if len(fo) != len(fr):
        return False
    for a, b in zip(fo, fr):
        if not isinstance(a, torch.Tensor):
            continue
        name = str(b.dtype).replace("torch.", "")
        if name in EXPONENTS:
            ea, er = EXPONENTS[name]
            if a.shape != b.shape or not torch.isclose(a.double(), b.double(), rtol=10 ** (er * t), atol=10 ** (ea * t),
                                                       equal_nan=True).all():
                return False
        elif a.shape != b.shape or not torch.equal(a, b):
            return False
    return True


def protocol():
    """The shipped protocol module (``timing_protocol.py`` beside this file; ``curate.timing``
    when run from the repository)."""
    p = Path(__file__).resolve().parent / "timing_protocol.py"
    if p.exists():
        spec = importlib.util.spec_from_file_location("timing_protocol", p)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["timing_protocol"] = mod
        spec.loader.exec_module(mod)
        return mod
    from curate import timing  # noqa: PLC0415  (standalone: the run_task.py copy in a task folder has no curate package; only a run from the repository falls back to curate.timing)

    return timing


def _load_file(path):
    spec = importlib.util.spec_from_file_location(f"candidate_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def candidate_of(args):
    """``(name, backend)``: a backend name, a module's ``backend`` callable, or a pass file's
    ``PATTERNS`` applied with ``torch.fx.subgraph_rewriter.replace_pattern`` (run eagerly)."""
    if args.backend_module:
        mod = _load_file(args.backend_module)
        if not callable(getattr(mod, "backend", None)):
            raise SystemExit(f"{args.backend_module}: no backend(gm, example_inputs) function")
        return args.backend_module, mod.backend
    if args.pass_file:
        mod = _load_file(args.pass_file)
        patterns = getattr(mod, "PATTERNS", None)
        if not patterns:
            raise SystemExit(f"{args.pass_file}: no PATTERNS = [(pattern, replacement), ...]")

        def backend(gm, example_inputs):
            for pat, rep in patterns:
                subgraph_rewriter.replace_pattern(gm, pat, rep)
            gm.recompile()
            return gm

        return args.pass_file, backend
    return args.backend, args.backend


def run_variant(folder, backend, t, tc, tp, dtype="float32"):
    """Speedups (with intervals), correctness and the clock check of one variant folder, its
    floating inputs (weights included) cast to ``dtype``."""
    gm, inputs = load(folder)
    dt = getattr(torch, dtype)
    inputs = [x.to(dt) if x.is_floating_point() else x for x in inputs]
    fresh = lambda: [x.clone() for x in inputs]  # noqa: E731
    torch.manual_seed(0)
    ref = gm(*fresh())
    dyn, _ = tp.compile_candidate(load(folder)[0], fresh(), "eager", reset=True)
    cand, _ = tp.compile_candidate(gm, fresh(), backend, reset=False)
    torch.manual_seed(0)
    out = cand(*fresh())
    s = tp.measure_sides({"eager": gm, "dynamo": dyn, "candidate": cand}, fresh, tc,
                         decide=(("eager", "candidate"), ("dynamo", "candidate"), ("eager", "dynamo")))
    return {"correct": correct_at(out, ref, t), "e2e": s.ratio("eager", "candidate"),
            "e2e_ci": s.ratio_ci("eager", "candidate", tc.ci_level, tc.n_boot),
            "compiler": s.ratio("dynamo", "candidate"),
            "compiler_ci": s.ratio_ci("dynamo", "candidate", tc.ci_level, tc.n_boot),
            "stable": s.stable, "eager_ms": s.medians_ms["eager"], "clock": s.clock, "clock_gap": s.clock_gap,
            "clock_flag": s.clock_flag}


def verdict(results, margin, rule="compiler"):
    """``(PASS|FAIL|RERUN, reason)``: FAIL when a variant is incorrect at the task's level;
    RERUN when a variant's timing did not pass the noise gate (``stable`` false: its interval
    decides nothing, as PassBench's "re-run"); else PASS when the geometric mean of the
    per-variant speedup interval upper ends is not below ``1 - margin``, FAIL otherwise.

    ``rule`` picks the speedup (the ``curate.curate.rule`` switch of the profile stage):
    ``compiler`` (default) judges ``speedup_compiler`` (Dynamo-only / candidate: what the
    candidate changes, so the no-op control ``--backend eager`` sits at 1 and passes on any
    machine); ``e2e`` judges ``speedup_e2e`` (eager / candidate, PassNet's figure, which
    includes Dynamo's per-call guard cost, so a tiny subgraph fails it whatever the candidate)."""
    bad = [r["id"] for r in results if not r["correct"]]
    if bad:
        return "FAIL", f"{len(bad)} variant(s) incorrect at the task's tolerance: {', '.join(bad)}"
    noisy = [r["id"] for r in results if not r.get("stable", True)]
    if noisy:  # PassBench: IQR/median > 0.2 -> "re-run"; an undecided timing judges nothing
        return "RERUN", (f"timing not decided for {len(noisy)} variant(s) (noise gate failed; re-run on a quieter machine "
                         f"or with more trials): {', '.join(noisy)}")
    key = "compiler_ci" if rule == "compiler" else "e2e_ci"
    name = "speedup_compiler" if rule == "compiler" else "speedup_e2e"
    hi = math.exp(sum(math.log(r[key][1]) for r in results) / len(results))
    ref = "Dynamo-only" if rule == "compiler" else "eager"
    if hi < 1 - margin:
        return "FAIL", f"slower than {ref} with confidence (geomean {name} interval upper end {hi:.3f})"
    return "PASS", f"correct on {len(results)} variant(s); geomean {name} upper end {hi:.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="inductor", help="torch.compile backend name")
    ap.add_argument("--backend-module", default=None, help="a .py file exposing backend(gm, example_inputs)")
    ap.add_argument("--pass-file", default=None, help="a .py file exposing PATTERNS = [(pattern, replacement)]")
    ap.add_argument("--trials", type=int, default=None, help="most trials (default: the protocol's)")
    ap.add_argument("--min-trial-ms", type=float, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rule", choices=("compiler", "e2e"), default=None,
                    help="speedup the verdict judges: compiler (vs Dynamo-only) or e2e (vs eager, PassNet's); "
                         "default: the task's rule, else compiler")
    ap.add_argument("--task", default=None, help="task folder (default: this script's folder)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    tp = protocol()
    tp.pin_allocator()  # the profile's allocator state (timing_protocol.pin_allocator)
    kw = {k: v for k, v in (("trials", args.trials), ("min_trial_ms", args.min_trial_ms)) if v is not None}
    here = Path(args.task).resolve() if args.task else Path(__file__).resolve().parent
    task = json.loads((here / "task.json").read_text())
    tc = tp.TimingConfig(**{**(task.get("timing") or {}), **kw})  # the profile's protocol, CLI overrides on top
    import_op_modules(task.get("op_modules", []))
    name, backend = candidate_of(args)
    t = int(task["tolerance_t"])
    print(f"task {task['task_id']} ({task['pattern']}): {len(task['subgraphs'])} variants, candidate {name}, tolerance t={t}, "
          f"clock {tc.clock}, gate {tc.gate}, stop {tc.stop}, <= {tc.trials} trials")
    print(f"{'variant':22} {'eager ms':>9} {'speedup_e2e [CI]':>24} {'speedup_compiler [CI]':>24} {'baseline':>8} {'ok':>3}")
    results = []
    for sg in task["subgraphs"]:
        r = run_variant(here / "subgraphs" / sg.get("folder", sg["subgraph_hash"]), backend, t, tc, tp, sg.get("dtype", "float32"))
        r["id"] = sg.get("variant_id", sg["subgraph_hash"])
        results.append(r)
        base = sg.get("baseline_speedup_e2e", sg.get("baseline_speedup")) or float("nan")
        short = r["id"][:12] + (r["id"][64:] if ":" in r["id"] else "")
        print(f"{short:22} {r['eager_ms']:9.4f} {r['e2e']:7.3f} [{r['e2e_ci'][0]:.3f}, {r['e2e_ci'][1]:.3f}]"
              f" {r['compiler']:8.3f} [{r['compiler_ci'][0]:.3f}, {r['compiler_ci'][1]:.3f}] {base:8.3f}"
              f" {'yes' if r['correct'] else 'NO':>3}" + (f"  wall/{r['clock']} {r['clock_gap']:.2f} (flagged)" if r["clock_flag"] else ""))
    v, why = verdict(results, tc.min_effect, args.rule or task.get("rule", "compiler"))
    print(f"verdict: {v} ({why})")
    return {"PASS": 0, "FAIL": 1}.get(v, 2)


if __name__ == "__main__":
    sys.exit(main())
