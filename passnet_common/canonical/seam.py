"""The one seam between the canonical form's Python definition and its compiled path (speed only,
no rule). The state it sets lives in :mod:`passnet_common.canonical.compiled`.

The rules live in the Python modules of this package: :func:`~passnet_common.canonical.form.labels_plain`
(every node labelled from its own arguments), :func:`~passnet_common.canonical.effects.ordering_deps_py`,
:func:`~passnet_common.canonical.order.merkle_py` / :func:`~passnet_common.canonical.order.canonical_order`,
:func:`~passnet_common.canonical.form.texts_py`, :func:`~passnet_common.canonical.stored.node_list_py`.
Two optional extensions, built by ``pip install -e .`` when Cython and a C compiler are there,
compute the same values faster: ``_cform`` (the label pass with its cache,
:mod:`passnet_common.canonical.fastpath`; the side-effect pass; the stored node list; the texts;
the packed input rows) and ``_cmerkle`` (the Merkle hashes, the tie check, the canonical order,
and the three fused in one call).

This module is where they plug in. :func:`load` (run once when the package is imported) wires
the extensions to the Python tables they read, then makes **one agreement check**: the whole
canonical form -- ``canonicalize`` (with and without kept placeholder positions),
``graph_hashes`` and ``output_permutation`` -- of every graph of :func:`samples`, computed on the
Python definition and on the compiled path, must be equal in every field. Only then are
:data:`~passnet_common.canonical.compiled.cform` / ``cmerkle`` set, and the modules of this package call them where they are
set and their Python definition where they are None. ``PASSNET_CANONICAL_PURE=1`` in the
environment keeps them off; :func:`~passnet_common.canonical.compiled.python_only` turns them off for a block (the identity test
runs both paths through it).
"""

from __future__ import annotations

import operator
import os
import types

import torch
import torch.fx as fx
from torch.fx.immutable_collections import immutable_dict, immutable_list

from passnet_common.canonical import compiled, form
from passnet_common.canonical import effects as E
from passnet_common.canonical import fastpath as F
from passnet_common.canonical import labels as L
from passnet_common.canonical import stored as S
from passnet_common.canonical.compiled import ENV_PURE
from passnet_common.canonical.labels import placeholder_kind


def samples() -> list:
    """The graphs of the agreement check: the label pass's sample (equal placeholders, cache hits
    and misses, keyword arguments, nested and immutable lists, ``-0.0``, tuple values and their
    getitems, varargs methods, a call without metadata), the side-effect pass's sample (in-place
    methods and augmented assignments, ``inplace=``, a view, a global-state barrier,
    ``call_module`` writes of an input and of a module's state), and a chain of 300 nodes
    (positions above 255) with non-ASCII string literals and random draws."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(4, 6, device="meta")
    prev = x
    for i in range(100):
        a = g.call_function(torch.mul, (prev, float(i % 7) - 3.0))
        b = g.call_function(torch.nn.functional.gelu, (a,), {"approximate": "tanh" if i % 2 else "none"})
        c = g.call_method("add", (b, prev), {"alpha": 1} if i % 3 else {})
        for n in (a, b, c):
            n.meta["example_value"] = torch.empty(4, 6, device="meta")
        if i % 25 == 0:
            r = g.call_function(torch.rand_like, (c,))
            r.meta["example_value"] = torch.empty(4, 6, device="meta")
            s = g.call_function(torch.div, (c, r), {"rounding_mode": "\u00e9\u4e2d\U0001f600"})
            s.meta["example_value"] = torch.empty(4, 6, device="meta")
        prev = c
    g.output((prev,))
    return [form.sample_graph(), E.sample_graph(), fx.GraphModule(torch.nn.Module(), g)]


def _form(gm) -> tuple:
    """Every output of the canonical form on ``gm``, as plain values."""
    c = form.canonicalize(gm, None, with_wl=False)
    kept = form.canonicalize(gm, None, with_wl=False, keep_placeholder_order=True)
    return (c.graph_hash, c.structure_hash, c.text, c.nodes, c.order, c.placeholder_order,
            [s.graph_hash for s in c.subgraphs], kept.graph_hash, kept.text, kept.nodes,
            form.graph_hashes(gm), form.output_permutation(gm))


#: call_function target types the label cache keys (``_cform.labels``, kept across graphs): equal only when
#: identical (functions, builtins, ATen ops); a node whose target is of another type (a callable object, a
#: partial, a bound method) is labelled by itself
SHARED_TARGETS = frozenset({types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                            types.WrapperDescriptorType, types.MethodWrapperType, types.ClassMethodDescriptorType,
                            torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator})


def _wire(cf) -> None:
    """Hand ``_cform`` the tables and helpers of the Python modules its copies read."""
    cf.set_context(F.NODE, F.MARKS, F.EXACT_TAG, F.FLAT, F.ENUMS,
                   (torch.dtype, torch.device, torch.memory_format, torch.layout), F.SCALAR_META,
                   immutable_list, immutable_dict, F.class_of_type, F.value_classes, placeholder_kind,
                   F.meta_key, F.permutation)
    form.set_prefetch(cf)
    if hasattr(cf, "set_meta_texts"):
        cf.set_meta_texts(form.meta_texts)
    if hasattr(cf, "set_shared_targets"):
        cf.set_shared_targets(SHARED_TARGETS)
    if hasattr(cf, "set_norm_context"):
        cf.set_norm_context(L.normalized_arguments, L.bind_by_plan, L.VARARGS_METHODS, L.METHOD_PARAMS, L.SKIPPED_MODULES,
                            torch._ops.HigherOrderOperator, torch, (torch.memory_format, torch.layout), types.GenericAlias)
    if hasattr(cf, "set_miss_context") and hasattr(cf, "set_wraps"):  # the compiled miss skips what the definition does
        cf.set_wraps(S.dynamo_wraps, S.dynamo_wrapper_type)
        cf.set_miss_context(L.normalized_arguments, L.positional_names, L.qualified_name, L.encode_literal, form._no_ref,
                            L._encode_float, L._int_or_sym, L._dtype_name, L._DTYPE_NAMES, L.DIM_PARAMS, form._dumps,
                            S._Slot, torch.Tensor, torch.Size, torch.dtype, torch.SymInt, torch.SymFloat,
                            operator.getitem)
    cf.set_effects_context(fx.Node, E.profile_cache, E.target_profile, E.may_write, E.mutated_args, E.module_effects,
                           E.draws_random, E.aliased_inputs, E.RNG_STATE, E._random_cache)
    if hasattr(cf, "set_alias_context"):
        cf.set_alias_context(torch.Tensor, (torch.SymInt, torch.SymFloat, torch.SymBool), (int, float, bool, str),
                             E._may_return_input)


def load() -> str:
    """Import, wire and check the compiled path (see the module docstring); returns :data:`passnet_common.canonical.compiled.status`."""
    compiled.cform = compiled.cmerkle = None
    if os.environ.get(ENV_PURE):
        compiled.status = f"off ({ENV_PURE})"
        return compiled.status
    try:  # the optional extensions: absent without a C compiler or Cython
        from passnet_common.canonical import _cform as cf  # noqa: PLC0415  (compiled-extension fallback: absent without Cython or a C compiler; not imported under PASSNET_CANONICAL_PURE)
        from passnet_common.canonical import _cmerkle as cm  # noqa: PLC0415  (compiled-extension fallback, as above)
    except ImportError:
        compiled.status = "not built"
        return compiled.status
    try:
        _wire(cf)
        graphs = samples()
        want = [_form(gm) for gm in graphs]
        compiled.cform, compiled.cmerkle = cf, cm
        got = [_form(gm) for gm in graphs]
    except Exception as exc:  # noqa: BLE001 - a broken build is the same as no build
        compiled.cform = compiled.cmerkle = None
        compiled.status = f"off (the compiled path failed on the samples: {type(exc).__name__}: {exc})"
        return compiled.status
    if got != want:
        compiled.cform = compiled.cmerkle = None
        compiled.status = "off (the compiled path disagrees with the Python definition on the samples)"
        return compiled.status
    compiled.status = "on"
    return compiled.status
