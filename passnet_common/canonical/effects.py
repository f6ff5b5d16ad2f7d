"""Side effects of FX nodes: which nodes mutate which argument, which nodes may alias
which, and which nodes switch global state. They give the ordering edges of the
canonical order (rules in :mod:`passnet_common.canonical`)."""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx


# Python's augmented-assignment operators: Dynamo emits them for ``t += 1`` through an alias.
INPLACE_OPERATORS = frozenset({
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
    operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.imatmul, operator.setitem,
})
# Name parts of calls that switch global state (grad mode, autocast, functorch levels of
# vmap / grad / jvp, saved-tensor hooks, profiler ranges): full ordering barriers.
GLOBAL_STATE_PARTS = (
    "set_grad_enabled", "_enter_autocast", "_exit_autocast", "autocast", "_record_function", "profiler",
    "_increment_nesting", "_decrement_nesting", "_saved_tensors_hooks", "set_inplace_requires_grad_allowed",
    "_set_tensor_requires_grad", "_wrap_for_grad", "_unwrap_for_grad", "_add_batch_dim", "_remove_batch_dim",
    "lazy_load_decompositions", "set_fwd_grad_enabled", "_enter_dual_level", "_exit_dual_level", "_make_dual",
    "_unpack_dual", "_functorch", "set_deterministic", "manual_seed", "set_rng_state", "_set_",
)
# Ops that return a fresh tensor although no ATen schema says so (pure Python functions of
# torch.nn.functional). Anything not known to be fresh may alias its inputs.
_FRESH_MODULES = ("torch.nn.functional",)

_schema_cache: dict = {}


def _aten_packet(name: str):
    return getattr(torch.ops.aten, name, None) if name and not name.startswith("__") else None


def _schema_info(name: str) -> tuple[bool, bool, frozenset]:
    """(known, may_alias, written_arg_positions) from the ATen schemas of ``name``."""
    try:
        return _schema_cache[name]
    except KeyError:
        pass
    known, alias, written = False, False, set()
    pkt = _aten_packet(name)
    if pkt is not None:
        try:
            for ov in pkt.overloads():
                sch = getattr(pkt, ov)._schema
                known = True
                writes = [i for i, a in enumerate(sch.arguments) if a.alias_info is not None and a.alias_info.is_write]
                if not writes:  # a view returns an alias of an input
                    alias = alias or any(r.alias_info is not None for r in sch.returns)
                # out= variants write keyword-only outputs: only positional writes count here
                written.update(i for i in writes if not sch.arguments[i].kwarg_only)
        except Exception:
            pass
    res = (known, alias, frozenset(written))
    _schema_cache[name] = res
    return res


def _target_name(node: fx.Node) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    if isinstance(t, torch._ops.OpOverload):
        return t._schema.name.split("::")[-1]
    if isinstance(t, torch._ops.OpOverloadPacket):
        return t._qualified_op_name.split("::")[-1]
    return getattr(t, "__name__", "") or ""


def mutated_args(node: fx.Node) -> list[Any]:
    """The arguments (FX nodes) that ``node`` writes to, in place.

    A node mutates: its first argument when it is a Python augmented assignment
    (``operator.iadd`` ... ``operator.setitem``), a method or function whose name ends in a
    single ``_`` (``add_``, ``relu_``), or a call with ``inplace=True``; the ``out=`` tensor;
    every argument an ATen schema marks as written (``Tensor(a!)``) -- for OpOverloads
    directly, for ``torch.<name>`` functions and methods through ``torch.ops.aten.<name>``;
    the running statistics of a training-mode ``batch_norm``.
    """
    if node.op not in ("call_function", "call_method"):
        return []
    args, kwargs = node.args, node.kwargs
    out: list[Any] = []
    if node.op == "call_function" and node.target in INPLACE_OPERATORS:
        out.append(args[0] if args else None)
    name = _target_name(node)
    if name.endswith("_") and not name.endswith("__") and args:
        out.append(args[0])
    if kwargs.get("inplace") is True:
        out.append(args[0] if args else kwargs.get("input"))
    if "out" in kwargs:
        o = kwargs["out"]
        out.extend(o if isinstance(o, (tuple, list)) else [o])
    if isinstance(node.target, torch._ops.OpOverload):
        sch = node.target._schema
        for i, a in enumerate(sch.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                out.append(args[i] if i < len(args) else kwargs.get(a.name))
    elif name:
        _, _, written = _schema_info(name)
        offset = 0
        for i in written:
            if i - offset < len(args):
                out.append(args[i - offset])
    if "batch_norm" in name:
        training = kwargs.get("training", args[5] if len(args) > 5 else False)
        if training is True:  # F.batch_norm(input, running_mean, running_var, ...); torch.batch_norm(input, w, b, rm, rv, ...)
            stats = args[1:3] if getattr(node.target, "__module__", "") == "torch.nn.functional" else args[3:5]
            stats = list(stats) + [kwargs.get("running_mean"), kwargs.get("running_var")]
            out.extend(a for a in stats if isinstance(a, fx.Node))
    return [a for a in out if isinstance(a, fx.Node)]


def is_global_state(node: fx.Node) -> bool:
    """True for calls that switch global state (see :data:`GLOBAL_STATE_PARTS`) or that FX
    itself calls impure (``node.is_impure()``, e.g. ``_set_grad_enabled``, assertions)."""
    if node.op not in ("call_function", "call_method"):
        return False
    if node.op == "call_function":
        name = f"{getattr(node.target, '__module__', '') or ''}.{getattr(node.target, '__name__', '') or ''}"
        if any(p in name for p in GLOBAL_STATE_PARTS):
            return True
    try:
        return bool(node.is_impure()) and not mutated_args(node)
    except Exception:
        return False


def may_alias_input(node: fx.Node) -> bool:
    """True when the output of ``node`` may share storage with a tensor input: views
    (ATen schemas whose return carries an alias annotation, ``getitem``), in-place calls,
    and every call whose target is not known to return a fresh tensor."""
    op = node.op
    if op in ("placeholder", "get_attr", "output"):
        return False
    if op == "call_module":
        return True
    t = node.target
    if op == "call_function":
        if t is operator.getitem:
            return True
        if getattr(t, "__module__", None) in ("_operator", "operator") and t not in INPLACE_OPERATORS:
            return False
        if isinstance(t, torch._ops.HigherOrderOperator):
            return True
    name = _target_name(node)
    known, alias, _ = _schema_info(name)
    if known:
        return alias or bool(mutated_args(node))
    if op == "call_function" and (getattr(t, "__module__", "") or "").startswith(_FRESH_MODULES):
        return bool(mutated_args(node))
    return True


_profile_cache: dict = {}


def _profile(node: fx.Node) -> tuple[bool, bool, bool]:
    """Cached per (op, target): (global state, may alias input, may mutate without
    keyword help). Keyword-dependent mutations (``inplace=True``, ``out=``) are checked per
    node."""
    key = (node.op, node.target)
    try:
        return _profile_cache[key]
    except (KeyError, TypeError):
        pass
    name = _target_name(node)
    static_mut = bool(
        (node.op == "call_function" and node.target in INPLACE_OPERATORS)
        or (name.endswith("_") and not name.endswith("__"))
        or "batch_norm" in name
        or (isinstance(node.target, torch._ops.OpOverload)
            and any(a.alias_info is not None and a.alias_info.is_write for a in node.target._schema.arguments))
        or (name and _schema_info(name)[2])
    )
    glob = is_global_state(node) if not static_mut else False
    alias = may_alias_input(node)
    res = (glob, alias, static_mut)
    try:
        _profile_cache[key] = res
    except TypeError:
        pass
    return res


def ordering_deps(nodes: list[fx.Node], inputs: list[list[int]]) -> tuple[list[list[int]], list[bool]]:
    """Extra (non-data) dependencies that fix the order of side effects.

    ``inputs[i]`` are the original indexes of node i's data inputs. Returns
    ``(deps, barrier)``: per node the original indexes it must follow, and whether it is a
    global-state barrier.

    * Alias classes: union-find over ``node -- tensor input`` for every node that
      :func:`may_alias_input`.
    * A mutation of class C follows every earlier reader of C and the previous mutation
      of C; every later reader of C follows it. Readers of other tensors move freely.
    * A global-state node (:func:`is_global_state`) follows every earlier node and every
      later node follows it.
    """
    n = len(nodes)
    muts: list[list[int]] = [[] for _ in range(n)]
    alias = [False] * n
    barrier = [False] * n
    any_effect = False
    index = None
    for i, node in enumerate(nodes):
        op = node.op
        if op == "call_function" or op == "call_method":
            glob, al, static_mut = _profile(node)
            kw = node.kwargs
            if static_mut or (kw and ("inplace" in kw or "out" in kw)):
                mu = mutated_args(node)
                if mu:
                    if index is None:
                        index = {m: k for k, m in enumerate(nodes)}
                    muts[i] = [index[m] for m in mu]
                    any_effect = True
                    al = True
            if glob:
                barrier[i] = True
                any_effect = True
            alias[i] = al
        elif op == "call_module":
            alias[i] = True
    deps: list[list[int]] = [[] for _ in range(n)]
    if not any_effect:
        return deps, barrier
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        if alias[i]:
            for j in inputs[i]:
                a, b = find(i), find(j)
                if a != b:
                    parent[a] = b
    ins = inputs
    readers: dict[int, list[int]] = {}
    last_mut: dict[int, int] = {}
    last_barrier = -1
    for i, node in enumerate(nodes):
        if node.op == "placeholder":
            continue
        d = deps[i]
        if barrier[i]:
            d.extend(j for j in range(last_barrier + 1, i) if nodes[j].op != "placeholder")
            if last_barrier >= 0:
                d.append(last_barrier)
            last_barrier = i
            continue
        if last_barrier >= 0:
            d.append(last_barrier)
        mutated = {find(j) for j in muts[i]}
        for c in {find(j) for j in ins[i]}:
            if c in mutated:
                d.extend(readers.get(c, ()))
                if c in last_mut:
                    d.append(last_mut[c])
                last_mut[c] = i
                readers[c] = []
            else:
                if c in last_mut:
                    d.append(last_mut[c])
                readers.setdefault(c, []).append(i)
        d[:] = sorted(set(j for j in d if j != i))
    return deps, barrier
