"""The metamorphic generator (tests/canonical_metamorphic.py) on a seeded slice: 1,000 random
programs, each rewritten (another valid order, other spellings: must hash equal) and mutated
(a literal's sign, two random draws swapped, a read moved across an in-place write, a buffer's
values: must hash apart when the eager outputs differ). A longer run is
``python -m benchmarks.bench_hash_metamorphic``."""

from __future__ import annotations

import warnings

import torch

from tests.canonical_metamorphic import Stmt, build, dependencies, mutated, program, run, same_outputs


def test_thousand_seeded_programs_no_false_merge_no_false_split():
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    r = run(range(1000))
    assert r["programs"] == 1000
    assert r["oracle_faults"] == []  # every rewrite kept the eager outputs bit for bit
    assert r["false_splits"] == [] and r["false_merges"] == []
    # every kind of mutation was tried often enough for the count to mean something
    assert set(r["mutations"]) == {"literal sign", "random order", "read across a write", "buffer value"}
    assert min(r["mutations"].values()) >= 20


def test_oracle_sees_what_the_mutations_change():
    """The eager oracle itself: a sign flip of 0.0 is seen (bits, not ==), swapped draws are seen."""
    prog = [Stmt("scale", "mul", ("i0",), 0.0), Stmt("random", "rand_like", ("i0",)), Stmt("random", "randn_like", ("i1",))]
    ref = build(prog, [0, 1, 2])
    flipped = build([Stmt("scale", "mul", ("i0",), -0.0), *prog[1:]], [0, 1, 2])
    swapped = build(prog, [0, 2, 1])
    assert same_outputs(ref.outputs, build(prog, [0, 1, 2], [1, 1, 1]).outputs)
    assert not same_outputs(ref.outputs, flipped.outputs)
    assert not same_outputs(ref.outputs, swapped.outputs)
    assert (1, 2) in dependencies(prog)  # two draws are ordered
    assert all(m is None or m[0] in ("literal sign", "random order", "read across a write", "buffer value")
               for m in (mutated(program(s), s) for s in range(20)))
