"""Rewrites of a GraphNet ``model.py`` before it runs (:mod:`extract.sources.graphnet`), all on
the syntax tree (:mod:`ast`), never by executing anything:

* :func:`rewrite_dunders`: the harmless tensor dunder calls Dynamo writes (``x.__eq__(0)``) to
  their operators, so :func:`extract.sources.graphnet.static_check` can refuse every other dunder;
* :func:`device_literals_to_meta`: device literals to ``meta`` (the weights are meta tensors),
  except where the literal is not a tensor's device (see :class:`_DeviceToMeta`);
* :func:`value_read_args`: which ``forward`` arguments the program reads as Python values
  (``.item()``, ``aten._local_scalar_dense``): those must be real tensors, not meta.
"""

from __future__ import annotations

import ast
import re


class UnsafeSample(ValueError):
    """``model.py`` failed the static check; the message names the file and the reason."""


# Tensor dunder calls Dynamo writes into GraphNet's model.py (``attn_mask.__eq__(0)``,
# ``result.__and__(le)``): the method call is the operator, so ``x.__eq__(y)`` becomes ``x == y``.
# Only these names, only with one positional argument (two operands) or none (unary), and only as a
# call: any other dunder stays refused by :func:`static_check`.
_BINARY_DUNDERS = {
    "__eq__": ast.Eq, "__ne__": ast.NotEq, "__lt__": ast.Lt, "__le__": ast.LtE, "__gt__": ast.Gt, "__ge__": ast.GtE,
}
_BINOP_DUNDERS = {
    "__and__": ast.BitAnd, "__or__": ast.BitOr, "__xor__": ast.BitXor, "__add__": ast.Add, "__sub__": ast.Sub,
    "__mul__": ast.Mult, "__truediv__": ast.Div, "__floordiv__": ast.FloorDiv, "__mod__": ast.Mod,
    "__pow__": ast.Pow, "__matmul__": ast.MatMult, "__lshift__": ast.LShift, "__rshift__": ast.RShift,
}
_UNARY_DUNDERS = {"__neg__": ast.USub, "__invert__": ast.Invert, "__pos__": ast.UAdd}


class _DundersToOperators(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not isinstance(f, ast.Attribute) or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return node
        if len(node.args) == 1 and f.attr in _BINARY_DUNDERS:
            new = ast.Compare(left=f.value, ops=[_BINARY_DUNDERS[f.attr]()], comparators=[node.args[0]])
        elif len(node.args) == 1 and f.attr in _BINOP_DUNDERS:
            new = ast.BinOp(left=f.value, op=_BINOP_DUNDERS[f.attr](), right=node.args[0])
        elif not node.args and f.attr in _UNARY_DUNDERS:
            new = ast.UnaryOp(op=_UNARY_DUNDERS[f.attr](), operand=f.value)
        else:
            return node
        return ast.copy_location(new, node)


def rewrite_dunders(source: str, filename: str = "model.py") -> str:
    """``model.py`` with the harmless tensor dunder calls rewritten to their operators
    (``x.__eq__(0)`` -> ``x == 0``, ``a.__and__(b)`` -> ``a & b``; see ``_BINARY_DUNDERS``,
    ``_BINOP_DUNDERS``, ``_UNARY_DUNDERS``); the source unchanged when it has none. Every other
    dunder is left for :func:`static_check` to refuse.

    Raises:
        UnsafeSample: the source does not parse.
    """
    if ".__" not in source:
        return source
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise UnsafeSample(f"{filename}: not parseable: {exc}") from exc
    tree = ast.fix_missing_locations(_DundersToOperators().visit(tree))
    return ast.unparse(tree)



# Calls whose string arguments name a device TYPE for a context, not a tensor's device:
# ``torch.amp.autocast_mode._enter_autocast("cpu", None, False, None)`` (Dynamo writes the
# autocast region of a rotary embedding so; gemma-3). ``"meta"`` there raises "unsupported
# scalarType" (no autocast dtype for meta); the literal is kept as GraphNet recorded it.
_DEVICE_TYPE_CALLS = {"_enter_autocast", "autocast", "_is_autocast_available", "set_autocast_enabled",
                      "set_autocast_dtype", "get_autocast_dtype"}


def _call_name(f) -> str | None:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


class _DeviceToMeta(ast.NodeTransformer):
    """Device literals -> ``meta``, except (a) inside ``torch.tensor(...)``: a constant built from
    Python values in ``forward`` stays a real CPU tensor (Dynamo lifts it as a constant; on meta
    it has no value to lift and the trace fails), and (b) in the device-type argument of an
    autocast call (:data:`_DEVICE_TYPE_CALLS`), which names no tensor's device."""

    def visit_Constant(self, node):
        if isinstance(node.value, str) and re.fullmatch(r"(cuda|cpu)(:\d+)?", node.value):
            return ast.copy_location(ast.Constant("meta"), node)
        return node

    def visit_Call(self, node):
        f = node.func
        if _call_name(f) in _DEVICE_TYPE_CALLS:
            return node  # its literals stay as recorded (no tensor is built there)
        if isinstance(f, ast.Attribute) and f.attr in ("tensor", "as_tensor") and isinstance(f.value, ast.Name) \
                and f.value.id == "torch":
            node.keywords = [k for k in node.keywords if k.arg != "device"]  # real CPU value
            self.generic_visit(node)
            return node
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "device":  # device(type='cuda', index=0)
            node.args = []
            node.keywords = [ast.keyword(arg="type", value=ast.Constant("meta"))]
        return node


def device_literals_to_meta(tree: ast.Module) -> ast.Module:
    """``tree`` (a parsed ``model.py``) with its device literals rewritten by :class:`_DeviceToMeta`
    (in place; locations fixed)."""
    return ast.fix_missing_locations(_DeviceToMeta().visit(tree))


# Python-value reads of a tensor: ``t.item()``/``t.tolist()``, ``aten._local_scalar_dense(t)``,
# ``int(t)``/``float(t)``/``bool(t)``. Values flow to a read through plain aliases (``a = b``),
# indexing (``a = b[0]``) and value-preserving methods (``a = b.to(...)``).
_READ_METHODS = {"item", "tolist"}
_READ_FUNCS = {"_local_scalar_dense", "int", "float", "bool"}
_ALIAS_METHODS = {"to", "float", "double", "int", "long", "cpu", "clone", "detach", "squeeze", "view", "reshape",
                  "flatten", "contiguous"}


def _root(expr) -> str | None:
    """The name an expression reads its value from: ``b`` of ``b``, ``b[...]``, ``b.to(...)``."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _ALIAS_METHODS:
            expr = expr.func.value
        else:
            return None


def value_read_args(tree: ast.Module) -> set[str]:
    """Names of ``GraphModule.forward``'s arguments whose VALUES the program reads (see
    ``_READ_METHODS``/``_READ_FUNCS``), directly or through aliases, indexing and
    value-preserving methods (``_ALIAS_METHODS``): yolo's ``x = stride[0]`` then
    ``aten._local_scalar_dense(x)``, BatchNorm's lifted ``momentum.item()``. Such an argument
    must be a real tensor (``.item()`` cannot be called on a meta tensor); every other argument
    stays meta. Empty when the tree has no ``GraphModule.forward``."""
    fwd = None
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == "GraphModule":
            fwd = next((f for f in n.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    if fwd is None:
        return set()
    args = {a.arg for a in fwd.args.args[1:] + fwd.args.kwonlyargs}
    parent: dict[str, str] = {}  # name -> the name it was derived from (last assignment wins)
    reads: set[str] = set()
    for node in ast.walk(fwd):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            r = _root(node.value)
            if r is not None and r != node.targets[0].id:
                parent[node.targets[0].id] = r
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _READ_METHODS and not node.args:
                r = _root(f.value)
            elif _call_name(f) in _READ_FUNCS and len(node.args) == 1:
                r = _root(node.args[0])
            else:
                continue
            if r is not None:
                reads.add(r)
    out = set()
    for r in reads:
        seen = set()
        while r in parent and r not in args and r not in seen:
            seen.add(r)
            r = parent[r]
        if r in args:
            out.add(r)
    return out
