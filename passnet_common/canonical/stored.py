"""The stored node list of the canonical form (``CanonicalGraph.nodes``, the store's
``graph.json``): skeletons that :func:`passnet_common.canonical.form._labels` builds once per
distinct call, filled with canonical indexes (rules in :mod:`passnet_common.canonical`)."""

from __future__ import annotations

import torch
import torch.fx as fx

from passnet_common.canonical import compiled
from passnet_common.canonical.labels import encode_literal, encode_meta, get_attr_value, placeholder_kind, qualified_name, tensor_meta_of


class _Slot:
    """The k-th node reference of a stored-argument skeleton (filled by :func:`_fill`)."""

    __slots__ = ("k",)

    def __init__(self, k: int):
        self.k = k


class Ref:
    """Collects data inputs (original indexes, in argument order) while encoding."""

    __slots__ = ("index", "deps")

    def __init__(self, index):
        self.index = index
        self.deps: list[int] = []

    def __call__(self, m):
        self.deps.append(self.index[m])
        return ["%"]


class SlotRef(Ref):
    """``ref`` for :func:`encode_literal` that builds a skeleton: node references become
    :class:`_Slot` objects numbered in traversal order; ``deps`` lists the nodes."""

    __slots__ = ()

    def __call__(self, m):
        self.deps.append(self.index[m])
        return _Slot(len(self.deps) - 1)


def _fill(skel, refs: list, sdeps: list[int]):
    """A skeleton with its slots replaced by ``refs[sdeps[k]]`` (``["%", canonical index]``)."""
    t = type(skel)
    if t is _Slot:
        return refs[sdeps[skel.k]]
    if t is list:
        return [refs[sdeps[x.k]] if type(x) is _Slot else (_fill(x, refs, sdeps) if type(x) is list else x)
                for x in skel]
    return skel


def _plan(skel: list, perm) -> tuple:
    """Where :func:`_fill` writes in the list ``skel``: ``(position, q, None)`` for a slot
    (filled from ``deps[q]``, ``q`` the slot number through ``perm``), ``(position, None,
    sub-plan)`` for a nested list (copied, as :func:`_fill` copies)."""
    out = []
    for p, x in enumerate(skel):
        tx = type(x)
        if tx is _Slot:
            out.append((p, x.k if perm is None else perm[x.k], None))
        elif tx is list:
            out.append((p, None, _plan(x, perm)))
    return tuple(out)


def _run(skel: list, plan: tuple, refs: list, deps: list[int]) -> list:
    """:func:`_fill` of the list ``skel`` by its :func:`_plan` (the same result)."""
    out = skel.copy()
    for p, q, sub in plan:
        out[p] = refs[deps[q]] if sub is None else _run(skel[p], sub, refs, deps)
    return out


def stored_entry(short: str, a_sk, k_sk, meta, perm, has_slots: bool) -> tuple:
    """The stored form of a call, built once per distinct label: ``(target, args skeleton,
    kwargs skeleton, meta, args plan, kwargs plan)``. The plans (:func:`_plan`, None when the
    call references no node, whose skeletons are then stored as they are; ``[perm]`` for a
    skeleton that is not a list) read node
    ``deps[perm[k]]`` for slot ``k`` (``perm`` None: ``deps[k]``), ``deps`` being the
    node's references in the order of the label cache's template."""
    if not has_slots:
        return (short, a_sk, k_sk, meta, None, None)
    return (short, a_sk, k_sk, meta, _plan(a_sk, perm) if type(a_sk) is list else [perm],
            _plan(k_sk, perm) if type(k_sk) is list else [perm])


def _permuted(deps: list[int], perm) -> list[int]:
    return deps if perm is None else [deps[p] for p in perm]


# Dynamo's wrappers of numpy calls in a forward (``torch._dynamo.utils``): callable objects named
# ``wrapped_<name>`` whose dotted name resolves to nothing, and the same name for a wrapped function, method
# or operator. By type name: no import of torch._dynamo here.
_DYNAMO_WRAPPERS = {"numpy_to_tensor_wrapper": ("numpy_function", "f"), "numpy_method_wrapper": ("numpy_method", "method"),
                    "numpy_operator_wrapper": ("numpy_operator", "op")}


def dynamo_wrapper_type(t: type) -> bool:
    """Whether ``t`` is one of Dynamo's numpy wrapper classes (:data:`_DYNAMO_WRAPPERS`)."""
    return getattr(t, "__module__", None) == "torch._dynamo.utils" and getattr(t, "__name__", None) in _DYNAMO_WRAPPERS


def dynamo_wraps(target) -> list | None:
    """What a Dynamo numpy wrapper ``target`` wraps, as the stored node's ``wraps`` (the loader rebuilds the
    wrapper from it: :func:`passnet_common.store.call_target`): ``["numpy_function", <qualified name of the
    torch._numpy function>]``, ``["numpy_method", <ndarray method name>]``, ``["numpy_operator", <qualified
    name of the operator function>]``; None for any other target. The label is unchanged (the wrapper's
    qualified name, ``torch._dynamo.utils.wrapped_<name>``), so ``graph_hash`` is too."""
    if not dynamo_wrapper_type(type(target)):
        return None
    kind = _DYNAMO_WRAPPERS[type(target).__name__]
    inner = getattr(target, kind[1], None)
    if kind[0] == "numpy_method":
        return [kind[0], inner] if isinstance(inner, str) else None
    return [kind[0], qualified_name(inner)] if callable(inner) else None


def short_target(n: fx.Node, gm) -> str:
    """The stored ``target`` of node ``n``: a function's qualified name, a module's type (``"module"``
    when ``gm`` lacks it), a method's name, else the op."""
    if n.op == "call_function":
        return qualified_name(n.target)
    if n.op == "call_module" and gm is not None:
        try:
            m = gm.get_submodule(n.target)
            return f"{type(m).__module__}.{type(m).__qualname__}"
        except AttributeError:
            return "module"
    if n.op in ("call_method",):
        return str(n.target)
    return n.op


def node_list_py(order, store, ops, refs, canon_inputs, ph_positions, placeholder_order, other, slot=None) -> list:
    """The loop of :func:`stored_nodes` (the definition; ``_cform.node_list`` is its compiled
    copy, used where the seam has it on: :mod:`passnet_common.canonical.compiled`). Placeholders and
    calls come from the entries :func:`_labels` stored (``store[o]``), every other node from
    ``other(k, o)``; ``slot`` is unused (the compiled copy takes the :class:`_Slot` type)."""
    canon_nodes: list[dict] = []
    append = canon_nodes.append
    for k, o in enumerate(order):
        st = store[o]
        if st is not None and len(st) == 3:  # a placeholder: ("placeholder", kind, meta)
            p = ph_positions[o]
            append({"op": "placeholder", "target": "placeholder", "args": ["tuple"], "kwargs": ["dict"],
                    "meta": st[2], "inputs": canon_inputs[k], "position": p,
                    "canonical_position": len(placeholder_order), "kind": st[1]})
            placeholder_order.append(p)
            continue
        if st is not None:
            (tgt, a_sk, k_sk, meta, pa, pk), deps = st
            if pa is not None:
                # an empty plan (no slot in that part): the skeleton as it is, shared like the
                # skeletons of calls that reference no node
                if pa:
                    a_sk = _run(a_sk, pa, refs, deps) if type(pa) is tuple else _fill(a_sk, refs, _permuted(deps, pa[0]))
                if pk:
                    k_sk = _run(k_sk, pk, refs, deps) if type(pk) is tuple else _fill(k_sk, refs, _permuted(deps, pk[0]))
            append({"op": ops[o], "target": tgt, "args": a_sk, "kwargs": k_sk, "meta": meta, "inputs": canon_inputs[k]})
            continue
        append(other(k, o))
    return canon_nodes


def stored_nodes(nodes, ops, order, pos, canon_inputs, subs, store, index, mod, kinds):
    """The stored node list (see :class:`CanonicalGraph`), its sub-graphs and the
    placeholder permutation (``ops[i]``: ``nodes[i].op``). Call nodes reuse the skeletons
    :func:`_labels` built."""
    c = compiled.cform
    if c is not None and len(pos) == len(ops):
        refs, ph_positions = c.refs_and_positions(pos, ops)  # the two below, in one compiled loop
    else:
        refs = [["%", p] for p in pos]
        ph_positions = {}  # original index -> calling position
        for i, op in enumerate(ops):
            if op == "placeholder":
                ph_positions[i] = len(ph_positions)

    def ref(m):
        return refs[index[m]]
    subgraphs: list = []
    placeholder_order: list[int] = []

    def other(k, o):  # a node without a stored entry (not a call, or a Dynamo numpy wrapper): encoded here
        n = nodes[o]
        entry: dict = {"op": n.op, "target": short_target(n, mod) if n.op != "call_method" else str(n.target),
                       "args": encode_literal(n.args, ref), "kwargs": encode_literal(dict(n.kwargs), ref) if n.kwargs else ["dict"],
                       "meta": None if n.op == "output" else encode_meta(tensor_meta_of(n)), "inputs": canon_inputs[k]}
        if n.op == "placeholder":
            p = ph_positions[o]
            entry["target"] = "placeholder"
            entry["position"] = p
            entry["canonical_position"] = len(placeholder_order)
            entry["kind"] = kinds[p] if kinds is not None and p < len(kinds) else placeholder_kind(n)
            placeholder_order.append(p)
        elif n.op == "get_attr":
            entry["target"] = "get_attr"
            if o in subs:
                entry["subgraph"] = len(subgraphs)
                entry["meta"] = None
                subgraphs.append(subs[o])
            else:
                val = get_attr_value(mod, n.target)
                entry["meta"] = encode_meta(val) if isinstance(val, torch.Tensor) else None
        elif n.op == "output":
            entry["target"] = "output"
        elif n.op == "call_function":  # a call without a stored entry: a Dynamo numpy wrapper
            wraps = dynamo_wraps(n.target)
            if wraps is not None:
                entry["wraps"] = wraps
        return entry

    fill = c.node_list if c is not None else node_list_py
    canon_nodes = fill(order, store, ops, refs, canon_inputs, ph_positions, placeholder_order, other, _Slot)
    return canon_nodes, subgraphs, placeholder_order
