"""The compiled path of the canonical form (``_cmerkle``, ``_cform``, built by ``pip install -e .``
when Cython and a C compiler are there, plugged in through :mod:`passnet_common.canonical.compiled`)
returns exactly what the Python definitions return: the Merkle hashes and canonical order
(:func:`~passnet_common.canonical.order.merkle_py`, :func:`~passnet_common.canonical.order.canonical_order`)
on seeded random DAGs with ordering edges, repeated inputs, tied keys and both placeholder
conventions; the label pass with its cache (:func:`~passnet_common.canonical.form.labels_plain`),
the side-effect pass, the texts and the stored node list on seeded random FX graphs; the whole form
with the compiled path switched off (:func:`~passnet_common.canonical.compiled.python_only`). The
seam's own agreement check turns a wrong copy off. The whole-graph identity (every hash and stored
byte against the recorded values, on both paths) is ``tests/test_canonical_identity.py``."""

from __future__ import annotations

import contextlib
import operator
import random
from pathlib import Path

import pytest
import torch
import torch.fx as fx

from benchmarks.bench_hash import synthetic_chain
from passnet_common.canonical import canonicalize, graph_hashes, seam
from passnet_common.canonical import compiled as C
from passnet_common.canonical import effects as Ef
from passnet_common.canonical import form as Fm
from passnet_common.canonical import order as O

compiled = pytest.mark.skipif(C.cmerkle is None, reason=f"the compiled path is off: {C.status}")


def _random_dag(rng: random.Random):
    n = rng.randint(1, 50)
    nph = rng.randint(0, min(n, 6))
    ops = ["placeholder"] * nph + ["call_function"] * (n - nph)
    if n > nph and rng.random() < 0.7:
        ops[-1] = "output"
    inputs = [[] if ops[i] == "placeholder" or i == 0 else [rng.randrange(i) for _ in range(rng.randint(0, 3))]
              for i in range(n)]
    extra = [[rng.randrange(i) for _ in range(rng.randint(0, 3))] if i and ops[i] != "placeholder" and rng.random() < 0.3
             else [] for i in range(n)]
    return ops, inputs, extra


@compiled
def test_compiled_merkle_equals_python():
    """Label ids over the whole 64-bit range (CPython reduces them modulo 2**61 - 1 before
    mixing), including 2**61 - 1, 2**63 and 2**64 - 1."""
    rng = random.Random(0)
    edge = [0, 1, 2**61 - 2, 2**61 - 1, 2**61, 2**63 - 1, 2**63, 2**64 - 1]
    for _ in range(500):
        ops, inputs, extra = _random_dag(rng)
        ids = [rng.choice(edge) if rng.random() < 0.2 else rng.getrandbits(64) for _ in ops]
        assert C.cmerkle.merkle(list(map(hash, ids)), inputs, extra) == O.merkle_py(ids, inputs, extra)


@compiled
@pytest.mark.parametrize("keep_positions", [False, True])
def test_compiled_order_equals_python(keep_positions):
    """Keys drawn from a few values (many ties: the second key, the inputs' canonical
    positions, decides), at 2 and 4 words, both placeholder conventions."""
    rng = random.Random(1)
    for _ in range(1_000):
        ops, inputs, extra = _random_dag(rng)
        cols = [[rng.randrange(-2, 2) * (2**62 if rng.random() < 0.5 else 1) for _ in ops]
                for _ in range(rng.choice([2, 4]))]
        keys = O._pack(list(zip(*cols)))
        want = O.canonical_order(ops, inputs, extra, keys, list(range(len(ops))) if keep_positions else None,
                                 ties=len(set(keys)) < len(keys))
        assert O.canonical_order_of(ops, inputs, extra, cols, keep_positions) == want


@compiled
def test_compiled_order_rejects_a_cycle_like_python():
    ops = ["placeholder", "call_function", "call_function", "output"]
    inputs, extra = [[], [0], [1], [2]], [[], [2], [], []]  # 1 waits for 2, 2 reads 1
    with pytest.raises(ValueError, match="cycle"):
        O.canonical_order_of(ops, inputs, extra, [[0] * 4, [0] * 4], False)


def test_python_fallback_gives_the_same_form():
    """With the compiled path switched off the form is the same, byte for byte (the path a
    machine without a compiler takes)."""
    gm = synthetic_chain(1_000)
    a = canonicalize(gm, with_wl=False)
    ha = graph_hashes(gm)
    with C.python_only():
        b = canonicalize(gm, with_wl=False)
        hb = graph_hashes(gm)
    assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order, a.placeholder_order) == \
        (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order, b.placeholder_order)
    assert hb == ha == (a.graph_hash, a.structure_hash)


compiled_form = pytest.mark.skipif(C.cform is None, reason=f"the compiled path is off: {C.status}")

_SHAPES = [(2, 3), (3,), (2, 3), (1, 3), (6,), ()]
_DTYPES = [torch.float32, torch.float32, torch.float16, torch.int64]


def _random_fx(rng: random.Random) -> fx.GraphModule:
    """A random FX graph over the argument kinds the label cache keys (nodes, ints, floats
    -0.0 / 0.0 / 2.5, bools, lists, keyword arguments, varargs methods, tuple values and their
    getitems, missing metadata, a node repeated in one call). The metadata is drawn, not
    propagated: the form only reads it."""
    g = fx.Graph()
    nodes = []
    for i in range(rng.randint(1, 4)):
        p = g.placeholder(f"p{i}")
        p.meta["val"] = torch.empty(rng.choice(_SHAPES), dtype=rng.choice(_DTYPES), device="meta")
        nodes.append(p)
    for _ in range(rng.randint(1, 40)):
        a, b = rng.choice(nodes), rng.choice(nodes)
        kind = rng.randrange(13)
        val = torch.empty(rng.choice(_SHAPES), dtype=rng.choice(_DTYPES), device="meta")
        if kind == 0:
            n = g.call_function(torch.add, (a, b))
        elif kind == 1:
            n = g.call_function(torch.mul, (a, rng.choice([2.5, -0.0, 0.0, 3, True])))
        elif kind == 2:
            n = g.call_function(torch.sum, (a,), {"dim": rng.choice([0, 1, -1])})
        elif kind == 3:
            n = g.call_function(torch.cat, ([a, b], 0) if rng.random() < 0.5 else ([a, b],),
                                {} if rng.random() < 0.5 else {"dim": 0})
        elif kind == 4:
            n = g.call_method("view", (a, 2, -1))
        elif kind == 5:
            n = g.call_method("reshape", (a, [rng.choice([-1, 6])]))
        elif kind == 6:
            n = g.call_function(torch.split, (a, 1), {"dim": 0})
            val = (torch.empty((1, 3), device="meta"),) * 2
            n.meta["example_value"] = val
            nodes.append(n)
            n = g.call_function(operator.getitem, (n, rng.randrange(2)))
            val = torch.empty((1, 3), device="meta")
        elif kind == 7:
            n = g.call_function(operator.add, (a, b))
        elif kind == 8:
            n = g.call_method("size", (a, rng.randrange(2)))
            val = rng.choice([2, 3])
        elif kind == 9:
            n = g.call_method(rng.choice(["add_", "mul_"]), (a, rng.choice([1, b])))
        elif kind == 10:
            n = g.call_function(rng.choice([operator.iadd, operator.imul]), (a, b))
        elif kind == 11:
            n = g.call_function(torch.nn.functional.relu, (a,), {"inplace": rng.random() < 0.7})
        else:
            n = g.call_function(torch._C._set_grad_enabled, (rng.random() < 0.5,))
            val = None
        if rng.random() < 0.9:
            n.meta["example_value"] = val
        nodes.append(n)
    g.output(tuple(nodes[-rng.randint(1, 3):]))
    return fx.GraphModule(torch.nn.Module(), g)


@compiled_form
@pytest.mark.parametrize("keep_positions", [False, True])
def test_compiled_labels_equal_python(keep_positions):
    """The compiled label pass (with its cache, kept across the 300 graphs as across a pipeline's) returns
    the labels and inputs of the plain definition, every node labelled by itself, with and without the
    stored entries (which the whole-form tests below compare through the node lists they fill)."""
    rng = random.Random(21)
    for _ in range(300):
        gm = _random_fx(rng)
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        for want in (False, True):
            a = Fm.labels_plain(nodes, gm, None, keep_positions, index, want)
            b = C.cform.labels(nodes, gm, None, keep_positions, index, want, Fm._slow_label)
            assert a[:3] == b[:3]


@compiled_form
def test_label_cache_kept_across_graphs_labels_each_graph_as_alone():
    """The label cache outlives a label pass (``_cform``: keys hold all the slow path reads of a
    call_function / call_method / placeholder node). Property: 200 random graphs labelled one after another
    with the cache kept get exactly the labels, inputs and stored entries each gets with the cache emptied
    first. And call_module keys stay per pass: two traced modules whose ``call_module`` nodes share target
    name and arguments but not the module's state (``Dropout(p=0.1)`` vs ``p=0.2``) hash apart whatever
    the cache holds, each as the Python definition hashes it."""
    def form(gm):
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        labels = C.cform.labels(nodes, gm, None, False, index, False, Fm._slow_label)[:3]
        c = canonicalize(gm, with_wl=False)  # the stored entries, through the node list they fill
        return labels, (c.graph_hash, c.structure_hash, c.text, c.nodes, c.order)

    rng = random.Random(8)
    graphs = [_random_fx(rng) for _ in range(200)]
    C.cform.clear_label_cache()
    warm = [form(gm) for gm in graphs]
    assert C.cform.label_cache_size() > 0
    for gm, got in zip(graphs, warm):
        C.cform.clear_label_cache()
        assert got == form(gm)

    class Net(torch.nn.Module):
        def __init__(self, p):
            super().__init__()
            self.drop = torch.nn.Dropout(p)

        def forward(self, x):
            return self.drop(x) + 1

    a, b = fx.symbolic_trace(Net(0.1)), fx.symbolic_trace(Net(0.2))
    assert any(n.op == "call_module" for n in a.graph.nodes)
    with C.python_only():
        want = (canonicalize(a, with_wl=False).graph_hash, canonicalize(b, with_wl=False).graph_hash)
    assert want[0] != want[1]
    for first, second in ((a, b), (b, a)):
        C.cform.clear_label_cache()
        h1, h2 = canonicalize(first, with_wl=False).graph_hash, canonicalize(second, with_wl=False).graph_hash
        assert (h1, h2) == (want if first is a else want[::-1])


def _one_call(target, args, scalar=None):
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, device="meta")
    s = None
    if scalar is not None:
        s = g.placeholder("s")
        s.meta["example_value"] = scalar
    n = g.call_function(target, tuple(s if a == "s" else x if a == "x" else a for a in args))
    n.meta["example_value"] = torch.empty(2, device="meta")
    g.output((n,))
    return fx.GraphModule(torch.nn.Module(), g)


class _EqualCallable:
    """Callable objects that all compare equal but label by their ``__module__`` (a contrived target)."""

    def __init__(self, mod):
        self.__module__, self.__name__ = mod, "eqfn"

    def __call__(self, x, y=2):
        return x

    def __eq__(self, other):
        return isinstance(other, _EqualCallable)

    def __hash__(self):
        return 7


def _dict_reader(d):
    return d["a"] - d["b"]


def _dict_of_nodes(same: bool):
    """``_dict_reader({"b": x, "a": x or y})``: a dict of nodes whose insertion order is not its label's."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, device="meta")
    y = g.placeholder("y")
    y.meta["example_value"] = torch.empty(3, device="meta")
    n = g.call_function(_dict_reader, ({"b": x, "a": x if same else y},))
    n.meta["example_value"] = torch.empty(2, device="meta")
    g.output((n,))
    return fx.GraphModule(torch.nn.Module(), g)


def _cross_graph_cases():
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    sym = env.create_symintnode(env.create_symbol(4, source=ConstantSource("n")), hint=4, source=ConstantSource("n"))
    return {
        "dict key 0.0 vs -0.0": ((_one_call(torch.add, ("x", {0.0: 1})), None), (_one_call(torch.add, ("x", {-0.0: 1})), None)),
        "dict key (1,) vs (True,)": ((_one_call(torch.add, ("x", {(1,): 1})), None),
                                     (_one_call(torch.add, ("x", {(True,): 1})), None)),
        "SymInt vs SymBool input": ((_one_call(torch.mul, ("x", "s"), sym), None), (_one_call(torch.mul, ("x", "s"), sym > 2), None)),
        "placeholder kinds 1 vs True": ((_one_call(torch.relu, ("x",)), [1]), (_one_call(torch.relu, ("x",)), [True])),
        "placeholder kinds (1,) vs (True,)": ((_one_call(torch.relu, ("x",)), [(1,)]), (_one_call(torch.relu, ("x",)), [(True,)])),
        "placeholder kinds 0.0 vs -0.0": ((_one_call(torch.relu, ("x",)), [0.0]), (_one_call(torch.relu, ("x",)), [-0.0])),
        "dict of nodes, one node twice vs two": ((_dict_of_nodes(True), None), (_dict_of_nodes(False), None)),
        "equal callables": ((_one_call(_EqualCallable("foo"), ("x",)), None), (_one_call(_EqualCallable("math"), ("x",)), None)),
    }


@compiled_form
def test_label_cache_across_graphs_keys_what_the_label_reads():
    """Graph pairs whose nodes differ only where a coarse key would merge them across graphs (found by an
    attacks on the cache kept across graphs): dict keys ``0.0`` / ``-0.0`` and ``(1,)`` / ``(True,)`` (keyed by
    their literal templates), a dict of nodes listed out of its label's order (``str(key)``) with one node under
    two keys in A, two nodes in B (the templates meet a dict's nodes in the label's order, so A's entry is no
    identity for B), a SymInt vs a SymBool input (the first template keys a non-tensor input by its
    exact type: the signature binding reads it), placeholder kinds ``1`` / ``True``, ``(1,)`` / ``(True,)``,
    ``0.0`` / ``-0.0`` (keyed by their literal templates),
    and two callable objects that compare equal (a target of a type outside ``seam.SHARED_TARGETS`` is not
    keyed: also in one graph). B hashed after A, with A's keys in the cache, and A and B's calls in one graph,
    are hashed as the Python definition hashes them."""
    for name, ((a, ka), (b, kb)) in _cross_graph_cases().items():
        with C.python_only():
            want = canonicalize(b, kb, with_wl=False)
            assert want.graph_hash != canonicalize(a, ka, with_wl=False).graph_hash, name
        C.cform.clear_label_cache()
        canonicalize(a, ka, with_wl=False)
        got = canonicalize(b, kb, with_wl=False)
        assert (got.graph_hash, got.text, got.nodes) == (want.graph_hash, want.text, want.nodes), name
    # both equal callables in one graph, with the cache emptied: each labelled by its own module
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, device="meta")
    outs = []
    for mod in ("foo", "math"):
        outs.append(g.call_function(_EqualCallable(mod), (x,)))
        outs[-1].meta["example_value"] = torch.empty(2, device="meta")
    g.output(tuple(outs))
    both = fx.GraphModule(torch.nn.Module(), g)
    with C.python_only():
        want = canonicalize(both, with_wl=False)
    C.cform.clear_label_cache()
    assert canonicalize(both, with_wl=False).text == want.text


@compiled_form
def test_compiled_ordering_deps_equal_python():
    """The compiled ordering edges (in-place methods, augmented assignments, ``inplace=``,
    global-state barriers on random graphs; call_module state writes on the load sample) are
    the Python ones, with and without the node index given."""
    rng = random.Random(5)
    graphs = [_random_fx(rng) for _ in range(300)] + [Ef.sample_graph()]
    effects = 0
    for gm in graphs:
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        inputs = [[index[m] for m in n.all_input_nodes] for n in nodes]
        want = Ef.ordering_deps_py(nodes, inputs, gm, index)
        effects += any(want[0])
        assert C.cform.ordering_deps(nodes, inputs, gm, index) == want
        assert C.cform.ordering_deps(nodes, inputs, gm, None) == want
    assert effects > 100  # most graphs have ordering edges


def _random_alias_fx(rng: random.Random) -> fx.GraphModule:
    """A random FX graph whose example values share storage the way captured ones do: views
    (``view``, ``t``, ``getitem`` of a ``split``) of earlier values, calls that return their input
    itself (``F.dropout(training=False)``), in-place writes (``add_``, ``index_add_``,
    ``operator.setitem``, ``inplace=True``) to any value, fresh results (``clone``, ``add``, ``cat``),
    some nodes without metadata; readers before and after each write."""
    g = fx.Graph()
    nodes, vals = [], []
    for i in range(rng.randint(1, 3)):
        p = g.placeholder(f"p{i}")
        v = torch.empty((2, 3), device="meta")
        p.meta["val"] = v
        nodes.append(p)
        vals.append(v)
    for _ in range(rng.randint(1, 40)):
        k = rng.randrange(len(nodes))
        a, va = nodes[k], vals[k]
        b = rng.choice(nodes)
        kind = rng.randrange(11)
        if kind == 0:
            n, v = g.call_method("view", (a, 2, 3)), va.as_strided((2, 3), (3, 1))
        elif kind == 1:
            n, v = g.call_method("t", (a,)), va.as_strided((3, 2), (1, 3))
        elif kind == 2:
            s = g.call_function(torch.split, (a, 1))
            parts = va.as_strided((2, 3), (3, 1)).split(1)
            s.meta["example_value"] = parts
            j = rng.randrange(2)
            n, v = g.call_function(operator.getitem, (s, j)), parts[j]
        elif kind == 3:
            n, v = g.call_function(torch.nn.functional.dropout, (a,), {"training": False}), va
        elif kind == 4:
            n, v = g.call_method("add_", (a, b)), va
        elif kind == 5:
            idx = g.call_function(torch.arange, (2,))
            idx.meta["example_value"] = torch.empty((2,), dtype=torch.int64, device="meta")
            n, v = g.call_method("index_add_", (a, 0, idx, b)), va
        elif kind == 6:
            n, v = g.call_function(operator.setitem, (a, 0, b)), None
        elif kind == 7:
            n, v = g.call_function(torch.nn.functional.relu, (a,), {"inplace": True}), va
        elif kind == 8:
            n, v = g.call_method("clone", (a,)), torch.empty((2, 3), device="meta")
        elif kind == 9:
            n, v = g.call_function(torch.add, (a, b)), torch.empty((2, 3), device="meta")
        else:
            n, v = g.call_function(torch.cat, ([a, b],)), torch.empty((4, 3), device="meta")
        if v is not None and rng.random() < 0.92:
            n.meta["example_value"] = v
        if v is not None and v.numel() == 6:  # split parts (3 elements) are read, not taken further
            nodes.append(n)
            vals.append(v)
    g.output(tuple(nodes[-rng.randint(1, 3):]))
    return fx.GraphModule(torch.nn.Module(), g)


@compiled_form
def test_compiled_alias_classes_equal_python():
    """The compiled pass unions alias classes only by a search from the written nodes (and the
    readers of written module state) along data edges; the Python loop unions every node with the
    inputs whose storage it shares. On random graphs of views, input-returning calls and in-place
    writes, with storages shared through chains of example values, the ordering edges are the
    same, and most graphs have readers ordered through an alias (an edge to a node the reader
    does not take as a direct input, nor as an input of its inputs)."""
    rng = random.Random(42)
    through_alias = 0
    for _ in range(400):
        gm = _random_alias_fx(rng)
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        inputs = [[index[m] for m in n.all_input_nodes] for n in nodes]
        want = Ef.ordering_deps_py(nodes, inputs, gm, index)
        assert C.cform.ordering_deps(nodes, inputs, gm, index) == want
        assert C.cform.ordering_deps(nodes, inputs, gm, None) == want
        near = [set(ins).union(*(inputs[j] for j in ins)) for ins in inputs]
        through_alias += any(j not in near[i] and not want[1][j] for i, d in enumerate(want[0]) for j in d)
    assert through_alias > 100


@compiled_form
def test_compiled_ordering_deps_leaves_indexes_outside_the_graph_to_python():
    """The compiled loop keeps its tables in C arrays, so an input index outside ``[0, n)`` (which
    the label pass never gives) is refused with ValueError rather than read, and
    ``effects.ordering_deps`` then returns what the Python loop returns (a negative index is
    Python's index from the end)."""
    gm = Ef.sample_graph()
    nodes = list(gm.graph.nodes)
    index = {m: i for i, m in enumerate(nodes)}
    inputs = [[index[m] for m in n.all_input_nodes] for n in nodes]
    k = next(i for i, ins in enumerate(inputs) if ins and nodes[i].op == "call_function")
    inputs[k] = [-1] + inputs[k][1:]
    with pytest.raises(ValueError, match="outside the graph"):
        C.cform.ordering_deps(nodes, inputs, gm, index)
    want = Ef.ordering_deps_py(nodes, inputs, gm, index)
    assert any(want[0])
    assert Ef.ordering_deps(nodes, inputs, gm, index) == want


@compiled_form
def test_compiled_texts_equal_python():
    """The compiled texts (positions, canonical input lists, both hashes, the exact text) are the
    Python ones on random orders and input lists with labels of ASCII, Latin, CJK and astral
    characters, with and without the text; an order that is not a permutation or an input index
    outside the graph is refused by the compiled loop and decided by the Python one."""
    rng = random.Random(11)
    alphabet = ["a", "b", "\t", ",", "\u00e9", "\u4e2d", "\U0001f600", "[", "0", "9"]
    for _ in range(300):
        n = rng.randint(0, 40)
        order = list(range(n))
        rng.shuffle(order)
        inputs = [[rng.randrange(n) for _ in range(rng.choice([0, 1, 1, 2, 3, 5]))] for _ in range(n)]
        exact = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(n)]
        struct = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(n)]
        for want in (True, False):
            assert C.cform.texts(order, inputs, exact, struct, want, Fm._HEADER) == \
                Fm.texts_py(order, inputs, exact, struct, want)
    big = 1_200  # positions of four digits
    order = list(range(big))[::-1]
    inputs = [[i - 1, i // 2] if i else [] for i in range(big)]
    labels = [str(i) for i in range(big)]
    assert C.cform.texts(order, inputs, labels, labels, True, Fm._HEADER) == Fm.texts_py(order, inputs, labels, labels, True)
    for bad_order, bad_inputs in (([0, 0], [[], []]), ([0, 1], [[], [2]]), ([0, 1], [[], [-1]])):
        with pytest.raises(ValueError):
            C.cform.texts(bad_order, bad_inputs, ["a", "b"], ["c", "d"], True, Fm._HEADER)
        outcomes = []
        for fn in (Fm._texts, Fm.texts_py):
            try:
                outcomes.append(fn(bad_order, bad_inputs, ["a", "b"], ["c", "d"], True))
            except IndexError as exc:  # pos[2]: what the Python loop raises
                outcomes.append(type(exc))
        assert outcomes[0] == outcomes[1]


def test_compiled_tie_check_equals_python():
    """``_cmerkle.has_ties`` (pairs sorted in C) answers as ``len(set(zip(a, b))) < len(a)`` on
    random key columns with many equal and extreme values; an int outside 64 bits goes to the
    Python check."""
    if C.cmerkle is None:
        pytest.skip(f"the compiled path is off: {C.status}")
    rng = random.Random(3)
    pool = [0, 1, -1, 2**63 - 1, -2**63, 2**61 - 1, 12345]
    for _ in range(2_000):
        n = rng.randint(0, 40)
        a = [rng.choice(pool) for _ in range(n)]
        b = [rng.choice(pool[:3]) for _ in range(n)]
        assert C.cmerkle.has_ties(a, b) == O.has_ties_py(a, b)
    big = [2**64, 0]
    with pytest.raises(OverflowError):
        C.cmerkle.has_ties(big, [0, 0])
    assert O.has_ties(big, [0, 0]) is False and O.has_ties([2**64, 2**64], [0, 0]) is True


@compiled_form
def test_compiled_forms_equal_python_on_random_graphs():
    """On the same random graphs the whole form (hashes, text, stored node list, order,
    placeholder order) is the same with the compiled path switched off."""
    rng = random.Random(7)
    graphs = [_random_fx(rng) for _ in range(200)]
    got = [canonicalize(gm, with_wl=False) for gm in graphs]
    with C.python_only():
        want = [canonicalize(gm, with_wl=False) for gm in graphs]
    for b, a in zip(want, got):
        assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order, a.placeholder_order) == \
            (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order, b.placeholder_order)


def test_python_definition_on_the_metamorphic_programs():
    """The generator's programs (in-place writes, views, calls that return their input, random
    draws, float literals, a buffer with values) hash alike on both paths."""
    from tests.canonical_metamorphic import build, program

    for seed in range(60):
        b = build(program(seed), list(range(len(program(seed)))))
        a = canonicalize(b.gm, b.kinds, with_wl=False, placeholder_values=b.values)
        with C.python_only():
            p = canonicalize(b.gm, b.kinds, with_wl=False, placeholder_values=b.values)
        assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order) == (p.graph_hash, p.structure_hash, p.text,
                                                                              p.nodes, p.order)


def test_agreement_check_turns_a_wrong_copy_off(monkeypatch):
    """The seam's one agreement check: a compiled function that disagrees with the definition on
    the sample graphs (here each in turn: labels reversed, a node missing from the node list,
    no ordering edges, texts without the text, an order reversed) leaves the compiled path off,
    and the form is then the definition's."""
    pytest.importorskip("passnet_common.canonical._cform")
    from passnet_common.canonical import _cform, _cmerkle

    real = {"labels": _cform.labels, "node_list": _cform.node_list, "ordering_deps": _cform.ordering_deps,
            "texts": _cform.texts, "order_of_labels": _cmerkle.order_of_labels}
    wrong = {
        "labels": lambda *a: (lambda r: (r[0][::-1], *r[1:]))(real["labels"](*a)),
        "node_list": lambda *a: real["node_list"](*a)[1:],
        "ordering_deps": lambda *a: (lambda r: ([[] for _ in r[0]], r[1]))(real["ordering_deps"](*a)),
        "texts": lambda *a: real["texts"](*a[:4], not a[4], *a[5:]),
        "order_of_labels": lambda *a: (lambda r: (r[0][::-1], r[1]))(real["order_of_labels"](*a)),
    }
    try:
        for name, fn in wrong.items():
            monkeypatch.setattr(_cmerkle if name == "order_of_labels" else _cform, name, fn)
            assert seam.load() != "on" and C.cform is None and C.cmerkle is None, name
            monkeypatch.undo()
        assert seam.load() == "on"
    finally:
        monkeypatch.undo()
        seam.load()


@compiled_form
def test_prefetch_pipeline_is_on_and_changes_nothing():
    """The compiled passes prefetch the objects of the nodes ahead (``_cform.set_prefetch``: the
    offsets of ``Node.meta`` / ``_args`` / ``_kwargs`` and of a tensor's TensorImpl pointer, found
    at import). On this torch build every offset is found, so the pipeline is on; switched off,
    every form is the same, including graphs whose nodes carry unusual metadata (a ``meta`` that
    is a dict subclass, an example value that is a tuple, an int, a plain tensor or absent)."""
    from passnet_common.canonical import _cform

    assert Fm.set_prefetch(_cform) is True
    assert _cform.prefetch_enabled() is True
    rng = random.Random(11)
    graphs = [_random_fx(rng) for _ in range(100)] + [synthetic_chain(600)]
    odd = _random_fx(random.Random(3))

    class MetaDict(dict):
        pass

    for k, nd in enumerate(odd.graph.nodes):
        if k % 3 == 0:
            nd.meta = MetaDict(nd.meta)
        elif k % 3 == 1 and nd.op != "placeholder":
            nd.meta["example_value"] = torch.empty(2, 3)  # a real (CPU) tensor
    graphs.append(odd)
    on = [canonicalize(gm, with_wl=False) for gm in graphs]
    before = _cform.prefetch_enabled(False)
    try:
        assert before is True and _cform.prefetch_enabled() is False
        off = [canonicalize(gm, with_wl=False) for gm in graphs]
    finally:
        _cform.prefetch_enabled(True)
    for a, b in zip(on, off):
        assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order, a.placeholder_order) == \
            (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order, b.placeholder_order)


@compiled
@pytest.mark.parametrize("keep_positions", [False, True])
def test_fused_order_of_labels_equals_the_passes_step_by_step(keep_positions):
    """``_cmerkle.order_of_labels`` (the structure Merkle keys, the tie check, the exact keys
    when needed and the canonical order in one call over C arrays) returns the order of the
    passes run one by one (``order.order_of_labels_py``) on random DAGs whose labels are drawn
    from a few values (so that the structure keys tie and the exact labels decide, in about
    half of them), with label ids over the whole 64-bit range; the returned order holds the
    given int objects; a cycle is refused with the Python message; an index that is not earlier
    than its node is left to the Python passes."""
    rng = random.Random(12)
    tied = 0
    for _ in range(600):
        ops, inputs, extra = _random_dag(rng)
        n = len(ops)
        struct = [rng.choice(["a", "b"]) for _ in range(n)]
        exact = [s + rng.choice(["1", "2", "3"]) for s in struct]
        sid = O.label_ids(struct) if rng.random() < 0.8 else [rng.getrandbits(64) for _ in range(n)]
        ints = list(range(n))
        kinds = [O._KIND.get(op, 0) for op in ops]
        got, was_tied = C.cmerkle.order_of_labels(sid, lambda: O.label_ids(exact), inputs, extra, kinds, not keep_positions, ints)
        assert got == O.order_of_labels_py(sid, exact, inputs, extra, ops, keep_positions)
        assert O.order_of_labels(sid, exact, inputs, extra, ops, keep_positions, ints) == got
        assert all(g is ints[g] for g in got)
        tied += was_tied
    assert 100 < tied < 500
    ops = ["placeholder", "call_function", "call_function", "output"]
    late = [[], [2], [0], [1]]  # node 1 reads node 2: not a topological FX order
    with pytest.raises(ValueError, match="not earlier"):
        C.cmerkle.order_of_labels([1, 2, 3, 4], lambda: [1, 2, 3, 4], late, [[]] * 4, [1, 0, 0, 2], True, [0, 1, 2, 3])
    assert O.order_of_labels([1, 2, 3, 4], ["a"] * 4, late, [[]] * 4, ops, keep_positions, [0, 1, 2, 3]) == \
        O.order_of_labels_py([1, 2, 3, 4], ["a"] * 4, late, [[]] * 4, ops, keep_positions)
    with pytest.raises(ValueError, match="cycle"):  # 1 waits for 2, 2 reads 1: refused as by the Python passes
        O.order_of_labels([1, 2, 3, 4], ["a"] * 4, [[], [0], [1], [2]], [[], [2], [], []], ops, keep_positions,
                          [0, 1, 2, 3])


@compiled_form
def test_input_rows_pack_the_inputs_and_the_passes_read_them_alike():
    """``_cform.input_rows`` packs the data inputs as ``order.input_rows_py`` (the definition) does,
    on random DAGs, and refuses an index outside the graph (the passes then read the lists); the
    compiled side-effect pass, fused order and texts given the packed rows return what they return
    from the lists, on random FX graphs; rows of another graph are refused."""
    rng = random.Random(31)
    for _ in range(300):
        _, inputs, _ = _random_dag(rng)
        assert C.cform.input_rows(inputs) == O.input_rows_py(inputs)
    with pytest.raises(ValueError):
        C.cform.input_rows([[], [2]])
    with pytest.raises(ValueError):
        O.input_rows_py([[], [-1]])
    assert O.input_rows([[], [2]]) is None
    for _ in range(150):
        gm = _random_fx(rng)
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        exact, struct, inputs, _, _ = Fm._labels(nodes, gm, None, False, index)
        rows = O.input_rows(inputs)
        assert rows == O.input_rows_py(inputs)
        extra = C.cform.ordering_deps(nodes, inputs, gm, index, rows)
        assert extra == C.cform.ordering_deps(nodes, inputs, gm, index) == Ef.ordering_deps_py(nodes, inputs, gm, index)
        ops = [m.op for m in nodes]
        ints = list(range(len(nodes)))
        sid = O.label_ids(struct)
        order = O.order_of_labels(sid, exact, inputs, extra[0], ops, False, ints, rows)
        assert order == O.order_of_labels(sid, exact, inputs, extra[0], ops, False, ints) == \
            O.order_of_labels_py(sid, exact, inputs, extra[0], ops, False)
        assert C.cform.texts(order, inputs, exact, struct, True, Fm._HEADER, ints, rows) == \
            Fm.texts_py(order, inputs, exact, struct, True)
    other = O.input_rows_py([[], [0], [1]])
    with pytest.raises(ValueError, match="another graph"):
        C.cform.texts([0, 1], [[], [0]], ["a", "b"], ["c", "d"], True, Fm._HEADER, None, other)


def test_definition_memos_do_not_depend_on_what_was_hashed_before():
    """The Python definition's module-level memos (the binding plan per signature and argument types, the
    qualified name per target) hold only what the label reads: ``torch.sum(x, (0, 1, 2, 3, 4))`` binds to
    ``dim: int[]`` whether or not ``(0, 1, 2, 3, 4.0)`` (which binds to no signature) was hashed before -- the
    plan key reads every item of a tuple or list, FX's ``immutable_list`` included, as the binding does -- and
    of two callable objects that compare equal each is named by its own class."""
    from passnet_common.canonical import labels as L

    def sum_graph(last, seq=tuple):
        g = fx.Graph()
        x = g.placeholder("x")
        x.meta["example_value"] = torch.empty(1, 1, 1, 1, 2, device="meta")
        n = g.call_function(torch.sum, (x, seq((0, 1, 2, 3, last))))  # a list becomes an immutable_list
        n.meta["example_value"] = torch.empty((), device="meta")
        g.output((n,))
        return fx.GraphModule(torch.nn.Module(), g)

    with C.python_only():
        for seq in (tuple, list):
            L._plan_cache.clear()
            alone = canonicalize(sum_graph(4, seq), with_wl=False)
            L._plan_cache.clear()
            canonicalize(sum_graph(4.0, seq), with_wl=False)
            after = canonicalize(sum_graph(4, seq), with_wl=False)
            assert '"sig"' in [ln for ln in alone.text.splitlines() if "torch.sum" in ln][0], seq
            assert after.graph_hash == alone.graph_hash, seq

    class Foo(_EqualCallable):
        pass

    class Bar(_EqualCallable):
        pass

    with C.python_only():
        texts = [canonicalize(_one_call(cls(mod), ("x",)), with_wl=False).text for cls, mod in ((Foo, "ma"), (Bar, "mb"))]
    assert '"ma.eqfn"' in texts[0] and '"mb.eqfn"' in texts[1]


@compiled_form
def test_a_graph_out_of_topological_order_hashes_as_the_definition_does():
    """A node whose input comes later in the node list (``a.args`` rewired to a later node) has no key
    (its input's mark is not known yet): the compiled label pass labels it by itself, as the Python
    definition does, instead of failing on the missing mark."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, device="meta")
    a = g.call_function(torch.relu, (x,))
    a.meta["example_value"] = torch.empty(2, device="meta")
    b = g.call_function(torch.neg, (x,))
    b.meta["example_value"] = torch.empty(2, device="meta")
    g.output((a,))
    a.args = (b,)
    gm = fx.GraphModule(torch.nn.Module(), g)
    with C.python_only():
        want = canonicalize(gm, with_wl=False)
    C.cform.clear_label_cache()
    got = canonicalize(gm, with_wl=False)
    assert (got.graph_hash, got.text, got.nodes) == (want.graph_hash, want.text, want.nodes)


class _Pair(tuple):
    """A tuple subclass (as a namedtuple is) holding nodes."""


class _Dims(int):
    """An int subclass literal (as an IntEnum member is)."""


class _Scale(float):
    """A float subclass literal (as numpy.float64 is)."""


class _Marker:
    """Any other object as a literal (``encode_literal``'s last branch)."""

    def __repr__(self):  # the label keeps repr(value)
        return "marker"


def _every_literal_kind_graph(rng: random.Random) -> fx.GraphModule:
    """An FX graph of calls whose arguments reach every branch of ``labels.encode_literal`` (nodes inside tuples,
    lists, immutable lists, tuple subclasses, dicts with non-string keys, slices; int / float / bool
    subclasses; non-finite floats; dtypes, devices, memory formats, layouts, Ellipsis, complex
    numbers, tensor constants, callables, other objects) and whose output metadata reaches every
    branch of ``labels.encode_meta`` (tensors, tuples, lists, dicts, bools, ints, floats, None,
    other objects), as call_function and call_method, with and without keyword arguments."""
    from torch.fx.immutable_collections import immutable_dict, immutable_list

    g = fx.Graph()
    xs = []
    for i in range(3):
        p = g.placeholder(f"p{i}")
        p.meta["val"] = torch.empty((2, 3), device="meta")
        xs.append(p)
    a, b, c = xs
    lits = [slice(a, None, 2), (a, [b, (c, 1.5)]), immutable_list([a, b]), _Pair((b, a)), {1: a, "k": b, 0.5: c},
            immutable_dict({"z": a, "y": (b, 2)}), _Dims(3), _Scale(0.25), True, float("nan"), float("-inf"),
            -0.0, torch.float16, torch.device("cpu"), torch.channels_last, torch.strided, Ellipsis, 1 + 2j,
            torch.ones(2), operator.add, _Marker(), None, "s", torch.Size([2, 3]),
            [slice(None, b), Ellipsis], {"d": {"e": c}}]
    metas = [torch.empty((2, 3), device="meta"), (torch.empty(2, device="meta"), 3), [torch.empty(1, device="meta")],
             {"b": torch.empty(1, device="meta"), "a": 2.0}, True, 7, 0.5, None, "text", torch.empty((), device="meta")]
    for k in range(60):
        lit = rng.choice(lits)
        kind = rng.randrange(5)
        if kind == 0:
            n = g.call_function(torch.add, (rng.choice(xs), lit))
        elif kind == 1:
            n = g.call_function(torch.where, (rng.choice(xs),), {"other": lit, "input": rng.choice(xs)})
        elif kind == 2:
            n = g.call_method(rng.choice(["view", "reshape", "permute"]), (rng.choice(xs), lit, lit))
        elif kind == 3:
            n = g.call_method("to", (rng.choice(xs), lit), {"copy": rng.random() < 0.5, "extra": [lit, k]})
        else:
            n = g.call_function(operator.getitem, (rng.choice(xs), lit))
        m = rng.choice(metas)
        if m is not None:
            n.meta["example_value"] = m
        xs.append(n)
    g.output(tuple(xs[-5:]))
    return g  # a Graph, not a GraphModule: FX cannot write callables and objects into a GraphModule's code


@compiled_form
def test_compiled_miss_labels_every_literal_kind_as_the_definition():
    """A miss of a call_function / call_method node is labelled by the compiled copy of the definition's
    call rule (``_cform._miss_call``: ``form.node_label`` and ``form.stored_call``): on 40 graphs of
    calls whose arguments and output metadata reach every branch of ``encode_literal`` and
    ``encode_meta``, every node a miss (the label cache emptied, partial hits off), the labels, data
    inputs and stored node lists equal the definition's, and so does the whole form."""
    rng = random.Random(7)
    C.cform.set_meta_texts(None)
    try:
        for seed in range(40):
            gm = _every_literal_kind_graph(rng)
            nodes = list(gm.nodes)
            index = {m: i for i, m in enumerate(nodes)}
            want = Fm.labels_plain(nodes, None, None, False, index, True)
            C.cform.clear_label_cache()
            got = C.cform.labels(nodes, None, None, False, index, True, Fm._slow_label)
            assert got[:3] == want[:3], seed
            distinct = len(set(zip(want[0], map(tuple, want[2]))))
            assert C.cform.last_misses() >= distinct - 1, seed  # equal labels may share one miss
            a = canonicalize(gm, with_wl=False)
            with C.python_only():
                b = canonicalize(gm, with_wl=False)
            assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order) == \
                (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order), seed
    finally:
        seam._wire(C.cform)


def _nested_graph(depth: int, where: str):
    """A graph whose one call (or placeholder, ``where="meta"``) holds a value nested ``depth`` lists deep:
    as an argument around a node (``"arg"``), or as the example value (``"meta"``)."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    v = x if where == "arg" else None
    for _ in range(depth):
        v = [v]
    if where == "arg":
        n = g.call_method("not_a_torch_method", (x, v))
        n.meta["example_value"] = torch.empty(2, device="meta")
    else:
        n = g.call_function(torch.relu, (x,))
        n.meta["example_value"] = v
    g.output((n,))
    return g


def _form_or_error(g):
    try:
        c = canonicalize(g, with_wl=False)
    except RecursionError:
        return "RecursionError"
    return c.graph_hash, c.structure_hash, c.text, c.nodes, c.order


@compiled_form
def test_deep_nesting_is_labelled_or_refused_as_the_definition_does():
    """Arguments and example values nested deeper than the compiled copies recurse (64 levels) are labelled
    by the definition itself: at 100 levels both paths give the same form; at 300 (the recursion limit set
    450 frames above the test's) both raise RecursionError
    (the C recursion has no interpreter check: it returned a hash where the definition raises, found by an
    attack). At 50,000 levels of example value the compiled path crashed the process; it now raises
    RecursionError as the definition does (run in a child process, so a crash fails the test instead of
    ending the run)."""
    import subprocess
    import sys

    frames, f = 0, sys._getframe()
    while f is not None:
        frames, f = frames + 1, f.f_back
    limit = sys.getrecursionlimit()
    for where in ("arg", "meta"):
        for depth in (100, 300):
            g = _nested_graph(depth, where)
            sys.setrecursionlimit(frames + 450)  # the definition recurses twice per level: 300 levels exceed it
            try:
                with C.python_only():
                    want = _form_or_error(g)
                got = _form_or_error(g)
            finally:
                sys.setrecursionlimit(limit)
            assert got == want, (where, depth)
            assert (want == "RecursionError") == (depth == 300), (where, depth)
    code = ("import torch, torch.fx as fx\n"
            "from passnet_common.canonical import canonicalize, compiled\n"
            "assert compiled.cform is not None\n"
            "from tests.test_canonical_compiled import _nested_graph\n"
            "try:\n    canonicalize(_nested_graph(50000, 'meta'), with_wl=False)\n"
            "except RecursionError:\n    print('RecursionError')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=str(Path(__file__).resolve().parents[1]))
    assert run.returncode == 0 and run.stdout.strip() == "RecursionError", (run.returncode, run.stderr[-2000:])


@compiled_form
def test_cache_keys_only_what_the_label_reads_of_names_and_dict_keys():
    """Found by an attack on the label cache: a method name that is a ``str`` subclass with its own
    ``__str__`` (the label reads ``str(target)``, the key compared the names with ``==``: it took the label of
    ``add``) and a node of another graph as a dict key (the label reads ``str(key)``; building the key looked
    the node up in this graph and raised KeyError) are labelled by themselves, as the definition labels them."""

    class Name(str):
        def __str__(self):
            return "mul"

    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    a = g.call_method("add", (x, x))
    b = g.call_method(Name("add"), (x, x))
    other = fx.Graph().placeholder("y")
    c = g.call_function(torch.add, (x, {other: 1.0}))
    for n in (a, b, c):
        n.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((a, b, c))
    with C.python_only():
        want = _form_or_error(g)
    C.cform.clear_label_cache()
    assert _form_or_error(g) == want
    assert '"mul"' in want[2]


def _spelling_graph() -> fx.GraphModule:
    """Calls whose arguments bind through the ATen schemas in several spellings (explicit defaults,
    keywords, overloads, a memory format, a dtype, lists of ints and of nodes), the methods
    ``normalized_arguments`` leaves to its own rules (varargs, ``size``), Python operators and a
    method without a ``torch.<name>`` function."""
    g = fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    for p in (x, y):
        p.meta["example_value"] = torch.empty(2, 3, device="meta")
    calls = [
        ("call_function", torch.add, (x, y), {"alpha": 1}), ("call_function", torch.add, (x, y), {}),
        ("call_method", "clamp", (x, 0), {}), ("call_method", "clamp", (x,), {"min": 0}),
        ("call_function", torch.max, (x, 1), {}), ("call_function", torch.max, (x,), {"dim": 1}),
        ("call_method", "to", (x, torch.float16), {}), ("call_method", "to", (x,), {"dtype": torch.float16}),
        ("call_function", torch.arange, (8,), {}), ("call_function", torch.arange, (0, 8), {}),
        ("call_method", "view", (x, 3, 2), {}), ("call_method", "view", (x, (3, 2)), {}),
        ("call_method", "size", (x, 1), {}), ("call_method", "contiguous", (x,), {"memory_format": torch.channels_last}),
        ("call_function", torch.cat, ([x, y],), {"dim": 0}), ("call_function", torch.nn.functional.softmax, (x,), {"dim": -1}),
        ("call_function", operator.add, (x, y), {}), ("call_method", "type_as", (x, y), {}),
        ("call_function", torch.nn.functional.dropout, (x, 0.1), {"training": False}),
        ("call_function", torch.full, ((2, 3), -0.0), {}), ("call_method", "permute", (x, [1, 0]), {}),
    ]
    for op, target, args, kwargs in calls:
        n = g.create_node(op, target, args, kwargs)
        n.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((x,))
    return fx.GraphModule(torch.nn.Module(), g)


@compiled_form
def test_compiled_normalized_arguments_equals_the_definition():
    """``_cform.normalized_arguments`` (the compiled miss's copy of ``labels.normalized_arguments``) returns
    what the definition returns on every call node of the spelling graph and of 300 random graphs, whichever
    of the two fills the plan cache they share."""
    from passnet_common.canonical import labels as L

    rng = random.Random(11)
    graphs = [_spelling_graph()] + [_random_fx(rng) for _ in range(300)]
    bound = 0
    for gm in graphs:
        for n in gm.graph.nodes:
            L._plan_cache.clear()
            want = repr(L.normalized_arguments(n))
            got_after_py = repr(C.cform.normalized_arguments(n))
            L._plan_cache.clear()
            got = repr(C.cform.normalized_arguments(n))
            want_after_c = repr(L.normalized_arguments(n))
            assert got == want == got_after_py == want_after_c, n.format_node()
            bound += want != "None"
    assert bound > 300  # most calls bind to a schema


def _random_draws_graph() -> fx.GraphModule:
    """Calls whose random draws depend on their arguments (dropout in training and eval mode, SDPA with and
    without ``dropout_p``) and calls that always draw, with readers between them."""
    g = fx.Graph()
    q = g.placeholder("q")
    q.meta["example_value"] = torch.empty(1, 2, 4, 8, device="meta")
    F = torch.nn.functional
    calls = [(F.dropout, (q, 0.1), {"training": True}), (F.dropout, (q, 0.1), {"training": False}),
             (F.scaled_dot_product_attention, (q, q, q), {"dropout_p": 0.0, "scale": 0.5}),
             (F.scaled_dot_product_attention, (q, q, q), {"dropout_p": 0.25, "scale": -0.0}),
             (torch.rand_like, (q,), {}), (torch.bernoulli, (q,), {}), (torch.relu, (q,), {})]
    prev = q
    for target, args, kwargs in calls:
        n = g.call_function(target, args, kwargs)
        n.meta["example_value"] = torch.empty(1, 2, 4, 8, device="meta")
        r = g.call_function(torch.add, (n, prev))
        r.meta["example_value"] = torch.empty(1, 2, 4, 8, device="meta")
        prev = r
    g.output((prev,))
    return fx.GraphModule(torch.nn.Module(), g)


@compiled_form
def test_compiled_random_draws_read_the_definitions_cache_alike():
    """The compiled side-effect pass decides whether a call draws (``effects.draws_random``) through the
    definition's cache with ``_cform.lit_key``'s keys, which are the definition's ``_lit_key`` keys (equal,
    with the same hash, on every argument tuple and keyword dict of the graphs below): the ordering edges are
    the definition's with the cache emptied first, filled by the definition, and filled by the compiled pass."""
    rng = random.Random(3)
    graphs = [_random_draws_graph(), _spelling_graph()] + [_random_fx(rng) for _ in range(100)]
    for gm in graphs:
        for n in gm.graph.nodes:
            for v in (n.args, n.kwargs):
                want = Ef._lit_key(dict(v) if isinstance(v, dict) else v)
                assert C.cform.lit_key(v) == want
                try:
                    assert hash(C.cform.lit_key(v)) == hash(want)
                except TypeError:  # a slice: no key, as in the definition
                    pass
    gm = _random_draws_graph()
    nodes = list(gm.graph.nodes)
    index = {m: i for i, m in enumerate(nodes)}
    inputs = [[index[m] for m in n.all_input_nodes] for n in nodes]
    Ef._random_cache.clear()
    want = Ef.ordering_deps_py(nodes, inputs, gm, index)
    assert sum(1 for d in want[0] if d) >= 3  # the training dropout, the SDPA with dropout_p, rand_like, bernoulli
    assert C.cform.ordering_deps(nodes, inputs, gm, index) == want  # the cache filled by the definition
    Ef._random_cache.clear()
    assert C.cform.ordering_deps(nodes, inputs, gm, index) == want  # emptied: the compiled pass fills it
    assert Ef.ordering_deps_py(nodes, inputs, gm, index) == want


def _user_dropout(x, p=0.5):  # a Python function outside torch named like a seeded ATen op
    return x


class _EqualsUserDropout:
    """A callable that compares equal to (and hashes like) :func:`_user_dropout`."""

    __name__ = "dropout"

    def __call__(self, x, p=0.5):
        return x

    def __eq__(self, other):
        return other is _user_dropout or other is self

    def __hash__(self):
        return hash(_user_dropout)


@compiled_form
def test_compiled_random_draws_follow_the_definitions_steps_before_its_cache():
    """The compiled read of draws_random's cache comes after the definition's own early answers: a Python
    function outside torch is decided by its op's tag, never by a cache entry stored for a target that only
    compares equal to it (found by a helper's attack: the graph hashed otherwise)."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    for name, target in (("alias", _EqualsUserDropout()), ("rand", torch.rand_like), ("user", _user_dropout)):
        n = g.create_node("call_function", target, (x,), {}, name=name)
        n.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output(tuple(n for n in g.nodes if n.op == "call_function"))
    gm = fx.GraphModule(torch.nn.Module(), g)
    Ef._random_cache.clear()
    with C.python_only():
        want = canonicalize(gm, None, with_wl=False)
    Ef._random_cache.clear()
    got = canonicalize(gm, None, with_wl=False)
    assert (got.graph_hash, got.order) == (want.graph_hash, want.order)


@compiled_form
def test_compiled_normalized_arguments_reads_the_definitions_tables_live(monkeypatch):
    """A method added to ``labels.VARARGS_METHODS`` at run time is folded by both copies alike."""
    from passnet_common.canonical import labels as L

    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    n = g.call_method("broadcast_to", (x, 2, 3))
    n.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((n,))
    monkeypatch.setitem(L.VARARGS_METHODS, "broadcast_to", "size")
    want = L.normalized_arguments(n)
    assert want == [("input", x), ("size", (2, 3))]
    assert C.cform.normalized_arguments(n) == want


@compiled_form
def test_compiled_copies_hand_deep_nesting_to_the_definition():
    """An argument nested past the compiled copies' depth limit (``_DEPTH_MAX``; the C recursion has no
    interpreter check, a helper's attack crashed the process at 300,000 levels) is bound and keyed by the
    definition: the same form on both paths."""
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    deep: object = 1
    for _ in range(100):  # past _DEPTH_MAX (64), inside the parser's limit on nested brackets
        deep = [deep]
    n = g.call_function(torch.nn.functional.dropout, (x, 0.5, True))
    n.meta["example_value"] = torch.empty(2, 3, device="meta")
    m = g.call_function(torch.add, (n, x), {"alpha": 1})
    m._kwargs = {"alpha": 1, "out": None, "extra": deep}  # what FX's own argument walk would refuse to build
    m.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((m,))
    gm = fx.GraphModule(torch.nn.Module(), g)
    from passnet_common.canonical import labels as L

    with pytest.raises(Exception) as too_deep:
        C.cform.lit_key(m.kwargs)
    assert type(too_deep.value).__name__ == "_TooDeep"
    assert repr(C.cform.normalized_arguments(m)) == repr(L.normalized_arguments(m))
    with C.python_only():
        want = canonicalize(gm, None, with_wl=False)
    got = canonicalize(gm, None, with_wl=False)
    assert (got.graph_hash, got.text) == (want.graph_hash, want.text)


def _dropout_with_flag(flag: bool) -> fx.GraphModule:
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    b = g.placeholder("b")
    b.meta["example_value"] = flag
    r = g.call_function(torch.rand_like, (x,))
    r.meta["example_value"] = torch.empty(2, 3, device="meta")
    d = g.call_function(torch.nn.functional.dropout, (x, 0.5), {"training": b})
    d.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((d, r))
    return fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("python", [True, False])
def test_a_scalar_node_argument_keys_the_random_draw_by_its_value(python):
    """``F.dropout(x, 0.5, training=b)`` draws when ``b``'s recorded value is True and not when it is False;
    draws_random's cache keys ``b`` by that value, so which graph is hashed first changes neither hash (a
    helper's attack: both shared one entry, the first graph decided the other's ordering edges)."""
    on, off = _dropout_with_flag(True), _dropout_with_flag(False)

    def form(gm):
        with C.python_only() if python else contextlib.nullcontext():
            c = canonicalize(gm, None, with_wl=False)
        return c.graph_hash, c.order

    Ef._random_cache.clear()
    fresh_on = form(on)
    Ef._random_cache.clear()
    fresh_off = form(off)
    assert fresh_on != fresh_off  # the training dropout is ordered against rand_like, the eval one is not
    Ef._random_cache.clear()
    form(off)
    assert form(on) == fresh_on
    Ef._random_cache.clear()
    form(on)
    assert form(off) == fresh_off



@pytest.mark.parametrize("python", [True, False])
def test_hashing_a_symbolic_graph_does_not_guard_its_shape_env(python):
    """Lowering a random call to find its ATen ops reads a symbolic size by its hint, not by ``int()``: the
    caller's ShapeEnv is left unspecialised, and the graph's SymInt literal reads the same on the next hash (a
    helper's attack: the second hash differed)."""
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    s = env.create_symintnode(env.create_symbol(4, ConstantSource("s")), hint=4)
    with FakeTensorMode(shape_env=env):
        xv = torch.empty(s, 6)
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = xv
    d = g.call_function(torch.nn.functional.dropout, (x, 0.5, True))
    d.meta["example_value"] = xv
    v = g.call_method("view", (d, s, 6))
    v.meta["example_value"] = xv
    g.output((v,))
    gm = fx.GraphModule(torch.nn.Module(), g)
    hashes = []
    for _ in range(2):
        Ef._random_cache.clear()
        with C.python_only() if python else contextlib.nullcontext():
            hashes.append(canonicalize(gm, None, with_wl=False).graph_hash)
    assert hashes[0] == hashes[1]
    assert not env.replacements and not env.guards
