# cython: language_level=3
"""Compiled copies of object loops of the canonical form (speed only, no rule).

Each function here computes what a Python function of the package defines (bounds checks and
negative indexes as in Python: the directives are left at their defaults); the package uses
them only through its seam, :mod:`passnet_common.canonical.compiled`, after the seam's one
agreement check (the whole form of sample graphs equal on both paths), and the Python
definitions otherwise.

* :func:`node_list`: :func:`passnet_common.canonical.stored.node_list_py`, the stored node list
  filled from the skeletons and plans the label pass built;
* :func:`labels`: :func:`passnet_common.canonical.form.labels_plain`, the label pass, with a label
  cache: a node whose key (:mod:`passnet_common.canonical.fastpath`) equals an earlier node's
  reuses its labels and stored skeleton; a miss whose key differs from an earlier miss's only in the
  output metadata is a partial hit (the earlier labels up to their metadata item, this node's
  metadata after it: ``form.meta_texts``, the fastpath docstring); any other miss of a call_function /
  call_method node or a placeholder is labelled by a compiled copy of the definition's rule
  (``_miss_call``, ``_miss_placeholder``), and of any other node by ``form._slow_label`` (the
  definition's :func:`~passnet_common.canonical.form.node_label` of that node);
* :func:`ordering_deps`: :func:`passnet_common.canonical.effects.ordering_deps_py`, the ordering
  edges of side effects. Not line for line: the Python loop's per-node tables (alias flags,
  mutations, union-find parents, written classes, last mutation and readers per class) are C
  arrays here, the per-(op, target) profile is looked up once per target, and the alias classes
  are built only where a tensor is written (a search from the written nodes, ``_alias_search``,
  instead of every node's storages, read by a compiled copy of ``effects.aliased_inputs``); the
  same two lists come out (compared by the seam, and on 300 random graphs and 400 graphs of shared
  storages in ``tests/test_canonical_compiled.py``);
* :func:`refs_and_positions`, :func:`op_kinds`: the reference lists and placeholder positions
  ``stored.stored_nodes`` fills the node list with, and the op kinds ``order.order_of_labels`` hands
  ``_cmerkle``;
* :func:`normalized_arguments`: :func:`passnet_common.canonical.labels.normalized_arguments`, the miss's binding of a
  call to its signature (the definition's plan cache shared; the varargs and ``size``-like method rules call it);
* :func:`lit_key`: ``effects._lit_key``, the key of ``effects.draws_random``'s cache, which the side-effect pass
  reads itself (``_draws_random``), calling the definition on a miss;
* :func:`texts`: :func:`passnet_common.canonical.form.texts_py`, the canonical texts and their sha256;
* :func:`input_rows`: :func:`passnet_common.canonical.order.input_rows_py`, the data inputs packed as
  int64 words, which :func:`ordering_deps`, :func:`texts` and ``_cmerkle.order_of_labels`` read
  instead of the lists when given them.

What makes these loops fast on large captured graphs is mostly memory, not instructions: a node's
objects (the node, its ``meta`` dict, the example FakeTensor and its TensorImpl, its argument tuple
and keyword dict, its stored entry) lie scattered over the heap, and each first read of one misses
the caches. The label pass, the side-effect pass and the node list therefore ask for those objects
a few nodes ahead (``__builtin_prefetch``, a hint that changes no value: ``set_prefetch``,
:func:`prefetch_enabled`); the label pass reads an ``fx.Node``'s slots directly where the type lays
them out as checked at import (``set_node_slots``); and the integer passes read packed rows, not
one list and int object per input.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int64_t
from libc.math cimport isfinite
from libc.stdlib cimport calloc, free, malloc

cdef extern from *:
    """
    #include <structmember.h>
    /* Offset of an object-valued member (PyMemberDef T_OBJECT / T_OBJECT_EX) from its descriptor,
       -1 for anything else. */
    static Py_ssize_t _pn_member_offset(PyObject *d) {
        PyMemberDef *m;
        if (Py_TYPE(d) != &PyMemberDescr_Type) return -1;
        m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type != T_OBJECT && m->type != T_OBJECT_EX) return -1;
        return m->offset;
    }
    #define _PN_FIELD(o, off) (*(PyObject **)((char *)(o) + (off)))
    #define _PN_PF(p) __builtin_prefetch((const void *)(p))
    static inline void *_pn_dict_keys(PyObject *d) { return (void *)((PyDictObject *)d)->ma_keys; }
    """
    Py_ssize_t _pn_member_offset(object descr)
    PyObject *_PN_FIELD(PyObject *o, Py_ssize_t off) nogil
    void _PN_PF(const void *p) nogil
    void *_pn_dict_keys(PyObject *d) nogil
    bint PyDict_CheckExact(PyObject *o)
    dict _PyDict_NewPresized(Py_ssize_t minused)
    bint PyObject_TypeCheck(PyObject *o, PyTypeObject *t)
    PyObject *PyDict_GetItem(PyObject *d, PyObject *k)
    PyObject *PyDict_GetItemWithError(object d, object k) except? NULL
    ctypedef struct PyListObject:
        PyObject **ob_item
    Py_ssize_t PyLong_AsSsize_t(PyObject *o)
    void PyErr_Clear()
    bint PyTuple_CheckExact(PyObject *o)
    bint PyLong_CheckExact(PyObject *o)
    bint PyList_CheckExact(PyObject *o)
    Py_ssize_t PyTuple_GET_SIZE(PyObject *o)
    Py_ssize_t PyList_GET_SIZE(PyObject *o)
    PyObject *PyTuple_GET_ITEM(PyObject *o, Py_ssize_t i)


# --- prefetching (speed only: no value read here decides anything) -------------------------
# The label pass reads, per FX node, the node, its ``meta`` dict, the dict's key table, the example
# value (a FakeTensor) and the tensor's C++ TensorImpl (dtype, sizes): five dependent loads that
# miss the caches on a large captured graph (its objects are spread over the heap between stack
# traces and module stacks), about 0.5-0.9 us per node when taken one after the other. The pipeline
# below asks for them a few nodes ahead (``__builtin_prefetch``, which never faults and changes no
# value), each stage reading what the previous stage brought in, so the misses of several nodes
# overlap. The offsets come from the types at run time (``set_prefetch``) and are checked there;
# when any is unknown the pipeline is off (``_pf_on``) and nothing else changes.

cdef bint _pf_on = False
cdef Py_ssize_t _off_meta = -1, _off_args = -1, _off_kwargs = -1, _off_impl = -1
cdef PyTypeObject *_pf_node_type = NULL
cdef PyTypeObject *_pf_tensor_type = NULL
cdef object _pf_keep = None  # the types above, kept alive
cdef object _pf_key_example = "example_value"


def set_prefetch(node_base, meta_descr, args_descr, kwargs_descr, tensor_base, samples):
    """Turn the prefetch pipeline on: ``node_base`` the C type holding ``meta`` / ``_args`` /
    ``_kwargs`` (their member descriptors), ``tensor_base`` the tensor type and ``samples`` tensors whose TensorImpl
    address (``t._cdata``) is a pointer at one fixed small offset in the object (found here). Returns
    whether the pipeline is on; it stays off when an offset is unknown."""
    global _pf_on, _off_meta, _off_args, _off_kwargs, _off_impl, _pf_node_type, _pf_tensor_type, _pf_keep
    _pf_on = False
    om, oa, ok = _pn_member_offset(meta_descr), _pn_member_offset(args_descr), _pn_member_offset(kwargs_descr)
    impl = -1
    for off in range(16, 64, 8):
        if all(isinstance(t, tensor_base) and off + 8 <= type(t).__basicsize__
               and (<size_t *>(<char *><PyObject *>t + off))[0] == <size_t>t._cdata for t in samples):
            impl = off
            break
    if om < 0 or oa < 0 or ok < 0 or impl < 0 or not samples:
        return False
    _off_meta, _off_args, _off_kwargs, _off_impl = om, oa, ok, impl
    _pf_keep = (node_base, tensor_base)
    _pf_node_type, _pf_tensor_type = <PyTypeObject *>node_base, <PyTypeObject *>tensor_base
    _pf_on = True
    return True


# Direct reads of an FX node's slots (speed only): for nodes whose type is exactly ``torch.fx.Node``
# and whose ``op`` / ``target`` / ``meta`` / ``_args`` / ``_kwargs`` resolve to the C base type's
# member descriptors (checked in ``set_node_slots``), ``n.op`` is the object in that slot (None
# when empty, as the descriptor returns) read without the attribute look-up.

cdef PyTypeObject *_slot_type = NULL
cdef Py_ssize_t _off_op = -1, _off_target = -1, _s_meta = -1, _s_args = -1, _s_kwargs = -1
cdef object _slot_keep = None


def set_node_slots(node_type, op_descr, target_descr, meta_descr, args_descr, kwargs_descr):
    """Read the five slots of ``node_type`` instances directly (the caller checks that the type
    resolves those names to these member descriptors). Returns whether it is on (every descriptor
    an object member); ``node_type`` None turns it off. Used by :func:`labels`."""
    global _slot_type, _off_op, _off_target, _s_meta, _s_args, _s_kwargs, _slot_keep
    _slot_type = NULL
    if node_type is None:
        return False
    offs = [_pn_member_offset(d) for d in (op_descr, target_descr, meta_descr, args_descr, kwargs_descr)]
    if min(offs) < 0:
        return False
    _off_op, _off_target, _s_meta, _s_args, _s_kwargs = offs
    _slot_keep = node_type
    _slot_type = <PyTypeObject *>node_type
    return True


cdef inline object _slot(object n, Py_ssize_t off, str name):
    """The object in the slot at ``off`` of ``n``; an empty slot is read by ``getattr(n, name)``
    (what the descriptor gives for it: None or AttributeError)."""
    cdef PyObject *p = _PN_FIELD(<PyObject *>n, off)
    if p == NULL:
        return getattr(n, name)
    return <object>p


def prefetch_enabled(on=None):
    """Whether the prefetch pipeline is on; ``on`` (a bool) switches it first (it only turns on
    after :func:`set_prefetch` found every offset). Returns the state before the call."""
    global _pf_on
    before = _pf_on
    if on is not None:
        _pf_on = bool(on) and _off_impl >= 0
    return before


cdef enum:
    # how many nodes ahead each stage of _pf_pipeline works: a fast-path node takes 0.1-0.2 us, a
    # cache miss here 0.2-0.4 us, so each stage waits two or three nodes for the previous one's
    # lines (12/9/6/4/3/1, 8/6/4/3/2/1, 16/12/8/6/4/2 and 24/18/12/8/5/2 were measured alike on
    # Qwen3-Next-80B's label pass with the caches flushed; prefetch off: 1.3x slower)
    _PF_NODE = 12
    _PF_FIELDS = 9
    _PF_KEYS = 6
    _PF_ARGS = 4
    _PF_VALUE = 3
    _PF_IMPL = 1


cdef inline void _pf_lines(const char *p, int k) noexcept:
    """Prefetch ``k`` cache lines (64 bytes each) from ``p``."""
    cdef int t
    for t in range(k):
        _PN_PF(p + 64 * t)


cdef inline PyObject *_pf_node(PyObject **items, Py_ssize_t n, Py_ssize_t j) noexcept:
    """``items[j]`` when ``j < n`` and it is an FX node (the type ``set_prefetch`` was given),
    else NULL."""
    if j >= n or not PyObject_TypeCheck(items[j], _pf_node_type):
        return NULL
    return items[j]


cdef inline void _pf_slot(PyObject *nd, Py_ssize_t off) noexcept:
    """Prefetch the object in ``nd``'s slot at ``off``, if any."""
    cdef PyObject *m = _PN_FIELD(nd, off)
    if m != NULL:
        _PN_PF(m)


cdef inline void _pf_pipeline(PyObject **items, Py_ssize_t n, Py_ssize_t i) noexcept:
    """Prefetch for the nodes ahead of node ``i`` of ``items``: the node objects, their ``meta``
    dict, argument tuple and keyword dict, the dict's key table, the arguments, the example value
    and its TensorImpl, each stage a few nodes after the previous one (``_PF_*``) and reading only
    lines an earlier stage asked for."""
    cdef Py_ssize_t k
    cdef PyObject *nd
    cdef PyObject *m
    cdef PyObject *v
    if i + _PF_NODE < n:
        _pf_lines(<char *>items[i + _PF_NODE], 3)
    nd = _pf_node(items, n, i + _PF_FIELDS)
    if nd != NULL:
        _pf_slot(nd, _off_meta)
        _pf_slot(nd, _off_args)
        _pf_slot(nd, _off_kwargs)
    nd = _pf_node(items, n, i + _PF_KEYS)
    if nd != NULL:
        m = _PN_FIELD(nd, _off_meta)
        if m != NULL and PyDict_CheckExact(m):
            _pf_lines(<char *>_pn_dict_keys(m), 3)
    nd = _pf_node(items, n, i + _PF_ARGS)
    if nd != NULL:
        m = _PN_FIELD(nd, _off_args)
        if m != NULL and PyTuple_CheckExact(m):
            for k in range(min(PyTuple_GET_SIZE(m), 4)):
                _PN_PF(PyTuple_GET_ITEM(m, k))
    v = _pf_value(items, n, i + _PF_VALUE)
    if v != NULL:
        _PN_PF(v)
    v = _pf_value(items, n, i + _PF_IMPL)
    if v != NULL and PyObject_TypeCheck(v, _pf_tensor_type):
        _pf_lines(<char *>_PN_FIELD(v, _off_impl), 4)


cdef inline PyObject *_pf_value(PyObject **items, Py_ssize_t n, Py_ssize_t j) noexcept:
    """``items[j].meta["example_value"]`` as a borrowed pointer, NULL when there is none (or ``j``
    is past the end)."""
    cdef PyObject *nd = _pf_node(items, n, j)
    cdef PyObject *m
    if nd == NULL:
        return NULL
    m = _PN_FIELD(nd, _off_meta)
    if m == NULL or not PyDict_CheckExact(m):
        return NULL
    return PyDict_GetItem(m, <PyObject *>_pf_key_example)


cdef object _fill(object skel, list refs, list sdeps, object slot):
    """``stored._fill``."""
    cdef list out
    if type(skel) is slot:
        return refs[sdeps[skel.k]]
    if type(skel) is list:
        out = []
        for x in <list>skel:
            if type(x) is slot:
                out.append(refs[sdeps[x.k]])
            elif type(x) is list:
                out.append(_fill(x, refs, sdeps, slot))
            else:
                out.append(x)
        return out
    return skel


cdef list _run(list skel, tuple plan, list refs, list deps):
    """``stored._run``."""
    cdef list out = skel.copy()
    cdef tuple item
    for item in plan:
        if item[2] is None:
            out[item[0]] = refs[deps[item[1]]]
        else:
            out[item[0]] = _run(skel[item[0]], item[2], refs, deps)
    return out


cdef inline list _permuted(list deps, object perm):
    if perm is None:
        return deps
    return [deps[p] for p in perm]


cdef inline Py_ssize_t _pf_index(PyObject *x, Py_ssize_t m) noexcept:
    """``x`` as an index into a list of ``m`` items, or -1 (not an exact int, or out of range)."""
    cdef Py_ssize_t v
    if not PyLong_CheckExact(x):
        return -1
    v = PyLong_AsSsize_t(x)
    if v == -1:
        PyErr_Clear()  # an int beyond Py_ssize_t (its OverflowError)
        return -1
    return v if 0 <= v < m else -1


cdef inline PyObject *_pf_entry(PyObject **o_items, PyObject **s_items, Py_ssize_t n, Py_ssize_t m,
                                Py_ssize_t k) noexcept:
    """``store[order[k]]`` (``o_items``: the ``n`` items of ``order``, ``s_items``: the ``m`` of
    ``store``) when ``k < n``, the index is in range and the entry is an ``(entry, deps)`` pair or an
    entry alone (6 items), else NULL."""
    cdef Py_ssize_t o
    cdef PyObject *st
    if k >= n:
        return NULL
    o = _pf_index(o_items[k], m)
    if o < 0:
        return NULL
    st = s_items[o]
    if not PyTuple_CheckExact(st) or (PyTuple_GET_SIZE(st) != 2 and PyTuple_GET_SIZE(st) != 6):
        return NULL
    return st


cdef inline PyObject *_pf_deps(PyObject *st, PyObject **c_items, Py_ssize_t n, Py_ssize_t k) noexcept:
    """The list the skeleton of ``st`` (from :func:`_pf_entry` at ``k``) is filled through: an
    ``(entry, deps)`` pair's deps (original indexes), an entry alone's ``canon_inputs[k]`` (canonical
    positions, ``c_items``: the ``n`` items of ``canon_inputs``); NULL if it is not a list."""
    cdef PyObject *d
    if PyTuple_GET_SIZE(st) == 2:
        d = PyTuple_GET_ITEM(st, 1)
    elif k < n:
        d = c_items[k]
    else:
        return NULL
    return d if PyList_CheckExact(d) else NULL


cdef inline void _pf_store(list order, list store, list refs, list canon_inputs, Py_ssize_t k) noexcept:
    """Prefetch for :func:`node_list` (speed only): for the nodes 1-8 canonical positions ahead,
    their stored entries (``store[order[k + d]]``, read in canonical order, i.e. at random): the
    entry (or ``(entry, deps)`` pair) 8 ahead, its parts and the list its slots are filled through
    5 ahead, that list's items 3 ahead, the reference lists its skeleton is filled with 1 ahead."""
    cdef PyObject **o_items = (<PyListObject *>order).ob_item
    cdef PyObject **s_items = (<PyListObject *>store).ob_item
    cdef PyObject **r_items = (<PyListObject *>refs).ob_item
    cdef PyObject **c_items = (<PyListObject *>canon_inputs).ob_item
    cdef Py_ssize_t n = len(order), m = len(store), n_refs = len(refs), n_ci = len(canon_inputs), o, q, j
    cdef PyObject *st
    cdef PyObject *d
    if k + 8 < n:
        o = _pf_index(o_items[k + 8], m)
        if o >= 0:
            _PN_PF(s_items[o])
    st = _pf_entry(o_items, s_items, n, m, k + 5)
    if st != NULL:
        _PN_PF(PyTuple_GET_ITEM(st, 0))
        if PyTuple_GET_SIZE(st) == 2:
            _PN_PF(PyTuple_GET_ITEM(st, 1))
        elif k + 5 < n_ci:
            _PN_PF(c_items[k + 5])
    st = _pf_entry(o_items, s_items, n, m, k + 3)
    if st != NULL:
        d = _pf_deps(st, c_items, n_ci, k + 3)
        if d != NULL:
            _PN_PF((<PyListObject *>d).ob_item)
    st = _pf_entry(o_items, s_items, n, m, k + 1)
    if st != NULL:
        d = _pf_deps(st, c_items, n_ci, k + 1)
        if d != NULL:
            for q in range(min(PyList_GET_SIZE(d), 8)):
                if PyTuple_GET_SIZE(st) == 2:
                    j = _pf_index((<PyListObject *>d).ob_item[q], n_refs)
                else:  # a canonical position: the node is order[position]
                    j = _pf_index((<PyListObject *>d).ob_item[q], n)
                    if j >= 0:
                        j = _pf_index(o_items[j], n_refs)
                if j >= 0:
                    _PN_PF(r_items[j])


cdef list _run_c(list skel, tuple plan, list refs, list order, list ci):
    """:func:`_run` with ``deps[q]`` read as ``order[ci[q]]`` (``ci``: the node's inputs as canonical
    positions, ``order[position]`` the node there)."""
    cdef list out = skel.copy()
    cdef tuple item
    for item in plan:
        if item[2] is None:
            out[item[0]] = refs[order[ci[item[1]]]]
        else:
            out[item[0]] = _run_c(skel[item[0]], item[2], refs, order, ci)
    return out


def refs_and_positions(list pos, list ops):
    """What ``stored.stored_nodes`` builds before the node list: ``[["%", p] for p in pos]`` and the
    calling position of each placeholder by original index (``{i: k}`` for the ``k``-th ``i`` with
    ``ops[i] == "placeholder"``). ValueError for lists of different lengths."""
    cdef Py_ssize_t n = len(pos), i, k = 0
    cdef list refs = PyList_New(n), r
    cdef dict ph = {}
    cdef object p, tag = "%"
    if len(ops) != n:
        raise ValueError("refs_and_positions: lists of different lengths")
    for i in range(n):
        p = pos[i]
        r = PyList_New(2)
        Py_INCREF(tag)
        PyList_SET_ITEM(r, 0, tag)
        Py_INCREF(p)
        PyList_SET_ITEM(r, 1, p)
        Py_INCREF(r)
        PyList_SET_ITEM(refs, i, r)
        if ops[i] == "placeholder":
            ph[i] = k
            k += 1
    return refs, ph


def op_kinds(list ops, dict kinds):
    """``[kinds.get(op, 0) for op in ops]`` (``order._KIND``: what ``_cmerkle.order_of_labels``
    reads of each op)."""
    cdef Py_ssize_t n = len(ops), i
    cdef list out = PyList_New(n)
    cdef PyObject *v
    cdef object x, zero = 0
    for i in range(n):
        v = PyDict_GetItemWithError(kinds, ops[i])
        x = <object>v if v != NULL else zero
        Py_INCREF(x)
        PyList_SET_ITEM(out, i, x)
    return out


def node_list(list order, list store, list ops, list refs, list canon_inputs, dict ph_positions,
              list placeholder_order, object other, object slot):
    """``stored.node_list_py`` (the same list; ``slot``: the ``stored._Slot`` type). Besides the
    entries ``node_list_py`` reads, ``store[o]`` may be a call's stored entry alone (a 6-tuple: the
    label pass's cache hits whose inputs are in the entry's slot order), whose slot ``q`` is then
    filled from the node's ``q``-th input, ``order[canon_inputs[k][q]]``."""
    cdef list canon_nodes = []
    cdef Py_ssize_t k = 0, n_order = len(order), n_store = len(store), n_ci = len(canon_inputs)
    cdef tuple st, entry
    cdef object o, p, a_sk, k_sk, pa, pk, deps
    cdef dict d
    cdef list ci
    for o in order:
        if _pf_on and len(order) == n_order and len(store) == n_store and len(canon_inputs) == n_ci:
            _pf_store(order, store, refs, canon_inputs, k)
        st = store[o]
        if st is not None and len(st) == 3:
            p = ph_positions[o]
            canon_nodes.append({"op": "placeholder", "target": "placeholder", "args": ["tuple"], "kwargs": ["dict"],
                                "meta": st[2], "inputs": canon_inputs[k], "position": p,
                                "canonical_position": len(placeholder_order), "kind": st[1]})
            placeholder_order.append(p)
        elif st is not None:
            if len(st) == 6:
                entry = st
                deps = None
            else:
                entry = st[0]
                deps = st[1]
            a_sk = entry[1]
            k_sk = entry[2]
            pa = entry[4]
            pk = entry[5]
            if pa is not None:
                if deps is None and ((pa and type(pa) is not tuple) or (pk and type(pk) is not tuple)):
                    deps = [order[c] for c in <list>canon_inputs[k]]
                if deps is None:
                    ci = canon_inputs[k]
                    if pa:
                        a_sk = _run_c(a_sk, pa, refs, order, ci)
                    if pk:
                        k_sk = _run_c(k_sk, pk, refs, order, ci)
                else:
                    if pa:
                        a_sk = _run(a_sk, pa, refs, deps) if type(pa) is tuple else _fill(a_sk, refs, _permuted(deps, pa[0]), slot)
                    if pk:
                        k_sk = _run(k_sk, pk, refs, deps) if type(pk) is tuple else _fill(k_sk, refs, _permuted(deps, pk[0]), slot)
            d = _PyDict_NewPresized(6)  # one key table of the final size (a 6-key literal resizes at its 6th key)
            d["op"] = ops[o]
            d["target"] = entry[0]
            d["args"] = a_sk
            d["kwargs"] = k_sk
            d["meta"] = entry[3]
            d["inputs"] = canon_inputs[k]
            canon_nodes.append(d)
        else:
            canon_nodes.append(other(k, o))
        k += 1
    return canon_nodes


# --- the label pass ------------------------------------------------------------------------
# The label pass with its cache (form.labels_plain's labels), and fastpath.template / exact_template /
# exact_meta_key.
# The objects they compare against come from the Python modules (set_context), so that the
# copies read the very same tables.

import struct as _struct
import types as _types

_float_bits = _struct.Struct("<d").pack  # fastpath.float_bits

cdef object NODE, _MARKS, EXACT_TAG, _FLAT, _ENUMS, _TAG_TYPES, _SCALAR_META, IMM_LIST, IMM_DICT
cdef dict _class_of_type
cdef object value_classes, placeholder_kind, meta_key, permutation


def set_context(node_type, marks, exact_tag, flat, enums, tag_types, scalar_meta, imm_list, imm_dict,
                class_of_type, value_classes_fn, placeholder_kind_fn, meta_key_fn, permutation_fn):
    """The tables and helpers of :mod:`passnet_common.canonical.fastpath` the copies use."""
    global NODE, _MARKS, EXACT_TAG, _FLAT, _ENUMS, _TAG_TYPES, _SCALAR_META, IMM_LIST, IMM_DICT
    global _class_of_type, value_classes, placeholder_kind, meta_key, permutation
    NODE, _MARKS, EXACT_TAG, _FLAT, _ENUMS, _TAG_TYPES = node_type, marks, exact_tag, flat, enums, tag_types
    _SCALAR_META, IMM_LIST, IMM_DICT = scalar_meta, imm_list, imm_dict
    _class_of_type, value_classes, placeholder_kind, meta_key = class_of_type, value_classes_fn, placeholder_kind_fn, meta_key_fn
    permutation = permutation_fn


# Nesting deeper than this many levels gets no cache key (TypeError: labelled by itself) and no compiled
# miss (the definition labels it, and raises RecursionError where it does): the C recursion of these copies
# has no interpreter check, and real arguments nest a few levels.
cdef enum:
    _DEPTH_MAX = 64


cdef object template(object value, list deps, dict index, list vclass, int depth=0):
    """``fastpath.template``."""
    cdef list out
    if depth > _DEPTH_MAX:
        raise TypeError("nested too deep for a key")
    t = type(value)
    if t is NODE:
        j = index[value]
        deps.append(j)
        return vclass[j]
    if t is tuple or t is list:
        out = [t is tuple]
        for v in value:
            tv = type(v)
            if tv is NODE:
                j = index[v]
                deps.append(j)
                out.append(vclass[j])
            elif tv is int:
                out.append(v)
            else:
                out.append(template(v, deps, index, vclass, depth + 1))
        return tuple(out)
    if t is int:
        return value
    if t is float:
        return (float, _float_bits(value))
    if t in _FLAT:
        return (t, value)
    if t is dict:
        return ("dict", *[(_key_template(k, index, vclass, False, depth + 1), template(v, deps, index, vclass, depth + 1))
                          for k, v in _label_order(value)])
    if t is slice:
        return ("slice", template(value.start, deps, index, vclass, depth + 1),
                template(value.stop, deps, index, vclass, depth + 1), template(value.step, deps, index, vclass, depth + 1))
    if isinstance(value, _TAG_TYPES) or value is Ellipsis:
        return (t, str(value))
    raise TypeError("no fast template")


cdef object _str_of_key(object kv):
    return str(kv[0])


cdef object _label_order(object d):
    """A dict's items in the order its label lists them (``labels.encode_literal``: sorted by ``str(key)``,
    ties in insertion order), so the template meets its nodes in the label's order."""
    if len(d) < 2:
        return d.items()
    return sorted(d.items(), key=_str_of_key)


cdef object _key_template(object k, dict index, list classes, bint exact, int depth=0):
    """A dict key's template (``fastpath.key_template``): the key's own literal template (floats by
    their bits, ``True`` apart from ``1``, tuples item by item), never a node."""
    if type(k) is str:  # keyword names: a str is its own template
        return k
    cdef list kd = []
    out = exact_template(k, kd, index, classes, depth) if exact else template(k, kd, index, classes, depth)
    if kd:
        raise TypeError("a node as a dict key: no template")
    return out


cdef dict _xmarks = {}  # exact type -> its first-template mark


cdef object _mark(Py_ssize_t vc, object xc):
    """How the first template keys an input node (``fastpath.node_mark``): None and tensor values by
    their value class, anything else by its exact type (the signature binding reads it: a SymInt binds
    as int, a SymBool does not)."""
    if vc < 2:
        return _MARKS[vc]
    m = _xmarks.get(xc)
    if m is None:
        m = _xmarks[xc] = ("%", xc)
    return m


cdef object exact_template(object value, list deps, dict index, list xclass, int depth=0):
    """``fastpath.exact_template``."""
    if depth > _DEPTH_MAX:
        raise TypeError("nested too deep for a key")
    t = type(value)
    if t is NODE:
        j = index[value]
        deps.append(j)
        return ("%", xclass[j])
    if t is int:
        return value
    if t is float:
        return (float, _float_bits(value))
    if t is str or t is bool or value is None:
        return (t, value)
    if t is tuple or t is list or t is IMM_LIST:
        return (t, *[exact_template(v, deps, index, xclass, depth + 1) for v in value])
    if t is dict or t is IMM_DICT:
        return (t, *[(_key_template(k, index, xclass, True, depth + 1), exact_template(v, deps, index, xclass, depth + 1))
                     for k, v in _label_order(value)])
    if t is slice:
        return (slice, exact_template(value.start, deps, index, xclass, depth + 1),
                exact_template(value.stop, deps, index, xclass, depth + 1),
                exact_template(value.step, deps, index, xclass, depth + 1))
    if t in _ENUMS or value is Ellipsis:
        return (t, str(value))
    raise TypeError("no exact template")


cdef object exact_meta_key(object val, int depth=0):
    """``fastpath.exact_meta_key``."""
    if depth > _DEPTH_MAX:
        raise TypeError("nested too deep for a key")
    t = type(val)
    if t in _SCALAR_META:
        return t
    if val is None:
        return None
    cls = _class_of_type.get(t)
    if cls is None:
        cls = value_classes(val)
    if cls[0] == 1:
        return (val.dtype, val.shape)
    if cls[0] == 2 and not (hasattr(val, "dtype") and hasattr(val, "shape")):
        return (t, *[exact_meta_key(v, depth + 1) for v in val])
    raise TypeError("no exact meta key")


cdef object _ABSENT = object()
cdef object _meta_texts = None  # form.meta_texts (set_meta_texts); None: no partial hits

# The label cache lives across label passes (graphs): a key holds everything the slow path reads of
# a call_function / call_method / placeholder node (fastpath docstring), none of it a property of the
# graph -- a label refers to its inputs only as "%" -- so a node of another graph with an equal key
# has equal labels, as a node of the same graph does. call_module keys stay in a per-pass dict: a
# module's state is read from this graph's GraphModule under the target name the key holds. A
# call_function target not of a type in _shared_targets (a callable object may compare equal to another
# that labels differently) is not keyed at all: its node is labelled by itself. The
# partial-hit entries (they keep an example value) stay per pass too. Cleared when it passes
# LABEL_CACHE_MAX entries (each a few hundred bytes) and by clear_label_cache.
cdef dict _lcache = {}
LABEL_CACHE_MAX = 50_000
cdef object _shared_targets = frozenset()  # seam.SHARED_TARGETS: call_function target types kept across passes


def set_shared_targets(kinds):
    """The call_function target types (``seam.SHARED_TARGETS``) the cache keys; a node whose target is of
    any other type is labelled by itself (the slow path)."""
    global _shared_targets
    _shared_targets = frozenset(kinds)


cdef Py_ssize_t _last_misses = 0


def last_misses():
    """Misses of the last label pass (:func:`labels`): nodes labelled by the definition's rule, compiled
    (:func:`_miss_call`) or ``slow_label``; partial hits are not misses."""
    return _last_misses


def clear_label_cache():
    """Empty the label cache kept across graphs (a benchmark's fresh start; no value changes)."""
    _lcache.clear()


def label_cache_size():
    """Entries in the label cache kept across graphs."""
    return len(_lcache)


def set_meta_texts(fn):
    """``form.meta_texts`` (the output metadata's encoding and its JSON texts), which turns on the
    label pass's partial hits; None turns them off."""
    global _meta_texts
    _meta_texts = fn


cdef object _partial_key(tuple key, list tdeps, list xclass):
    """The key of a call's label without its output metadata (``labels``' partial hits): the
    cache key with the metadata items left out, tagged by the template family, plus the exact class
    of every input node (``xclass``: the first template keys a tensor input by its value class only; with
    it the signature binding, which reads an input's exact type, is the same for equal partial keys).
    None where an input comes later in the node list."""
    cdef Py_ssize_t q, nd = len(tdeps), nx = len(xclass)
    cdef tuple xs = PyTuple_New(nd)
    for q in range(nd):
        j = tdeps[q]
        if j < 0 or j >= nx:
            return None
        x = xclass[j]
        Py_INCREF(x)
        PyTuple_SET_ITEM(xs, q, x)
    if key[0] is EXACT_TAG or key[0] == EXACT_TAG:
        return (EXACT_TAG, xs, key[:5])
    if key[2] is None:  # the flat first template: (op, target, None, dtype, shape, *templates)
        return ("flat", xs, key[:3] + key[5:])
    return ("nested", xs, key[:3])  # (op, target, template, None, dtype, shape)


# --- a miss of a call_function / call_method node: the definition's labels and stored entry, compiled ---
# Copies of labels.encode_literal / encode_meta, form._struct_literal / _encode_call / node_label (its
# call branch) / stored_call and stored.stored_entry / _plan, in the same order of reads (the node
# references are met in the definition's order, so the data inputs and slots come out the same);
# what they call of the definition for rarer values (normalized_arguments, positional_names,
# qualified_name, the tail of encode_literal for values that hold no node) is called as it is.
# Wired by set_miss_context; without it every miss calls form._slow_label.

cdef bint _miss_on = False
cdef object _normalized_arguments, _positional_names, _qualified_name, _encode_literal_py, _no_ref_py
cdef object _encode_float_py, _int_or_sym_py, _dtype_name_py, _dumps, _SlotT, _TENSOR, _SIZE, _DTYPE
cdef object _SYM_INT, _SYM_FLOAT, _GETITEM
cdef frozenset _DIM_PARAMS = frozenset()
cdef dict _dtype_names = {}
cdef object _PCT = "%"


def set_miss_context(normalized_arguments, positional_names, qualified_name, encode_literal, no_ref,
                     encode_float, int_or_sym, dtype_name, dtype_names, dim_params, dumps, slot_type,
                     tensor_type, size_type, dtype_type, sym_int, sym_float, getitem):
    """The definition's helpers and tables the compiled miss of a call reads (``labels``, ``form``,
    ``stored``); turns the compiled miss on (``set_miss_context(None, ...)``: off)."""
    global _miss_on, _normalized_arguments, _positional_names, _qualified_name, _encode_literal_py, _no_ref_py
    global _encode_float_py, _int_or_sym_py, _dtype_name_py, _dumps, _SlotT, _TENSOR, _SIZE, _DTYPE
    global _SYM_INT, _SYM_FLOAT, _GETITEM, _DIM_PARAMS, _dtype_names
    _miss_on = normalized_arguments is not None
    _normalized_arguments, _positional_names, _qualified_name = normalized_arguments, positional_names, qualified_name
    _encode_literal_py, _no_ref_py, _encode_float_py, _int_or_sym_py = encode_literal, no_ref, encode_float, int_or_sym
    _dtype_name_py, _dtype_names = dtype_name, dtype_names if dtype_names is not None else {}
    _DIM_PARAMS = frozenset(dim_params or ())
    _dumps, _SlotT, _TENSOR, _SIZE, _DTYPE = dumps, slot_type, tensor_type, size_type, dtype_type
    _SYM_INT, _SYM_FLOAT, _GETITEM = sym_int, sym_float, getitem


cdef object _wraps_of = None, _wrapper_type_py = None
cdef dict _wrapper_types = {}  # type -> stored.dynamo_wrapper_type(type), memoised


cdef bint _wrapper_type(object t):
    got = _wrapper_types.get(t)
    if got is None:
        got = _wrapper_types[t] = bool(_wrapper_type_py(t))
    return got


def set_wraps(wraps, wrapper_type):
    """``stored.dynamo_wraps`` and ``stored.dynamo_wrapper_type``: a call whose target's type is a wrapper
    type and which ``wraps`` maps to a list gets no stored entry, as in ``form.labels_plain`` (None: every
    call gets one)."""
    global _wraps_of, _wrapper_type_py
    _wraps_of, _wrapper_type_py = wraps, wrapper_type
    _wrapper_types.clear()


# --- labels.normalized_arguments, compiled (the common path; the rarer ones call the definition) ---

cdef bint _norm_on = False
cdef object _norm_py, _bind_by_plan, _TORCH, _GENERIC_ALIAS, _HOP
cdef dict _varargs_methods = {}, _method_params = {}
cdef tuple _skip_modules = (), _int_enum_types = ()


def set_norm_context(normalized_arguments, bind_by_plan, varargs_methods, method_params, skip_modules, hop_type,
                     torch_module, int_enum_types, generic_alias):
    """The tables and helpers of ``labels.normalized_arguments`` that :func:`normalized_arguments` reads
    (``bind_by_plan``: ``labels.bind_by_plan``, the plan cache and the binding it ends with);
    ``set_norm_context(None, ...)``: the compiled miss calls the definition."""
    global _norm_on, _norm_py, _bind_by_plan, _varargs_methods, _method_params, _skip_modules, _HOP, _TORCH
    global _int_enum_types, _GENERIC_ALIAS
    _norm_on = normalized_arguments is not None
    _norm_py, _bind_by_plan = normalized_arguments, bind_by_plan
    _varargs_methods = varargs_methods if varargs_methods is not None else {}  # the definition's dicts themselves
    _method_params = method_params if method_params is not None else {}
    _skip_modules = tuple(skip_modules or ())
    _HOP, _TORCH, _int_enum_types, _GENERIC_ALIAS = hop_type, torch_module, tuple(int_enum_types or ()), generic_alias


cdef object _arg_type_c(object v, int depth=0):
    """``labels._arg_type``; :class:`_TooDeep` past ``_DEPTH_MAX`` levels."""
    if depth > _DEPTH_MAX:
        raise _TooDeep()
    if isinstance(v, NODE):
        val = _tensor_meta_of(v)
        if isinstance(val, _TENSOR) or val is None:
            return _TENSOR
        if isinstance(val, _SYM_INT):
            return int
        if isinstance(val, _SYM_FLOAT):
            return float
        return type(val)
    if isinstance(v, (tuple, list)) and len(v) > 0:
        kinds = set()
        for x in v:
            kinds.add(_arg_type_c(x, depth + 1))
        if len(kinds) == 1:
            k = next(iter(kinds))
            if k is _TENSOR or k is int or k is float or k is bool:
                return _GENERIC_ALIAS(list, (k,))
        return type(v)
    if isinstance(v, _int_enum_types):
        return int
    return type(v)


cdef object _type_class_c(object v, int depth=0):
    """``labels._type_class``; :class:`_TooDeep` past ``_DEPTH_MAX`` levels."""
    cdef list out
    if depth > _DEPTH_MAX:
        raise _TooDeep()
    t = type(v)
    if t is NODE:
        return ("N", _arg_type_c(v))
    if t is tuple or t is list or isinstance(v, (tuple, list)):
        out = [t, len(v)]
        for x in v:
            out.append(_type_class_c(x, depth + 1))
        return tuple(out)
    return t


def normalized_arguments(n):
    """``labels.normalized_arguments(n)``: the same list (or None); the plan key's types built here, the plan
    applied by the definition's ``labels.bind_by_plan`` (its cache shared). Calls the
    definition for ``call_method`` nodes of :data:`labels.VARARGS_METHODS` / :data:`labels.METHOD_PARAMS` and
    methods without a ``torch.<name>`` function, and for arguments nested deeper than ``_DEPTH_MAX`` levels
    (the C recursion has no interpreter check: the definition raises what it raises)."""
    cdef list kwt, at
    op = n.op
    if op == "call_method":
        name = n.target
        if type(name) is not str or name in _varargs_methods or name in _method_params:
            return _norm_py(n)
        fn = getattr(_TORCH, name, None)
        if fn is None or not callable(fn):
            return _norm_py(n)
    elif op == "call_function":
        fn = n.target
        mod = getattr(fn, "__module__", None) or ""
        if mod in _skip_modules or isinstance(fn, _HOP):
            return None
    else:
        return None
    args, kwargs = n.args, n.kwargs
    kwt = []
    at = []
    try:
        for k, v in kwargs.items():
            kwt.append((k, _type_class_c(v)))
        for a in args:
            at.append(_type_class_c(a))
    except _TooDeep:
        return _norm_py(n)
    return _bind_by_plan(n, fn, (op, id(fn), len(args), tuple(kwt), tuple(at)))


cdef inline object _dtype_name(object dt):
    """``labels._dtype_name``."""
    name = _dtype_names.get(dt) if type(dt) is _DTYPE else None
    return name if name is not None else _dtype_name_py(dt)


cdef object _ref(object m, int mode, dict index, list deps):
    """A node reference: mode 0 ``form._no_ref``, 1 ``stored.Ref``, 2 ``stored.SlotRef``."""
    if mode == 0:
        return [_PCT]
    deps.append(index[m])
    if mode == 1:
        return [_PCT]
    return _SlotT(len(deps) - 1)


class _TooDeep(Exception):
    """A value nested deeper than ``_DEPTH_MAX`` levels: the definition labels the node (``labels``)."""


cdef object _enc(object value, int mode, dict index, list deps, bint abstract, int depth=0):
    """``labels.encode_literal(value, ref, abstract)`` with ``ref`` by ``mode`` (:func:`_ref`); :class:`_TooDeep`
    past ``_DEPTH_MAX`` levels."""
    cdef list out
    if depth > _DEPTH_MAX:
        raise _TooDeep()
    t = type(value)
    if t is NODE:
        return _ref(value, mode, index, deps)
    if t is tuple or t is list:
        out = ["tuple" if t is tuple else "list"]
        for v in value:
            out.append(_enc(v, mode, index, deps, abstract, depth + 1))
        return out
    if t is int:
        return ["int"] if abstract else value
    if t is float:
        if abstract:
            return ["float"]
        return value if isfinite(<double>value) else _encode_float_py(value)
    if value is None or t is bool or t is str:
        return value
    if t is slice:
        return ["slice", _enc(value.start, mode, index, deps, abstract, depth + 1), _enc(value.stop, mode, index, deps, abstract, depth + 1),
                _enc(value.step, mode, index, deps, abstract, depth + 1)]
    if t is _DTYPE:
        return ["dtype", _dtype_name(value)]
    if t is IMM_LIST:
        out = ["list"]
        for v in value:
            out.append(_enc(v, mode, index, deps, abstract, depth + 1))
        return out
    if isinstance(value, NODE):
        return _ref(value, mode, index, deps)
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return ["int"] if abstract else int(value)
    if isinstance(value, float):
        return ["float"] if abstract else _encode_float_py(float(value))
    if isinstance(value, (list, tuple)):
        out = ["size" if isinstance(value, _SIZE) else ("tuple" if isinstance(value, tuple) else "list")]
        for v in value:
            out.append(_enc(v, mode, index, deps, abstract, depth + 1))
        return out
    if isinstance(value, dict):
        out = ["dict"]
        for k, v in sorted(value.items(), key=_str_of_key):
            out.append([str(k), _enc(v, mode, index, deps, abstract, depth + 1)])
        return out
    return _encode_literal_py(value, _no_ref_py, abstract)  # the definition's tail: values that hold no node


cdef object _meta(object value, bint abstract_shapes, int depth=0):
    """``labels.encode_meta``; :class:`_TooDeep` past ``_DEPTH_MAX`` levels."""
    cdef list out
    if depth > _DEPTH_MAX:
        raise _TooDeep()
    if value is None:
        return None
    if isinstance(value, _TENSOR) or hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = _dtype_name(value.dtype)
        shape = value.shape
        if abstract_shapes:
            return ["T", dtype, len(shape)]
        out = []
        for s in shape:
            out.append(s if type(s) is int else _int_or_sym_py(s))
        return ["T", dtype, out]
    if isinstance(value, (tuple, list)):
        out = ["tuple" if isinstance(value, tuple) else "list"]
        for v in value:
            out.append(_meta(v, abstract_shapes, depth + 1))
        return out
    if isinstance(value, dict):
        out = ["dict"]
        for k, v in sorted(value.items(), key=_str_of_key):
            out.append([str(k), _meta(v, abstract_shapes, depth + 1)])
        return out
    if isinstance(value, bool):
        return ["bool"]
    if isinstance(value, (int, _SYM_INT)):
        return ["int"]
    if isinstance(value, (float, _SYM_FLOAT)):
        return ["float"]
    return ["py", type(value).__qualname__]


cdef object _struct_lit(object name, object value, dict index):
    """``form._struct_literal``."""
    if name == "groups" and type(value) is int and value == 1:
        return 1
    return _enc(value, 0, index, None, name not in _DIM_PARAMS)


cdef object _tensor_meta_of(object node):
    """``labels.tensor_meta_of``."""
    meta = node.meta
    if "example_value" in meta:
        return meta["example_value"]
    if "val" in meta:
        return meta["val"]
    return meta.get("tensor_meta")


cdef tuple _encode_call(object n, dict index, list deps):
    """``form._encode_call(n, Ref)``: (exact, structure) encodings of a call's arguments; the
    references of the exact one appended to ``deps``."""
    cdef list e, s, kw
    cdef Py_ssize_t i, nn
    norm = normalized_arguments(n) if _norm_on else _normalized_arguments(n)
    if norm is not None:
        e = ["sig"]
        for k, v in norm:
            e.append([k, _enc(v, 1, index, deps, False)])
        s = ["sig"]
        for k, v in norm:
            s.append([k, _struct_lit(k, v, index)])
        return e, s
    args, kwargs = n.args, n.kwargs
    kw = sorted(kwargs.items())
    ea = _enc(args, 1, index, deps, False)  # before the keyword arguments: the definition's order of references
    ed = ["dict"]
    for k, v in kw:
        ed.append([k, _enc(v, 1, index, deps, False)])
    e = ["raw", ea, ed]
    if n.target is _GETITEM and args and isinstance(args[0], NODE) \
            and not isinstance(_tensor_meta_of(args[0]), _TENSOR) and _tensor_meta_of(args[0]) is not None:
        s_args = _enc(args, 0, index, None, False)
    else:
        names = _positional_names(n) if n.op != "call_module" else ()
        if names:
            s_args = ["tuple"]
            nn = len(names)
            for i, v in enumerate(args):
                s_args.append(_struct_lit(names[i] if i < nn and names[i] else "", v, index))
        else:
            s_args = _enc(args, 0, index, None, True)
    sd = ["dict"]
    for k, v in kw:
        sd.append([k, _struct_lit(k, v, index)])
    return e, ["raw", s_args, sd]


cdef tuple _miss_placeholder(object n, Py_ssize_t i, object val, object kinds, bint keep_positions, Py_ssize_t ph,
                             list store):
    """``form._slow_label`` of a placeholder (``form.node_label``'s placeholder rule): ``(exact label,
    structure label, [], ("placeholder", kind, metadata))``, ``store[i]`` filled with the last where the
    placeholder has no default value."""
    kind = kinds[ph] if kinds is not None and ph < len(kinds) else placeholder_kind(n)
    me = _meta(val, False)
    if keep_positions:
        el = _dumps(["placeholder", kind, me, ph])
        sl = _dumps(["placeholder", kind, _meta(val, True), ph])
    else:
        el = _dumps(["placeholder", kind, me])
        sl = _dumps(["placeholder", kind, _meta(val, True)])
    st = ("placeholder", kind, me)  # the label's metadata list serves the stored entry too (read-only)
    if not n.args:
        store[i] = st
    return el, sl, [], st


cdef tuple _meta_texts_c(object val):
    """``form.meta_texts``: the JSON texts of a call's output metadata (exact, structure) and the exact
    encoding."""
    m = _meta(val, False)
    return _dumps(m), _dumps(_meta(val, True)), m


cdef tuple _cplan(list skel, object perm):
    """``stored._plan``."""
    cdef list out = []
    for p, x in enumerate(skel):
        tx = type(x)
        if tx is _SlotT:
            out.append((p, x.k if perm is None else perm[x.k], None))
        elif tx is list:
            out.append((p, None, _cplan(x, perm)))
    return tuple(out)


cdef tuple _centry(object short, object a_sk, object k_sk, object meta, object perm, bint has_slots):
    """``stored.stored_entry``."""
    if not has_slots:
        return (short, a_sk, k_sk, meta, None, None)
    return (short, a_sk, k_sk, meta, _cplan(a_sk, perm) if type(a_sk) is list else [perm],
            _cplan(k_sk, perm) if type(k_sk) is list else [perm])


cdef tuple _miss_call(object n, Py_ssize_t i, object op, object target, object val, dict index, list store,
                      object tdeps):
    """``form._slow_label`` of a call_function / call_method node: ``(exact label, structure label, data
    inputs, the entry the cache may keep)``, ``store[i]`` filled with ``(stored entry, slot nodes)``."""
    cdef list deps = [], sdeps = []
    tgt = _qualified_name(target) if op == "call_function" else str(target)
    args_e, args_s = _encode_call(n, index, deps)
    me = _meta(val, False)
    el = _dumps([op, tgt, args_e, me])
    sl = _dumps([op, tgt, args_s, _meta(val, True)])
    args, kwargs = n.args, n.kwargs
    a_sk = _enc(args, 2, index, sdeps, False)
    k_sk = _enc(dict(kwargs), 2, index, sdeps, False) if kwargs else ["dict"]
    entry = _centry(tgt, a_sk, k_sk, me, None, len(sdeps) > 0)  # the label's metadata list, read-only
    # a Dynamo numpy wrapper: no stored entry (the node list encodes it by itself, with what it wraps)
    store[i] = None if op == "call_function" and _wraps_of is not None and _wrapper_type(type(target)) \
        and _wraps_of(target) is not None else (entry, sdeps)
    sperm = permutation(tdeps, sdeps) if tdeps is not None else False
    if sperm is None:
        st = entry
    elif sperm is not False:
        st = _centry(entry[0], entry[1], entry[2], entry[3], sperm, len(sdeps) > 0)
    else:
        st = None
    return el, sl, deps, st


def labels(list nodes, gm, kinds, bint keep_positions, dict index, bint want_store, slow_label):
    """``form.labels_plain``'s labels, inputs and stored entries, with a label cache
    (``slow_label``: ``form._slow_label``, called on a miss). Keys: the first template
    ``(op, target, None, dtype, shape, *argument templates)`` (``None, None`` without metadata) for calls
    without keyword arguments whose output is a tensor or None, the exact template otherwise
    (:mod:`passnet_common.canonical.fastpath`)."""
    cdef list store = [None] * len(nodes) if want_store else None
    cdef list exact = [None] * len(nodes), struct = [None] * len(nodes), inputs = [None] * len(nodes)
    cdef list vclass = [], xclass = []  # read by index during the pass: grown as in the Python loop
    # (vclass holds each node's first-template mark, _mark)
    cdef list deps, kw_deps, tdeps = None
    cdef dict subs = {}, mod_cache = {}, cache = _lcache, mcache = {}, pcache = {}, ccache
    cdef list pe, scratch = None
    cdef dict class_of_type = _class_of_type
    cdef Py_ssize_t i = -1, ph = 0, n_nodes = len(nodes)
    cdef bint first, fast
    cdef Py_ssize_t na, q
    cdef tuple tpt
    cdef PyObject *pv
    cdef Py_ssize_t misses = 0
    global _last_misses
    if len(cache) > LABEL_CACHE_MAX:
        cache.clear()
    for n in nodes:
        i += 1
        if _pf_on and len(nodes) == n_nodes:
            _pf_pipeline((<PyListObject *>nodes).ob_item, n_nodes, i)
        fast = (<PyObject *>n).ob_type == _slot_type
        if fast:
            op = _slot(n, _off_op, "op")
            meta = _slot(n, _s_meta, "meta")
        else:
            op = n.op
            meta = n.meta
        if PyDict_CheckExact(<PyObject *>meta):  # meta.get("example_value", _ABSENT) without the method call
            pv = PyDict_GetItemWithError(meta, "example_value")
            val = <object>pv if pv != NULL else _ABSENT
        else:
            val = meta.get("example_value", _ABSENT)  # one look-up where the Python loop makes two
        if val is _ABSENT:
            val = meta["val"] if "val" in meta else meta.get("tensor_meta")
        if val is None:
            vc = xc = 0
        else:
            cls = class_of_type.get(type(val))
            vc, xc = cls if cls is not None else value_classes(val)
        key = pk = None
        if op == "call_function" or op == "call_method" or op == "call_module":
            deps = []
            try:
                first = val is None or vc == 1
                if first:
                    dt = sh = None
                    if val is not None:
                        dt = val.dtype
                        sh = val.shape
                else:
                    mk = exact_meta_key(val)
                if fast:
                    kwargs = _slot(n, _s_kwargs, "_kwargs")
                    args = _slot(n, _s_args, "_args")
                    target = _slot(n, _off_target, "target")
                else:
                    kwargs = n._kwargs
                    args = n._args
                    target = n.target
                if op == "call_function" and type(target) not in _shared_targets:
                    raise TypeError("a target that may compare equal to another: labelled by itself")
                if op != "call_function" and type(target) is not str:  # the label reads str(target)
                    raise TypeError("a method or module name that is not a str: labelled by itself")
                key = None
                if not kwargs and first:
                    try:
                        # (op, target, None, dtype, shape, *argument templates) for a tuple of arguments
                        # (dtype, shape None, None without metadata): one flat tuple, equal where the
                        # nested (op, target, template, None, dtype, shape) is, and never equal to one
                        # (its third item, a template, is never None)
                        if type(args) is tuple:
                            na = len(<tuple>args)
                            tpt = PyTuple_New(na + 5)
                            Py_INCREF(op)
                            PyTuple_SET_ITEM(tpt, 0, op)
                            Py_INCREF(target)
                            PyTuple_SET_ITEM(tpt, 1, target)
                            Py_INCREF(None)
                            PyTuple_SET_ITEM(tpt, 2, None)
                            Py_INCREF(dt)
                            PyTuple_SET_ITEM(tpt, 3, dt)
                            Py_INCREF(sh)
                            PyTuple_SET_ITEM(tpt, 4, sh)
                            for q in range(na):
                                v = (<tuple>args)[q]
                                tv = type(v)
                                if tv is NODE:
                                    j = index[v]
                                    deps.append(j)
                                    x = vclass[j]
                                elif tv is int:
                                    x = v
                                else:
                                    x = template(v, deps, index, vclass)
                                Py_INCREF(x)
                                PyTuple_SET_ITEM(tpt, q + 5, x)
                            key = tpt
                        else:
                            key = (op, target, template(args, deps, index, vclass), None, dt, sh)
                    except TypeError:
                        deps = []
                if key is None:
                    if first:
                        mk = None if val is None else (dt, sh)
                    kw_deps = [] if kwargs else None
                    key = (EXACT_TAG, op, target, exact_template(args, deps, index, xclass),
                           exact_template(kwargs, kw_deps, index, xclass) if kwargs else None, mk)
                    if kw_deps:
                        deps = deps + kw_deps
                        if len(set(deps)) != len(deps):
                            raise TypeError("a node repeated across args and kwargs: no unambiguous template")
                ccache = mcache if op == "call_module" else cache
                hit = ccache.get(key)
            except (TypeError, IndexError, KeyError):  # IndexError: an input that comes later (a graph not in
                # topological order); KeyError: a node of another graph (a dict key): labelled by itself
                key = hit = None
            if hit is not None and (not want_store or hit[2] is not None):
                exact[i] = hit[0]
                struct[i] = hit[1]
                perm = hit[3]
                inputs[i] = deps if perm is None else [deps[p] for p in perm]
                vclass.append(_mark(vc, xc))
                xclass.append(xc)
                if want_store:
                    store[i] = hit[2] if perm is None else (hit[2], deps)  # alone: its deps are inputs[i]
                continue
            tdeps = deps
            # a partial hit: an earlier miss with the same key but for the output metadata (its
            # label's items before the metadata are the same, form.meta_texts); the labels are that
            # miss's texts with this node's metadata as the last item, its stored entry with this
            # node's metadata, and they become the cache entry of this key
            if key is not None and _meta_texts is not None:
                pk = _partial_key(<tuple>key, tdeps, xclass)
                pe = pcache.get(pk) if pk is not None else None
                if pe is not None:
                    if pe[5] is None:  # the texts before the metadata, cut from the first miss's labels
                        me, ms, _ = _meta_texts_c(pe[4]) if _miss_on else _meta_texts(pe[4])
                        el, sl = pe[0], pe[1]
                        if len(el) > len(me) + 2 and len(sl) > len(ms) + 2 and el.endswith("," + me + "]") \
                                and sl.endswith("," + ms + "]"):
                            pe[5] = el[:len(el) - len(me) - 1]
                            pe[6] = sl[:len(sl) - len(ms) - 1]
                        else:
                            pe[5] = False  # not cut (never the case for a call's label): no partial hits
                    if pe[5] is not False:
                        me, ms, mo = _meta_texts_c(val) if _miss_on else _meta_texts(val)
                        el = pe[5] + me + "]"
                        sl = pe[6] + ms + "]"
                        st = pe[2]
                        if st is not None:
                            st = (st[0], st[1], st[2], mo, st[4], st[5])
                        perm = pe[3]
                        exact[i] = el
                        struct[i] = sl
                        inputs[i] = deps if perm is None else [deps[p] for p in perm]
                        vclass.append(_mark(vc, xc))
                        xclass.append(xc)
                        if want_store:
                            store[i] = st if perm is None else (st, deps)
                        ccache[key] = (el, sl, st, perm)
                        continue
        elif op == "placeholder" and not keep_positions:
            kind = kinds[ph] if kinds is not None and ph < len(kinds) else placeholder_kind(n)
            try:
                key = ("placeholder", _key_template(kind, index, xclass, True), meta_key(val, vc))  # a kind by its literal template
                hit = cache.get(key)
            except TypeError:
                key = hit = None
            if hit is not None:
                exact[i] = hit[0]
                struct[i] = hit[1]
                inputs[i] = []
                vclass.append(_mark(vc, xc))
                xclass.append(xc)
                if want_store and not n.args:
                    store[i] = hit[2]
                ph += 1
                continue
        if not want_store and scratch is None:
            scratch = [None] * n_nodes
        # a miss always builds its stored entry (into a scratch list without want_store), so the entry the
        # cache keeps across graphs serves a later canonicalize as well as a graph_hashes
        misses += 1
        got = None
        try:
            if _miss_on and (op == "call_function" or op == "call_method"):
                got = _miss_call(n, i, op, n.target, val, index, store if want_store else scratch,
                                 tdeps if key is not None else None)
            elif _miss_on and op == "placeholder":
                got = _miss_placeholder(n, i, val, kinds, keep_positions, ph, store if want_store else scratch)
        except _TooDeep:  # nested too deep for the C recursion: the definition labels it (or raises as it does)
            got = None
        if got is None:
            got = slow_label(n, i, op, val, gm, kinds, keep_positions, index, True,
                             store if want_store else scratch, subs, mod_cache, ph, key,
                             tdeps if key is not None and op != "placeholder" else None)
        el, sl, deps_i, st = got
        if op == "placeholder":
            ph += 1
        exact[i] = el
        struct[i] = sl
        inputs[i] = deps_i
        vclass.append(_mark(vc, xc))
        xclass.append(xc)
        if op == "placeholder" and key is not None:
            cache[key] = (el, sl, st)
        elif key is not None and op in ("call_function", "call_method", "call_module"):
            perm = permutation(tdeps, deps_i)
            if perm is not False:
                (mcache if op == "call_module" else cache)[key] = (el, sl, st, perm)
                if pk is not None and st is not None and pk not in pcache:
                    pcache[pk] = [el, sl, st, perm, val, None, None]  # texts cut at the first partial hit
    _last_misses = misses
    return exact, struct, inputs, subs, store


# --- the ordering edges of side effects ----------------------------------------------------
# A copy of effects.ordering_deps; the per-target tables and helpers are those of
# passnet_common.canonical.effects (set_effects_context).

cdef dict _profile_cache
cdef object _profile, _may_write, mutated_args, module_effects, E_NODE, draws_random, aliased_inputs, RNG_STATE


cdef object _random_cache = None, _ABSENT_VAL = object()
cdef object _FUNCTION_TYPE = _types.FunctionType
cdef dict _dtype_strs = {}


def set_effects_context(node_type, profile_cache, profile_fn, may_write_fn, mutated_args_fn, module_effects_fn,
                        draws_random_fn, aliased_inputs_fn, rng_state, random_cache=None):
    """The tables and helpers of :mod:`passnet_common.canonical.effects` the copy uses (``random_cache``:
    ``effects._random_cache``, read by :func:`_draws_random` with :func:`lit_key`'s keys)."""
    global _profile_cache, _profile, _may_write, mutated_args, module_effects, E_NODE
    global draws_random, aliased_inputs, RNG_STATE, _random_cache
    E_NODE = node_type
    _profile_cache, _profile, _may_write = profile_cache, profile_fn, may_write_fn
    mutated_args, module_effects = mutated_args_fn, module_effects_fn
    draws_random, aliased_inputs, RNG_STATE = draws_random_fn, aliased_inputs_fn, rng_state
    _random_cache = random_cache


cpdef object lit_key(object v, int depth=0):
    """``effects._lit_key(v)``: the same key (``draws_random``'s cache key of a call's arguments);
    :class:`_TooDeep` past ``_DEPTH_MAX`` levels."""
    cdef list out
    if depth > _DEPTH_MAX:
        raise _TooDeep()
    if isinstance(v, E_NODE):
        meta = v.meta
        val = meta.get("example_value", _ABSENT_VAL)
        if val is _ABSENT_VAL:
            val = meta.get("val")
        tv = type(val)
        if tv is bool or tv is int or tv is float:  # a Python scalar, run as recorded: by its value
            return ("%", tv.__name__, (), lit_key(val, depth + 1))
        try:
            dt = val.dtype
        except AttributeError:
            dt = type(val).__name__
        ds = _dtype_strs.get(dt) if type(dt) is _DTYPE else None
        if ds is None:
            ds = str(dt)
            if type(dt) is _DTYPE:
                _dtype_strs[dt] = ds
        try:
            sh = val.shape
        except AttributeError:
            sh = ()
        return ("%", ds, tuple(sh))
    if isinstance(v, (tuple, list)):
        out = [type(v).__name__]
        for x in v:
            out.append(lit_key(x, depth + 1))
        return tuple(out)
    if isinstance(v, dict):
        out = ["dict"]
        for k, x in v.items():
            out.append((k, lit_key(x, depth + 1)))
        return tuple(out)
    if type(v) is float:
        return (float, _float_bits(v))
    return (type(v), v)


cdef bint _draws_random(object node, object rng) except -1:
    """``effects.draws_random(node)`` (``rng``: the node's write spec's ``rng``, as the definition reads it):
    the definition's steps before its cache, then its cache read with :func:`lit_key`'s key (the same key, so
    the same entry); the definition itself on a miss, for a Python function outside torch, and for arguments
    nested deeper than ``_DEPTH_MAX`` levels."""
    if rng != 2:
        return rng == 1
    if _random_cache is None:
        return draws_random(node)
    op, target = node.op, node.target
    if op == "call_function" and isinstance(target, _FUNCTION_TYPE) \
            and not (getattr(target, "__module__", "") or "").startswith("torch."):
        return draws_random(node)
    try:
        key = (op, target, lit_key(node.args), lit_key(node.kwargs))
        return _random_cache[key]
    except (KeyError, TypeError, _TooDeep):
        return draws_random(node)


cdef inline Py_ssize_t _cfind(Py_ssize_t *parent, Py_ssize_t i) noexcept:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


cdef inline Py_ssize_t _checked(object j, Py_ssize_t n) except -1:
    cdef Py_ssize_t v = j
    if v < 0 or v >= n:
        raise ValueError("ordering_deps: an index outside the graph")
    return v


cdef tuple _target_profile(object node, object op, object t, dict profiles):
    """``effects._profile`` of the node's (op, target) (its cache first), with the write spec's
    ``inplace_pos`` and ``names`` appended for the inlined ``effects._may_write``."""
    try:
        prof = profiles[(op, t)]
    except (KeyError, TypeError):
        prof = _profile(node)
    return (*prof, prof[3].inplace_pos, prof[3].names, prof[3].rng)


cdef inline void _pf_effects(PyObject **items, Py_ssize_t n, Py_ssize_t i) noexcept:
    """Prefetch for :func:`ordering_deps` (speed only): the node objects 6 ahead, their keyword
    arguments and argument tuple 3 ahead."""
    cdef PyObject *nd
    if i + 6 < n:
        _pf_lines(<char *>items[i + 6], 3)
    nd = _pf_node(items, n, i + 3)
    if nd != NULL:
        _pf_slot(nd, _off_kwargs)
        _pf_slot(nd, _off_args)


# ``effects.aliased_inputs`` and the helpers it calls (``_node_storages``, ``tensor_meta_of_node``,
# ``_storages``) compiled: the same inputs in the same order, without four Python calls per node
# and input. On only after ``set_alias_context`` (else the Python function is called).

cdef object _A_TENSOR = None, _A_SYM = None, _A_PLAIN = None, _may_return_input = None
cdef bint _alias_c = False


def set_alias_context(tensor_type, sym_types, plain_types, may_return_input_fn):
    """``torch.Tensor``, the symbolic scalar types (``torch.SymInt`` / ``SymFloat`` / ``SymBool``),
    the exact plain types ``effects._storages`` gives no storage (int, float, bool, str) and
    ``effects._may_return_input``: turns on the compiled ``aliased_inputs`` (``tensor_type`` None turns
    it off)."""
    global _A_TENSOR, _A_SYM, _A_PLAIN, _may_return_input, _alias_c
    _A_TENSOR, _A_SYM, _A_PLAIN, _may_return_input = tensor_type, sym_types, plain_types, may_return_input_fn
    _alias_c = tensor_type is not None


cdef object _storages_c(object val):
    """``effects._storages``."""
    cdef set out
    if isinstance(val, _A_TENSOR):
        try:
            return {val.untyped_storage()._cdata}
        except Exception:
            return None
    if isinstance(val, (tuple, list)):
        out = set()
        for v in val:
            st = _storages_c(v)
            if st is None:
                return None
            out |= st
        return out
    if val is None or isinstance(val, _A_SYM):
        return None if val is None else set()
    if type(val) in _A_PLAIN:
        return set()
    return None


cdef object _node_storages_c(object node, dict memo):
    """``effects._node_storages`` through ``memo`` (``effects.tensor_meta_of_node`` inlined)."""
    cdef PyObject *p = PyDict_GetItemWithError(memo, node)
    if p != NULL:
        return <object>p
    meta = node.meta
    st = _storages_c(meta["example_value"] if "example_value" in meta else meta.get("val"))
    memo[node] = st
    return st


cdef list _aliased_inputs_c(object node, bint may_alias, dict memo):
    """``effects.aliased_inputs(node, may_alias, memo)``."""
    cdef list res
    op = node.op
    if op != "call_function" and op != "call_method" and op != "call_module":
        return []
    ins = node.all_input_nodes
    outs = _node_storages_c(node, memo)
    if outs is not None:
        res = []
        for m in ins:
            st = _node_storages_c(m, memo)
            if st is None:
                break
            if st & outs:
                res.append(m)
        else:
            return res
    return ins if may_alias or _may_return_input(node) else []


cdef list _alias_edges(list nodes, dict index, char *alias, dict edges, dict memo, Py_ssize_t x, Py_ssize_t n):
    """The alias edges of node ``x``: the indexes of ``effects.aliased_inputs`` of it (computed
    once per node, kept in ``edges``)."""
    cdef list out
    try:
        return <list>edges[x]
    except KeyError:
        pass
    if _alias_c:
        out = [_checked(index[m], n) for m in _aliased_inputs_c(nodes[x], alias[x] != 0, memo)]
    else:
        out = [_checked(index[m], n) for m in aliased_inputs(nodes[x], alias[x] != 0, memo)]
    edges[x] = out
    return out


cdef void _alias_search(list nodes, dict index, char *alias, Py_ssize_t *parent, list seeds, Py_ssize_t n) except *:
    """The unions of the Python loop's alias pass (``node -- m`` for every ``m`` in
    ``effects.aliased_inputs(node)``), made only inside the classes that hold a seed (a written
    node, or a ``get_attr`` of a written module state): a search from the seeds along data
    edges, both ways, that follows an edge where the alias pass would union it. A class without
    a seed is never written, so the ordering loop reads nothing of it (its readers and last
    mutation stay unread): the edges come out as from the union over every node, while
    ``aliased_inputs`` (reading each node's storages from its example value) runs only for the
    searched nodes and their users. ValueError for a user outside ``nodes``."""
    cdef char *seen = <char *>calloc(max(n, 1), 1)
    cdef list stack = [], ex
    cdef dict edges = {}, memo = {}
    cdef Py_ssize_t x, y, u, a, b
    if seen == NULL:
        raise MemoryError()
    try:
        for jo in seeds:
            x = jo
            if x < 0 or x >= n:
                raise ValueError("ordering_deps: an index outside the graph")
            if not seen[x]:
                seen[x] = 1
                stack.append(x)
        while stack:
            x = stack.pop()
            for yo in _alias_edges(nodes, index, alias, edges, memo, x, n):
                y = yo
                a, b = _cfind(parent, x), _cfind(parent, y)
                if a != b:
                    parent[a] = b
                if not seen[y]:
                    seen[y] = 1
                    stack.append(y)
            for user in (<object>nodes[x]).users:
                try:
                    u = index[user]
                except KeyError:
                    raise ValueError("ordering_deps: a user outside the node list")
                if seen[u]:
                    continue  # its own edges are (or will be) followed from it
                ex = _alias_edges(nodes, index, alias, edges, memo, u, n)
                if x in ex:
                    a, b = _cfind(parent, u), _cfind(parent, x)
                    if a != b:
                        parent[a] = b
                    seen[u] = 1
                    stack.append(u)
    finally:
        free(seen)


def ordering_deps(list nodes, list inputs, gm=None, index=None, rows=None):
    """``effects.ordering_deps`` (the same two lists, equal item by item; the nodes without ordering
    dependencies all hold one shared empty list, where the Python loop makes one per node: the
    lists are read, never changed, by their users). The Python loop's per-node lists and dicts
    (mutations, alias flags, union-find parents, written classes, last mutation per class) are C
    arrays here; the per-(op, target) profile is looked up once per target of the call; ``rows``
    (:func:`input_rows` of ``inputs``, or None) is read instead of the input lists where it can be.
    ValueError (the caller then runs the Python loop) for an input index outside ``[0, n)``."""
    cdef Py_ssize_t n = len(nodes), i, j, a, b, c, k, m_tot, lm, last_barrier, q, n_in
    cdef const int64_t *w = NULL
    cdef list barrier = [False] * n
    cdef list deps, ins, d, r, readers
    cdef bint any_effect = False, writes_tensor = False
    cdef dict state_paths = {}
    cdef dict state_of = {}
    cdef dict muts = {}
    cdef dict profiles = _profile_cache
    cdef dict by_fn = {}, by_method = {}, tc
    cdef char *alias = NULL
    cdef char *kind = NULL  # 0 other, 1 placeholder, 2 get_attr
    cdef char *written = NULL
    cdef Py_ssize_t *parent = NULL
    cdef Py_ssize_t *last_mut = NULL
    alias = <char *>calloc(max(n, 1), 1)
    kind = <char *>calloc(max(n, 1), 1)
    if alias == NULL or kind == NULL:
        free(alias)
        free(kind)
        raise MemoryError()
    try:
        i = -1
        for node in nodes:
            i += 1
            if _pf_on and len(nodes) == n:
                _pf_effects((<PyListObject *>nodes).ob_item, n, i)
            op = node.op
            if op == "call_function" or op == "call_method":
                tc = by_fn if op == "call_function" else by_method
                t = node.target
                try:
                    prof = tc[t]
                except KeyError:
                    prof = tc[t] = _target_profile(node, op, t, profiles)
                except TypeError:  # an unhashable target: no per-call entry
                    prof = _target_profile(node, op, t, profiles)
                glob, al, static_mut, spec, inplace_pos, names, rng = prof
                writes = static_mut
                if not writes:
                    kw = node._kwargs
                    if inplace_pos >= 0 or kw:
                        # effects._may_write(node, spec), inlined
                        if kw and ("inplace" in kw or "out" in kw or (names and not names.isdisjoint(kw))):
                            writes = True
                        else:
                            writes = 0 <= inplace_pos < len(node._args)
                if writes:
                    mu = mutated_args(node)
                    if mu:
                        if index is None:
                            index = {m: kk for kk, m in enumerate(nodes)}
                        muts[i] = [index[m] for m in mu]
                        any_effect = writes_tensor = True
                        al = True
                if rng and _draws_random(node, rng):
                    muts[i] = muts.get(i, []) + [state_paths.setdefault(RNG_STATE, n + len(state_paths))]
                    any_effect = True
                if glob:
                    barrier[i] = True
                    any_effect = True
                alias[i] = 1 if al else 0
            elif op == "placeholder":
                kind[i] = 1
            elif op == "get_attr":
                kind[i] = 2
            elif op == "call_module":
                alias[i] = 1
                try:
                    mod = gm.get_submodule(node.target) if gm is not None else None
                except AttributeError:
                    mod = None
                w_in, w_state = module_effects(mod)
                if w_in and node.args and isinstance(node.args[0], E_NODE):
                    if index is None:
                        index = {m: kk for kk, m in enumerate(nodes)}
                    muts[i] = [index[node.args[0]]]
                    any_effect = writes_tensor = True
                if w_state:
                    path = str(node.target)
                    k = state_paths.setdefault(path, n + len(state_paths))
                    muts.setdefault(i, []).append(k)
                    state_of[i] = k
                    any_effect = writes_tensor = True
        empty = []  # every node without ordering dependencies holds this one list (read-only)
        deps = [empty] * n
        if not any_effect:
            return deps, barrier
        m_tot = n + len(state_paths)
        parent = <Py_ssize_t *>malloc(m_tot * sizeof(Py_ssize_t))
        last_mut = <Py_ssize_t *>malloc(m_tot * sizeof(Py_ssize_t))
        written = <char *>calloc(m_tot, 1)
        if parent == NULL or last_mut == NULL or written == NULL:
            raise MemoryError()
        for i in range(m_tot):
            parent[i] = i
            last_mut[i] = -1
        if rows is not None:
            w = _rows(rows, n)
        seeds = []  # the nodes of written classes known before the alias search
        if state_paths:
            i = -1
            for node in nodes:
                i += 1
                if kind[i] == 2:
                    t = str(node.target)
                    for path, ko in state_paths.items():
                        if t == path or t.startswith(path + "."):
                            a, b = _cfind(parent, i), _cfind(parent, <Py_ssize_t>ko)
                            if a != b:
                                parent[a] = b
                            seeds.append(i)
        if writes_tensor:  # effects.aliased_inputs: alias classes matter only where a tensor is written
            if index is None:
                index = {m: kk for kk, m in enumerate(nodes)}
            for ml in muts.values():
                for jo in <list>ml:
                    if <Py_ssize_t>jo < n:
                        seeds.append(jo)
            _alias_search(nodes, index, alias, parent, seeds, n)
        for ml in muts.values():
            for jo in <list>ml:
                j = jo
                if j < 0 or j >= m_tot:
                    raise ValueError("ordering_deps: an index outside the graph")
                written[_cfind(parent, j)] = 1
        ins = inputs
        readers = [None] * m_tot
        last_barrier = -1
        d = []  # the edges of node i, copied into deps[i] when there are any
        for i in range(n):
            if kind[i] == 1:
                continue
            del d[:]
            if barrier[i]:
                d.extend([jj for jj in range(last_barrier + 1, i) if kind[jj] != 1])
                if last_barrier >= 0:
                    d.append(last_barrier)
                last_barrier = i
            else:
                if last_barrier >= 0:
                    d.append(last_barrier)
                if i not in muts and kind[i] != 2 and (not state_of or i not in state_of):
                    n_in = w[3 + i] - w[2 + i] if w != NULL else len(<list>ins[i])
                    for q in range(n_in):
                        c = _cfind(parent, w[3 + n + w[2 + i] + q] if w != NULL else _checked((<list>ins[i])[q], n))
                        if not written[c]:
                            continue
                        lm = last_mut[c]
                        if lm >= 0:
                            d.append(lm)
                        r = readers[c]
                        if r is None:
                            readers[c] = [i]
                        elif not r or <Py_ssize_t>r[len(r) - 1] != i:
                            r.append(i)
                    if len(d) > 1:
                        d[:] = sorted(set(d))
                else:
                    mutated = {_cfind(parent, <Py_ssize_t>jj) for jj in muts.get(i, ())}
                    touched = {_cfind(parent, _checked(jj, n)) for jj in ins[i]} | mutated
                    if i in state_of or kind[i] == 2:
                        touched.add(_cfind(parent, i))
                    for cc in touched:
                        c = cc
                        lm = last_mut[c]
                        if cc in mutated:
                            if readers[c] is not None:
                                d.extend(<list>readers[c])
                            if lm >= 0:
                                d.append(lm)
                            last_mut[c] = i
                            readers[c] = []
                        else:
                            if lm >= 0:
                                d.append(lm)
                            if readers[c] is None:
                                readers[c] = [i]
                            else:
                                (<list>readers[c]).append(i)
                    d[:] = sorted(set([jj for jj in d if jj != i]))
            if d:
                deps[i] = d[:]
        return deps, barrier
    finally:
        free(alias)
        free(kind)
        free(written)
        free(parent)
        free(last_mut)


# --- the data inputs packed as C ints (speed only) ------------------------------------------
# The label pass gives each node's data inputs as a Python list of Python ints; the side-effect
# pass, the order and the texts each read all of them again, one scattered list and int object at
# a time. ``input_rows`` packs them once into int64 words that those compiled passes read instead
# (their Python loops, the definition, read the lists).

def input_rows(list inputs):
    """``inputs`` (per node a list of node indexes in ``[0, n)``, ``n = len(inputs)``) packed as one
    bytes object of int64 words: ``n``, the total count, ``start[0..n]``, then the indexes (node
    ``i``'s are ``idx[start[i]:start[i + 1]]``). ValueError for an index outside ``[0, n)``;
    TypeError for a row that is not a list; OverflowError for an int beyond 64 bits."""
    cdef Py_ssize_t n = len(inputs), i, q, tot = 0, j
    cdef list row
    cdef int64_t *w
    for i in range(n):
        tot += len(<list?>inputs[i])
    out = PyBytes_FromStringAndSize(NULL, (3 + n + tot) * sizeof(int64_t))
    w = <int64_t *>PyBytes_AS_STRING(out)
    w[0] = n
    w[1] = tot
    tot = 0
    for i in range(n):
        w[2 + i] = tot
        row = <list>inputs[i]
        for q in range(len(row)):
            j = row[q]
            if j < 0 or j >= n:
                raise ValueError("input_rows: an input index outside the graph")
            w[3 + n + tot] = j
            tot += 1
    w[2 + n] = tot
    return out


cdef const int64_t *_rows(object rows, Py_ssize_t n) except NULL:
    """The words of ``rows`` (from :func:`input_rows`) after checking they describe ``n`` nodes:
    ``start`` is ``rows + 2``, the indexes ``rows + 3 + n``. ValueError otherwise."""
    cdef const int64_t *w
    if type(rows) is not bytes or len(<bytes>rows) < 3 * <Py_ssize_t>sizeof(int64_t):
        raise ValueError("rows: not from input_rows")
    w = <const int64_t *>PyBytes_AS_STRING(rows)
    if w[0] != n or len(<bytes>rows) != (3 + n + w[1]) * <Py_ssize_t>sizeof(int64_t):
        raise ValueError("rows: of another graph")
    return w


# --- the canonical texts and their hashes --------------------------------------------------
# A copy of form.texts_py: the lines are written as UTF-8 into two C buffers (the labels' own
# UTF-8 bytes, which CPython keeps with an ASCII string) instead of a list of per-node tail
# strings and two joined texts.

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdlib cimport realloc
from libc.string cimport memcpy

import hashlib as _hashlib

_sha256 = _hashlib.sha256


cdef struct _Buf:
    char *p
    Py_ssize_t n
    Py_ssize_t cap


cdef int _put(_Buf *b, const char *s, Py_ssize_t k) except -1:
    cdef Py_ssize_t cap
    cdef char *q
    if b.n + k > b.cap:
        cap = max(2 * b.cap, b.n + k, 4096)
        q = <char *>realloc(b.p, cap)
        if q == NULL:
            raise MemoryError()
        b.p, b.cap = q, cap
    memcpy(b.p + b.n, s, k)
    b.n += k
    return 0


cdef int _put_str(_Buf *b, object s) except -1:
    cdef Py_ssize_t k
    cdef const char *u = PyUnicode_AsUTF8AndSize(<str?>s, &k)
    return _put(b, u, k)


cdef int _put_tail(_Buf *b, list ins, Py_ssize_t *pos, Py_ssize_t n) except -1:
    """``"\t" + ",".join(canonical positions of ins) + "\n"``."""
    cdef Py_ssize_t q, j
    _put(b, "\t", 1)
    for q in range(len(ins)):
        j = ins[q]
        if j < 0 or j >= n:
            raise ValueError("texts: an input index outside the graph")
        if q:
            _put(b, ",", 1)
        _put_int(b, pos[j])
    _put(b, "\n", 1)
    return 0


cdef int _put_tail_c(_Buf *b, const int64_t *ins, Py_ssize_t m, Py_ssize_t *pos) except -1:
    """:func:`_put_tail` of ``m`` checked indexes."""
    cdef Py_ssize_t q
    _put(b, "\t", 1)
    for q in range(m):
        if q:
            _put(b, ",", 1)
        _put_int(b, pos[ins[q]])
    _put(b, "\n", 1)
    return 0


cdef int _put_int(_Buf *b, Py_ssize_t v) except -1:
    """The decimal digits of ``v`` >= 0 (``"%d" % v``)."""
    cdef char tmp[32]
    cdef Py_ssize_t i = 32
    if v == 0:
        i -= 1
        tmp[i] = 48
    while v > 0:
        i -= 1
        tmp[i] = <char>(48 + v % 10)
        v //= 10
    return _put(b, tmp + i, 32 - i)


def texts(list order, list inputs, list exact, list struct, bint want_text, str header, list ints=None,
          rows=None):
    """``form.texts_py`` (the same tuple; ``header``: ``form._HEADER``; ``ints``: ``n`` ints with
    ``ints[i] == i`` that fill the positions instead of new ones, or None; ``rows``: :func:`input_rows`
    of ``inputs``, read instead of the lists, or None). ValueError for an order
    that is not a permutation of ``range(n)`` or an input index outside it, or ``ints`` of another
    length (the caller then runs the Python loop)."""
    cdef Py_ssize_t n = len(order), k, o, start, m, q
    cdef list pos = [0] * n
    cdef list row
    cdef object v
    cdef list canon_inputs = [None] * n
    cdef list ins
    cdef Py_ssize_t *cpos = NULL
    cdef Py_ssize_t *order_c
    cdef const int64_t *w = NULL
    cdef const int64_t *ix
    cdef _Buf be
    cdef _Buf bs
    be.p, be.n, be.cap = NULL, 0, 0
    bs.p, bs.n, bs.cap = NULL, 0, 0
    if len(inputs) != n or len(exact) != n or len(struct) != n or (ints is not None and len(ints) != n):
        raise ValueError("texts: lists of different lengths")
    cpos = <Py_ssize_t *>malloc(2 * max(n, 1) * sizeof(Py_ssize_t))
    if cpos == NULL:
        raise MemoryError()
    order_c = cpos + max(n, 1)  # the order as C ints
    try:
        for k in range(n):
            cpos[k] = -1
        for k in range(n):
            o = order[k]
            if o < 0 or o >= n or cpos[o] != -1:
                raise ValueError("texts: the order is not a permutation")
            cpos[o] = k
            order_c[k] = o
            pos[o] = k if ints is None else ints[k]
        if rows is not None:
            w = _rows(rows, n)
        for k in range(n):
            o = order_c[k]
            _put_str(&be, exact[o])
            start = be.n
            if w != NULL:
                m = w[2 + o + 1] - w[2 + o]
                ix = w + 3 + n + w[2 + o]
                _put_tail_c(&be, ix, m, cpos)
                row = PyList_New(m)
                for q in range(m):
                    v = pos[ix[q]]
                    Py_INCREF(v)
                    PyList_SET_ITEM(row, q, v)
            else:
                ins = <list?>inputs[o]
                _put_tail(&be, ins, cpos, n)  # checks every index of ins
                m = len(ins)
                row = PyList_New(m)
                for q in range(m):
                    v = pos[ins[q]]  # ins checked by _put_tail
                    Py_INCREF(v)
                    PyList_SET_ITEM(row, q, v)
            canon_inputs[k] = row
            _put_str(&bs, struct[o])
            _put(&bs, be.p + start, be.n - start)
        body_e = PyBytes_FromStringAndSize(be.p, be.n)
        body_s = PyBytes_FromStringAndSize(bs.p, bs.n)
    finally:
        free(cpos)
        free(be.p)
        free(bs.p)
    h = _sha256(header.encode())
    h.update(body_e)
    graph_hash = h.hexdigest()
    h = _sha256((header + "structure\n").encode())
    h.update(body_s)
    structure_hash = h.hexdigest()
    return pos, canon_inputs, graph_hash, structure_hash, (body_e.decode("utf-8") if want_text else "")
