"""The labelled corpus (tests/canonical_corpus.py) and property tests that
generate programs with in-place ops, control flow and random recording orders *through
Dynamo* (not only re-orderings of one FX graph)."""

from __future__ import annotations

import os
import random
import tempfile

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from passnet_common.canonical import canonicalize
from tests.canonical_corpus import Pair, _structure_pairs, corpus, evaluate, verdict

FAST = corpus(with_transformers=False)
HF_PAIRS = [p for p in _structure_pairs(True) if p.kind in ("structure: width sweep", "structure: depth")]


def _check(pair: Pair):
    equal, ha, hb = verdict(pair)
    if pair.accepted_split:
        assert not equal, f"{pair.name}: documented as a split; update the module docstring if it now merges"
    elif pair.accepted_merge:
        assert equal, f"{pair.name}: documented as a merge; update the module docstring if it now splits"
    elif pair.label == "same":
        assert equal, f"false split ({pair.level}): {pair.name}"
    else:
        assert not equal, f"false merge ({pair.level}): {pair.name}"


@pytest.mark.parametrize("pair", FAST, ids=[p.name for p in FAST])
def test_corpus_pair_has_the_right_verdict(pair):
    _check(pair)


@pytest.mark.slow
@pytest.mark.parametrize("pair", HF_PAIRS, ids=[p.name for p in HF_PAIRS])
def test_structure_hash_on_width_sweeps_of_real_architectures(pair):
    """Llama / Qwen2 / ViT tiny configs at two widths (same depth) share a structure hash;
    another depth does not."""
    _check(pair)


def test_corpus_counts_helper_reports_failures():
    """The counting helper itself: a wrong label is reported as a false merge / split."""
    good = [p for p in FAST if p.name == "torch.cond sin/cos vs exp/neg"][0]
    same = [p for p in FAST if p.name == "torch.softmax(x, 1) vs torch.softmax(x, dim=1)"][0]
    flipped = [Pair(good.name, good.kind, "same", good.a, good.b), Pair(same.name, same.kind, "different", same.a, same.b)]
    r = evaluate(flipped)
    assert r["false_splits"] == [good.name] and r["false_merges"] == [same.name]


# --- property tests through Dynamo ------------------------------------------------------

UNARY = [torch.sin, torch.cos, torch.tanh, torch.neg]
BINARY = [torch.add, torch.mul, torch.sub]


def _alias_iadd(t):
    z = t
    z += 1.5


INPLACE = [lambda t: F.relu(t, inplace=True), lambda t: t.mul_(-2.0), _alias_iadd, lambda t: t.sigmoid_(),
           lambda t: F.hardtanh(t, -0.3, 0.3, inplace=True),
           # positional inplace flags and a written Tensor(a!)[] list
           lambda t: F.relu(t, True), lambda t: F.leaky_relu(t, 0.2, True), lambda t: F.hardtanh(t, -0.3, 0.3, True),
           lambda t: torch._foreach_mul_([t], -2.0)]


@st.composite
def programs(draw):
    """Statements over slots (0, 1: inputs x, y; statement i defines slot i + 2 unless it is
    a mutation): unary / binary ops, in-place mutations of earlier intermediates, torch.cond."""
    n = draw(st.integers(2, 9))
    stmts = []
    defined = [0, 1]
    for i in range(n):
        kind = draw(st.sampled_from(["u", "u", "b", "b", "m", "m", "c"]))
        inter = [s for s in defined if s >= 2]
        if kind == "m" and inter:
            stmts.append(("m", draw(st.integers(0, len(INPLACE) - 1)), draw(st.sampled_from(inter))))
            continue
        if kind == "c":
            stmts.append(("c", 0, draw(st.sampled_from(defined))))
        elif kind == "b":
            stmts.append(("b", draw(st.integers(0, len(BINARY) - 1)), draw(st.sampled_from(defined)), draw(st.sampled_from(defined))))
        else:
            stmts.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.sampled_from(defined))))
        defined.append(i + 2)
    return stmts


def _constraints(stmts):
    """Edges (before, after) every semantics-preserving recording order must keep: data
    edges, and the recorded order of a mutation against every statement touching its slot."""
    edges = set()
    for i, s in enumerate(stmts):
        for src in s[2:]:
            if src >= 2:
                edges.add((src - 2, i))
    for i, s in enumerate(stmts):
        if s[0] != "m":
            continue
        for j, t in enumerate(stmts):
            if j != i and s[2] in t[2:]:
                edges.add((min(i, j), max(i, j)))
    return edges


def _random_order(n, edges, seed):
    rng = random.Random(seed)
    done, order = set(), []
    while len(order) < n:
        ready = [i for i in range(n) if i not in done and all(a in done for a, b in edges if b == i)]
        if not ready:
            return None  # the constraints have a cycle
        i = rng.choice(ready)
        done.add(i)
        order.append(i)
    return order


class Program(torch.nn.Module):
    """Runs ``stmts`` in ``order``; returns every defined slot."""

    def __init__(self, stmts, order):
        super().__init__()
        self.stmts, self.order = stmts, order

    def forward(self, x, y):
        slots = {0: x, 1: y}
        for i in self.order:
            kind, f, *src = self.stmts[i]
            if kind == "u":
                slots[i + 2] = UNARY[f](slots[src[0]])
            elif kind == "b":
                slots[i + 2] = BINARY[f](slots[src[0]], slots[src[1]])
            elif kind == "c":
                v = slots[src[0]]
                slots[i + 2] = torch.cond(v.sum() > 0, lambda t: t.sin(), lambda t: t.cos() * 2, (v,))
            else:
                INPLACE[f](slots[src[0]])
        return tuple(slots[k] for k in sorted(slots) if k >= 2)


XY = (torch.randn(3, 4, generator=torch.Generator().manual_seed(1)), torch.randn(3, 4, generator=torch.Generator().manual_seed(2)))


def _capture(stmts, order):
    from extract.capture import dynamo_capture

    gs = dynamo_capture(Program(stmts, order), XY)
    assert len(gs) == 1
    return gs[0]


def _eager(stmts, order):
    with torch.no_grad():
        return Program(stmts, order)(*[t.clone() for t in XY])


# More examples: PASSNET_PROPERTY_EXAMPLES=50 (each example compiles two programs with Dynamo).
N_EXAMPLES = int(os.environ.get("PASSNET_PROPERTY_EXAMPLES", "6"))
PROP = settings(max_examples=N_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(programs(), st.integers(0, 2**31 - 1))
def test_property_dynamo_recording_order_does_not_change_the_hash(stmts, seed):
    """Same program, another semantics-preserving statement order (mutations keep their
    place against the statements touching their tensor): one graph_hash."""
    order = _random_order(len(stmts), _constraints(stmts), seed)
    ga, gb = _capture(stmts, list(range(len(stmts)))), _capture(stmts, order)
    assert canonicalize(ga.gm, ga.kinds, with_wl=False).graph_hash == canonicalize(gb.gm, gb.kinds, with_wl=False).graph_hash


@PROP
@given(programs(), st.integers(0, 2**31 - 1), st.data())
def test_property_moving_a_read_across_a_mutation_changes_the_hash(stmts, seed, data):
    """Flip the order of one mutation and one statement touching the same tensor: when eager
    results differ, the graph hashes must differ (no false merge)."""
    edges = _constraints(stmts)
    flips = [(a, b) for a, b in edges if "m" in (stmts[a][0], stmts[b][0]) and
             not any(src >= 2 and src - 2 == a for src in stmts[b][2:])]
    assume(flips)
    a, b = data.draw(st.sampled_from(sorted(flips)))
    order = _random_order(len(stmts), (edges - {(a, b)}) | {(b, a)}, seed)
    assume(order is not None)
    ref = list(range(len(stmts)))
    ea, eb = _eager(stmts, ref), _eager(stmts, order)
    differs = any(not torch.equal(u, v) for u, v in zip(ea, eb))
    ga, gb = _capture(stmts, ref), _capture(stmts, order)
    ha = canonicalize(ga.gm, ga.kinds, with_wl=False).graph_hash
    hb = canonicalize(gb.gm, gb.kinds, with_wl=False).graph_hash
    if differs:
        assert ha != hb


@settings(max_examples=max(1, N_EXAMPLES - 1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_property_stored_graph_replays_eager(stmts):
    """Capture -> store -> load_graph -> run on the captured inputs == eager result, for
    programs with in-place ops and torch.cond."""
    from passnet_common.record import describe_graph
    from passnet_common.store import load_graph, store_path, write_graph

    order = list(range(len(stmts)))
    g = _capture(stmts, order)
    rec = describe_graph(0, g, with_stats=True)
    with tempfile.TemporaryDirectory() as tmp:
        write_graph(tmp, rec)
        gm, _ = load_graph(store_path(tmp, rec["graph_hash"]))
        with torch.no_grad():
            got = gm(*[t.clone() for t in g.example_inputs])
    ref = _eager(stmts, order)
    got = [t for t in (got if isinstance(got, (tuple, list)) else [got])]
    assert len(got) == len(ref)
    for u, v in zip(got, ref):
        torch.testing.assert_close(u, v, rtol=0, atol=0)


def test_hashes_are_equal_across_processes_with_different_hash_seeds():
    """The order's tie-breaks use Python's tuple hash of ints (not randomised) and blake2b
    label ids: two interpreters with different PYTHONHASHSEED give the same hashes."""
    import os
    import subprocess
    import sys

    code = ("from tests.canonical_corpus import corpus\n"
            "from passnet_common.canonical import canonicalize\n"
            "p = [p for p in corpus(False) if p.name.startswith('read before vs after aten.add.out')][0]\n"
            "q = [p for p in corpus(False) if p.name.startswith('output-node metadata')][0]\n"
            "print(*[canonicalize(*x.a()).graph_hash + canonicalize(*x.a()).structure_hash for x in (p, q)])\n")
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                           cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert r.returncode == 0, r.stderr[-2000:]
        outs.add(r.stdout.strip())
    assert len(outs) == 1 and len(next(iter(outs))) == 2 * 128 + 1


# --- property test through torch.fx.symbolic_trace: call_module mutations -----------------

class TracedProgram(torch.nn.Module):
    """:class:`Program` without torch.cond, its mutations made by ``call_module`` leaves
    (``nn.ReLU(inplace=True)``, ``nn.Hardtanh(inplace=True)``) or by ``F.relu(t, True)``."""

    def __init__(self, stmts, order):
        super().__init__()
        self.stmts, self.order = stmts, order
        self.act0 = torch.nn.ReLU(inplace=True)
        self.act1 = torch.nn.Hardtanh(-0.3, 0.3, inplace=True)

    def forward(self, x, y):
        slots = {0: x, 1: y}
        for i in self.order:
            kind, f, *src = self.stmts[i]
            if kind == "u" or kind == "c":
                slots[i + 2] = UNARY[f](slots[src[0]])
            elif kind == "b":
                slots[i + 2] = BINARY[f](slots[src[0]], slots[src[1]])
            elif f % 3 == 0:
                self.act0(slots[src[0]])
            elif f % 3 == 1:
                self.act1(slots[src[0]])
            else:
                F.relu(slots[src[0]], True)
        return tuple(slots[k] for k in sorted(slots) if k >= 2)


@settings(max_examples=max(10, 3 * N_EXAMPLES), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31 - 1), st.data())
def test_property_symbolic_trace_call_module_mutations_order_their_readers(stmts, seed, data):
    """symbolic_trace graphs: another valid order -> one graph_hash; flipping a mutation and
    a statement touching its tensor, when the eager results differ -> two graph_hashes."""
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp

    def canon(order):
        gm = symbolic_trace(TracedProgram(stmts, order))
        ShapeProp(gm).propagate(*[t.clone() for t in XY])
        return canonicalize(gm, with_wl=False).graph_hash

    def eager(order):
        with torch.no_grad():
            return TracedProgram(stmts, order)(*[t.clone() for t in XY])

    edges = _constraints(stmts)
    ref = list(range(len(stmts)))
    assert canon(_random_order(len(stmts), edges, seed)) == canon(ref)
    flips = [(a, b) for a, b in edges if "m" in (stmts[a][0], stmts[b][0]) and
             not any(src >= 2 and src - 2 == a for src in stmts[b][2:])]
    if flips:
        a, b = data.draw(st.sampled_from(sorted(flips)))
        order = _random_order(len(stmts), (edges - {(a, b)}) | {(b, a)}, seed)
        if order is not None and any(not torch.equal(u, v) for u, v in zip(eager(ref), eager(order))):
            assert canon(order) != canon(ref)


@pytest.mark.xfail(strict=True, reason="known false split (also in canonical v2): torch.cond, an in-place relu "
                   "of its result and repeated identical reads sin(x); another valid statement order gives "
                   "another graph_hash. Found by the property test above; not fixed yet.")
def test_known_false_split_cond_mutation_and_repeated_reads():
    stmts = [("u", 0, 0), ("c", 0, 0), ("u", 0, 0), ("m", 0, 3), ("u", 0, 0), ("u", 0, 0)]
    order = _random_order(len(stmts), _constraints(stmts), 0)
    ga, gb = _capture(stmts, list(range(len(stmts)))), _capture(stmts, order)
    assert canonicalize(ga.gm, ga.kinds, with_wl=False).graph_hash == canonicalize(gb.gm, gb.kinds, with_wl=False).graph_hash
