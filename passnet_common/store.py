"""The graph store: one folder per unique graph, content-addressed by ``graph_hash``.

Layout of ``<store>/<hash[:2]>/<hash>/``:

================== ===========================================================
``graph.json``     canonical node list (:class:`passnet_common.canonical.CanonicalGraph`),
                   enough to rebuild a runnable GraphModule without executing code,
                   with ``subgraphs`` (bodies of higher-order ops) and
                   ``placeholder_permutation`` (see :func:`canonical_extras`)
``model.py``       readable Python of the FX graph (``GraphModule.print_readable``)
``input_meta.json`` placeholders that are real inputs: shape, dtype, value range
``weight_meta.json`` parameter/buffer placeholders: shape, dtype, summary statistics
                   where values were real -- never the values themselves
================== ===========================================================

Inputs and weights are kept in separate files (GraphNet once mixed them in one metadata
file). A folder appears atomically (written under a temporary name, then renamed).

:func:`load_graph` rebuilds the GraphModule from ``graph.json`` by resolving targets
against an allowlist of modules (torch, operator, math, a few builtins); nothing from the
store is ``exec``-ed, so loading a store received from elsewhere runs no foreign code.
"""

from __future__ import annotations

import builtins
import importlib
import json
import keyword
import shutil
import tempfile
import types
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from passnet_common.io import atomic_replace_dir, canonical_json


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


def store_path(store: Path, graph_hash: str) -> Path:
    """Folder of ``graph_hash`` in ``store``."""
    return Path(store) / graph_hash[:2] / graph_hash


def write_graph(store: Path, record: dict, input_spec: list[dict] | None = None) -> bool:
    """Write one graph record (from :func:`passnet_common.record.describe_graph`) to the store.

    Returns True when a new folder was created, False when the hash was already stored.
    """
    final = store_path(store, record["graph_hash"])
    if final.exists():
        return False
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{record['graph_hash'][:12]}.", dir=final.parent))
    try:
        graph = {k: record[k] for k in ("graph_hash", "structure_hash", "wl_hash", "canonical_version", "nodes")}
        graph.update(canonical_extras(record))
        (staging / "graph.json").write_text(canonical_json(graph))
        (staging / "model.py").write_text(record["code"])
        phs = record["placeholders"]
        ints = [s for s in (input_spec or []) if s.get("high") is not None]
        (staging / "input_meta.json").write_text(canonical_json({
            "placeholders": [p for p in phs if p["kind"] == "input"],
            "input_spec": input_spec or [],
            "int_high": max((s["high"] for s in ints), default=None),
        }))
        (staging / "weight_meta.json").write_text(canonical_json({"placeholders": [p for p in phs if p["kind"] != "input"]}))
        return atomic_replace_dir(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def canonical_extras(record: dict) -> dict:
    """The parts of ``graph.json`` that canonical version 2 adds: ``subgraphs`` (bodies of
    higher-order ops such as ``torch.cond`` / checkpoint, each with its node list and own
    sub-graphs; a ``get_attr`` node names one by its ``subgraph`` index) and
    ``placeholder_permutation`` (calling position of each placeholder in canonical order:
    the canonical order sorts placeholders by use, the stored graph keeps the calling
    convention of the instance that was stored)."""
    return {"subgraphs": record.get("subgraphs", []),
            "placeholder_permutation": record.get("placeholder_permutation",
                                                  [n["position"] for n in record["nodes"] if n["op"] == "placeholder"])}


def op_modules(names: Any) -> list[str]:
    """Sorted registering modules (:data:`OP_NAMESPACE_MODULES`) that call targets
    ``names`` need imported (empty for torch's own namespaces)."""
    mods: set[str] = set()
    for n in names:
        mods.update(OP_NAMESPACE_MODULES.get(op_namespace(n) or "", ()))
    return sorted(mods)


def rebuild_call(graph: fx.Graph, node: dict, built: list, device: torch.device, name: str = "") -> fx.Node:
    """The ``call_function`` / ``call_method`` node of stored ``node`` added to ``graph`` (its arguments
    decoded by :func:`decode_arg` against the FX nodes ``built`` so far, its target by :func:`call_target`,
    the call checked by :func:`check_call`). Used by :func:`build_canonical_graph` and
    :func:`curate.decompose.segments.build_parent`.

    Raises:
        UnsafeTarget: a target outside the allowlist or a call :func:`check_call` refuses.
    """
    op = node["op"]
    target = call_target(node) if op == "call_function" else node["target"]
    args, kwargs = decode_arg(node["args"], built, device), decode_arg(node["kwargs"], built, device)
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    check_call(op, target, args, name, kwargs)
    return graph.create_node(op, target, args, kwargs)


def decode_arg(value: Any, nodes: list, device: torch.device) -> Any:
    """A stored argument rebuilt (tags of :func:`passnet_common.canonical.encode_literal`):
    ``["%", i]`` -> ``nodes[i]`` (FX nodes built so far), ``device`` tags -> ``device``,
    ``fn`` -> :func:`resolve_target`. Used by :func:`build_canonical_graph` and by
    :func:`curate.decompose.ranges.build_parent`.

    Raises:
        ValueError: an untagged empty list or an unknown tag.
        UnsafeTarget: an ``fn`` target outside the allowlist.
    """
    if not isinstance(value, list):
        return value
    if not value:
        raise ValueError("untagged empty list in stored graph")
    tag, rest = value[0], value[1:]
    if tag == "%":
        return nodes[rest[0]]
    if tag in ("list", "tuple", "size"):
        items = [decode_arg(v, nodes, device) for v in rest]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {k: decode_arg(v, nodes, device) for k, v in rest}
    if tag in ("dtype", "memory_format", "layout"):
        got = getattr(torch, rest[0], None) if isinstance(rest[0], str) else None
        if not isinstance(got, {"dtype": torch.dtype, "memory_format": torch.memory_format, "layout": torch.layout}[tag]):
            raise ValueError(f"stored graph has a {tag} tag that names no torch {tag}: {value!r}")
        return got
    if tag == "device":
        return device
    if tag == "slice":
        return slice(*[decode_arg(v, nodes, device) for v in rest])
    if tag == "ellipsis":
        return Ellipsis
    if tag == "float":
        return float(rest[0])
    if tag == "complex":
        return complex(decode_arg(rest[0], nodes, device), decode_arg(rest[1], nodes, device))
    if tag == "fn":
        return resolve_target(rest[0])
    raise ValueError(f"stored graph has an argument that cannot be rebuilt: {value!r}")


def replay_recorded_values(stats: dict | None, shape: list, dtype: torch.dtype, device) -> torch.Tensor | None:
    """The exact tensor of a buffer whose values were recorded (integer/bool buffers of at
    most :data:`passnet_common.record.EXACT_VALUES_MAX_NUMEL` elements, e.g. BERT's
    ``position_ids``), None when none were. Recorded ints are exact Python ints."""
    if not stats or stats.get("values") is None:
        return None
    values = stats["values"]
    n = 1
    for d in shape:
        n *= int(d)
    if len(values) != n:
        return None
    return torch.tensor(values, dtype=torch.int64).to(dtype).reshape(shape).to(device)


def exact_int_range(stats: dict | None) -> tuple[int, int] | None:
    """``(min, max)`` of recorded integer statistics as exact ints (an int64 buffer holding
    the int64 maximum round-trips; floats from older stores are truncated)."""
    if not stats or stats.get("min") is None or stats.get("max") is None:
        return None
    return int(stats["min"]), int(stats["max"])


def synth_placeholder(meta: Any, kind: str, int_high: int | None, gen: torch.Generator, device,
                      stats: dict | None = None) -> Any:
    """A value for a placeholder from its metadata (no stored values exist).

    With recorded ``stats`` (graphs captured on real tensors): floats normal with the
    recorded mean and std, clamped to the recorded [min, max]; ints uniform in
    [min, max]. Without: real inputs: int tensors uniform in ``[0, int_high)``, floats
    standard normal; parameters: floats normal with std 0.02; float buffers positive
    (``|N(1, 0.02)|``, so running variances stay valid); int buffers zeros; bools true.
    Data-dependent index inputs (e.g. the batch column of ``roi_align`` boxes) can still
    be out of range: run graphs you did not capture yourself in a subprocess.
    """
    if not (isinstance(meta, list) and meta and meta[0] == "T"):
        raise ValueError(f"placeholder metadata is not a tensor: {meta!r}")
    _, dtype_name, shape = meta
    dtype = getattr(torch, dtype_name)
    recorded = replay_recorded_values(stats, shape, dtype, device)
    if recorded is not None:
        return recorded
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype, device=device)
    lo = stats.get("min") if stats else None
    hi = stats.get("max") if stats else None
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=gen, dtype=torch.float32)
        if stats and stats.get("mean") is not None:
            t = t * float(stats.get("std") or 0.0) + float(stats["mean"])
            if lo is not None and hi is not None:
                t = t.clamp(float(lo), float(hi))
        elif kind == "buffer":
            t = (1.0 + 0.02 * t).abs()
        elif kind == "parameter":
            t = t * 0.02
        return t.to(dtype).to(device)
    if dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=dtype).to(device)
    rng = exact_int_range(stats)
    if rng is not None:
        lo_i, hi_i = rng
        if lo_i == hi_i:
            return torch.full(shape, lo_i, dtype=dtype, device=device)
        info = torch.iinfo(dtype)
        if hi_i >= info.max:  # randint's exclusive bound would overflow: draw below, pin the max
            t = torch.randint(lo_i, hi_i, shape, generator=gen, dtype=dtype)
            return t.to(device)
        return torch.randint(lo_i, hi_i + 1, shape, generator=gen, dtype=dtype).to(device)
    if kind == "input":
        return torch.randint(0, int(int_high or 2), shape, generator=gen, dtype=dtype).to(device)
    return torch.zeros(shape, dtype=dtype, device=device)


def load_graph(folder: str | Path, device: str = "cpu", seed: int = 0) -> tuple[fx.GraphModule, list]:
    """Rebuild a runnable GraphModule from a store folder, with synthesised inputs.

    Returns:
        (gm, inputs): ``gm(*inputs)`` runs the graph on ``device``. Inputs follow the
        placeholder order, synthesised by :func:`synth_placeholder` from the recorded
        metadata and statistics (the store holds no weights and no input values).

    Raises:
        FileNotFoundError: no ``graph.json`` in ``folder``.
        UnsafeTarget: a target outside the allowlist.
        ValueError: ``call_module`` nodes (module state is not stored) or unknown tags.
    """
    folder = Path(folder)
    data = json.loads((folder / "graph.json").read_text())
    imeta_path = folder / "input_meta.json"
    imeta = json.loads(imeta_path.read_text()) if imeta_path.exists() else {}
    int_high = imeta.get("int_high")
    wmeta_path = folder / "weight_meta.json"
    wmeta = json.loads(wmeta_path.read_text()) if wmeta_path.exists() else {}
    stats = {p["position"]: p.get("stats") for p in imeta.get("placeholders", []) + wmeta.get("placeholders", [])}
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    gm, placeholders = build_canonical_graph(data, folder, dev, gen, stats, int_high)
    inputs = [v for _, v in sorted(placeholders, key=lambda pv: pv[0])]
    return gm, inputs


def build_canonical_graph(data: dict, folder: Path, dev: torch.device, gen: torch.Generator | None,
                          stats: dict, int_high: int | None) -> tuple[fx.GraphModule, list[tuple[int, Any]]]:
    """A GraphModule from a stored canonical node list (``data["nodes"]``) and its
    ``subgraphs``, rebuilt recursively (sub-GraphModules become submodules ``_sub<k>``).

    Placeholders are created in calling order (their ``position``), so the module keeps the
    calling convention of the captured graph; the other nodes follow in canonical order
    (which respects data edges, mutations and barriers, so in-place graphs replay in the
    order eager ran them). With ``gen`` each placeholder also gets a synthesised value:
    returns ``(gm, [(position, value)])``.

    Raises:
        UnsafeTarget: a target outside the allowlist.
        ValueError: ``call_module`` nodes (module state is not stored), unknown tags.
    """
    graph = fx.Graph()
    root = torch.nn.Module()
    nodes = data["nodes"]
    check_fields(nodes, f"{folder}")
    built: list = [None] * len(nodes)
    placeholders: list[tuple[int, Any]] = []
    subs = data.get("subgraphs", [])
    for i in sorted((i for i, n in enumerate(nodes) if n["op"] == "placeholder"), key=lambda i: nodes[i]["position"]):
        n = nodes[i]
        built[i] = graph.placeholder(f"arg{n['position']}")
        if gen is not None:
            st = stats.get(n.get("position"))
            placeholders.append((n["position"], synth_placeholder(n["meta"], n.get("kind", "input"), int_high, gen, dev, st)))
    for i, n in enumerate(nodes):
        op = n["op"]
        if op == "placeholder":
            continue
        if op == "get_attr" and "subgraph" in n:
            name = f"_sub{n['subgraph']}"
            if not hasattr(root, name):
                sub_gm, _ = build_canonical_graph(subs[n["subgraph"]], folder, dev, None, {}, None)
                root.add_module(name, sub_gm)
            node = graph.get_attr(name)
        elif op == "get_attr":
            name = f"_const{i}"
            root.register_buffer(name, synth_placeholder(n["meta"], "buffer", None, gen or torch.Generator().manual_seed(i), dev))
            node = graph.get_attr(name)
        elif op in ("call_function", "call_method"):
            node = rebuild_call(graph, n, built, dev, f"{folder}: node {i}")
        elif op == "output":
            args = decode_arg(n["args"], built, dev)
            node = graph.output(args[0])
        else:
            raise ValueError(f"{folder}: node {i} has op {op!r}, which the store cannot rebuild")
        built[i] = node
    return fx.GraphModule(root, graph), placeholders
