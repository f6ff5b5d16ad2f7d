"""Node labels of the canonical form: targets, normalised arguments, metadata, module state,
constants. The rules are stated in :mod:`passnet_common.canonical` (module docstring).

Every function here looks at one node (or one value) and returns JSON-able tagged data:
lists always start with a string tag, so decoding is unambiguous.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import struct
import sys
import types
from typing import Any, Callable

import torch
import torch.fx as fx
from torch._decomp import decomposition_table
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.operator_schemas import get_signature_for_torch_op, type_matches
from torch.utils._python_dispatch import TorchDispatchMode

# Parameters whose int values are dimension indexes: kept in the structure form.
DIM_PARAMS = frozenset({
    "dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination", "axis", "axis0",
    "axis1", "dimension", "src_dim", "dst_dim",
})
# Tensor methods taking their sizes / dims as varargs (``x.view(2, 3)`` == ``x.view((2, 3))``),
# with the name of the parameter the varargs bind to.
VARARGS_METHODS = {
    "view": "size", "reshape": "shape", "expand": "size", "repeat": "repeats", "permute": "dims",
    "new_empty": "size", "new_zeros": "size", "new_ones": "size", "tile": "dims", "flip": "dims",
}
# Methods without a ``torch.<name>`` function to normalise against: positional parameter names.
METHOD_PARAMS = {"size": ("input", "dim"), "stride": ("input", "dim"), "unflatten": ("input", "dim", "sizes")}
# Size of a get_attr constant tensor (bytes) up to which its value enters graph_hash by digest.
CONST_DIGEST_MAX_BYTES = 4096



_qualname_cache: dict = {}


def qualified_name(target: Any) -> str:
    """Stable dotted name of a ``call_function`` target (e.g. ``torch._C._nn.linear``); kept per
    target (a module-level memo: the name is a function of the target object)."""
    if isinstance(target, str):
        return target
    got = _qualname_cache.get(id(target))  # by identity (two objects may compare equal), the target kept alive
    if got is not None and got[0] is target:
        return got[1]
    name = _qualified_name(target)
    _qualname_cache[id(target)] = (target, name)
    return name


def _qualified_name(target: Any) -> str:
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return f"torch.ops.{target}"
    try:
        return fx.node._get_qualified_name(target)
    except Exception:
        mod = getattr(target, "__module__", None) or type(target).__module__
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__qualname__
        return f"{mod}.{name}"


def tensor_meta_of(node: fx.Node) -> Any:
    """The example value FX recorded for ``node`` (FakeTensor, tuple, int, ...) or None."""
    meta = node.meta
    for key in ("example_value", "val"):
        if key in meta:
            return meta[key]
    return meta.get("tensor_meta")


_DTYPE_NAMES: dict = {}  # torch.dtype -> its name without "torch." (a memo of _dtype_name)


def _dtype_name(dt: Any) -> str:
    """``str(dt)`` without its ``torch.`` prefix (``float32``); a torch dtype's is memoised."""
    if type(dt) is not torch.dtype:
        return str(dt).replace("torch.", "")
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt).replace("torch.", "")
    return name


def _int_or_sym(s: Any) -> Any:
    """A shape's size as an int, or its text. A SymInt by its constant or its hint (the example value)
    read without a guard: ``int(s)`` would guard on the symbol and specialise it, so that its text (a
    SymInt literal elsewhere in the graph) and the next hash of the same graph changed; an unbacked
    SymInt (no hint) or one whose node tells neither by its text."""
    if isinstance(s, torch.SymInt):
        try:
            node = s.node
            got = node.maybe_as_int()
            if got is None:
                got = node.hint
            if got is not None:
                return int(got)
        except Exception:  # noqa: BLE001 - a node kind without a hint (a nested int): its text, as int(s) failing gave
            pass
        return str(s)
    try:
        return int(s)
    except Exception:
        return str(s)


def encode_meta(value: Any, abstract_shapes: bool = False) -> Any:
    """JSON-able description of an example value: ``["T", dtype, shape]`` for tensors.

    With ``abstract_shapes`` the shape becomes its rank (``["T", dtype, rank]``).
    """
    if value is None:
        return None
    if isinstance(value, torch.Tensor) or hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = _dtype_name(value.dtype)
        shape = value.shape
        return ["T", dtype, len(shape) if abstract_shapes else [s if type(s) is int else _int_or_sym(s) for s in shape]]
    if isinstance(value, (tuple, list)):
        return ["tuple" if isinstance(value, tuple) else "list", *[encode_meta(v, abstract_shapes) for v in value]]
    if isinstance(value, dict):
        return ["dict", *[[str(k), encode_meta(v, abstract_shapes)] for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]]
    if isinstance(value, bool):
        return ["bool"]
    if isinstance(value, (int, torch.SymInt)):
        return ["int"]
    if isinstance(value, (float, torch.SymFloat)):
        return ["float"]
    return ["py", type(value).__qualname__]


def _encode_float(v: float) -> Any:
    """A float literal, exact to its bits: finite values as JSON numbers (``repr``, which
    round-trips and keeps ``-0.0`` apart from ``0.0``), infinities by name, NaN with its
    IEEE-754 bits (payload and sign)."""
    if math.isfinite(v):
        return v
    if v != v:
        return ["float", "nan", struct.pack(">d", v).hex()]
    return ["float", repr(v)]




def encode_literal(value: Any, ref: Callable[[fx.Node], Any], abstract: bool = False) -> Any:
    """Encode an FX argument as tagged JSON; ``ref(node)`` encodes node references.

    Lists and tuples become ``["list", ...]`` / ``["tuple", ...]``. With ``abstract``
    (structure form) every int becomes ``["int"]`` and every float ``["float"]``; bools,
    strings, dtypes and node references are kept.
    """
    t = type(value)
    if t is fx.Node:
        return ref(value)
    if t is tuple or t is list:
        return ["tuple" if t is tuple else "list", *[encode_literal(v, ref, abstract) for v in value]]
    if t is int:
        return ["int"] if abstract else value
    if t is float:
        return ["float"] if abstract else _encode_float(value)
    if value is None or t is bool or t is str:
        return value
    if t is slice:  # neither slice nor torch.dtype can be subclassed: their exact types are all there is
        return ["slice", encode_literal(value.start, ref, abstract), encode_literal(value.stop, ref, abstract),
                encode_literal(value.step, ref, abstract)]
    if t is torch.dtype:
        return ["dtype", _dtype_name(value)]
    if isinstance(value, fx.Node):
        return ref(value)
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return ["int"] if abstract else int(value)
    if isinstance(value, float):
        return ["float"] if abstract else _encode_float(float(value))
    if isinstance(value, (list, tuple)):
        tag = "size" if isinstance(value, torch.Size) else ("tuple" if isinstance(value, tuple) else "list")
        return [tag, *[encode_literal(v, ref, abstract) for v in value]]
    if isinstance(value, dict):
        return ["dict", *[[str(k), encode_literal(v, ref, abstract)] for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]]
    if isinstance(value, torch.device):
        return ["device"]
    if isinstance(value, torch.memory_format):
        return ["memory_format", str(value).replace("torch.", "")]
    if isinstance(value, torch.layout):
        return ["layout", str(value).replace("torch.", "")]
    if value is Ellipsis:
        return ["ellipsis"]
    if isinstance(value, complex):
        return ["complex", _encode_float(value.real), _encode_float(value.imag)]
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ["sym", str(value)]
    if isinstance(value, torch.Tensor):
        return ["tensor", _dtype_name(value.dtype), len(value.shape) if abstract else list(value.shape)]
    if callable(value):
        return ["fn", qualified_name(value)]
    return ["py", type(value).__qualname__, repr(value)[:200]]


# --- argument normalisation ------------------------------------------------------------

_plan_cache: dict = {}
# Modules whose functions (Python operators, builtins, math) have no signature to bind arguments to.
SKIPPED_MODULES = ("_operator", "operator", "builtins", "math")


def _type_class(v: Any) -> Any:
    t = type(v)
    if t is fx.Node:
        return ("N", _arg_type(v))
    if t is tuple or t is list or isinstance(v, (tuple, list)):
        # every item of every tuple or list, FX's immutable_list included: the binding reads them all
        # (int[] vs a float among ints)
        return (t, len(v), *(_type_class(x) for x in v))
    return t


def _arg_type(v: Any) -> Any:
    """The type an argument is matched against a schema with (``type_matches``): a node by its
    example value (a tensor when it has none), a list of ints / floats / tensors as ``list[...]``,
    a memory format or layout as the int TorchScript schemas declare them."""
    if isinstance(v, fx.Node):
        val = tensor_meta_of(v)
        if isinstance(val, torch.Tensor) or val is None:
            return torch.Tensor
        return int if isinstance(val, torch.SymInt) else float if isinstance(val, torch.SymFloat) else type(val)
    if isinstance(v, (tuple, list)) and v:
        kinds = {_arg_type(x) for x in v}
        if len(kinds) == 1:
            (k,) = kinds
            if k in (torch.Tensor, int, float, bool):
                return list[k]
        return type(v)
    if isinstance(v, (torch.memory_format, torch.layout)):
        return int
    return type(v)


def _signatures(fn: Any) -> list[tuple[Any, Any]]:
    """``[(inspect.Signature, FunctionSchema or None)]`` of a call target: its ATen overloads
    (``torch.fx.operator_schemas.get_signature_for_torch_op``, ``self`` named ``input``),
    else its Python signature."""
    try:
        sigs, schemas = get_signature_for_torch_op(fn, return_schemas=True)
    except Exception:  # noqa: BLE001
        sigs, schemas = None, None
    if sigs:
        return [(sg, sc) for sg, sc in zip(sigs, schemas)
                if not any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in sc.arguments)]
    try:
        return [(inspect.signature(fn), None)]
    except (TypeError, ValueError):
        return []


def _binds(sig, arg_types: tuple, kwarg_types: dict, typed: bool = True):
    """The parameter names ``(args, kwargs)`` bind to in ``sig`` when (``typed``: an ATen
    schema's signature) their types match its annotations
    (``torch.fx.operator_schemas.type_matches``), else None."""
    try:
        bound = sig.bind(*arg_types, **kwarg_types)
    except TypeError:
        return None
    for name, ty in bound.arguments.items():
        ann = sig.parameters[name].annotation
        if sig.parameters[name].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            return None
        if typed and ann is not inspect.Parameter.empty and not type_matches(ann, ty):
            return None
    return list(bound.arguments)


def _make_plan(fn: Any, args: tuple, kwargs: dict):
    """How a call of ``fn`` binds to one signature: ``(names of the positional arguments,
    parameter names in signature order, defaults of the parameters not given, the ATen
    overload bound to or None)``, or None when no signature binds.

    Every signature of ``fn`` (every ATen overload, out= variants left aside) whose parameters
    take the call's arguments with matching types is a match; the call is then bound to the
    *widest* signature that takes what a match was given, by keyword, and agrees with it on the
    defaults of the rest: ``x.to(torch.float16)`` binds ``to.dtype``, ``x.to(dtype=torch.float16)``
    both ``to.dtype`` and ``to.dtype_layout``, and both are labelled by ``to.dtype_layout``;
    ``arange(0, 8)`` (``arange.start``) and ``arange(0, 8, 1)`` both by ``arange.start_step``.
    Ties between equally wide signatures go to the first in schema order."""
    arg_types = tuple(_arg_type(a) for a in args)
    kwarg_types = {k: _arg_type(v) for k, v in kwargs.items()}
    sigs = _signatures(fn)
    matches = []
    for sig, sch in sigs:  # by arity first (as normalize_function), by types where several bind
        names = _binds(sig, arg_types, kwarg_types, False)
        if names is not None:
            matches.append((sig, sch, names))
    if len(matches) > 1:
        matches = [(sig, sch, names) for sig, sch, names in matches
                   if sch is None or _binds(sig, arg_types, kwarg_types, True) is not None]
    matches = [(sig, names) for sig, _, names in matches]
    if not matches:
        return None
    best = None  # (width, -rank, sig, schema, positional names)
    for rank, (sig_b, sch_b) in enumerate(sigs):
        for sig_m, names_m in matches:
            given = dict(zip(names_m, arg_types))
            given.update(kwarg_types)
            rest = [p for p in sig_m.parameters.values() if p.name not in given]
            if any(p.name not in sig_b.parameters or sig_b.parameters[p.name].default is inspect.Parameter.empty
                   or not _same_default(sig_b.parameters[p.name].default, p.default) for p in rest):
                continue
            kw_names = _binds(sig_b, (), given, sch_b is not None)
            if kw_names is None:
                continue
            cand = (len(sig_b.parameters), -rank, sig_b, sch_b, names_m[: len(args)])
            if best is None or cand[:2] > best[:2]:
                best = cand
            break
    if best is None:
        return None
    _, _, sig, sch, pos_names = best
    if any(k not in sig.parameters for k in kwargs):
        return None
    given = set(pos_names) | set(kwargs)
    defaults = {k: _schema_default(sch, k, p.default) for k, p in sig.parameters.items() if k not in given}
    if any(v is inspect.Parameter.empty for v in defaults.values()):
        return None
    return tuple(pos_names), tuple(sig.parameters), defaults, _overload_of(sch)


_MEMORY_FORMATS = (torch.contiguous_format, torch.preserve_format, torch.channels_last, torch.channels_last_3d)


def _schema_default(schema: Any, name: str, default: Any) -> Any:
    """A default as the value a caller would spell: TorchScript schemas give ``MemoryFormat``
    and ``Layout`` defaults as ints (c10's enum order) and type those parameters ``int``, so
    the parameter's name tells them."""
    if schema is None or type(default) is not int:
        return default
    if name == "memory_format" and 0 <= default < len(_MEMORY_FORMATS):  # the schema's type reads "int"
        return _MEMORY_FORMATS[default]
    if name == "layout" and default == 0:
        return torch.strided
    return default


def _same_default(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _overload_of(schema: Any):
    """The ATen OpOverload of a schema, or None."""
    if schema is None:
        return None
    ns, _, name = schema.name.partition("::")
    try:
        return getattr(getattr(getattr(torch.ops, ns), name), schema.overload_name or "default")
    except Exception:  # noqa: BLE001
        return None


class _NoRun(Exception):
    pass


_wider_cache: dict = {}


def _has_wider_positional(op: Any) -> bool:
    """Whether another overload of ``op``'s packet takes the same positional parameters and more,
    one of them required (``arange.start(start, end)`` beside ``arange(end)``): only then can its
    decomposition make the call another overload's (cached per overload; most ops have none, and
    running a decomposition can import much of ``torch._dynamo``)."""
    try:
        return _wider_cache[op]
    except KeyError:
        pass
    mine = {a.name for a in op._schema.arguments if not a.kwarg_only}
    res = False
    pkt = op.overloadpacket
    for ov in pkt.overloads():
        sch = getattr(pkt, ov)._schema
        if any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in sch.arguments):
            continue
        pos = [a for a in sch.arguments if not a.kwarg_only]
        names = {a.name for a in pos}
        if mine < names and any(not a.has_default_value() for a in pos if a.name not in mine):
            res = True
            break
    _wider_cache[op] = res
    return res


# Literal types whose values a memo of decompositions may be keyed by (floats by their bits).
_MEMO_LITERALS = (type(None), bool, int, str, torch.dtype, torch.layout, torch.memory_format, torch.device)
_decomposed_cache: dict = {}


def _literal_memo_key(v: Any) -> Any:
    """A key equal only for literals that are the same value of the same type (floats by their
    IEEE-754 bits, containers item by item); None for anything else (then no memo)."""
    t = type(v)
    if t is float:
        return (float, struct.pack("<d", v))
    if t in _MEMO_LITERALS:
        return (t, v)
    if t is tuple or t is list:
        items = tuple(_literal_memo_key(x) for x in v)
        return None if None in items else (t, items)
    return None


def _decomposed_literal_call(op: Any, bound: list[tuple[str, Any]]) -> list[tuple[str, Any]] | None:
    """A call of literals only (``arange(8)``) as the one call of another overload of the same
    op its ATen decomposition makes (``arange.start_step(0, 8, 1)``), bound to that overload's
    schema with its defaults; None when there is no such decomposition. The decomposition runs
    under a dispatch mode that records the call and executes nothing, once per overload, literal
    values (:func:`_literal_memo_key`) and default dtype (which a decomposition may read): a
    module-level memo, the same key giving the same decomposed call. (A decomposition reading the
    default device could only change a device value, which a label does not spell.)"""
    if not _has_wider_positional(op):
        return None
    key = (op, torch.get_default_dtype(), tuple((k, _literal_memo_key(v)) for k, v in bound))
    if any(kv[1] is None for kv in key[2]):
        return _decompose_literal_call(op, bound)
    try:
        got = _decomposed_cache[key]
    except KeyError:
        got = _decomposed_cache[key] = _decompose_literal_call(op, bound)
    return None if got is None else list(got)


def _decompose_literal_call(op: Any, bound: list[tuple[str, Any]]) -> list[tuple[str, Any]] | None:
    """:func:`_decomposed_literal_call` without the memo."""
    decomp = decomposition_table.get(op)
    if decomp is None:
        return None
    seen: list = []

    class _Rec(TorchDispatchMode):
        def __torch_dispatch__(self, func, types_, a=(), kw=None):
            seen.append((func, a, kw or {}))
            raise _NoRun

    sch = op._schema
    values = dict(bound)
    pos = [values.get("input" if a.name == "self" else a.name) for a in sch.arguments if not a.kwarg_only]
    kw = {a.name: values.get(a.name) for a in sch.arguments if a.kwarg_only}
    try:
        with _Rec():
            decomp(*pos, **kw)
    except _NoRun:
        pass
    except Exception:  # noqa: BLE001
        return None
    if len(seen) != 1:
        return None
    func, a, kw = seen[0]
    if func is op or getattr(func, "overloadpacket", None) is not op.overloadpacket:
        return None
    out = []
    pa = [x for x in func._schema.arguments if not x.kwarg_only]
    for i, x in enumerate(func._schema.arguments):
        name = "input" if x.name == "self" else x.name
        if not x.kwarg_only and i < len(a):
            v = a[i]
        elif x.name in kw:
            v = kw[x.name]
        elif x.has_default_value():
            v = x.default_value
        else:
            return None
        out.append((name, v))
    del pa
    return out


def normalized_arguments(node: fx.Node) -> list[tuple[str, Any]] | None:
    """The call's arguments bound to the op's signature: ``[(name, value)]`` in signature
    order, defaults included, or None when no unique signature binds them.

    ``torch.softmax(x, 1)``, ``torch.softmax(x, dim=1)`` and ``x.softmax(1)``'s method form
    with ``dtype=None`` spelled out all give ``[("input", x), ("dim", 1), ("dtype", None)]``.
    Signatures come from ``torch.fx.operator_schemas.normalize_function`` (ATen schemas for
    builtins, ``inspect.signature`` for Python functions such as ``F.relu``); methods bind
    against ``torch.<name>`` with the tensor as first argument, varargs methods
    (``view``, ``permute``, ...) first fold their varargs into one tuple.
    """
    op = node.op
    args, kwargs = node.args, node.kwargs
    if op == "call_method":
        name = node.target
        if name in VARARGS_METHODS and len(args) >= 2 and not isinstance(args[1], (tuple, list, torch.dtype)) \
                and not (len(args) == 2 and isinstance(args[1], fx.Node) and isinstance(tensor_meta_of(args[1]), torch.Tensor)):
            return [("input", args[0]), (VARARGS_METHODS[name], tuple(args[1:]))] + sorted(kwargs.items())
        if name in VARARGS_METHODS and len(args) == 2:
            return [("input", args[0]), (VARARGS_METHODS[name], args[1])] + sorted(kwargs.items())
        if name in METHOD_PARAMS:
            names = METHOD_PARAMS[name]
            if len(args) <= len(names):
                return list(zip(names, args)) + sorted(kwargs.items())
            return None
        fn = getattr(torch, name, None)
        if fn is None or not callable(fn):
            fn = getattr(torch.ops.aten, name, None) if not name.startswith("_") else None
        if fn is None or not callable(fn):
            return None
    elif op == "call_function":
        fn = node.target
        mod = getattr(fn, "__module__", None) or ""
        if mod in SKIPPED_MODULES or isinstance(fn, torch._ops.HigherOrderOperator):
            return None
    else:
        return None
    # fn by identity (two callables may compare equal), kept alive in the entry
    key = (op, id(fn), len(args), tuple((k, _type_class(v)) for k, v in kwargs.items()), tuple(_type_class(a) for a in args))
    return bind_by_plan(node, fn, key)


def bind_by_plan(node: fx.Node, fn: Any, key: Any) -> list[tuple[str, Any]] | None:
    """The end of :func:`normalized_arguments` (also called by its compiled copy,
    ``_cform.normalized_arguments``): the plan of ``fn`` for the argument types ``key`` names, from the
    plan cache or :func:`_make_plan`, applied to the node's arguments."""
    args, kwargs = node.args, node.kwargs
    try:
        got = _plan_cache.get(key)
    except TypeError:  # an unhashable argument type: no memo
        got, key = None, None
    if got is not None and got[0] is fn:
        plan = got[1]
    else:
        plan = _make_plan(fn, tuple(args), dict(kwargs))
        if key is not None:
            _plan_cache[key] = (fn, plan)
    if plan is None:
        return None
    pos_names, names, defaults, overload = plan
    bound = dict(zip(pos_names, args))
    bound.update(kwargs)
    out = [(k, bound[k] if k in bound else defaults[k]) for k in names]
    if overload is not None and not node.all_input_nodes:
        return _decomposed_literal_call(overload, out) or out
    return out


_posname_cache: dict = {}


def positional_names(node: fx.Node) -> tuple:
    """Names of a call's positional parameters by position, from the ATen schemas of
    ``torch.ops.aten.<name>`` (a name where every overload long enough agrees, else None);
    ``()`` when there is no schema. Used where no unique signature binds (ambiguous
    overloads such as ``torch.conv2d``'s ``padding: str`` variant) to recognise
    dimension and ``groups`` arguments."""
    t = node.target
    key = (node.op, t)
    try:
        return _posname_cache[key]
    except (KeyError, TypeError):
        pass
    if isinstance(t, torch._ops.OpOverload):
        schemas = [t._schema]
    else:
        name = t if isinstance(t, str) else getattr(t, "__name__", "") or ""
        pkt = getattr(torch.ops.aten, name, None) if name and not name.startswith("__") else None
        try:
            schemas = [getattr(pkt, ov)._schema for ov in pkt.overloads()] if pkt is not None else []
        except Exception:
            schemas = []
    names: list = []
    for sch in schemas:
        pos = [a.name for a in sch.arguments if not a.kwarg_only]
        for i, nm in enumerate(pos):
            if i == len(names):
                names.append(nm)
            elif names[i] != nm:
                names[i] = None
    res = tuple(names)
    try:
        _posname_cache[key] = res
    except TypeError:
        pass
    return res


# --- module state, constants -------------------------------------------------------------


def _plain(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, torch.dtype)):
        return True
    return isinstance(v, (tuple, list)) and all(_plain(x) for x in v)


def tensor_digest(t: torch.Tensor) -> str | None:
    """sha256 (first 32 hex digits) of a real tensor's bytes when it has at most
    :data:`CONST_DIGEST_MAX_BYTES` bytes, else None (also None on meta / fake tensors)."""
    try:
        if isinstance(t, FakeTensor) or t.device.type == "meta" or t.numel() * t.element_size() > CONST_DIGEST_MAX_BYTES:
            return None
        data = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
        return hashlib.sha256(data.numpy().tobytes()).hexdigest()[:32]
    except Exception:
        return None


def _is_function(v: Any) -> bool:
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial,
                          torch._ops.OpOverload, torch._ops.OpOverloadPacket)) and not isinstance(v, torch.nn.Module)


def function_label(fn: Any) -> list:
    """A function-valued module attribute (``TransformerEncoderLayer(activation=torch.tanh)``,
    a ``functools.partial``): ``["fn", qualified name]``; a lambda or local function (no
    importable name) adds a digest of its code object (bytecode, constants, names), so
    two different lambdas do not share a label; a partial adds its arguments; a bound
    method adds its owner's type."""
    if isinstance(fn, functools.partial):
        return ["partial", function_label(fn.func), encode_literal(fn.args, _no_node),
                encode_literal(dict(fn.keywords), _no_node)]
    if isinstance(fn, types.MethodType):
        owner = type(fn.__self__)
        return ["method", f"{owner.__module__}.{owner.__qualname__}", function_label(fn.__func__)]
    name = qualified_name(fn)
    qual = getattr(fn, "__qualname__", "") or ""
    if isinstance(fn, types.FunctionType) and ("<lambda>" in qual or "<locals>" in qual or not _importable(fn)):
        return ["fn", f"{fn.__module__}.{qual}", hashlib.sha256(_code_blob(fn.__code__)).hexdigest()[:32]]
    return ["fn", name]


def _code_blob(code: Any) -> bytes:
    """Bytes of a code object that do not depend on addresses or file paths: bytecode,
    names, and constants (nested code objects recursively). The bytecode depends on the
    Python version."""
    consts = [_code_blob(c) if hasattr(c, "co_code") else repr(c).encode() for c in code.co_consts]
    return repr((code.co_code, consts, code.co_names, code.co_varnames)).encode()


def _importable(fn: Any) -> bool:
    obj = sys.modules.get(getattr(fn, "__module__", None) or "")
    for part in (getattr(fn, "__qualname__", "") or "").split("."):
        obj = getattr(obj, part, None)
    return obj is fn


def _no_node(m: Any) -> Any:
    return ["%"]


def module_state(mod: torch.nn.Module, abstract: bool = False) -> list:
    """Type and full hyperparameter state of a ``call_module`` leaf, recursively over its
    children: every plain instance attribute (ints, floats, bools, strings, dtypes, tuples
    of those -- private ones such as ``_qkv_same_embed_dim`` included, hook tables and other
    containers excluded), every function-valued attribute (:func:`function_label`), each parameter's shape and dtype,
    each buffer's shape, dtype and
    (up to :data:`CONST_DIGEST_MAX_BYTES`) value digest. With ``abstract`` (structure form)
    ints and floats become their type (except ``groups=1``, a dense convolution), shapes
    their rank and digests are dropped."""
    attrs = [[k, (1 if k == "groups" and v == 1 and type(v) is int else encode_literal(v, None, abstract))
              if _plain(v) else function_label(v)]
             for k, v in sorted(vars(mod).items()) if _plain(v) or _is_function(v)]
    params = [[k, encode_meta(p, abstract)] for k, p in sorted(mod._parameters.items()) if p is not None]
    bufs = [[k, encode_meta(b, abstract), None if abstract else tensor_digest(b)]
            for k, b in sorted(mod._buffers.items()) if b is not None]
    kids = [[k, module_state(m, abstract)] for k, m in sorted(mod._modules.items()) if m is not None]
    return ["module", f"{type(mod).__module__}.{type(mod).__qualname__}", ["dict", *attrs], ["dict", *params],
            ["dict", *bufs], ["dict", *kids]]


def get_attr_value(gm: Any, target: str) -> Any:
    """The object a ``get_attr`` node fetches from ``gm``, None if absent."""
    if gm is None:
        return None
    obj = gm
    try:
        for part in str(target).split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None
    return obj


def placeholder_kind(node: fx.Node) -> str:
    """``input``, ``parameter`` or ``buffer`` from Dynamo's ``grapharg`` source (e.g.
    ``L['self']._modules['fc']._parameters['weight']``); ``input`` when there is none.
    The placeholder's own name is never read (it must not change the hash)."""
    ga = node.meta.get("grapharg")
    src = getattr(ga, "source", None)
    try:
        name = src.name() if src is not None and hasattr(src, "name") else ""
    except Exception:
        name = ""
    name = name if isinstance(name, str) else str(name)
    if "_parameters" in name:
        return "parameter"
    if "_buffers" in name:
        return "buffer"
    return "input"
