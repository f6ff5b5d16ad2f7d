"""Canonical form of a torch.fx graph and the hashes built on it: every rule in one place.

One function, :func:`canonicalize`, defines what goes into a key (the pattern of
Inductor's FX graph cache), and :data:`CANONICAL_VERSION` is stored beside every hash;
hashes of different versions are never compared. The code is split by concern:
``labels.py`` (what one node's label is made of), ``form.py`` (the label of one node,
:func:`~passnet_common.canonical.form.node_label`, and the pass over a graph, text, hashes),
``effects.py`` (mutations, aliasing, random draws, global state), ``order.py`` (the canonical
order), ``stored.py`` (the stored node list). Each is the plain Python definition of its step.
``compiled.py`` is the one seam where the optional compiled path plugs in (``_cform.pyx``: the
label pass with its label cache, whose keys ``fastpath.py`` defines, the side-effect pass, the
stored node list, the texts; ``_cmerkle.pyx``: the Merkle hashes and the canonical order; built by
``pip install -e .``): it is used only after one agreement check at import -- the whole form of
sample graphs equal on both paths -- and ``PASSNET_CANONICAL_PURE=1`` keeps it off. Speed only,
no rule lives there.

**1. Node labels** (``graph_hash`` changes when any of these changes)
  * ``call_function`` by qualified target name; ``call_method`` by method name;
    ``call_module`` by the module's type and **full hyperparameter state**, recursively
    over its children: every plain instance attribute (ints, floats, bools, strings,
    dtypes and tuples of them, private ones such as ``_qkv_same_embed_dim`` included),
    **function-valued attributes** (``TransformerEncoderLayer(activation=torch.tanh)``: by
    qualified name; a lambda or local function also by a digest of its code object, which
    depends on the Python version; a ``functools.partial`` with its arguments), parameter
    shapes/dtypes, buffer shapes/dtypes/digests -- never ``extra_repr()``.
  * **Arguments bound to the overload the call resolves to**, defaults included
    (:func:`passnet_common.canonical.labels.normalized_arguments`): the signatures are the
    op's ATen overloads (``torch.fx.operator_schemas.get_signature_for_torch_op``; ``self``
    named ``input``) or, for Python functions such as ``F.relu``, ``inspect.signature``;
    methods bind against ``torch.<name>`` (else ``torch.ops.aten.<name>``) with the tensor
    first, varargs methods (``view``, ``permute``, ...) fold their varargs into one tuple. The
    overloads that take the arguments by arity -- by type (the example values) where several
    do -- are the matches, and the call is bound to the *widest* overload that takes what a
    match was given, by keyword, with the same defaults for the rest. So ``softmax(x, 1)``,
    ``softmax(x, dim=1)`` and ``softmax(x, 1, dtype=None)`` are one label, and so are
    ``torch.add(x, y)`` / ``torch.add(x, y, alpha=1)``, ``x.clamp(0)`` / ``x.clamp(min=0)``,
    ``torch.max(x, 1)`` / ``torch.max(x, dim=1)``, ``x.to(torch.float16)`` /
    ``x.to(dtype=torch.float16)`` (``to.dtype_layout``), ``arange(0, 8)`` / ``arange(0, 8, 1)``
    (``arange.start_step``). A call of literals only whose overload has an ATen decomposition
    that is one call of another overload of the same op is that call: ``arange(8)`` is
    ``arange.start_step(0, 8, 1)``. Calls that no signature binds (``operator.*``,
    higher-order ops, methods without a schema such as ``Tensor.float``) keep positional args
    in order and keyword args sorted by name. **Spellings that stay apart** (accepted splits):
    ``div(x, y)`` vs ``div(x, y, rounding_mode=None)`` (two ATen overloads that no schema
    relates), ``x.float()`` vs ``x.float(memory_format=...)`` (no schema), a method vs its
    function (``x.add(y)`` / ``torch.add(x, y)``: the call's kind and target are part of the
    label). ``benchmarks/bench_hash_spellings.py`` counts the common calls that normalise.
    **Equivalent values are not unified**: ``dim=1`` and ``dim=-1`` on a rank-2 tensor stay
    two labels (a false split we accept: what a negative dim means depends on the op --
    ``unsqueeze`` counts rank + 1 -- and guessing it would risk false merges).
  * literal values (ints, floats, bools, strings, dtypes, slices, ...) **by their bits**:
    ``1``, ``True`` and ``1.0`` are three values, ``-0.0`` is not ``0.0``, a NaN keeps its
    payload and sign (``labels._encode_float``), and the label cache keys floats by their
    IEEE-754 bits (``fastpath.float_bits``); node arguments as references whose targets are the
    line's input list (wiring and argument order);
  * each node's output metadata (shape, dtype) from ``node.meta['example_value']`` /
    ``['val']`` / ``['tensor_meta']``; **not** for the output node (its metadata, e.g.
    what ``ShapeProp`` writes there, is ignored);
  * placeholders by kind (input / parameter / buffer) and metadata; the kind comes from
    ``placeholder_kinds`` or Dynamo's ``grapharg`` source, never from the placeholder name.
    **Buffers are constants of the computation, parameters are inputs**: given the captured
    values (``placeholder_values``, Dynamo's ``example_inputs``, as the extract stage passes
    them), a buffer placeholder of at most 4,096 bytes with real values also enters by the
    digest of its bytes, like a small ``get_attr`` constant (Llama's ``inv_freq`` makes
    ``rope_theta`` 10000 and 500000 two hashes); parameters, larger buffers and buffers without
    values enter by shape and dtype. A graph rebuilt from the store (no values) therefore
    re-hashes to its filed hash only when it has no such buffer.
  * ``get_attr``: a sub-GraphModule (bodies of ``torch.cond``, activation checkpoint,
    ``wrap``, ...) enters by its own canonical hash, computed recursively with its
    placeholders kept in calling order (the operands are passed positionally); an
    ``nn.Module`` by its state (as ``call_module``); a Parameter by shape and dtype; a
    constant tensor by shape, dtype and -- **when it has at most 4,096 bytes**
    (``labels.CONST_DIGEST_MAX_BYTES``) and real values -- the sha256 digest of its bytes;
    larger constants and meta/fake tensors by shape and dtype only. **Decision (an accepted
    merge)**: a 32x64 float constant with one value changed hashes equal. Large constants
    are weight-like tables; their values do not change the ops, shapes or kernels that the
    profiles measure, the store does not keep them (a stored graph synthesises its
    constants), and hashing every byte of every constant would cost in proportion to the
    model size. Small constants (masks, index tables, scalars) are where values change the
    computation, and they are digested.

**2. What is dropped** (``graph_hash`` is invariant to it): node names, placeholder names,
module paths (``get_attr`` targets, Dynamo's ``L_self_modules_..._weight`` names), the device
in ``device=`` literals, the spelling of arguments (section 1), the recording order of
independent nodes and the calling position of placeholders (section 3).

**3. Order.** The form lists nodes in a canonical topological order over data edges and
ordering edges:
  * **Mutations order their readers.** A node mutates an argument when its ATen schema
    marks it written (``alias_info.is_write``: ``add_``, ``relu_``, ``copy_``), when it is a
    Python augmented assignment (``operator.iadd`` ... ``operator.setitem``, by identity:
    ``operator.and_`` is ``a & b``, not a write), a method/function without any ATen schema
    whose name ends in one ``_`` (the only name rule), a call whose ``inplace`` argument is True **by keyword or
    by position** (``F.relu(t, True)``; Dynamo records ``nn.ReLU6(inplace=True)`` as
    ``F.hardtanh(t, 0.0, 6.0, True)``: the position comes from the function's signature),
    an ``out=`` call, a call whose ATen schema marks an argument as written (``Tensor(a!)``,
    by position or keyword, and every member of a written ``Tensor(a!)[]`` list:
    ``torch._foreach_mul_([t], 3.0)``), or a training-mode batch norm (running
    statistics). ``call_module`` leaves (``torch.fx.symbolic_trace`` graphs): a module
    whose ``inplace`` attribute is True (``nn.ReLU(inplace=True)``) mutates its input; a
    batch / instance norm in training mode with running statistics mutates its state,
    an alias class holding every ``get_attr`` below the module's path (a read of
    ``bn.running_mean`` before vs after the call: two hashes). **Decision (an accepted
    split)**: an in-place op that happens to be a no-op (``dropout(training=False,
    inplace=True)``) is still a mutation and orders its readers; telling no-ops apart
    would need per-op knowledge of when a write writes nothing, and the split only costs
    one more profile of the same program. Tensors that share storage form one alias class
    (union-find, built only when some node writes a tensor): a call joins the inputs whose
    storage its example value shares (views, in-place calls, and calls that return their
    input itself: ``F.dropout(training=False)``, ``nn.Dropout`` in eval mode, ``type_as`` to
    the same dtype, ``atleast_2d`` of a 2-D tensor); without example values, every input of a
    call that may alias (ATen schemas with an aliased return, ``getitem``, in-place calls,
    ``CompositeImplicitAutograd`` ops, ops not known to return a fresh tensor). A mutation of
    class C comes after every earlier reader of C and the previous mutation of C; every later
    reader of C comes after it.
  * **Random draws keep their order.** A call that draws from the random generator reads and
    writes one more state (``effects.RNG_STATE``), so random calls are ordered among
    themselves (not against other nodes). Which calls draw is read off ATen's
    ``nondeterministic_seeded`` tag of the ops the call lowers to (``effects.draws_random``): a
    call whose op (or one of its overloads, or, for torch's Python functions such as
    ``F.dropout``, any op) may carry the tag is run once on meta tensors shaped like its inputs
    under a recording dispatch mode (cached per target, literals and shapes), and draws when a
    recorded op carries it: ``bernoulli``, ``rand*``, ``normal_``, ``uniform_``,
    ``multinomial`` always; ``F.dropout`` with ``training=True``, not with ``training=False``;
    ``scaled_dot_product_attention`` only with ``dropout_p`` > 0 (the tag is per op, not per
    call). A call that cannot be run on meta draws when its op is tagged.
  * **Global-state switches are barriers**: grad mode, autocast, profiler ranges,
    saved-tensor hooks and the functorch level switches of ``torch.vmap`` /
    ``torch.func.grad`` / jvp (``_vmap_increment_nesting``, ``_add_batch_dim``,
    ``_wrap_for_grad`` ...) and anything ``node.is_impure()`` calls impure (random draws
    aside: they are ordered by the generator's state): nothing moves across them.
  * Ties are broken by Merkle hashes: a node's *cone* (its label with its inputs' cones in
    argument order and its ordering dependencies) and its *down* hash (cone plus the
    sorted down hashes and argument positions of its consumers), structure labels first,
    then exact labels; then (when some of these keys are equal) by the canonical
    positions of the node's inputs, all placed before it. This places **dead nodes**
    canonically: ``tanh(x)`` and ``tanh(y)`` on two placeholders, both unused, have equal
    Merkle keys but inputs at different canonical positions (without the second key
    they kept their recording order: 5 of 300 seeded random DAGs split under a
    placeholder permutation plus a reorder). Dead nodes are kept, not removed: they are
    part of what eager mode runs. Nodes equal in all keys compute the same value from
    the same inputs and keep their recorded relative order.
  * **Placeholders** come first, sorted by the same Merkle keys: their position is
    derived from how the graph uses them, not from Dynamo's first-use lifting order. The
    permutation (``CanonicalGraph.placeholder_order``: calling position of each
    placeholder in canonical order) is kept in the store, whose rebuilt graph keeps the
    captured calling convention. Sub-graphs of higher-order ops keep calling order.
  * The output node comes last.

**4. Hashes.**
  * ``graph_hash``: sha256 of the canonical text (header with the version, one line per
    node: label, tab, canonical indexes of its data inputs).
  * ``structure_hash``: the same text built from structure labels, over the same order.
    Structure labels reduce tensor shapes to ranks, drop constant digests, abstract module
    state numbers, and abstract **every int and float literal** (to ``["int"]`` /
    ``["float"]``, inside lists and tuples too: ``reshape([b, 4 * h])``) **except**
    (a) ints bound to a dimension parameter of the op's signature (``dim``, ``dims``,
    ``dim0``, ``dim1``, ``start_dim``, ``end_dim``, ``source``, ``destination``,
    ``axis``...: ``sum(dim=2)`` and ``sum(dim=3)`` stay apart), and (b) ``getitem``
    indexes into a tuple/list result (wiring, not a size). The rule does not look at the
    value, so numbers derived from sizes (``padding_idx = vocab_size - 1``, ``h // heads``)
    are abstracted like sizes, and whether a literal is abstracted never depends on it
    coinciding with a shape, with one exception: ``groups=1`` (a dense convolution) is
    kept, ``groups`` > 1 abstracted. **Decision**: dense and grouped / depthwise convs are
    different algorithms and kernels, so their structure hashes differ; a depthwise conv
    at two widths (``groups`` = channels) still shares one. Where no unique signature
    binds (``torch.conv2d``'s overloads), dimension and ``groups`` arguments are
    recognised by their position in the ATen schemas. Bools, strings and dtypes stay. Consequence: one architecture
    at two widths (same depth) shares a structure hash; depth changes the node count and
    therefore the structure hash; two graphs that differ only in a scalar literal
    (``x * 2`` vs ``x * 3``, kernel size 3 vs 5) share it too.
  * ``wl_hash``: ``networkx.weisfeiler_lehman_graph_hash`` over ``op|target`` labels with
    argument positions as edge labels: a 1-WL bucket for near duplicates, not a proof of
    isomorphism; its values depend on the networkx version (recorded as
    ``passnet.networkx_version`` in the Parquet metadata).
"""

from passnet_common.canonical import seam as _seam  # noqa: I001  (imports form, effects, labels: wires them to the compiled path)
from passnet_common.canonical.form import (
    CANONICAL_VERSION,
    CanonicalGraph,
    canonicalize,
    graph_hashes,
    hash_metadata,
    output_permutation,
    placeholder_kind,
)
from passnet_common.canonical.labels import encode_literal, encode_meta, normalized_arguments, qualified_name, tensor_meta_of

_seam.load()

__all__ = [
    "CANONICAL_VERSION", "CanonicalGraph", "canonicalize", "graph_hashes", "hash_metadata", "output_permutation", "placeholder_kind",
    "encode_literal", "encode_meta", "normalized_arguments", "qualified_name", "tensor_meta_of",
]
