"""Canonical form: invariance to names, module paths and recording order; sensitivity to
ops, wiring, argument order, literals, shapes and dtypes."""

from __future__ import annotations

import operator
import random

import pytest
import torch
import torch.fx as fx
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.fx.passes.shape_prop import ShapeProp

from passnet_common.canonical import canonicalize


def _graph(build, shapes=((2, 3), (2, 3))) -> fx.GraphModule:
    """A GraphModule from ``build(graph, x, y)`` with shapes propagated from random inputs."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    g.output(build(g, x, y))
    gm = fx.GraphModule(torch.nn.Module(), g)
    ShapeProp(gm).propagate(*[torch.randn(s) for s in shapes])
    return gm


def _h(gm):
    return canonicalize(gm).graph_hash


def test_hash_is_invariant_to_node_and_placeholder_names():
    a = _graph(lambda g, x, y: g.call_function(torch.relu, (g.call_function(operator.add, (x, y)),)))
    b = _graph(lambda g, x, y: g.call_function(torch.relu, (g.call_function(operator.add, (x, y)),)))
    for i, n in enumerate(b.graph.nodes):
        n.name = f"renamed_{i}"
    b.recompile()
    assert "renamed_0" in b.code
    assert _h(a) == _h(b)


def test_hash_is_invariant_to_module_paths_of_dynamo_graphs():
    """Same network under different attribute names (module paths) -> one graph_hash."""
    from extract.capture import dynamo_capture

    class A(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

        def forward(self, x):
            return self.encoder(x).softmax(-1)

    class B(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.completely_different_path = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

        def forward(self, x):
            return self.completely_different_path(x).softmax(-1)

    ga = dynamo_capture(A(), (torch.randn(2, 8),))
    gb = dynamo_capture(B(), (torch.randn(2, 8),))
    assert len(ga) == len(gb) == 1
    names_a = [n.name for n in ga[0].gm.graph.nodes if n.op == "placeholder"]
    names_b = [n.name for n in gb[0].gm.graph.nodes if n.op == "placeholder"]
    assert names_a != names_b  # Dynamo names carry the module path...
    ca, cb = canonicalize(ga[0].gm, ga[0].kinds), canonicalize(gb[0].gm, gb[0].kinds)
    assert ca.graph_hash == cb.graph_hash  # ...the canonical form does not
    assert [n["kind"] for n in ca.nodes if n["op"] == "placeholder"] == ["parameter", "parameter", "parameter", "parameter", "input"] or \
        sorted(n["kind"] for n in ca.nodes if n["op"] == "placeholder") == ["input", "parameter", "parameter", "parameter", "parameter"]


def test_hash_is_invariant_to_recording_order_of_independent_nodes():
    def build_ab(g, x, y):
        a = g.call_function(torch.sin, (x,))
        b = g.call_function(torch.cos, (y,))
        return g.call_function(operator.mul, (a, b))

    def build_ba(g, x, y):
        b = g.call_function(torch.cos, (y,))
        a = g.call_function(torch.sin, (x,))
        return g.call_function(operator.mul, (a, b))

    ga, gb = _graph(build_ab), _graph(build_ba)
    assert [n.target for n in ga.graph.nodes][2:4] != [n.target for n in gb.graph.nodes][2:4]
    assert _h(ga) == _h(gb)


@pytest.mark.parametrize(
    "variant",
    ["op", "swap_args", "literal", "shape", "dtype", "wiring"],
)
def test_hash_changes_with_any_semantic_change(variant):
    # y goes through neg first: swapping the arguments of sub is then not just a renaming of
    # the two (interchangeable) placeholders, which the canonical placeholder order absorbs.
    def base(g, x, y):
        s = g.call_function(torch.sub, (x, g.call_function(torch.neg, (y,))))
        return g.call_function(torch.softmax, (s,), {"dim": 1})

    def neg(g, v):
        return g.call_function(torch.neg, (v,))

    builds = {
        "op": lambda g, x, y: g.call_function(torch.softmax, (g.call_function(torch.add, (x, neg(g, y))),), {"dim": 1}),
        "swap_args": lambda g, x, y: g.call_function(torch.softmax, (g.call_function(torch.sub, (neg(g, y), x)),), {"dim": 1}),
        "literal": lambda g, x, y: g.call_function(torch.softmax, (g.call_function(torch.sub, (x, neg(g, y))),), {"dim": 0}),
        "wiring": lambda g, x, y: g.call_function(torch.softmax, (g.call_function(torch.sub, (x, neg(g, x))),), {"dim": 1}),
    }
    ref = _graph(base)
    if variant == "shape":
        other = _graph(base, shapes=((2, 4), (2, 4)))
    elif variant == "dtype":
        g = fx.Graph()
        x, y = g.placeholder("x"), g.placeholder("y")
        g.output(base(g, x, y))
        other = fx.GraphModule(torch.nn.Module(), g)
        ShapeProp(other).propagate(torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64))
    else:
        other = _graph(builds[variant])
    assert _h(ref) != _h(other)


def test_structure_hash_abstracts_sizes_but_not_ops():
    """One family at two widths: graph_hash differs, structure_hash equal; an op change
    changes both."""

    def net(width):
        return torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width))

    from extract.capture import dynamo_capture

    def canon(width, act=None):
        m = net(width)
        if act is not None:
            m[1] = act
        g = dynamo_capture(m, (torch.randn(3, width),))[0]
        return canonicalize(g.gm, g.kinds)

    small, large, relu = canon(16), canon(64), canon(16, torch.nn.ReLU())
    assert small.graph_hash != large.graph_hash
    assert small.structure_hash == large.structure_hash
    assert small.structure_hash != relu.structure_hash
    assert small.wl_hash == large.wl_hash


def test_side_effect_nodes_are_ordering_barriers():
    """An in-place op between two reads: moving a read across it changes the hash."""

    def before(g, x, y):
        r = g.call_function(torch.relu, (x,))
        g.call_method("add_", (x, y))
        return g.call_function(operator.add, (r, x))

    def after(g, x, y):
        g.call_method("add_", (x, y))
        r = g.call_function(torch.relu, (x,))
        return g.call_function(operator.add, (r, x))

    assert _h(_graph(before)) != _h(_graph(after))


# --- property-based: random DAGs, random renames and random valid re-orderings ---------

UNARY = [torch.relu, torch.sin, torch.tanh, torch.neg]
BINARY = [operator.add, operator.mul, torch.sub, torch.maximum]


@st.composite
def dags(draw):
    n = draw(st.integers(min_value=1, max_value=14))
    ops = []
    for i in range(n):
        avail = i + 2  # two placeholders
        if draw(st.booleans()):
            ops.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, avail - 1))))
        else:
            ops.append(("b", draw(st.integers(0, len(BINARY) - 1)), draw(st.integers(0, avail - 1)), draw(st.integers(0, avail - 1))))
    seed = draw(st.integers(0, 2**31 - 1))
    return ops, seed


def _build_dag(ops, order_seed=None, rename=False):
    """Build the DAG; ``order_seed`` picks a random topological recording order."""
    n = len(ops)
    deps = [[a for a in op[2:]] for op in ops]  # values < 2 are placeholders, else node i-2
    order = list(range(n))
    if order_seed is not None:
        rng = random.Random(order_seed)
        done, order = set(), []
        while len(order) < n:
            ready = [i for i in range(n) if i not in done and all(d < 2 or (d - 2) in done for d in deps[i])]
            i = rng.choice(ready)
            done.add(i)
            order.append(i)
    g = fx.Graph()
    vals = [g.placeholder("p" if not rename else "q_input_0"), g.placeholder("p1" if not rename else "zz")]
    made = {}
    for i in order:
        op = ops[i]
        args = tuple(vals[a] if a < 2 else made[a - 2] for a in op[2:])
        fn = UNARY[op[1]] if op[0] == "u" else BINARY[op[1]]
        made[i] = g.call_function(fn, args)
        if rename:
            made[i].name = f"renamed_{len(made)}_{i}"
    g.output(tuple(made[i] for i in range(n)))
    gm = fx.GraphModule(torch.nn.Module(), g)
    ShapeProp(gm).propagate(torch.randn(3), torch.randn(3))
    return gm


@settings(max_examples=60, deadline=None)
@given(dags())
def test_property_hash_invariant_to_order_and_names(dag):
    ops, seed = dag
    ref = canonicalize(_build_dag(ops), with_wl=False).graph_hash
    assert canonicalize(_build_dag(ops, order_seed=seed, rename=True), with_wl=False).graph_hash == ref


@settings(max_examples=60, deadline=None)
@given(dags(), st.data())
def test_property_hash_sensitive_to_one_op_change(dag, data):
    ops, _ = dag
    i = data.draw(st.integers(0, len(ops) - 1))
    op = list(ops[i])
    pool = UNARY if op[0] == "u" else BINARY
    op[1] = (op[1] + data.draw(st.integers(1, len(pool) - 1))) % len(pool)
    changed = list(ops)
    changed[i] = tuple(op)
    assert canonicalize(_build_dag(ops), with_wl=False).graph_hash != canonicalize(_build_dag(changed), with_wl=False).graph_hash


# --- dead nodes under a placeholder permutation plus a reorder ------------------------------

def _dead_case(seed: int):
    """A seeded random DAG over 3 placeholders whose output returns a random subset of its
    nodes (the others are dead), a permutation of the placeholders' calling order and an
    order seed."""
    rng = random.Random(seed)
    ops = []
    for i in range(rng.randint(2, 12)):
        avail = i + 3
        if rng.random() < 0.5:
            ops.append(("u", rng.randrange(len(UNARY)), rng.randrange(avail)))
        else:
            ops.append(("b", rng.randrange(len(BINARY)), rng.randrange(avail), rng.randrange(avail)))
    outs = sorted(rng.sample(range(len(ops)), rng.randint(1, len(ops))))
    perm = [0, 1, 2]
    rng.shuffle(perm)
    return ops, outs, perm, rng.randrange(2**31)


def _build_dead(ops, outs, perm, order_seed=None):
    n = len(ops)
    order = list(range(n))
    if order_seed is not None:
        rng = random.Random(order_seed)
        done, order = set(), []
        while len(order) < n:
            ready = [i for i in range(n) if i not in done and all(d < 3 or (d - 3) in done for d in ops[i][2:])]
            i = rng.choice(ready)
            done.add(i)
            order.append(i)
    g = fx.Graph()
    phs = [None] * 3
    for k in perm:  # calling position of input k: its index in perm (a renaming of the inputs)
        phs[k] = g.placeholder(f"p{k}")
    made = {}
    for i in order:
        op = ops[i]
        made[i] = g.call_function(UNARY[op[1]] if op[0] == "u" else BINARY[op[1]],
                                  tuple(phs[a] if a < 3 else made[a - 3] for a in op[2:]))
    g.output(tuple(made[i] for i in outs))
    gm = fx.GraphModule(torch.nn.Module(), g)
    ShapeProp(gm).propagate(*[torch.randn(3) for _ in range(3)])
    return gm


@pytest.mark.parametrize("block", range(3))
def test_property_dead_nodes_take_a_canonical_place(block):
    """Dead nodes (computed, never used) are placed canonically: a placeholder permutation
    plus another recording order leaves graph_hash unchanged, on 300 seeded random DAGs
    (13 of 300 split when dead nodes kept their recording order; with canonical
    version 2 this generator splits 5 of these 300)."""
    split = []
    for seed in range(100 * block, 100 * block + 100):
        ops, outs, perm, order_seed = _dead_case(seed)
        ref = canonicalize(_build_dead(ops, outs, [0, 1, 2]), with_wl=False).graph_hash
        if canonicalize(_build_dead(ops, outs, perm, order_seed=order_seed), with_wl=False).graph_hash != ref:
            split.append(seed)
    assert split == []
