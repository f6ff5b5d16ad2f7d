"""The canonical form: labels + order -> text -> hashes (rules in
:mod:`passnet_common.canonical`)."""

from __future__ import annotations

import gc
import hashlib
import json
import operator
from dataclasses import dataclass, field
from typing import Any, Sequence

import networkx as nx
import torch
import torch.fx as fx

from passnet_common.canonical import compiled
from passnet_common.canonical.effects import ordering_deps
from passnet_common.canonical.fastpath import permutation
from passnet_common.canonical.labels import (
    DIM_PARAMS,
    encode_literal,
    encode_meta,
    get_attr_value,
    module_state,
    normalized_arguments,
    placeholder_kind,
    positional_names,
    qualified_name,
    tensor_digest,
    tensor_meta_of,
)
from passnet_common.canonical.order import input_rows, label_ids, merkle, order_of_labels
from passnet_common.canonical.stored import Ref, SlotRef, dynamo_wraps, short_target, stored_entry, stored_nodes
from passnet_common.gcfreeze import heap_frozen

CANONICAL_VERSION = 4

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, sort_keys=False)


def _make_dumps():
    """``_ENCODER.encode`` with its C encoder made once instead of on every call (``JSONEncoder``
    builds one per ``encode``: a third of the slow path's JSON time). The same text for every
    label: the same C encoder and options; no circular-reference markers, since a label is built
    fresh by :func:`passnet_common.canonical.labels.encode_literal` and holds no cycle. Where
    the C encoder is missing, ``_ENCODER.encode`` itself."""
    make = json.encoder.c_make_encoder
    if make is None:
        return _ENCODER.encode
    e = _ENCODER
    chunks = make(None, e.default, json.encoder.encode_basestring, None, e.key_separator, e.item_separator,
                  e.sort_keys, e.skipkeys, e.allow_nan)
    join, basestring = "".join, json.encoder.encode_basestring

    def dumps(o) -> str:
        if isinstance(o, str):
            return basestring(o)
        return join(chunks(o, 0))

    return dumps


_dumps = _make_dumps()


def hash_metadata() -> dict[str, str]:
    """Key-value metadata stored beside hash columns: the canonical version and the
    networkx version the WL bucket depends on."""
    return {"passnet.canonical_version": str(CANONICAL_VERSION), "passnet.networkx_version": nx.__version__}


@dataclass
class CanonicalGraph:
    """Canonical form of one graph.

    Attributes:
        graph_hash: sha256 hex of the canonical text (exact form).
        structure_hash: sha256 hex of the structure form (see the module docstring).
        wl_hash: Weisfeiler-Lehman bucket (networkx), empty if not computed.
        text: the canonical form, one line per node in canonical order.
        nodes: per node in canonical order, a dict with ``op``, ``target``, ``args``,
            ``kwargs`` (tagged JSON as recorded, node refs as ``["%", j]`` with canonical
            indexes), ``meta`` and ``inputs`` (canonical indexes); placeholders add
            ``kind``, ``position`` (the captured graph's calling position) and
            ``canonical_position``; ``get_attr`` of a sub-GraphModule adds ``subgraph``
            (index into ``subgraphs``).
        order: original FX node index of each canonical position.
        subgraphs: canonical forms of the sub-GraphModules of higher-order ops.
        placeholder_order: original calling position of each placeholder in canonical
            order (the permutation the store keeps so a stored graph stays callable).
    """

    graph_hash: str
    structure_hash: str
    wl_hash: str
    text: str
    nodes: list[dict]
    order: list[int]
    version: int = CANONICAL_VERSION
    subgraphs: list["CanonicalGraph"] = field(default_factory=list)
    placeholder_order: list[int] = field(default_factory=list)

    def subgraph_json(self) -> list[dict]:
        """The sub-graphs as stored in ``graph.json``: per sub-graph its hashes, node list
        and (recursively) its own sub-graphs."""
        return [{"graph_hash": s.graph_hash, "structure_hash": s.structure_hash, "nodes": s.nodes,
                 "subgraphs": s.subgraph_json()} for s in self.subgraphs]


def _no_ref(m):
    return ["%"]


def _struct_literal(name: str, value: Any) -> Any:
    """Structure-form encoding of the argument ``name``: dimension arguments kept, every
    other int / float abstracted, except ``groups=1`` (a dense convolution: ``groups`` > 1
    -- grouped, depthwise -- is abstracted, so a depthwise net at two widths shares the
    structure hash but a dense and a grouped convolution do not)."""
    if name == "groups" and type(value) is int and value == 1:
        return 1
    return encode_literal(value, _no_ref, name not in DIM_PARAMS)


def _encode_call(node: fx.Node, ref) -> tuple[Any, Any]:
    """(exact, structure) encodings of a call's arguments, normalised when a signature binds."""
    norm = normalized_arguments(node)
    if norm is not None:
        e = ["sig", *[[k, encode_literal(v, ref)] for k, v in norm]]
        s = ["sig", *[[k, _struct_literal(k, v)] for k, v in norm]]
        return e, s
    args, kwargs = node.args, node.kwargs
    kw = sorted(kwargs.items())
    e = ["raw", encode_literal(args, ref), ["dict", *[[k, encode_literal(v, ref)] for k, v in kw]]]
    if node.target is operator.getitem and args and isinstance(args[0], fx.Node) \
            and not isinstance(tensor_meta_of(args[0]), torch.Tensor) and tensor_meta_of(args[0]) is not None:
        s_args = encode_literal(args, _no_ref)  # index into a tuple / list: wiring, not a size
    else:
        names = positional_names(node) if node.op != "call_module" else ()
        if names:  # dimension and groups arguments recognised by position
            s_args = ["tuple", *[_struct_literal(names[i] if i < len(names) and names[i] else "", v)
                                 for i, v in enumerate(args)]]
        else:
            s_args = encode_literal(args, _no_ref, True)
    s = ["raw", s_args, ["dict", *[[k, _struct_literal(k, v)] for k, v in kw]]]
    return e, s


def _labels(nodes, gm, kinds, keep_positions: bool, index, want_store: bool = False):
    """The label pass: :func:`labels_plain`, or the compiled pass with its label cache where the
    seam has it on (:mod:`passnet_common.canonical.compiled`; the same labels, inputs and node
    lists, checked at import)."""
    c = compiled.cform
    if c is not None:
        return c.labels(nodes, gm, kinds, keep_positions, index, want_store, _slow_label)
    return labels_plain(nodes, gm, kinds, keep_positions, index, want_store)


@dataclass
class LabelContext:
    """What labelling one node reads besides the node: the GraphModule (``call_module`` /
    ``get_attr`` state), the placeholder kinds, whether placeholder positions are kept, each node's
    index; and what it fills: the sub-graphs' canonical forms by node index, module states by
    target (computed once per module)."""

    gm: Any
    kinds: list | None
    keep_positions: bool
    index: dict
    subs: dict = field(default_factory=dict)
    modules: dict = field(default_factory=dict)


def node_label(n: fx.Node, ph: int, ctx: LabelContext) -> tuple[str, str, list[int]]:
    """The rule for one node: its exact label and structure label (JSON texts) and its data inputs
    (original indexes, in argument order); ``ph`` is its calling position if it is a placeholder.

    * placeholder: kind, output metadata (and the position when kept);
    * ``get_attr``: a sub-GraphModule by its canonical hash (computed here, kept in ``ctx.subs``),
      a module by its state, a parameter by shape and dtype, a constant tensor by shape, dtype and
      the digest of a small one's bytes, anything else as a literal;
    * output: its arguments;
    * a call: target (a module's type and state), arguments bound to the op's signature
      (:func:`_encode_call`), output metadata.
    """
    op = n.op
    val = tensor_meta_of(n)
    ref = Ref(ctx.index)
    if op == "placeholder":
        kind = ctx.kinds[ph] if ctx.kinds is not None and ph < len(ctx.kinds) else placeholder_kind(n)
        pos = [ph] if ctx.keep_positions else []
        e = ["placeholder", kind, encode_meta(val), *pos]
        s = ["placeholder", kind, encode_meta(val, True), *pos]
        return _dumps(e), _dumps(s), []
    if op == "get_attr":
        val = get_attr_value(ctx.gm, n.target)
        if isinstance(val, fx.GraphModule):
            sub = canonicalize(val, None, with_wl=False, keep_placeholder_order=True)
            ctx.subs[ctx.index[n]] = sub
            e, s = ["get_attr", "subgraph", sub.graph_hash], ["get_attr", "subgraph", sub.structure_hash]
        elif isinstance(val, torch.nn.Module):
            e, s = ["get_attr", module_state(val)], ["get_attr", module_state(val, True)]
        elif isinstance(val, torch.nn.Parameter):
            e, s = ["get_attr", "parameter", encode_meta(val)], ["get_attr", "parameter", encode_meta(val, True)]
        elif isinstance(val, torch.Tensor):
            e = ["get_attr", "tensor", encode_meta(val), tensor_digest(val)]
            s = ["get_attr", "tensor", encode_meta(val, True)]
        else:
            e = ["get_attr", "value", encode_literal(val, _no_ref)]
            s = ["get_attr", "value", encode_literal(val, _no_ref, True)]
        return _dumps(e), _dumps(s), []
    if op == "output":
        e, s = ["output", encode_literal(n.args, ref)], ["output", encode_literal(n.args, _no_ref)]
        return _dumps(e), _dumps(s), ref.deps
    if op == "call_module":
        if n.target not in ctx.modules:
            m = ctx.gm.get_submodule(n.target) if ctx.gm is not None else None
            ctx.modules[n.target] = (module_state(m), module_state(m, True)) if m is not None else ("module", "module")
        tgt, s_tgt = ctx.modules[n.target]
        args_e = ["raw", encode_literal(n.args, ref), encode_literal(dict(n.kwargs), ref)]
        args_s = ["raw", encode_literal(n.args, _no_ref, True), encode_literal(dict(n.kwargs), _no_ref, True)]
    else:
        tgt = s_tgt = qualified_name(n.target) if op == "call_function" else str(n.target)
        args_e, args_s = _encode_call(n, ref)
    e = [op, tgt, args_e, encode_meta(val)]
    s = [op, s_tgt, args_s, encode_meta(val, True)]
    return _dumps(e), _dumps(s), ref.deps


def stored_call(n: fx.Node, ctx: LabelContext) -> tuple[tuple, list[int]]:
    """The stored form of a call node (``CanonicalGraph.nodes`` is filled from it): its
    :func:`passnet_common.canonical.stored.stored_entry` -- short target, arguments and keyword
    arguments as recorded with node references as numbered slots, output metadata -- and the
    nodes the slots stand for (original indexes, in traversal order)."""
    sref = SlotRef(ctx.index)
    a_sk = encode_literal(n.args, sref)
    k_sk = encode_literal(dict(n.kwargs), sref) if n.kwargs else ["dict"]
    if n.op == "call_function":
        short = qualified_name(n.target)
    elif n.op == "call_method":
        short = str(n.target)
    else:
        short = short_target(n, ctx.gm)
    return stored_entry(short, a_sk, k_sk, encode_meta(tensor_meta_of(n)), None, bool(sref.deps)), sref.deps


def _wrapper_call(n: fx.Node) -> bool:
    """A call of a Dynamo numpy wrapper (:func:`passnet_common.canonical.stored.dynamo_wraps`): no stored
    entry, so the stored node list encodes it by itself and adds what it wraps."""
    return n.op == "call_function" and dynamo_wraps(n.target) is not None


def labels_plain(nodes, gm, kinds, keep_positions: bool, index, want_store: bool = False):
    """The label pass, the definition: every node labelled by itself (:func:`node_label`).

    Returns ``(exact labels, structure labels, data inputs, sub-graphs by node index, store)``;
    ``store`` (``want_store``, else None) holds per node what the stored node list is filled from:
    ``("placeholder", kind, meta)`` for a placeholder without a default value, ``(stored_entry,
    slot nodes)`` for a call (:func:`stored_call`) but a Dynamo numpy wrapper's, None for the rest. The compiled pass reuses
    labels between nodes with equal keys (:mod:`passnet_common.canonical.fastpath`) and must give
    the same labels, inputs and node lists (the seam's agreement check;
    ``tests/test_canonical_values.py`` on literal-heavy graphs)."""
    ctx = LabelContext(gm, kinds, keep_positions, index)
    exact, struct, inputs = [], [], []
    store = [None] * len(nodes) if want_store else None
    ph = 0
    for i, n in enumerate(nodes):
        e, s, d = node_label(n, ph, ctx)
        exact.append(e)
        struct.append(s)
        inputs.append(d)
        if want_store:
            if n.op == "placeholder" and not n.args:
                kind = kinds[ph] if kinds is not None and ph < len(kinds) else placeholder_kind(n)
                store[i] = ("placeholder", kind, encode_meta(tensor_meta_of(n)))
            elif n.op in ("call_function", "call_method", "call_module") and not _wrapper_call(n):
                store[i] = stored_call(n, ctx)
        ph += n.op == "placeholder"
    return exact, struct, inputs, ctx.subs, store


def meta_texts(val) -> tuple[str, str, Any]:
    """The output metadata of a call's label: the JSON texts of its exact and structure encodings
    (:func:`passnet_common.canonical.labels.encode_meta`; the last item of the call's label list
    in :func:`node_label`) and the exact encoding (its stored entry's ``meta``). The compiled label
    pass's partial hits (``_cform.labels``) end an earlier label's text with them."""
    m = encode_meta(val)
    return _dumps(m), _dumps(encode_meta(val, True)), m


def _slow_label(n, i, op, val, gm, kinds, keep_positions, index, want_store, store, subs, mod_cache, ph, key, tdeps):
    """The compiled label pass's call on a cache miss (its calling convention): :func:`node_label`
    of node ``n`` (index ``i``), filling ``store[i]`` (``want_store``) and ``subs``; returns
    ``(exact label, structure label, data inputs, the entry the cache may keep)`` -- for a
    placeholder its ``("placeholder", kind, meta)``, for a call its stored entry re-numbered to
    the cache template's node order ``tdeps`` (None where no unambiguous renumbering exists)."""
    ctx = LabelContext(gm, kinds, keep_positions, index, subs, mod_cache)
    e, s, deps = node_label(n, ph, ctx)
    st = None
    if op == "placeholder":
        kind = kinds[ph] if kinds is not None and ph < len(kinds) else placeholder_kind(n)
        st = ("placeholder", kind, encode_meta(val))
        if want_store and not n.args:
            store[i] = st
    elif want_store and op in ("call_function", "call_method", "call_module") and not _wrapper_call(n):
        entry, sdeps = stored_call(n, ctx)
        store[i] = (entry, sdeps)
        sperm = permutation(tdeps, sdeps) if tdeps is not None else False
        if sperm is None:  # the template's own order: the entry just built
            st = entry
        elif sperm is not False:
            st = stored_entry(entry[0], entry[1], entry[2], entry[3], sperm, bool(sdeps))
    return e, s, deps, st


def sample_graph() -> fx.GraphModule:
    """A small graph through every branch of the label pass and its cache: placeholders (equal and
    not), cache hits and misses, calls with keyword arguments, nested and immutable lists,
    floats (``-0.0``), dtypes, a tuple-valued node and its getitems, a method with varargs, a node
    repeated in the arguments, a call without metadata, the output (a sample of the seam's
    agreement check, :mod:`passnet_common.canonical.compiled`)."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    z = g.placeholder("z")
    w = g.placeholder("w")
    for n, shape, dt in ((x, (2, 3), torch.float32), (y, (2, 3), torch.float32), (z, (3,), torch.float16),
                         (w, (2, 3), torch.float32)):
        n.meta["val"] = torch.empty(shape, dtype=dt, device="meta")
    t = torch.empty((2, 3), device="meta")
    calls = [
        (torch.add, (x, y), {}, t), (torch.add, (y, x), {}, t), (torch.add, (x, x), {}, t),
        (torch.sum, (x,), {"dim": 1}, torch.empty((2,), device="meta")),
        (torch.sum, (y,), {"dim": 1}, torch.empty((2,), device="meta")),
        (torch.cat, ([x, y], 1), {}, torch.empty((2, 6), device="meta")),
        (torch.cat, ([y, x], 1), {}, torch.empty((2, 6), device="meta")),
        (torch.mul, (x, 2.5), {}, t), (torch.mul, (y, 2.5), {}, t), (torch.mul, (y, -0.0), {}, t),
        (torch.mul, (x, 0.0), {}, t), (torch.mul, (x, -0.0), {}, t),
        (torch.split, (x, 1), {"dim": 0}, (torch.empty((1, 3), device="meta"),) * 2),
        (torch.split, (y, 1), {"dim": 0}, (torch.empty((1, 3), device="meta"),) * 2),
        (torch.zeros, ((2, 3),), {"dtype": torch.float16}, torch.empty((2, 3), dtype=torch.float16, device="meta")),
        (torch.relu, (x,), {}, None), (torch.relu, (y,), {}, None),
        (operator.add, (x, y), {"out": w}, t), (operator.add, (y, x), {"out": w}, t),
    ]
    made = []
    for fn, args, kwargs, val in calls:
        n = g.call_function(fn, args, kwargs)
        if val is not None:
            n.meta["example_value"] = val
        made.append(n)
    for sp in (made[12], made[13]):
        for k in (0, 1):
            gi = g.call_function(operator.getitem, (sp, k))
            gi.meta["example_value"] = torch.empty((1, 3), device="meta")
            made.append(gi)
    for src in (x, y):
        v = g.call_method("view", (src, 3, 2))
        v.meta["example_value"] = torch.empty((3, 2), device="meta")
        r = g.call_method("reshape", (src, [6]))
        r.meta["example_value"] = torch.empty((6,), device="meta")
        s = g.call_method("size", (src, 0))
        s.meta["example_value"] = 2
        made += [v, r, s]
    g.output(tuple(made))
    return fx.GraphModule(torch.nn.Module(), g)


def set_prefetch(cform) -> bool:
    """Turn on the compiled label pass's prefetch pipeline (speed only; see ``_cform.set_prefetch``):
    the offsets of ``torch.fx.Node``'s ``meta`` / ``_args`` slots and of a tensor's TensorImpl pointer.
    False (the pipeline off, nothing else changes) where this torch build lays them out otherwise.
    Also lets the label pass read ``op`` / ``target`` / ``meta`` / ``_args`` / ``_kwargs`` of an
    ``fx.Node`` from its slots (``_cform.set_node_slots``) where ``fx.Node`` resolves those names to
    its C base type's member descriptors."""
    base = fx.Node.__mro__[1] if len(fx.Node.__mro__) > 2 else None
    tensor_base = getattr(torch._C, "TensorBase", None)
    if base is None or tensor_base is None or any(k not in vars(base) for k in ("meta", "_args", "_kwargs")):
        return False
    slots = ("op", "target", "meta", "_args", "_kwargs")
    if fx.Node.__mro__[1:] == (base, object) and all(k in vars(base) and k not in vars(fx.Node) for k in slots):
        cform.set_node_slots(fx.Node, *(vars(base)[k] for k in slots))  # fx.Node resolves them to base's slots
    else:
        cform.set_node_slots(None, None, None, None, None, None)
    samples = [torch.empty(2, 3), torch.empty(4, device="meta"), torch.nn.Parameter(torch.empty(1, device="meta"))]
    return bool(cform.set_prefetch(base, vars(base)["meta"], vars(base)["_args"], vars(base)["_kwargs"], tensor_base,
                                   samples))


class _NoGC:
    """Python's cyclic garbage collector off inside the block (restored after, also on
    errors). The form allocates hundreds of thousands of small lists and tuples, none of
    them in reference cycles; generation-0 collections triggered by those allocations were
    the largest single cost (1.4x-2.65x, and a 2-4x run-to-run spread).

    The form's own objects are then kept out of the young generations: on entry the young
    generations are collected (``gc.collect(1)``: they hold at most a few thousand objects
    while the collector runs, typically microseconds), and on exit the objects allocated
    meanwhile -- the returned node list and nothing else that is alive -- are moved to the
    oldest generation (``gc.freeze()`` then ``gc.unfreeze()``: two O(1) list moves in
    CPython, which also reset the generation-0 count) instead of being traversed by the
    generation-0 collection that the first allocation after ``gc.enable()`` would start. That
    collection walked one dict and a few lists per node of the returned node list, ~5 us per
    node (a third of the form on a 10K-node chain). The moved objects are still freed by
    reference counting. Both steps are skipped when the caller had the collector disabled
    or has frozen objects of its own (:func:`passnet_common.gcfreeze.heap_frozen`: unfreezing would
    release them; O(1) after a freeze through :mod:`passnet_common.gcfreeze`, as the pipeline's forking
    parents do, where ``gc.get_freeze_count()`` walks the frozen heap).

    Inside the block ``__torch_function__`` dispatch of tensor subclasses is also off
    (``torch._C.DisableTorchFunctionSubclass``; torch-function *modes* still apply). The form
    reads the ``dtype`` / ``shape`` of every node's example value, a ``FakeTensor``: a subclass
    whose ``__torch_function__`` is ``torch._C._disabled_torch_function_impl``, so it returns
    the same values either way, but each property read first looked the override up through
    the subclass's MRO to find it disabled -- 0.84 us for ``.shape`` and 0.46 us for ``.dtype``
    per FakeTensor of Llama-3.3-70B's meta capture, 0.19 / 0.10 us with the check skipped
    (the same values, compared on every node). Parameters and plain tensors (``get_attr``
    constants) have no override either; a subclass whose ``__torch_function__`` changed what
    ``shape`` or ``dtype`` report would be read by its C++ values here."""

    __slots__ = ("was", "promote", "tf")

    def __enter__(self):
        self.was = gc.isenabled()
        self.promote = self.was and not heap_frozen()
        if self.promote:
            gc.collect(1)
        gc.disable()
        self.tf = torch._C.DisableTorchFunctionSubclass()
        self.tf.__enter__()

    def __exit__(self, *exc):
        self.tf.__exit__(None, None, None)
        if self.was:
            if self.promote and not heap_frozen():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
        return False


def buffer_labels(nodes, exact: list[str], kinds, values, keep_positions: bool) -> None:
    """Buffers are constants of the computation: the exact label of a ``buffer`` placeholder
    whose value (``values[calling position]``, a real tensor) has at most
    :data:`passnet_common.canonical.labels.CONST_DIGEST_MAX_BYTES` bytes also holds the digest
    of its bytes (:func:`passnet_common.canonical.labels.tensor_digest`), as a small constant's
    does. Parameters (learned values) and inputs enter by shape and dtype only; so do buffers
    without a value (meta, fake) or larger than that. Changes ``exact`` in place."""
    ph = -1
    for i, n in enumerate(nodes):
        if n.op != "placeholder":
            continue
        ph += 1
        kind = kinds[ph] if kinds is not None and ph < len(kinds) else placeholder_kind(n)
        val = values[ph] if ph < len(values) else None
        if kind != "buffer" or not isinstance(val, torch.Tensor):
            continue
        digest = tensor_digest(val)
        if digest is not None:
            pos = [ph] if keep_positions else []
            exact[i] = _dumps(["placeholder", kind, encode_meta(tensor_meta_of(n)), *pos, ["digest", digest]])


def _core(gm, kinds, keep_positions: bool, want_text: bool = True, values=None):
    graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
    mod = gm if isinstance(gm, fx.GraphModule) else None
    nodes = list(graph.nodes)
    index = {m: i for i, m in enumerate(nodes)}
    exact, struct, inputs, subs, store = _labels(nodes, mod, kinds, keep_positions, index, want_store=want_text)
    if values is not None:
        buffer_labels(nodes, exact, kinds, values, keep_positions)
    rows = input_rows(inputs)  # the inputs as C ints for the compiled passes (None: they read the lists)
    extra, _ = ordering_deps(nodes, inputs, mod, index, rows)
    ops = [m.op for m in nodes]
    ints = list(index.values())  # 0 .. n-1: the ints the order and positions are filled with
    order = order_of_labels(label_ids(struct), exact, inputs, extra, ops, keep_positions, ints, rows)
    pos, canon_inputs, graph_hash, structure_hash, text = _texts(order, inputs, exact, struct, want_text, ints, rows)
    return nodes, order, pos, text, graph_hash, structure_hash, canon_inputs, subs, store, index, ops


_HEADER = f"passnet-canonical-v{CANONICAL_VERSION}\n"


def texts_py(order: list[int], inputs: list[list[int]], exact: list[str], struct: list[str], want_text: bool = True):
    """The canonical texts and their hashes (the definition; ``_cform.texts`` is a compiled
    copy, used where the seam has it on: :mod:`passnet_common.canonical.compiled`).

    Per node in canonical order one line: its exact (structure) label, a tab, its data inputs'
    canonical positions joined by commas, a newline. ``graph_hash`` is the sha256 of
    ``passnet-canonical-v<version>\\n`` followed by the exact lines, ``structure_hash`` of the same
    header, ``structure\\n`` and the structure lines (UTF-8).

    Returns:
        ``(pos, canon_inputs, graph_hash, structure_hash, text)``: the canonical position of each
        original node, each node's inputs as canonical positions (canonical order), the two hex
        digests and the exact text ("" unless ``want_text``).
    """
    pos = [0] * len(order)
    for k, o in enumerate(order):
        pos[o] = k
    canon_inputs = [[pos[j] for j in inputs[o]] for o in order]
    tails = ["\t%d\n" % ins[0] if len(ins) == 1 else "\t" + ",".join(map(str, ins)) + "\n" for ins in canon_inputs]
    lines = [None] * (2 * len(order))
    lines[0::2] = [exact[o] for o in order]
    lines[1::2] = tails
    text = "".join(lines)
    graph_hash = hashlib.sha256((_HEADER + text).encode()).hexdigest()
    lines[0::2] = [struct[o] for o in order]
    structure_hash = hashlib.sha256((_HEADER + "structure\n" + "".join(lines)).encode()).hexdigest()
    if not want_text:
        text = ""
    return pos, canon_inputs, graph_hash, structure_hash, text


def _texts(order, inputs, exact, struct, want_text, ints=None, rows=None):
    """:func:`texts_py`, by the compiled copy where the seam has it on (which fills the positions
    with the ints of ``ints``, ``ints[i] == i``, and reads ``rows``,
    :func:`passnet_common.canonical.order.input_rows` of ``inputs``, when given)."""
    c = compiled.cform
    if c is not None:
        try:
            return c.texts(order, inputs, exact, struct, want_text, _HEADER, ints, rows)
        except (ValueError, TypeError, OverflowError):
            pass  # an index the compiled loop does not take: the Python loop decides
    return texts_py(order, inputs, exact, struct, want_text)


def output_permutation(gm: fx.GraphModule | fx.Graph, placeholder_kinds: Sequence[str] | None = None) -> list[int]:
    """A canonical order for the values of a graph whose output tuple is an unordered set.

    A whole captured graph returns its outputs in a meaningful order, and the canonical
    form keeps it. A range cut out of a graph (``curate.decompose.ranges``) does not: its outputs
    are the values that escape the range, listed in the parent's recording order, which
    differs between equal ranges (the same MoE dispatch block of two layers records its
    ``sort`` / ``histc`` / ``empty_like`` outputs in different orders), so the same
    computation would get several hashes. Sorting the outputs by their producers' cone
    Merkle hashes (structure, then exact labels: :func:`passnet_common.canonical.order.merkle`),
    which depend only on what each output computes, gives one order for all of them.
    Ties (outputs with equal cones) keep their given order.

    Args:
        gm: a GraphModule or Graph whose output node returns a flat tuple/list of nodes.
        placeholder_kinds: as in :func:`canonicalize`.

    Returns:
        ``perm`` such that ``[outputs[p] for p in perm]`` is the canonical output order
        (the identity when the output is not a flat tuple of nodes).
    """
    graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
    mod = gm if isinstance(gm, fx.GraphModule) else None
    nodes = list(graph.nodes)
    out = nodes[-1] if nodes and nodes[-1].op == "output" else None
    vals = out.args[0] if out is not None and out.args else None
    if not isinstance(vals, (tuple, list)) or not all(isinstance(v, fx.Node) for v in vals):
        return list(range(len(vals))) if isinstance(vals, (tuple, list)) else [0]
    index = {m: i for i, m in enumerate(nodes)}
    kinds = list(placeholder_kinds) if placeholder_kinds is not None else None
    with _NoGC():
        exact, struct, inputs, _, _ = _labels(nodes, mod, kinds, False, index)
        extra, _ = ordering_deps(nodes, inputs, mod, index)
        s_cone, _ = merkle(label_ids(struct), inputs, extra)
        e_cone, _ = merkle(label_ids(exact), inputs, extra)
    keys = [(s_cone[index[v]], e_cone[index[v]]) for v in vals]
    return sorted(range(len(vals)), key=lambda k: keys[k])


def graph_hashes(gm: fx.GraphModule | fx.Graph, placeholder_kinds: Sequence[str] | None = None,
                 placeholder_values: Sequence | None = None) -> tuple[str, str]:
    """``(graph_hash, structure_hash)`` only: the same values as :func:`canonicalize` without
    building the stored node list or the WL bucket (used to re-hash a store)."""
    with _NoGC():
        r = _core(gm, list(placeholder_kinds) if placeholder_kinds is not None else None, False, want_text=False,
                  values=list(placeholder_values) if placeholder_values is not None else None)
    return r[4], r[5]


def _wl_hash(struct_labels_short, inputs, iterations: int = 3) -> str:
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
    keep_placeholder_order: bool = False,
    placeholder_values: Sequence | None = None,
) -> CanonicalGraph:
    """Canonical form and hashes of an FX graph (rules: :mod:`passnet_common.canonical`).

    Args:
        gm: a GraphModule (needed for ``call_module`` / ``get_attr`` state and sub-graphs)
            or a Graph.
        placeholder_kinds: kind of each placeholder in calling order (``input``,
            ``parameter``, ``buffer``); default: Dynamo's ``grapharg`` source, else ``input``.
        with_wl: also compute the Weisfeiler-Lehman bucket (networkx; the slowest part).
        keep_placeholder_order: placeholders keep their calling positions (and the positions
            enter the hash) instead of being ordered canonically; used for the bodies of
            higher-order ops, whose operands are passed positionally.
        placeholder_values: the value of each placeholder in calling order (Dynamo's
            ``example_inputs``): small real buffers enter the hash by their bytes
            (:func:`buffer_labels`); None: every buffer by shape and dtype only.

    Returns:
        CanonicalGraph with ``graph_hash``, ``structure_hash``, ``wl_hash``, the canonical
        node list (the store's ``graph.json`` is built from it), sub-graphs and the
        placeholder permutation.

    Raises:
        ValueError: the graph is not a DAG.
    """
    kinds = list(placeholder_kinds) if placeholder_kinds is not None else None
    with _NoGC():
        r = _core(gm, kinds, keep_placeholder_order,
                  values=list(placeholder_values) if placeholder_values is not None else None)
        nodes, order, pos, text, graph_hash, structure_hash, canon_inputs, subs, store, index, ops = r
        mod = gm if isinstance(gm, fx.GraphModule) else None
        wl = ""
        if with_wl:
            wl = _wl_hash([f"{nodes[o].op}|{short_target(nodes[o], mod)}" for o in order], canon_inputs)
        canon_nodes, subgraphs, placeholder_order = stored_nodes(nodes, ops, order, pos, canon_inputs, subs, store, index,
                                                               mod, kinds)
    return CanonicalGraph(graph_hash=graph_hash, structure_hash=structure_hash, wl_hash=wl, text=text,
                          nodes=canon_nodes, order=order, subgraphs=subgraphs, placeholder_order=placeholder_order)

