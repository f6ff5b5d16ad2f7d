"""Keys of the label cache of :func:`passnet_common.canonical.form._labels`: speed only, no rule
of the canonical form lives here (rules in :mod:`passnet_common.canonical`).

A call node's labels and stored skeleton are a function of (op, target, argument template,
output metadata): the template keeps every literal and, for each input node, what the slow path
reads of it -- whether its value is None or a tensor, else its exact type (the signature binding
matches a SymInt as int, a SymBool as itself). Equal keys reuse the labels built for the first
node with that key -- in the compiled pass also across graphs (``_cform.labels``) -- so a key must
never be coarser than what the slow path reads. A call_function target is keyed only where its
type is in ``seam.SHARED_TARGETS`` (functions, builtins, ATen ops: equal only when identical); a
node whose target is a callable object, a partial or a bound method is labelled by itself. A
target is taken as it is when first met: what the process changes in its own functions while it
runs (a function's ``__module__`` or mutable default, ``torch.<name>`` replaced by a wrapper) is not
seen by a key. The stored node lists of graphs share the literal parts of
these entries, so ``CanonicalGraph.nodes`` is read-only (copy it before editing it). Two templates:

* :func:`template` (the first): plain tuples / lists / dicts of literals, input nodes by
  :func:`node_mark`, dict keys by :func:`key_template`. FX stores nested lists as
  ``immutable_list`` and keyword arguments as ``immutable_dict``, which it refuses (TypeError).
* :func:`exact_template` (tried when the first refuses, for every call with keyword
  arguments, and for every call whose output is not a tensor or None, whose metadata
  :func:`exact_meta_key` keys): every container by its exact type, floats by ``repr``
  (``-0.0`` apart from ``0.0``), input nodes by the exact type of their value unless it is
  None or a tensor (``torch.fx.operator_schemas.normalize_function`` matches overloads on
  those types). Its keys are tagged, so they never meet the first template's.

**Partial hits** (``_cform.labels``, within one label pass): a miss whose key equals an earlier
miss's but for the output metadata -- the key without its metadata items, plus the exact class of
every input node (:func:`template` keys a tensor input by its value class only; the signature
binding reads an input's exact type) -- reuses that miss's labels up to their last item: a call's label is the JSON
list ``[op, target, arguments, metadata]`` (:func:`passnet_common.canonical.form.node_label`), so
its text is the earlier text cut before the metadata's JSON plus this node's
(:func:`passnet_common.canonical.form.meta_texts`), and its stored entry the earlier one with this
node's metadata. The cut is checked (the earlier text must end in ``,`` + its metadata's JSON +
``]``); the result becomes the cache entry of the node's full key. Nothing is kept between graphs.

Calls the first template refuses get the exact template, which gives them the labels the slow
path gives them.
"""

from __future__ import annotations

import struct

import torch
import torch.fx as fx
from torch.fx.immutable_collections import immutable_dict, immutable_list

NODE = fx.Node
float_bits = struct.Struct("<d").pack  # a float literal's key: its IEEE-754 bits
FLAT = (int, str, bool, type(None), float)
MARKS = [("%", c) for c in range(4)]  # a node reference by the value class of the node (None, tensor)


def node_mark(vc: int, xc):
    """How the first template keys an input node of value class ``vc`` and exact class ``xc``
    (:func:`value_classes`): None and tensor values by their class, anything else by its exact type."""
    return MARKS[vc] if vc < 2 else ("%", xc)


def label_order(d: dict):
    """A dict's items in the order its label lists them (:func:`passnet_common.canonical.labels.encode_literal`:
    sorted by ``str(key)``, ties in insertion order), so a template meets its nodes in the label's order
    (a node repeated under two keys of one graph's dict otherwise left another graph's inputs swapped)."""
    return d.items() if len(d) < 2 else sorted(d.items(), key=lambda kv: str(kv[0]))


def key_template(k, index: dict, marks: list, exact: bool = False):
    """A dict key's template: the key's own literal template (:func:`template`, or
    :func:`exact_template` with ``exact``), so ``0.0`` / ``-0.0`` and ``(1,)`` / ``(True,)`` differ as
    their labels do. TypeError for a node as a key."""
    if type(k) is str:  # keyword names: a str is its own template
        return k
    kd: list = []
    out = exact_template(k, kd, index, marks) if exact else template(k, kd, index, marks)
    if kd:
        raise TypeError("a node as a dict key: no template")
    return out
EXACT_TAG = "exact"


def template(value, deps: list, index: dict, marks: list):
    """Hashable image of an argument with every node replaced by its mark (``marks``: per node
    :func:`node_mark`); appends the node indexes to ``deps`` in argument order. Raises TypeError
    for values that are not plain tuples / lists / dicts of plain literals."""
    t = type(value)
    if t is NODE:
        j = index[value]
        deps.append(j)
        return marks[j]
    if t is tuple or t is list:
        out = [t is tuple]
        for v in value:
            tv = type(v)
            if tv is NODE:
                j = index[v]
                deps.append(j)
                out.append(marks[j])
            elif tv is int:
                out.append(v)  # a bare int: float and bool literals are tagged below
            else:
                out.append(template(v, deps, index, marks))
        return tuple(out)
    if t is int:
        return value
    if t is float:
        return (float, float_bits(value))  # by its bits: -0.0 apart from 0.0, NaN payloads apart
    if t in FLAT:
        return (t, value)  # keep True apart from the bare int 1
    if t is dict:
        return ("dict", *[(key_template(k, index, marks), template(v, deps, index, marks)) for k, v in label_order(value)])
    if t is slice:
        return ("slice", template(value.start, deps, index, marks), template(value.stop, deps, index, marks),
                template(value.step, deps, index, marks))
    if isinstance(value, (torch.dtype, torch.device, torch.memory_format, torch.layout)) or value is Ellipsis:
        return (t, str(value))
    raise TypeError("no fast template")


ENUMS = (torch.dtype, torch.device, torch.memory_format, torch.layout)


def exact_template(value, deps: list, index: dict, xclass: list):
    """Like :func:`template`, exact: containers by type (``immutable_list`` and
    ``immutable_dict`` included, keys in recorded order), floats by ``repr``, input nodes by
    ``xclass`` (0 None, 1 tensor, else the value's type). Raises TypeError for anything else
    (symbolic values, tensors, callables ... take the slow path)."""
    t = type(value)
    if t is NODE:
        j = index[value]
        deps.append(j)
        return ("%", xclass[j])
    if t is int:
        return value
    if t is float:
        return (float, float_bits(value))
    if t is str or t is bool or value is None:
        return (t, value)
    if t is tuple or t is list or t is immutable_list:
        return (t, *[exact_template(v, deps, index, xclass) for v in value])
    if t is dict or t is immutable_dict:
        return (t, *[(key_template(k, index, xclass, True), exact_template(v, deps, index, xclass))
                     for k, v in label_order(value)])
    if t is slice:
        return (slice, exact_template(value.start, deps, index, xclass), exact_template(value.stop, deps, index, xclass),
                exact_template(value.step, deps, index, xclass))
    if t in ENUMS or value is Ellipsis:
        return (t, str(value))
    raise TypeError("no exact template")


class_of_type: dict = {}


def value_classes(val) -> tuple:
    """``(value class, exact class)`` of a node's example value: (0, 0) None, (1, 1) a
    tensor, (2, type) a tuple or list, (3, type) anything else (cached per type)."""
    if val is None:
        return (0, 0)
    t = type(val)
    try:
        return class_of_type[t]
    except KeyError:
        pass
    if isinstance(val, torch.Tensor):
        res = (1, 1)
    elif isinstance(val, (tuple, list)):
        res = (2, t)
    else:
        res = (3, t)
    class_of_type[t] = res
    return res


def meta_key(val, vc: int):
    """Cache key of a node's output metadata (``vc`` its value class): None, or a tensor's
    ``(dtype, shape)``; TypeError for anything else (the slow path encodes it)."""
    if val is None:
        return None
    if vc == 1:
        return (val.dtype, val.shape)
    raise TypeError("no fast meta key")


SCALAR_META = frozenset({int, bool, float})


def exact_meta_key(val):
    """Cache key of a node's output metadata that is not a tensor: a tuple / list of
    tensors, Python scalars and such tuples by their types (tensors by dtype and shape), a
    Python int / bool / float by its type -- exactly what
    :func:`passnet_common.canonical.labels.encode_meta` reads of it. TypeError for anything
    else (the slow path encodes it)."""
    t = type(val)
    if t in SCALAR_META:
        return t
    if val is None:
        return None
    cls = class_of_type.get(t)
    if cls is None:
        cls = value_classes(val)
    if cls[0] == 1:
        return (val.dtype, val.shape)
    if cls[0] == 2 and not (hasattr(val, "dtype") and hasattr(val, "shape")):
        return (t, *[exact_meta_key(v) for v in val])
    raise TypeError("no exact meta key")


def permutation(template_deps: list[int], got: list[int]):
    """How ``got`` (node indexes in the order a label's encoding met them) reorders
    ``template_deps`` (the template's order): None for the identity, a tuple of positions
    into ``template_deps``, or False when no unambiguous mapping exists (a node repeated
    while the orders differ)."""
    if got == template_deps:
        return None
    if len(got) != len(template_deps) or len(set(template_deps)) != len(template_deps) \
            or sorted(got) != sorted(template_deps):
        return False
    where = {j: k for k, j in enumerate(template_deps)}
    return tuple(where[j] for j in got)
