"""Side effects of FX nodes: which nodes mutate which argument, which nodes may alias
which, and which nodes switch global state. They give the ordering edges of the
canonical order (rules in :mod:`passnet_common.canonical`)."""

from __future__ import annotations

import inspect
import operator
import struct
import types
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _NormBase
from torch.utils._python_dispatch import TorchDispatchMode

from passnet_common.canonical import compiled

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


_spec_cache: dict = {}


class _WriteSpec:
    """Where a call target may write, from its signatures (cached per target).

    ``first``: always writes its first argument (augmented assignment; trailing ``_`` on a
    call that has no ATen schema).
    ``pos`` / ``names``: positions and names of arguments an ATen schema marks as written
    (``Tensor(a!)``, ``Tensor(a!)[]``), union over the overloads; an argument is matched in
    both its positional and its keyword form. ``inplace_pos``: position of an ``inplace``
    parameter of a Python signature (``F.relu(t, True)``), -1 when there is none.
    ``bn``: a batch norm (running statistics written in training mode). ``rng``: draws from the
    random generator (:func:`_rng_kind`): 0 never, 1 always, 2 depending on the call's
    arguments (decided per node by :func:`draws_random`)."""

    __slots__ = ("first", "pos", "names", "inplace_pos", "bn", "python", "rng")

    def __init__(self, first, pos, names, inplace_pos, bn, python, rng=0):
        self.first, self.pos, self.names, self.inplace_pos, self.bn, self.python = first, pos, names, inplace_pos, bn, python
        self.rng = rng


def _python_params(fn) -> list[str] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in sig.parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]


def _write_spec(node: fx.Node) -> _WriteSpec:
    key = (node.op, node.target)
    try:
        return _spec_cache[key]
    except (KeyError, TypeError):
        pass
    t = node.target
    name = _target_name(node)
    pos: set[int] = set()
    names: set[str] = set()
    if isinstance(t, torch._ops.OpOverload):
        schemas = [t._schema]
    else:
        pkt = _aten_packet(name)
        schemas = []
        if pkt is not None:
            try:
                schemas = [getattr(pkt, ov)._schema for ov in pkt.overloads()]
            except Exception:
                schemas = []
    python_operator = node.op == "call_function" and getattr(t, "__module__", None) in ("_operator", "operator")
    # The schema decides where one exists; Python's augmented assignments are recognised by identity
    # (``operator.and_`` is ``a & b``, not a write); only a call without any schema falls back to the
    # trailing-underscore convention (``Tensor.some_python_method_``), which can only add an ordering edge.
    first = (python_operator and t in INPLACE_OPERATORS) or (
        not schemas and not python_operator and name.endswith("_") and not name.endswith("__"))
    for sch in schemas:
        for i, a in enumerate(sch.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                names.add(a.name)
                if not a.kwarg_only:
                    pos.add(i)
    inplace_pos, python = -1, None
    if node.op == "call_function" and callable(t) and not isinstance(t, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        params = _python_params(t)
        if params is not None:
            python = tuple(params)
            if "inplace" in params:
                inplace_pos = params.index("inplace")
    spec = _WriteSpec(bool(first), frozenset(pos), frozenset(names), inplace_pos, "batch_norm" in name, python,
                      _rng_kind(node, name, schemas))
    try:
        _spec_cache[key] = spec
    except TypeError:
        pass
    return spec


_SEEDED = torch.Tag.nondeterministic_seeded
# The pseudo node standing for the random generator's state: every call that draws from it
# reads and writes it, so random calls keep their order among themselves (ordering_deps).
RNG_STATE = "<rng>"


def _rng_kind(node: fx.Node, name: str, schemas: list) -> int:
    """Whether a call may draw from the random generator, from ATen's ``nondeterministic_seeded``
    tag: 0 never (neither the op -- an OpOverload target, or the ATen op of the call's name -- nor
    any of its overloads carries the tag; no ATen op and not one of torch's Python functions),
    2 depending on the call: the tag is per op, not per call (``scaled_dot_product_attention``
    carries it for its ``dropout_p``, ``dropout`` for ``train``), so :func:`draws_random` lowers
    the call to the ATen ops it runs and looks for the tag there. A Python function outside
    ``torch`` (``torch.fx.wrap``-ed user code) is never run: it counts as drawing when an ATen op
    of its name is tagged."""
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        return 2 if _SEEDED in t.tags else 0
    pkt = _aten_packet(name) if schemas else None
    torch_fn = node.op == "call_function" and isinstance(t, types.FunctionType) \
        and (getattr(t, "__module__", "") or "").startswith("torch.")
    if pkt is None:
        return 2 if torch_fn else 0
    try:
        return 2 if any(_SEEDED in getattr(pkt, ov).tags for ov in pkt.overloads()) else 0
    except Exception:  # noqa: BLE001
        return 0


class _NoLowering(Exception):
    pass


def _size_hint(d: Any) -> int:
    """A shape entry as an int without guarding on it: a symbolic size (``SymInt``) by its hint, never by
    ``int()``, which would specialise the caller's ShapeEnv (the graph's own SymInt literals would then read
    differently on the next hash). :class:`_NoLowering` for a size without a hint."""
    if type(d) is int:
        return d
    hint = getattr(getattr(d, "node", None), "hint", None)
    if type(hint) is not int:
        raise _NoLowering
    return hint


def _meta_arg(v: Any) -> Any:
    """An FX argument as a value to run the call with on the meta device: tensors from their
    example values (shape, dtype), Python scalars as recorded, devices as ``meta``."""
    if isinstance(v, fx.Node):
        val = v.meta.get("example_value", v.meta.get("val"))
        if isinstance(val, torch.Tensor):
            return torch.empty([_size_hint(d) for d in val.shape], dtype=val.dtype, device="meta")
        if type(val) in (int, float, bool):
            return val
        raise _NoLowering
    if isinstance(v, (tuple, list)):
        return type(v)(_meta_arg(x) for x in v) if type(v) in (tuple, list) else [_meta_arg(x) for x in v]
    if isinstance(v, dict):
        return {k: _meta_arg(x) for k, x in v.items()}
    if isinstance(v, torch.device):
        return torch.device("meta")
    return v


class _Record(TorchDispatchMode):
    """Records the ATen ops a call runs."""

    def __init__(self):
        super().__init__()
        self.ops: list = []

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


def lowered_ops(node: fx.Node) -> list | None:
    """The ATen ops a ``call_function`` / ``call_method`` node runs, found by running it once on
    meta tensors shaped like its inputs' example values under a recording dispatch mode; None
    when it cannot be run so (an input without a tensor or scalar example value, an error)."""
    try:
        args = _meta_arg(tuple(node.args))
        kwargs = _meta_arg(dict(node.kwargs))
        if "device" in kwargs or node.op == "call_function" and _target_name(node) in _FACTORY_NAMES:
            kwargs["device"] = torch.device("meta")
        with torch.no_grad(), _Record() as rec:
            if node.op == "call_method":
                getattr(args[0], node.target)(*args[1:], **kwargs)
            else:
                node.target(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a call that cannot run on meta: the caller decides without it
        return None
    return rec.ops


_FACTORY_NAMES = frozenset({"rand", "randn", "randint", "randperm", "normal", "bernoulli", "empty", "zeros", "ones",
                            "full", "arange"})
_random_cache: dict = {}


def _lit_key(v: Any) -> Any:
    """:func:`draws_random`'s cache key of a call's arguments: literals by their bits, a node by what
    :func:`_meta_arg` runs the call with (a tensor by dtype and shape, a Python scalar by its value)."""
    if isinstance(v, fx.Node):
        val = v.meta.get("example_value", v.meta.get("val"))
        if type(val) in (bool, int, float):  # run as recorded (_meta_arg): its value decides the ops
            return ("%", type(val).__name__, (), _lit_key(val))
        return ("%", str(getattr(val, "dtype", type(val).__name__)), tuple(getattr(val, "shape", ())))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, *[_lit_key(x) for x in v])
    if isinstance(v, dict):
        return ("dict", *[(k, _lit_key(x)) for k, x in v.items()])
    if type(v) is float:
        return (float, struct.pack("<d", v))
    return (type(v), v)


def draws_random(node: fx.Node) -> bool:
    """Whether this call draws from the random generator (:func:`_rng_kind`; for kind 2 the ops
    it lowers to, :func:`lowered_ops`, are checked for the ``nondeterministic_seeded`` tag: so
    ``F.dropout(x, 0.1, training=True)`` draws, ``training=False`` does not). A call that cannot
    be lowered draws when its ATen op of the same name is tagged."""
    spec = _write_spec(node)
    if spec.rng != 2:
        return spec.rng == 1
    if node.op == "call_function" and isinstance(node.target, types.FunctionType) \
            and not (getattr(node.target, "__module__", "") or "").startswith("torch."):
        pkt = _aten_packet(_target_name(node))
        return pkt is not None and any(_SEEDED in getattr(pkt, ov).tags for ov in pkt.overloads())
    try:
        key = (node.op, node.target, _lit_key(node.args), _lit_key(dict(node.kwargs)))
        return _random_cache[key]
    except KeyError:
        pass
    except TypeError:
        key = None
    ops = lowered_ops(node)
    if ops is None:  # not runnable on meta: as its op's tag says
        t = node.target
        pkt = t.overloadpacket if isinstance(t, torch._ops.OpOverload) else _aten_packet(_target_name(node))
        res = pkt is not None and any(_SEEDED in getattr(pkt, ov).tags for ov in pkt.overloads())
    else:
        res = any(_SEEDED in getattr(op, "tags", ()) for op in ops)
    if key is not None:
        _random_cache[key] = res
    return res


def _storages(val: Any) -> set | None:
    """The storages (``StorageImpl`` addresses) of the tensors in an example value; None when
    there is no example value to read them from."""
    if isinstance(val, torch.Tensor):
        try:
            return {val.untyped_storage()._cdata}
        except Exception:  # noqa: BLE001 - a tensor without storage (sparse, nested): unknown
            return None
    if isinstance(val, (tuple, list)):
        out: set = set()
        for v in val:
            st = _storages(v)
            if st is None:
                return None
            out |= st
        return out
    if val is None or isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return None if val is None else set()
    if type(val) in (int, float, bool, str):
        return set()
    return None


_composite_cache: dict = {}


def _may_return_input(node: fx.Node) -> bool:
    """Without example values: whether the op may return its input itself although its schema
    has no alias annotation -- an ATen op implemented only by composition
    (``CompositeImplicitAutograd``: ``type_as``, ``atleast_2d``, ``dropout``), or a Python
    function without an ATen op of its name."""
    key = (node.op, node.target)
    try:
        return _composite_cache[key]
    except (KeyError, TypeError):
        pass
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        res = _composite_only(t)
    else:
        pkt = _aten_packet(_target_name(node))
        if pkt is None:
            res = node.op == "call_function" and isinstance(t, types.FunctionType)
        else:
            res = any(_composite_only(getattr(pkt, ov)) for ov in pkt.overloads())
    try:
        _composite_cache[key] = res
    except TypeError:
        pass
    return res


def _composite_only(op) -> bool:
    """Whether an ATen overload is implemented by composition (a ``CompositeImplicitAutograd``
    kernel); False for overloads the dispatcher does not hold (TorchScript's ``aten::sin.int``)."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")
    except RuntimeError:
        return False


def aliased_inputs(node: fx.Node, may_alias: bool, memo: dict | None = None) -> list:
    """The inputs whose storage the output of ``node`` may share: read from the example values
    where the node and all its inputs have them (a view or an in-place call shares its input's
    storage; ``F.dropout(training=False)``, ``type_as`` to the same dtype and ``atleast_2d`` of a
    2-D tensor return their input itself; ``torch.add(a, b)`` shares none, and ``a.add_(b)``
    only ``a``'s). Without them: every input when ``may_alias`` (the target's profile:
    :func:`may_alias_input`) or the op may return its input (:func:`_may_return_input`), else
    none. ``memo`` (one dict per pass over a graph) keeps each node's storages, read once."""
    if node.op not in ("call_function", "call_method", "call_module"):
        return []
    ins = node.all_input_nodes
    outs = _node_storages(node, memo)
    if outs is not None:
        res = []
        for m in ins:
            st = _node_storages(m, memo)
            if st is None:
                break
            if st & outs:
                res.append(m)
        else:
            return res
    return ins if may_alias or _may_return_input(node) else []


def _node_storages(node: fx.Node, memo: dict | None) -> set | None:
    """:func:`_storages` of a node's example value, through ``memo`` when given."""
    if memo is None:
        return _storages(tensor_meta_of_node(node))
    try:
        return memo[node]
    except KeyError:
        st = memo[node] = _storages(tensor_meta_of_node(node))
        return st


def tensor_meta_of_node(node: fx.Node) -> Any:
    meta = node.meta
    return meta["example_value"] if "example_value" in meta else meta.get("val")


def _flat_nodes(values, out: list) -> None:
    for v in values:
        if isinstance(v, fx.Node):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            _flat_nodes(v, out)


def mutated_args(node: fx.Node) -> list[Any]:
    """The arguments (FX nodes) that ``node`` writes to, in place; members of a written
    list (``torch._foreach_mul_([a, b], 2.0)``) count one by one.

    A ``call_function`` / ``call_method`` node mutates: its first argument when it is a
    Python augmented assignment (``operator.iadd`` ... ``operator.setitem``, by identity) or a
    method or function without any ATen schema whose name ends in a single ``_`` (with a
    schema, the schema decides: ``add_``, ``relu_``); its input when an
    ``inplace`` argument is True, given by keyword or by position (``F.relu(t, True)``,
    ``F.hardtanh(t, 0.0, 6.0, True)`` as Dynamo records ``nn.ReLU6(inplace=True)``: the
    position comes from the function's signature); the ``out=`` tensor(s); every argument
    an ATen schema marks as written (``Tensor(a!)``, ``Tensor(a!)[]``), given by position
    or by keyword -- for OpOverloads directly, for ``torch.<name>`` functions and methods
    through ``torch.ops.aten.<name>`` (union over its overloads); the running statistics
    of a training-mode ``batch_norm``. ``call_module`` nodes: see :func:`module_effects`.
    """
    if node.op not in ("call_function", "call_method"):
        return []
    args, kwargs = node.args, node.kwargs
    spec = _write_spec(node)
    out: list[Any] = []
    if spec.first and args:
        out.append(args[0])
    for i in spec.pos:
        if i < len(args):
            out.append(args[i])
    for k in spec.names:
        if k in kwargs:
            out.append(kwargs[k])
    if kwargs.get("inplace") is True or (0 <= spec.inplace_pos < len(args) and args[spec.inplace_pos] is True):
        out.append(args[0] if args else kwargs.get("input"))
    if "out" in kwargs:
        out.append(kwargs["out"])
    if spec.bn:
        bound = dict(zip(spec.python, args)) if spec.python else {}
        training = kwargs.get("training", bound.get("training", args[5] if len(args) > 5 else False))
        if training is True:  # F.batch_norm(input, running_mean, running_var, ...); torch.batch_norm(input, w, b, rm, rv, ...)
            stats = args[1:3] if spec.python and spec.python[1:3] == ("running_mean", "running_var") else args[3:5]
            out.extend(stats)
            out.extend(kwargs[k] for k in ("running_mean", "running_var") if k in kwargs)
    res: list[Any] = []
    _flat_nodes(out, res)
    return res


def module_effects(mod: Any) -> tuple[bool, bool]:
    """``(writes_input, writes_state)`` of a ``call_module`` leaf (``torch.fx.symbolic_trace``
    keeps standard modules as leaves): a module whose ``inplace`` attribute is True
    (``nn.ReLU(inplace=True)``, ``nn.Dropout(inplace=True)``, ...) writes its first input; a
    batch / instance norm in training mode with running statistics writes its buffers (the
    ``get_attr`` nodes reading them, and later calls of the module, are ordered after it)."""
    if mod is None:
        return False, False
    writes_input = getattr(mod, "inplace", False) is True

    writes_state = isinstance(mod, _NormBase) and mod.training and mod.track_running_stats \
        and getattr(mod, "running_mean", None) is not None
    return writes_input, bool(writes_state)


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


profile_cache: dict = {}


def target_profile(node: fx.Node) -> tuple[bool, bool, bool, _WriteSpec]:
    """Cached per (op, target): (global state, may alias input, writes whatever its literals
    are, write spec). Literal-dependent writes (``inplace``, ``out=``, keyword forms of
    written arguments) are checked per node."""
    key = (node.op, node.target)
    try:
        return profile_cache[key]
    except (KeyError, TypeError):
        pass
    spec = _write_spec(node)
    static_mut = bool(spec.first or spec.pos or spec.bn)
    glob = is_global_state(node) if not static_mut and not spec.rng else False  # random calls: the RNG state orders them
    alias = may_alias_input(node)
    res = (glob, alias, static_mut, spec)
    try:
        profile_cache[key] = res
    except TypeError:
        pass
    return res


def may_write(node: fx.Node, spec: _WriteSpec) -> bool:
    kw = node.kwargs
    if kw and ("inplace" in kw or "out" in kw or (spec.names and not spec.names.isdisjoint(kw))):
        return True
    return 0 <= spec.inplace_pos < len(node.args)


def ordering_deps(nodes: list[fx.Node], inputs: list[list[int]], gm: Any = None,
                  index: dict | None = None, rows: bytes | None = None) -> tuple[list[list[int]], list[bool]]:
    """:func:`ordering_deps_py`, by the compiled copy where the seam has it on
    (:mod:`passnet_common.canonical.compiled`); the copy reads ``rows``
    (:func:`passnet_common.canonical.order.input_rows` of ``inputs``) instead of the lists when
    given. The returned lists are read-only: the compiled copy gives every node without ordering
    dependencies one shared empty list."""
    c = compiled.cform
    if c is not None:
        try:
            return c.ordering_deps(nodes, inputs, gm, index, rows)
        except ValueError:
            pass  # an index the compiled loop does not take: the Python loop decides
    return ordering_deps_py(nodes, inputs, gm, index)


def ordering_deps_py(nodes: list[fx.Node], inputs: list[list[int]], gm: Any = None,
                     index: dict | None = None) -> tuple[list[list[int]], list[bool]]:
    """The ordering edges of side effects (the definition; ``_cform.ordering_deps`` is a compiled
    copy): extra (non-data) dependencies that fix the order of side effects.

    ``inputs[i]`` are the original indexes of node i's data inputs; ``gm`` the GraphModule
    (for the ``call_module`` leaves' effects, :func:`module_effects`); ``index`` maps each
    node to its position (built when needed). Returns ``(deps, barrier)``: per node the
    original indexes it must follow, and whether it is a global-state barrier.

    * Alias classes: union-find over ``node -- tensor input`` for every node that
      :func:`may_alias_input`. The state of a module whose call writes its buffers
      (training-mode batch norm) is one more class, holding every ``get_attr`` of a
      buffer/parameter below the module's path; the call reads and writes it.
    * A mutation of class C follows every earlier reader of C and the previous mutation
      of C; every later reader of C follows it. Readers of other tensors move freely.
    * A global-state node (:func:`is_global_state`) follows every earlier node and every
      later node follows it.
    """
    n = len(nodes)
    muts: list[list[int]] = [[] for _ in range(n)]
    alias = [False] * n
    barrier = [False] * n
    any_effect = writes_tensor = False
    state_paths: dict[str, int] = {}  # module path (or RNG_STATE) -> pseudo node index (n, n + 1, ...)
    state_of: dict[int, int] = {}  # call_module node -> its state's pseudo node
    profiles = profile_cache
    for i, node in enumerate(nodes):
        op = node.op
        if op == "call_function" or op == "call_method":
            try:
                glob, al, static_mut, spec = profiles[(op, node.target)]
            except (KeyError, TypeError):
                glob, al, static_mut, spec = target_profile(node)
            if static_mut or ((spec.inplace_pos >= 0 or node.kwargs) and may_write(node, spec)):
                mu = mutated_args(node)
                if mu:
                    if index is None:
                        index = {m: k for k, m in enumerate(nodes)}
                    muts[i] = [index[m] for m in mu]
                    any_effect = writes_tensor = True
                    al = True
            if spec.rng and draws_random(node):
                muts[i] = muts[i] + [state_paths.setdefault(RNG_STATE, n + len(state_paths))]
                any_effect = True
            if glob:
                barrier[i] = True
                any_effect = True
            alias[i] = al
        elif op == "call_module":
            alias[i] = True
            try:
                mod = gm.get_submodule(node.target) if gm is not None else None
            except AttributeError:
                mod = None
            w_in, w_state = module_effects(mod)
            if w_in and node.args and isinstance(node.args[0], fx.Node):
                if index is None:
                    index = {m: k for k, m in enumerate(nodes)}
                muts[i] = [index[node.args[0]]]
                any_effect = writes_tensor = True
            if w_state:
                path = str(node.target)
                k = state_paths.setdefault(path, n + len(state_paths))
                muts[i].append(k)
                state_of[i] = k
                any_effect = writes_tensor = True
    deps: list[list[int]] = [[] for _ in range(n)]
    if not any_effect:
        return deps, barrier
    parent = list(range(n + len(state_paths)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    if writes_tensor:  # alias classes matter only where a tensor is written
        if index is None:
            index = {m: k for k, m in enumerate(nodes)}
        memo: dict = {}
        for i, node in enumerate(nodes):
            for m in aliased_inputs(node, alias[i], memo):
                a, b = find(i), find(index[m])
                if a != b:
                    parent[a] = b
    if state_paths:
        for i, node in enumerate(nodes):
            if node.op == "get_attr":
                t = str(node.target)
                for path, k in state_paths.items():
                    if t == path or t.startswith(path + "."):
                        a, b = find(i), find(k)
                        if a != b:
                            parent[a] = b
    # Classes that some node writes: a reader of any other class is never ordered by it
    # (its reader lists and last mutation are never read), so the loop below skips them.
    written = [False] * len(parent)
    for m in muts:
        for j in m:
            written[find(j)] = True
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
        if not muts[i] and i not in state_of and node.op != "get_attr":
            # a plain reader (most nodes): follows the last mutation of each class it reads
            for j in ins[i]:
                c = parent[j]
                if parent[c] != c:
                    c = find(j)
                if not written[c]:
                    continue
                lm = last_mut.get(c)
                if lm is not None:
                    d.append(lm)
                r = readers.get(c)
                if r is None:
                    readers[c] = [i]
                elif not r or r[-1] != i:
                    r.append(i)
            if len(d) > 1:
                d[:] = sorted(set(d))
            continue
        mutated = {find(j) for j in muts[i]}
        touched = {find(j) for j in ins[i]} | mutated
        if i in state_of or node.op == "get_attr":
            touched.add(find(i))  # a module state's reader (get_attr) or its call
        for c in touched:
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


def sample_graph() -> fx.GraphModule:
    """A small module through every branch of :func:`ordering_deps_py`: in-place methods and
    augmented assignments, an ``inplace=`` keyword, a view, a global-state barrier, a
    ``call_module`` that writes its input and one that writes its state (training-mode batch
    norm) with ``get_attr`` reads of that state, readers before and after each write."""
    root = torch.nn.Module()
    root.bn = torch.nn.BatchNorm1d(3)
    root.act = torch.nn.ReLU(inplace=True)
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(torch.sin, (x,))
    v = g.call_method("view", (x, 3))
    g.call_method("add_", (v, 1))
    b = g.call_function(torch.cos, (x,))
    g.call_function(operator.iadd, (y, b))
    c = g.call_function(F.relu, (y,), {"inplace": True})
    d = g.call_function(torch.mul, (a, c))
    g.call_function(torch._C._set_grad_enabled, (False,))
    e = g.call_module("bn", (d,))
    rm = g.get_attr("bn.running_mean")
    f = g.call_module("act", (e,))
    h = g.call_function(torch.add, (f, rm))
    g2 = g.call_function(torch.sin, (y,))
    g.output((h, g2, b))
    return fx.GraphModule(root, g)
