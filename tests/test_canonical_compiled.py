"""The compiled Merkle hashes and canonical order (:mod:`passnet_common.canonical._cmerkle`, built
by ``pip install -e .`` when Cython and a C compiler are there) return exactly what the Python
loops return (:func:`~passnet_common.canonical.order.merkle_py`,
:func:`~passnet_common.canonical.order.canonical_order`), on seeded random DAGs with ordering
edges, repeated inputs, tied keys and both placeholder conventions; and the form falls back to
the Python loops, with the same hashes, when the module is absent. The whole-graph identity
(every hash and stored byte against the recorded values) is ``tests/test_canonical_identity.py``,
which runs on whichever path is installed."""

from __future__ import annotations

import random

import pytest

from benchmarks.bench_hash import synthetic_chain
from passnet_common.canonical import canonicalize, graph_hashes
from passnet_common.canonical import order as O

compiled = pytest.mark.skipif(O._c_merkle is None or O._c_order is None,
                              reason="the optional extension passnet_common.canonical._cmerkle is not built")


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
        assert O.merkle(ids, inputs, extra) == O.merkle_py(ids, inputs, extra)


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


def test_python_fallback_gives_the_same_form(monkeypatch):
    """With the compiled module switched off the form is the same, byte for byte (the path a
    machine without a compiler takes)."""
    gm = synthetic_chain(1_000)
    a = canonicalize(gm, with_wl=False)
    ha = graph_hashes(gm)
    monkeypatch.setattr(O, "_c_merkle", None)
    monkeypatch.setattr(O, "_c_order", None)
    b = canonicalize(gm, with_wl=False)
    assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order, a.placeholder_order) == \
        (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order, b.placeholder_order)
    assert graph_hashes(gm) == ha == (a.graph_hash, a.structure_hash)
