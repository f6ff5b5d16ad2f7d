"""The static check of an imported PassBench ``model.py``, its conversion into an FX graph without
executing it, and the meta-file reader (used by :mod:`curate.passbench.export`).

Accepted subset (what PassNet's / GraphNet's samples and our own export contain): ``import torch``
(and ``from torch import device``, ``from math import inf, nan``); one ``class
GraphModule(torch.nn.Module)`` whose ``forward(self, <args>)`` is straight-line code: ``name =
<expr>`` (``a = b = None`` deletions), annotated assignments, the in-place forms FX writes for
``operator.setitem`` and the in-place operators (``name[<expr>] = <expr>; alias = name`` and
``name += <expr>``, :data:`_INPLACE`), one ``return``. Expressions: names bound before, literals
(``Ellipsis`` among them), tuples / lists / slices, subscripts, unary / binary operators and single
comparisons, calls of allowed torch functions (:func:`_allowed_torch`), tensor methods outside
:data:`DENIED_METHODS`, the builtins of :data:`BUILTIN_CALLS` and the constant constructors of
:data:`CONSTANT_CALLS`. Everything else (other imports or names, dunders, loops, ``def`` /
``lambda``, comprehensions, ``**kwargs``, ``torch.load``-like calls) is refused with file, line
and reason. :func:`graph_from_source` builds the FX graph node by node from the checked AST; call
targets resolve through :func:`passnet_common.store.resolve_name`'s allowlist; ``device(...)``
literals (PassBench samples carry ``cuda:0``) become ``cpu``, where the scorer runs.
"""

from __future__ import annotations

import ast
import math
import operator
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from passnet_common import store
from passnet_common.store import UnsafeTarget, resolve_name

DENIED_TORCH = {"load", "save", "from_file", "compile", "hub", "jit", "package", "utils", "library", "classes",
                "distributed", "multiprocessing", "backends", "serialization", "manual_seed", "seed", "export",
                "use_deterministic_algorithms", "autograd", "cuda", "mps", "xpu", "profiler", "onnx", "fx", "testing"}
"""``torch.<name>`` roots refused in an imported ``model.py`` (I/O, code loading, global state)."""
DENIED_TORCH_PREFIXES = ("_", "set_", "import_", "load", "save", "from_file", "compile", "get_")
"""Name prefixes refused under ``torch.`` (private names, global setters, ``torch.import_ir_module``
(loads TorchScript from a file) and the like)."""
ALLOWED_TORCH_PREFIXES = ("torch.nn.functional.", "torch._C._nn.", "torch._C._fft.", "torch._C._linalg.",
                          "torch._C._special.", "torch.fft.", "torch.linalg.", "torch.special.", "torch.ops.aten.",
                          "torch.ops.prims.")
ALLOWED_TORCH_EXTRA = {"torch._C._set_grad_enabled"} | {
    f"torch.functional.{name}" for name in (  # torch.functional.__all__ (torch 2.14): tensor computation only
        "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
        "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
        "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index")}
DENIED_METHODS = store.DENIED_METHODS | {"_typed_storage", "tolist", "to_sparse"}
"""Tensor methods refused (the store loader's :data:`passnet_common.store.DENIED_METHODS`: callbacks, raw memory,
autograd side effects, files, leaving the CPU; and, in an imported sample, lists and sparse layouts)."""
BUILTIN_CALLS = {"getattr", "len", "max", "min", "abs", "int", "float", "bool", "round", "sum"}
CONSTANT_CALLS = {"slice", "device", "float"}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift}
_INPLACE = {op: getattr(operator, "i" + fn.__name__.rstrip("_")) for op, fn in _BINOPS.items()}
"""``name <op>= value``: the in-place twin of each :data:`_BINOPS` operator (``add`` -> ``iadd``, ``and_`` ->
``iand``), as FX's code generator writes it (``x += y; iadd = x``)."""
_CONSTANT_NAMES = {"inf": math.inf, "nan": math.nan, "Ellipsis": Ellipsis}
"""Names that are literals in a ``forward`` (FX writes ``x[(Ellipsis, slice(None, 7, None))]``)."""
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge}
_UNOPS = {ast.USub: operator.neg, ast.Invert: operator.invert, ast.Not: operator.not_, ast.UAdd: operator.pos}


class RefusedSample(ValueError):
    """An imported ``model.py`` / meta file is outside the accepted subset; the message names the
    file, line and reason."""


# --- the static check and the AST -> FX conversion (no execution) ------------------------------


def _chain(node: ast.AST) -> str | None:
    """``torch.nn.functional.gelu`` for an attribute chain rooted at a Name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _allowed_torch(name: str) -> bool:
    """A ``torch.*`` call target an imported graph may name: ``torch.<fn>`` (one level, not in
    :data:`DENIED_TORCH`, no prefix of :data:`DENIED_TORCH_PREFIXES`), or under
    :data:`ALLOWED_TORCH_PREFIXES`."""
    if name in ALLOWED_TORCH_EXTRA or name.startswith(ALLOWED_TORCH_PREFIXES):
        return True
    parts = name.split(".")
    return len(parts) == 2 and parts[0] == "torch" and not parts[1].startswith(DENIED_TORCH_PREFIXES) \
        and parts[1] not in DENIED_TORCH


def static_check(source: str, filename: str = "model.py") -> ast.FunctionDef:
    """Accept only the PassBench ``model.py`` subset (module docstring); returns ``forward``.

    Raises:
        RefusedSample: not parseable (null bytes, or nested too deeply for the parser), another import
            or top-level statement, a dunder, a name that is neither an argument, an assigned name nor
            ``torch`` / ``device`` / ``inf`` / ``nan`` / ``Ellipsis`` / an allowed builtin, a statement or
            expression outside the subset, expressions nested too deeply to check.
    """
    try:
        return _static_check(source, filename)
    except RecursionError as exc:
        raise RefusedSample(f"{filename}: expressions nested too deeply to check") from exc


def _static_check(source: str, filename: str) -> ast.FunctionDef:
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise RefusedSample(f"{filename}: not parseable: {type(exc).__name__}: {exc}") from exc

    def bad(node, why):
        raise RefusedSample(f"{filename}:{getattr(node, 'lineno', '?')}: {why}")

    forward = None
    for st in tree.body:
        if isinstance(st, ast.Import) and [a.name for a in st.names] == ["torch"] and st.names[0].asname is None:
            continue
        if isinstance(st, ast.ImportFrom) and st.module in ("torch", "math") and not st.level \
                and {a.name for a in st.names} <= {"device", "inf", "nan"} and all(a.asname is None for a in st.names):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.ClassDef) and st.name == "GraphModule" and forward is None and not st.keywords \
                and [_chain(b) for b in st.bases] == ["torch.nn.Module"] and not st.decorator_list:
            for f in st.body:
                if isinstance(f, ast.FunctionDef) and f.name == "forward" and not f.decorator_list and forward is None:
                    forward = f
                elif not (isinstance(f, ast.Expr) and isinstance(f.value, ast.Constant)) and not isinstance(f, ast.Pass):
                    bad(f, "only forward (and a docstring) may be defined in GraphModule")
            continue
        bad(st, f"top-level {type(st).__name__} is outside the PassBench subset (only import torch and class GraphModule)")
    if forward is None:
        raise RefusedSample(f"{filename}: no class GraphModule(torch.nn.Module) with forward")
    a = forward.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or not a.args or a.args[0].arg != "self":
        bad(forward, "forward must take self and plain positional arguments")
    known = {x.arg for x in a.args[1:]}
    for node in ast.walk(forward):
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            bad(node, f"dunder attribute {node.attr!r}")
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.ClassDef, ast.GeneratorExp, ast.ListComp, ast.SetComp,
                             ast.DictComp, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred,
                             ast.JoinedStr, ast.Global, ast.Nonlocal)) and node is not forward:
            bad(node, f"{type(node).__name__} is outside the PassBench subset")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("__"):
            bad(node, f"dunder string {node.value!r}")
    for st in forward.body:
        if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
            if len(st.targets) > 1 and not (isinstance(st.value, ast.Constant) and st.value.value is None):
                bad(st, "chained assignment of a value other than None")
            _check_expr(st.value, known, bad)
            known.update(t.id for t in st.targets)
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            _check_expr(st.value, known, bad)
            known.add(st.target.id)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Subscript) \
                and isinstance(st.targets[0].value, ast.Name):  # FX's operator.setitem: x[idx] = v
            _check_expr(st.targets[0].value, known, bad)
            _check_expr(st.targets[0].slice, known, bad)
            _check_expr(st.value, known, bad)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and type(st.op) in _INPLACE:
            _check_expr(st.target, known, bad)
            _check_expr(st.value, known, bad)
        elif isinstance(st, ast.Return) and st.value is not None:
            _check_expr(st.value, known, bad)
        elif isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
            pass
        else:
            bad(st, f"statement {type(st).__name__} is outside the PassBench subset")
    return forward


def _check_expr(e: ast.AST, known: set, bad) -> None:
    if isinstance(e, ast.Constant):
        return
    if isinstance(e, ast.Name):
        if e.id not in known and e.id not in _CONSTANT_NAMES:
            bad(e, f"name {e.id!r} is not an argument or an assigned name")
        return
    if isinstance(e, (ast.Tuple, ast.List)):
        for x in e.elts:
            _check_expr(x, known, bad)
        return
    if isinstance(e, ast.Slice):
        for x in (e.lower, e.upper, e.step):
            if x is not None:
                _check_expr(x, known, bad)
        return
    if isinstance(e, ast.Subscript):
        _check_expr(e.value, known, bad)
        _check_expr(e.slice, known, bad)
        return
    if isinstance(e, ast.UnaryOp) and type(e.op) in _UNOPS:
        return _check_expr(e.operand, known, bad)
    if isinstance(e, ast.BinOp) and type(e.op) in _BINOPS:
        _check_expr(e.left, known, bad)
        return _check_expr(e.right, known, bad)
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _CMPOPS:
        _check_expr(e.left, known, bad)
        return _check_expr(e.comparators[0], known, bad)
    if isinstance(e, ast.Attribute):
        name = _chain(e)
        if name and name.split(".")[0] == "torch":
            return  # a torch constant (dtype, layout...): checked for its type at conversion
        if name and name.split(".")[0] not in known:
            bad(e, f"attribute of an unknown name {name!r}")
        return _check_expr(e.value, known, bad)
    if isinstance(e, ast.Call):
        for k in e.keywords:
            if k.arg is None:
                bad(e, "**kwargs")
            _check_expr(k.value, known, bad)
        for x in e.args:
            _check_expr(x, known, bad)
        f = e.func
        if isinstance(f, ast.Name):
            if f.id not in BUILTIN_CALLS | CONSTANT_CALLS:
                bad(e, f"call of {f.id!r} (allowed: {sorted(BUILTIN_CALLS | CONSTANT_CALLS)})")
            if f.id == "getattr" and not (len(e.args) == 2 and isinstance(e.args[1], ast.Constant)
                                          and isinstance(e.args[1].value, str) and not e.args[1].value.startswith("_")):
                bad(e, "getattr with anything but a literal public attribute name")
            return
        name = _chain(f)
        if name and name.split(".")[0] == "torch":
            if not _allowed_torch(name):
                bad(e, f"call of {name!r} is not allowed in an imported graph")
            return
        if isinstance(f, ast.Attribute):
            if f.attr in DENIED_METHODS:
                bad(e, f"tensor method {f.attr!r} is not allowed")
            return _check_expr(f.value, known, bad)
        bad(e, "call of an expression")
    bad(e, f"expression {type(e).__name__} is outside the PassBench subset")


def graph_from_source(source: str, filename: str = "model.py"):
    """Convert a checked ``model.py`` into an ``fx.GraphModule`` without executing it.

    Returns:
        ``(gm, arg_names)``: placeholders in ``forward``'s argument order.

    Raises:
        RefusedSample: :func:`static_check` refuses it, or a torch attribute used as a value is
            not a dtype / layout / memory format / number, or a target is off the store's
            allowlist (:class:`passnet_common.store.UnsafeTarget`), or an in-place write
            (``x[idx] = v``, ``x += y``) is to a name that holds no graph value, or constant
            arithmetic fails (``1 // 0``), or the graph's own code does not compile (FX writes a
            literal it cannot: ``10 ** 10000``), or the code is nested too deeply to convert.
    """
    try:
        return _graph_from_source(source, filename)
    except RecursionError as exc:
        raise RefusedSample(f"{filename}: expressions nested too deeply to convert") from exc


def _graph_from_source(source: str, filename: str):
    fwd = static_check(source, filename)
    graph = fx.Graph()
    env: dict[str, Any] = dict(_CONSTANT_NAMES)
    names = [a.arg for a in fwd.args.args[1:]]
    for n in names:
        env[n] = graph.placeholder(n)

    def bad(node, why):
        raise RefusedSample(f"{filename}:{getattr(node, 'lineno', '?')}: {why}")

    def has_node(v) -> bool:
        return isinstance(v, fx.Node) or (isinstance(v, (tuple, list)) and any(has_node(x) for x in v)) \
            or (isinstance(v, slice) and any(has_node(x) for x in (v.start, v.stop, v.step)))

    def target(name, node):
        try:
            return resolve_name(name)  # dtypes too; calls are checked where they are built
        except UnsafeTarget as exc:
            bad(node, str(exc))

    def ev(e):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return env[e.id]
        if isinstance(e, ast.Tuple):
            return tuple(ev(x) for x in e.elts)
        if isinstance(e, ast.List):
            return [ev(x) for x in e.elts]
        if isinstance(e, ast.Slice):
            return slice(*(None if x is None else ev(x) for x in (e.lower, e.upper, e.step)))
        if isinstance(e, ast.Subscript):
            return graph.call_function(operator.getitem, (ev(e.value), ev(e.slice)))
        if isinstance(e, (ast.UnaryOp, ast.BinOp, ast.Compare)):
            fn, args = ((_UNOPS[type(e.op)], (ev(e.operand),)) if isinstance(e, ast.UnaryOp) else
                        (_BINOPS[type(e.op)], (ev(e.left), ev(e.right))) if isinstance(e, ast.BinOp) else
                        (_CMPOPS[type(e.ops[0])], (ev(e.left), ev(e.comparators[0]))))
            if not has_node(args):
                if not all(isinstance(a, (int, float, bool)) for a in args):
                    bad(e, "constant arithmetic on something other than numbers")
                try:
                    return fn(*args)
                except (ArithmeticError, ValueError, TypeError) as exc:
                    bad(e, f"constant arithmetic fails: {type(exc).__name__}: {exc}")
            return graph.call_function(fn, args)
        if isinstance(e, ast.Attribute):
            name = _chain(e)
            if name and name.split(".")[0] == "torch":
                v = target(name, e)
                if not isinstance(v, (torch.dtype, torch.layout, torch.memory_format, int, float, bool)):
                    bad(e, f"torch attribute {name!r} used as a value is not a dtype, layout, memory format or number")
                return v
            return graph.call_function(getattr, (ev(e.value), e.attr))
        if isinstance(e, ast.Call):
            args = tuple(ev(x) for x in e.args)
            kwargs = {k.arg: ev(k.value) for k in e.keywords}
            f = e.func
            if isinstance(f, ast.Name):
                if f.id == "slice" and not kwargs and 1 <= len(args) <= 3 and has_node(args):
                    return slice(*args)  # FX writes a slice argument holding nodes as slice(None, size, None)
                if f.id in CONSTANT_CALLS and not has_node((args, tuple(kwargs.values()))):
                    try:
                        if f.id == "device":  # the scorer runs on CPU: a sample's cuda literals become cpu
                            torch.device(*args, **kwargs)  # (still a valid device spec)
                            return torch.device("cpu")
                        if kwargs or (f.id == "float" and not (len(args) == 1 and isinstance(args[0], (str, int, float)))):
                            bad(e, f"{f.id}() of something other than literals")
                        return slice(*args) if f.id == "slice" else float(args[0])
                    except (TypeError, ValueError, RuntimeError) as exc:
                        bad(e, f"{f.id}(): {exc}")
                return graph.call_function(target(f"builtins.{f.id}", e), args, kwargs)
            name = _chain(f)
            if name and name.split(".")[0] == "torch":
                return graph.call_function(target(name, e), args, kwargs)
            recv = ev(f.value)
            if not isinstance(recv, fx.Node):
                bad(e, f"method {f.attr!r} called on a constant")
            return graph.call_method(f.attr, (recv, *args), kwargs)
        bad(e, f"expression {type(e).__name__}")

    def written_to(t: ast.Name, st) -> fx.Node:
        v = ev(t)
        if not isinstance(v, fx.Node):
            bad(st, f"in-place write to {t.id!r}, which holds no graph value ({type(v).__name__})")
        return v

    # ``x[idx] = v;  setitem = x`` and ``x += y;  iadd = x`` (the alias annotated or not): the in-place node
    # leaves ``x`` naming the node it wrote to, and the alias on the next statement names the in-place
    # node, as in the graph FX wrote the code from
    written = None  # (name, in-place node) of the statement before
    for st in fwd.body:
        after, written = written, None
        value = getattr(st, "value", None)
        aliased = after is not None and isinstance(value, ast.Name) and value.id == after[0]
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Subscript):
            t = st.targets[0]
            written = (t.value.id, graph.call_function(operator.setitem, (written_to(t.value, st), ev(t.slice), ev(st.value))))
        elif isinstance(st, ast.Assign):
            if len(st.targets) == 1:
                env[st.targets[0].id] = after[1] if aliased else ev(value)
            else:  # ``a = b = None``: FX's deletions
                env.update((t.id, None) for t in st.targets)
        elif isinstance(st, ast.AugAssign):
            written = (st.target.id, graph.call_function(_INPLACE[type(st.op)], (written_to(st.target, st), ev(st.value))))
        elif isinstance(st, ast.AnnAssign):
            env[st.target.id] = after[1] if aliased else ev(value)
        elif isinstance(st, ast.Return):
            graph.output(ev(st.value))
            break
    else:
        bad(fwd, "forward has no return")
    try:
        return fx.GraphModule(torch.nn.Module(), graph), names
    except (SyntaxError, ValueError, TypeError) as exc:  # FX's code of the graph: e.g. a literal it cannot write
        raise RefusedSample(f"{filename}: the converted graph's code does not compile: {type(exc).__name__}: {exc}") from exc


# --- meta files ---------------------------------------------------------------------------------


def _literal(node: ast.AST) -> Any:
    """A literal, or ``float("inf")``-style calls (GraphNet writes non-finite statistics so)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and not node.keywords \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return float(node.args[0].value)
    return ast.literal_eval(node)


def read_meta(path: Path) -> list[dict]:
    """The tensor classes of a ``weight_meta.py`` / ``input_meta.py`` as dicts, in file order
    (class bodies of literal assignments; never imported). An empty file gives ``[]``.

    Raises:
        RefusedSample: a statement other than a class of literal assignments, or a class
            without ``name`` / ``shape`` / ``dtype``.
    """
    path = Path(path)
    if not path.is_file():
        return []
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise RefusedSample(f"{path}: not parseable: {exc}") from exc
    out = []
    for st in tree.body:
        if not isinstance(st, ast.ClassDef) or st.bases or st.decorator_list:
            raise RefusedSample(f"{path}:{st.lineno}: only plain classes of literal assignments are allowed")
        d: dict[str, Any] = {}
        for a in st.body:
            if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)):
                raise RefusedSample(f"{path}:{a.lineno}: class {st.name}: only NAME = literal")
            try:
                d[a.targets[0].id] = _literal(a.value)
            except (ValueError, TypeError, SyntaxError) as exc:
                raise RefusedSample(f"{path}:{a.lineno}: class {st.name}: {a.targets[0].id} is not a literal") from exc
        if not {"name", "shape", "dtype"} <= set(d) or not all(isinstance(x, int) for x in d["shape"]):
            raise RefusedSample(f"{path}: class {st.name} needs name, dtype and an integer shape")
        out.append(d)
    return out


def stats_of(m: dict) -> dict | None:
    """Our placeholder statistics (:func:`passnet_common.store.synth_placeholder`) from a meta class."""
    st = {k: m.get(src) for k, src in (("mean", "mean"), ("std", "std"), ("min", "min_val"), ("max", "max_val"))}
    st = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in st.items()}
    if m.get("data") is not None and not str(m["dtype"]).replace("torch.", "").startswith(("float", "bfloat", "complex")):
        st["values"] = [int(v) for v in m["data"]]
    return st if any(v is not None for v in st.values()) else None


def kind_of(m: dict) -> str:
    if m.get("kind") in ("input", "parameter", "buffer"):
        return m["kind"]
    orig = str(m.get("original_name") or m["name"])
    if "_parameters_" in orig or str(m["name"]).startswith("w_"):
        return "parameter"
    return "buffer" if "_buffers_" in orig else "input"
