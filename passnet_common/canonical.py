"""Canonical form of a torch.fx graph and the hashes built on it.

One function, :func:`canonicalize`, defines what goes into a key (the pattern of
Inductor's FX graph cache: everything that decides the key is listed in one place), and
:data:`CANONICAL_VERSION` is stored beside every hash; hashes of different versions are
never compared.

What the canonical form keeps (``graph_hash`` changes when any of these changes):
  * every node's op kind and target (``call_function`` targets by qualified name,
    ``call_method`` by method name, ``call_module`` by module class and ``extra_repr``);
  * wiring and argument order: node arguments are written as canonical node indexes in
    their positional order; keyword arguments sorted by name;
  * literal arguments (ints, floats, bools, strings, dtypes, slices, ...);
  * each node's output tensor metadata (shape, dtype) from ``node.meta['example_value']``
    / ``['val']`` / ``['tensor_meta']``;
  * placeholders by position (the graph's calling convention) and kind (input,
    parameter, buffer), never by name.

What it drops (``graph_hash`` is invariant to these):
  * node names, placeholder names and module paths (``get_attr`` targets, Dynamo's
    ``L_self_modules_..._weight`` names);
  * the device in literal ``device=`` arguments (a graph captured on the meta device
    equals the same graph captured on CPU);
  * **the recording order of independent nodes.** Nodes are re-ordered by a
    deterministic topological sort whose ties are broken by each node's Merkle "cone"
    hash (a hash of the node's label and of its inputs' cone hashes), so two traces
    that record independent branches in a different order get one hash. Nodes with
    side effects (in-place methods, ``setitem``, grad-mode and autocast switches,
    ``node.is_impure()``) are ordering barriers: nothing moves across them. Two nodes
    with identical cone hashes (the same computation done twice) are ordered by a second
    Merkle hash over their consumers; only nodes equal in both (interchangeable in all
    but pathological cases) keep their recorded relative order.

``structure_hash`` is the same construction with shapes reduced to ranks, float literals
reduced to their type, and int literals abstracted when they are sizes (``|v| >= 2`` and
``|v|`` occurs as a tensor dimension in the graph): one architecture at different widths
shares it (depth changes the node count, so it changes the structure hash too).

``wl_hash`` is ``networkx.weisfeiler_lehman_graph_hash`` over the structure labels with
argument positions as edge labels: a 1-WL bucket for near duplicates, not a proof of
isomorphism; its values depend on the networkx version, recorded as
``passnet.networkx_version`` in the Parquet metadata of ``graphs`` and ``unique_graphs``.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Sequence

import torch
import torch.fx as fx

CANONICAL_VERSION = 1

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, sort_keys=False).encode

# Targets whose call has a side effect even though FX may not flag it.
_EFFECT_FUNCTIONS = {
    operator.setitem,
    torch._C._set_grad_enabled,
}
_EFFECT_NAME_PARTS = ("_enter_autocast", "_exit_autocast", "set_grad_enabled", "_record_function", "profiler")


def hash_metadata() -> dict[str, str]:
    """Key-value metadata stored beside hash columns: the canonical version and the
    networkx version the WL bucket depends on."""
    import networkx

    return {"passnet.canonical_version": str(CANONICAL_VERSION), "passnet.networkx_version": networkx.__version__}


def qualified_name(target: Any) -> str:
    """Stable dotted name of a ``call_function`` target (e.g. ``torch._C._nn.linear``)."""
    if isinstance(target, str):
        return target
    if isinstance(target, torch._ops.OpOverload) or isinstance(target, torch._ops.OpOverloadPacket):
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
    tm = meta.get("tensor_meta")
    if tm is not None:
        return tm
    return None


def encode_meta(value: Any, abstract_shapes: bool = False) -> Any:
    """JSON-able description of an example value: ``["T", dtype, shape]`` for tensors.

    With ``abstract_shapes`` the shape becomes its rank (``["T", dtype, rank]``).
    """
    if value is None:
        return None
    if isinstance(value, torch.Tensor) or hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = str(value.dtype).replace("torch.", "")
        shape = [_int_or_sym(s) for s in value.shape]
        return ["T", dtype, len(shape) if abstract_shapes else shape]
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


def _int_or_sym(s: Any) -> Any:
    try:
        return int(s)
    except Exception:
        return str(s)


def _encode_float(v: float) -> Any:
    if math.isfinite(v):
        return v
    return ["float", repr(v)]


def encode_literal(value: Any, ref, abstract: "set[int] | None" = None) -> Any:
    """Encode an FX argument as tagged JSON; ``ref(node)`` encodes node references.

    Lists and tuples become ``["list", ...]`` / ``["tuple", ...]``, so every JSON list in
    the result starts with a tag and decoding is unambiguous. With ``abstract`` (a set of
    tensor sizes of the graph), int literals that are sizes become ``["int"]`` and floats
    ``["float"]`` (structure form).
    """
    t = type(value)
    if t is fx.Node:
        return ref(value)
    if t is tuple or t is list:
        return ["tuple" if t is tuple else "list", *[encode_literal(v, ref, abstract) for v in value]]
    if value is None or t is bool or t is str:
        return value
    if t is int and abstract is None:
        return value
    if isinstance(value, fx.Node):
        return ref(value)
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if abstract is not None and abs(value) >= 2 and abs(value) in abstract:
            return ["int"]
        return value
    if isinstance(value, float):
        if abstract is not None:
            return ["float"]
        return _encode_float(value)
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        if isinstance(value, torch.Size):
            tag = "size"
        return [tag, *[encode_literal(v, ref, abstract) for v in value]]
    if isinstance(value, dict):
        return ["dict", *[[str(k), encode_literal(v, ref, abstract)] for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]]
    if isinstance(value, torch.dtype):
        return ["dtype", str(value).replace("torch.", "")]
    if isinstance(value, torch.device):
        return ["device"]
    if isinstance(value, torch.memory_format):
        return ["memory_format", str(value).replace("torch.", "")]
    if isinstance(value, torch.layout):
        return ["layout", str(value).replace("torch.", "")]
    if isinstance(value, slice):
        return ["slice", *[encode_literal(v, ref, abstract) for v in (value.start, value.stop, value.step)]]
    if value is Ellipsis:
        return ["ellipsis"]
    if isinstance(value, complex):
        return ["complex", _encode_float(value.real), _encode_float(value.imag)]
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ["sym", str(value)]
    if isinstance(value, torch.Tensor):
        return ["tensor", str(value.dtype).replace("torch.", ""), list(value.shape)]
    if callable(value):
        return ["fn", qualified_name(value)]
    return ["py", type(value).__qualname__, repr(value)[:200]]


def placeholder_kind(node: fx.Node) -> str:
    """``input``, ``parameter`` or ``buffer``, from Dynamo's placeholder naming
    (``L_self_modules_..._parameters_weight_``) or its ``grapharg`` source when present."""
    ga = node.meta.get("grapharg")
    src = getattr(ga, "source", None)
    name = (src.name() if src is not None and hasattr(src, "name") else "") + "|" + node.name
    if "_parameters" in name:
        return "parameter"
    if "_buffers" in name:
        return "buffer"
    return "input"


def _is_effectful(node: fx.Node) -> bool:
    if node.op in ("placeholder", "output", "get_attr"):
        return False
    if node.op == "call_method" and isinstance(node.target, str) and node.target.endswith("_") and not node.target.endswith("__"):
        return True
    if node.op == "call_function":
        if node.target in _EFFECT_FUNCTIONS:
            return True
        name = getattr(node.target, "__name__", "") or ""
        if any(p in name for p in _EFFECT_NAME_PARTS):
            return True
        if name.endswith("_") and not name.endswith("__") and getattr(node.target, "__module__", "") in ("torch", "torch._C._nn"):
            return True
    try:
        return bool(node.is_impure())
    except Exception:
        return False


def _target_label(node: fx.Node, gm: fx.GraphModule | None) -> str:
    if node.op == "call_function":
        return qualified_name(node.target)
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_module":
        mod = gm.get_submodule(node.target) if gm is not None else None
        if mod is None:
            return "module"
        extra = mod.extra_repr() if hasattr(mod, "extra_repr") else ""
        return f"{type(mod).__module__}.{type(mod).__qualname__}({extra})"
    if node.op == "placeholder":
        return "placeholder"
    if node.op == "get_attr":
        return "get_attr"
    return node.op


@dataclass
class CanonicalGraph:
    """Canonical form of one graph.

    Attributes:
        graph_hash: sha256 hex of ``text``.
        structure_hash: sha256 hex of the shape-abstracted form.
        wl_hash: Weisfeiler-Lehman bucket (networkx), empty if not computed.
        text: the canonical form, one JSON line per node in canonical order.
        nodes: per node in canonical order, a dict with ``op``, ``target``, ``args``,
            ``kwargs`` (tagged JSON, node refs as ``["%", j]``), ``meta``,
            ``kind`` (placeholder kind) and ``inputs`` (canonical indexes).
        order: original FX node index of each canonical position.
    """

    graph_hash: str
    structure_hash: str
    wl_hash: str
    text: str
    nodes: list[dict]
    order: list[int]
    version: int = CANONICAL_VERSION


_REF_RE = re.compile(r'\["%",(\d+)\]')


def _labels(nodes: list[fx.Node], gm, kinds, sizes: set[int]):
    """One pass over the nodes (original order).

    Returns ``(exact, structure, inputs, ref_texts, targets)``: per node the exact and the
    structure label (JSON text with node references written as ``["%"]``), the original
    indexes of its input nodes in argument order, and the exact label text with
    references written as ``["%",<original index>]`` (remapped to canonical indexes later
    without encoding the node again), and the target label.
    """
    index = {n: i for i, n in enumerate(nodes)}
    exact: list[str] = []
    structure: list[str] = []
    ref_texts: list[str] = []
    inputs: list[list[int]] = []
    targets: list[str] = []
    ph_pos = 0
    target_cache: dict = {}
    for n in nodes:
        deps: list[int] = []

        def ref(m, deps=deps):
            j = index[m]
            deps.append(j)
            return ["%", j]

        args = encode_literal(n.args, ref)
        kwargs = encode_literal(dict(n.kwargs), ref) if n.kwargs else ["dict"]
        value = tensor_meta_of(n)
        meta = encode_meta(value)
        s_meta = encode_meta(value, abstract_shapes=True)
        if n.op == "placeholder":
            kind = kinds[ph_pos] if kinds is not None else placeholder_kind(n)
            extra = s_extra = [ph_pos, kind]
            ph_pos += 1
        elif n.op == "get_attr":
            attr = _get_attr_value(gm, n.target)
            extra, s_extra = [encode_meta(attr)], [encode_meta(attr, True)]
        else:
            extra = s_extra = []
        key = (n.op, n.target)
        try:
            target = target_cache[key]
        except (KeyError, TypeError):
            target = _target_label(n, gm)
            try:
                target_cache[key] = target
            except TypeError:
                pass
        targets.append(target)
        with_refs = _dumps([n.op, target, args, kwargs, meta, extra])
        ref_texts.append(with_refs)
        exact.append(_REF_RE.sub('["%"]', with_refs) if deps else with_refs)
        if _needs_abstraction(n.args, n.kwargs, sizes):
            s_args = encode_literal(n.args, lambda m: ["%"], sizes)
            s_kwargs = encode_literal(dict(n.kwargs), lambda m: ["%"], sizes)
            structure.append(_dumps([n.op, target, s_args, s_kwargs, s_meta, s_extra]))
        else:
            s_text = _dumps([n.op, target, args, kwargs, s_meta, s_extra])
            structure.append(_REF_RE.sub('["%"]', s_text) if deps else s_text)
        inputs.append(deps)
    return exact, structure, inputs, ref_texts, targets


def _needs_abstraction(args, kwargs, sizes: set[int]) -> bool:
    """True when an argument holds a float, or an int that the structure form abstracts."""
    stack = [args, kwargs]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is tuple or t is list:
            stack.extend(v)
        elif t is dict or isinstance(v, dict):
            stack.extend(v.values())
        elif t is int:
            if abs(v) >= 2 and abs(v) in sizes:
                return True
        elif t is float:
            return True
        elif t is slice:
            stack.extend((v.start, v.stop, v.step))
    return False


def _get_attr_value(gm, target):
    if gm is None:
        return None
    try:
        obj = gm
        for part in str(target).split("."):
            obj = getattr(obj, part)
        return obj
    except AttributeError:
        return None


def _barrier_deps(nodes: list[fx.Node]) -> list[list[int]]:
    """Extra ordering dependencies from side effects: an effectful node depends on every
    earlier non-placeholder node, and every later node depends on the last barrier."""
    extra: list[list[int]] = [[] for _ in nodes]
    last_barrier = -1
    for i, node in enumerate(nodes):
        if node.op == "output" or node.op == "placeholder":
            continue
        if last_barrier >= 0:
            extra[i].append(last_barrier)
        if _is_effectful(node):
            extra[i].extend(j for j in range(last_barrier + 1, i) if nodes[j].op != "placeholder")
            last_barrier = i
    return extra


def _canonical_order(nodes: list[fx.Node], labels: list[str], inputs: list[list[int]], barriers: list[list[int]]) -> list[int]:
    """Topological order with ties broken by Merkle cone hashes (see module doc)."""
    import heapq

    n = len(nodes)
    deps = [inputs[i] + barriers[i] for i in range(n)]
    cone: list[bytes] = [b""] * n
    for i in range(n):
        h = hashlib.blake2b(labels[i].encode(), digest_size=16)
        for j in inputs[i]:
            h.update(cone[j])
        extra = sorted(cone[j] for j in deps[i][len(inputs[i]):])
        for c in extra:
            h.update(b"|")
            h.update(c)
        cone[i] = h.digest()
    # Down-cone hashes: a node's cone plus how its users consume it (user's down hash and
    # argument position). Two nodes with one cone (the same computation recorded twice)
    # but different consumers are told apart by it, so recording order does not leak.
    consumers: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for i in range(n):
        for p, j in enumerate(inputs[i]):
            consumers[j].append((i, p))
    down: list[bytes] = [b""] * n
    for i in range(n - 1, -1, -1):
        h = hashlib.blake2b(cone[i], digest_size=16)
        for c in sorted(down[u] + p.to_bytes(4, "little") for u, p in consumers[i]):
            h.update(c)
        down[i] = h.digest()
    indeg = [0] * n
    users: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in set(deps[i]):
            users[j].append(i)
            indeg[i] += 1
    # Placeholders first, in signature order; the output node always last.
    ph_pos: dict[int, int] = {}
    for i in range(n):
        if nodes[i].op == "placeholder":
            ph_pos[i] = len(ph_pos)

    def key(i: int):
        return (0, ph_pos[i], b"", b"", i) if i in ph_pos else (1, 0, cone[i], down[i], i)

    heap = [key(i) for i in range(n) if indeg[i] == 0 and nodes[i].op != "output"]
    heapq.heapify(heap)
    order: list[int] = []
    out_nodes = [i for i in range(n) if nodes[i].op == "output"]
    while heap:
        i = heapq.heappop(heap)[4]
        order.append(i)
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0 and nodes[u].op != "output":
                heapq.heappush(heap, key(u))
    order.extend(out_nodes)
    if len(order) != n:
        raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
    return order


def _form(labels, inputs, order) -> tuple[str, list[list[int]]]:
    pos = {orig: k for k, orig in enumerate(order)}
    lines = []
    canon_inputs = []
    for orig in order:
        ins = [pos[j] for j in inputs[orig]]
        canon_inputs.append(ins)
        lines.append(labels[orig] + "\t" + _dumps(ins))
    return "\n".join(lines) + "\n", canon_inputs


def _graph_sizes(nodes: list[fx.Node]) -> set[int]:
    sizes: set[int] = set()

    def visit(v):
        if isinstance(v, torch.Tensor) or (hasattr(v, "shape") and hasattr(v, "dtype")):
            for s in v.shape:
                try:
                    sizes.add(abs(int(s)))
                except Exception:
                    pass
        elif isinstance(v, (tuple, list)):
            for x in v:
                visit(x)

    for n in nodes:
        visit(tensor_meta_of(n))
    return sizes


def _wl_hash(struct_labels_short, inputs, iterations: int = 3) -> str:
    import networkx as nx

    g = nx.DiGraph()
    for i, lab in enumerate(struct_labels_short):
        g.add_node(i, label=lab)
    for i, ins in enumerate(inputs):
        for p, j in enumerate(ins):
            if g.has_edge(j, i):
                g.edges[j, i]["pos"] = g.edges[j, i]["pos"] + f",{p}"
            else:
                g.add_edge(j, i, pos=str(p))
    return nx.weisfeiler_lehman_graph_hash(g, node_attr="label", edge_attr="pos", iterations=iterations, digest_size=16)


def canonicalize(
    gm: fx.GraphModule | fx.Graph,
    placeholder_kinds: Sequence[str] | None = None,
    with_wl: bool = True,
) -> CanonicalGraph:
    """Canonical form and hashes of an FX graph (see the module docstring for the rules).

    Args:
        gm: a GraphModule (needed for ``call_module`` / ``get_attr`` metadata) or a Graph.
        placeholder_kinds: kind of each placeholder in order (``input``, ``parameter``,
            ``buffer``); default: read from Dynamo's ``grapharg`` metadata, else ``input``.
        with_wl: also compute the Weisfeiler-Lehman bucket (networkx; the slowest part).

    Returns:
        CanonicalGraph with ``graph_hash``, ``structure_hash``, ``wl_hash`` and the
        canonical node list (the store's ``graph.json`` is built from it).

    Raises:
        ValueError: the graph is not a DAG.
    """
    graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
    mod = gm if isinstance(gm, fx.GraphModule) else None
    nodes = list(graph.nodes)
    kinds = list(placeholder_kinds) if placeholder_kinds is not None else None
    sizes = _graph_sizes(nodes)
    labels, s_labels, inputs, ref_texts, targets = _labels(nodes, mod, kinds, sizes)
    barriers = _barrier_deps(nodes)
    order = _canonical_order(nodes, labels, inputs, barriers)
    text, canon_inputs = _form(labels, inputs, order)
    header = f"passnet-canonical-v{CANONICAL_VERSION}\n"
    graph_hash = hashlib.sha256((header + text).encode()).hexdigest()

    s_order = _canonical_order(nodes, s_labels, inputs, barriers)
    s_text, s_canon_inputs = _form(s_labels, inputs, s_order)
    structure_hash = hashlib.sha256((header + "structure\n" + s_text).encode()).hexdigest()

    wl = ""
    if with_wl:
        short = [f"{nodes[o].op}|{targets[o]}" for o in s_order]
        wl = _wl_hash(short, s_canon_inputs)

    pos = {orig: k for k, orig in enumerate(order)}

    def remap(m):
        return f'["%",{pos[int(m.group(1))]}]'

    canon_nodes = []
    for k, orig in enumerate(order):
        op, target, args, kwargs, meta, extra = json.loads(_REF_RE.sub(remap, ref_texts[orig]))
        entry = {"op": op, "target": target, "args": args, "kwargs": kwargs, "meta": meta, "inputs": canon_inputs[k]}
        if op == "placeholder":
            entry["position"], entry["kind"] = extra
        elif op == "get_attr":
            entry["meta"] = extra[0]
        canon_nodes.append(entry)
    return CanonicalGraph(
        graph_hash=graph_hash,
        structure_hash=structure_hash,
        wl_hash=wl,
        text=text,
        nodes=canon_nodes,
        order=order,
    )
