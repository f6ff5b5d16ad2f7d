"""Values in the canonical form: literals compared by their bits (also by the label cache),
small buffers by their bytes (the ``rope_theta`` pair), random calls found through the ops they
lower to, aliases read from example values."""

from __future__ import annotations

import math
import operator
import random
import struct
import warnings

import torch
import torch.fx as fx
import torch.nn.functional as F

from passnet_common.canonical import canonicalize
from passnet_common.canonical import labels as L
from passnet_common.canonical.compiled import python_only
from passnet_common.canonical.effects import aliased_inputs, draws_random
from passnet_common.canonical.form import _labels, labels_plain


def _nan(payload: int, sign: int = 0) -> float:
    return struct.unpack(">d", struct.pack(">Q", (sign << 63) | 0x7FF8000000000000 | payload))[0]


LITERALS = [0.0, -0.0, 1.0, -1.0, 1, True, False, 0, _nan(0), _nan(1), _nan(5, 1), math.inf, -math.inf, 2.5, 1e-300,
            -1e-300, 5e-324]


def _literal_graph(seed: int) -> fx.GraphModule:
    """A graph of many calls whose only differences are literals (so that the label cache is hit
    across them), in nested lists and keyword arguments too."""
    rng = random.Random(seed)
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    t = torch.empty(2, 3, device="meta")
    outs = []
    for _ in range(40):
        lit = rng.choice(LITERALS)
        form = rng.randrange(5)
        if form == 0:
            n = g.call_function(torch.mul, (x, lit))
        elif form == 1:
            n = g.call_function(torch.full, ((2, 3), lit))
        elif form == 2:
            n = g.call_function(torch.add, (x, x), {"alpha": lit})
        elif form == 3:
            n = g.call_function(torch.clamp, (x, [lit][0], (rng.choice(LITERALS),)[0]))
        else:
            n = g.call_function(operator.mul, (x, lit))
        n.meta["example_value"] = t
        outs.append(n)
    g.output(tuple(outs))
    return fx.GraphModule(torch.nn.Module(), g)


def test_label_cache_equals_the_plain_definition_on_literal_heavy_graphs():
    """Property: on 60 graphs of calls differing only in literals (``0.0`` / ``-0.0``, NaNs with
    other payloads and signs, ``1`` / ``True`` / ``1.0``, infinities, subnormals), the label pass
    with its cache (the compiled path, where built) gives exactly the plain definition's labels,
    every node labelled by itself; so does the whole form."""
    for seed in range(60):
        gm = _literal_graph(seed)
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        want = labels_plain(nodes, gm, None, False, index)[:3]
        assert _labels(nodes, gm, None, False, index)[:3] == want, seed
        a = canonicalize(gm, with_wl=False)
        with python_only():
            b = canonicalize(gm, with_wl=False)
        assert (a.graph_hash, a.text, a.nodes) == (b.graph_hash, b.text, b.nodes), seed


def test_literals_by_bits():
    """``x * 0.0`` vs ``x * -0.0``, NaNs of two payloads, ``1`` vs ``True`` vs ``1.0``: apart."""
    def one(lit):
        g = fx.Graph()
        x = g.placeholder("x")
        x.meta["example_value"] = torch.empty(3)
        n = g.call_function(torch.mul, (x, lit))
        n.meta["example_value"] = torch.empty(3)
        g.output((n,))
        return canonicalize(fx.GraphModule(torch.nn.Module(), g), with_wl=False).graph_hash

    hashes = [one(v) for v in (0.0, -0.0, _nan(0), _nan(1), _nan(1, 1), 1, True, 1.0)]
    assert len(set(hashes)) == len(hashes)
    assert one(_nan(1)) == one(_nan(1))  # the same bits: one hash


def _llama(theta: float):
    import transformers

    from extract.capture import dynamo_capture
    from tests.canonical_corpus import LLAMA

    cfg = transformers.LlamaConfig(**{k: v for k, v in LLAMA.items() if k not in ("model_type", "architectures")},
                                   rope_theta=theta)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    (g,) = dynamo_capture(model, (torch.zeros(1, 8, dtype=torch.long),), account=False)
    return g


def test_rope_theta_buffer_values_enter_the_hash():
    """Llama with ``rope_theta`` 10000 vs 500000: Dynamo lifts ``inv_freq`` (a buffer computed
    from the config) to a placeholder; given the captured values it is digested like a small
    constant, so the two hash apart, and the same theta twice hashes equal. Without values
    (a graph rebuilt from the store) buffers enter by shape and dtype only."""
    warnings.simplefilter("ignore")
    a, a2, b = _llama(10000.0), _llama(10000.0), _llama(500000.0)
    assert "buffer" in a.kinds

    def h(g, values=True):
        return canonicalize(g.gm, g.kinds, with_wl=False,
                            placeholder_values=g.example_inputs if values else None).graph_hash

    assert h(a) != h(b)
    assert h(a) == h(a2)
    assert h(a, False) == h(b, False)
    # the structure hash never holds values
    sa = canonicalize(a.gm, a.kinds, with_wl=False, placeholder_values=a.example_inputs).structure_hash
    sb = canonicalize(b.gm, b.kinds, with_wl=False, placeholder_values=b.example_inputs).structure_hash
    assert sa == sb


def _call(fn, args, kwargs, val_in, val_out):
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = val_in
    n = g.call_function(fn, (x, *args), kwargs)
    n.meta["example_value"] = val_out
    return n, x


def test_random_calls_found_through_the_ops_they_lower_to():
    """``F.dropout`` draws only with ``training=True`` (lowered on meta: ``bernoulli_`` carries ATen's
    ``nondeterministic_seeded`` tag); ``scaled_dot_product_attention``, whose op carries the tag for
    every call, only with ``dropout_p`` > 0; ``bernoulli`` always; ``relu`` never."""
    t = torch.randn(3, 4)
    assert draws_random(_call(F.dropout, (0.5, True), {}, t, t.clone())[0])
    assert not draws_random(_call(F.dropout, (0.5,), {"training": False}, t, t)[0])
    g = fx.Graph()
    q = g.placeholder("q")
    q.meta["example_value"] = torch.randn(1, 2, 4, 8)
    sdpa = []
    for p in (0.0, 0.1):
        n = g.call_function(F.scaled_dot_product_attention, (q, q, q), {"dropout_p": p})
        n.meta["example_value"] = torch.randn(1, 2, 4, 8)
        sdpa.append(n)
    assert not draws_random(sdpa[0]) and draws_random(sdpa[1])
    assert draws_random(_call(torch.bernoulli, (), {}, t, t.clone())[0])
    assert not draws_random(_call(torch.relu, (), {}, t, t.clone())[0])


def test_aliases_read_from_example_values():
    """A call returning its input itself aliases it; a fresh result does not; ``a.add_(b)`` aliases
    ``a`` only."""
    t = torch.randn(3, 4)
    n, x = _call(F.dropout, (0.5, False), {}, t, t)
    assert aliased_inputs(n, False) == [x]
    n, x = _call(torch.sin, (), {}, t, t.sin())
    assert aliased_inputs(n, True) == []
    g = fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    ta, tb = torch.randn(3), torch.randn(3)
    a.meta["example_value"], b.meta["example_value"] = ta, tb
    w = g.call_method("add_", (a, b))
    w.meta["example_value"] = ta
    assert aliased_inputs(w, True) == [a]


def test_decomposition_memo_keeps_literals_apart():
    """Literal-only calls whose ATen decomposition makes them another overload's call
    (``arange(8)`` as ``arange.start_step(0, 8, 1)``) are decomposed once per overload, literal
    values (floats by their bits, ints, bools and dtypes apart) and default dtype: every spelling
    gives what an unmemoised decomposition gives, on its first and on a repeated call, and a
    graph of ``arange(-0.0)`` stays apart from one of ``arange(0.0)`` whichever is
    hashed first (and ``arange(8)`` from ``arange(8.0)``, ``arange(1)`` from ``arange(True)``)."""
    spellings = [
        (torch.ops.aten.arange.default, [("end", 8), ("dtype", None), ("layout", None), ("device", None),
                                         ("pin_memory", None)]),
        (torch.ops.aten.arange.default, [("end", 8.0), ("dtype", None), ("layout", None), ("device", None),
                                         ("pin_memory", None)]),
        (torch.ops.aten.arange.default, [("end", True), ("dtype", None), ("layout", None), ("device", None),
                                         ("pin_memory", None)]),
        (torch.ops.aten.arange.default, [("end", 8), ("dtype", torch.float16), ("layout", None), ("device", None),
                                         ("pin_memory", None)]),
        (torch.ops.aten.arange.start, [("start", 0.0), ("end", 4.0), ("dtype", None), ("layout", None),
                                       ("device", None), ("pin_memory", None)]),
        (torch.ops.aten.arange.start, [("start", -0.0), ("end", 4.0), ("dtype", None), ("layout", None),
                                       ("device", None), ("pin_memory", None)]),
    ]
    L._decomposed_cache.clear()
    decomposed = 0
    for dtype in (torch.float32, torch.float64):
        old = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            for op, bound in spellings:
                fresh = L._decompose_literal_call(op, list(bound)) if L._has_wider_positional(op) else None
                for _ in range(2):
                    got = L._decomposed_literal_call(op, list(bound))
                    assert got == fresh
                    assert [(k, type(v), struct.pack("<d", v) if type(v) is float else v) for k, v in got or ()] == \
                        [(k, type(v), struct.pack("<d", v) if type(v) is float else v) for k, v in fresh or ()]
                decomposed += fresh is not None and fresh[0][0] == "start"
        finally:
            torch.set_default_dtype(old)
    assert decomposed == 2 * 4  # arange(end) decomposes, arange(start, end) is left as bound
    assert len(L._decomposed_cache) == 2 * 4

    def arange_graph(end) -> fx.GraphModule:
        g = fx.Graph()
        n = g.call_function(torch.arange, (end,))
        n.meta["example_value"] = torch.empty(0, device="meta")
        g.output((n,))
        return fx.GraphModule(torch.nn.Module(), g)

    for first, second in ((0.0, -0.0), (-0.0, 0.0), (8, 8.0), (8.0, 8), (1, True)):
        L._decomposed_cache.clear()
        a, b = canonicalize(arange_graph(first), with_wl=False), canonicalize(arange_graph(second), with_wl=False)
        assert a.graph_hash != b.graph_hash
        with python_only():
            L._decomposed_cache.clear()
            assert canonicalize(arange_graph(second), with_wl=False).graph_hash == b.graph_hash


def _meta_varied_graph(seed: int) -> fx.GraphModule:
    """Calls that repeat one argument template (literals ``0.0`` / ``-0.0``, NaNs, ``1`` / ``True`` /
    ``1.0``, keyword arguments, inputs repeated or permuted) with other output metadata: other
    dtypes and shapes, no metadata, tuples, Python scalars; and inputs whose example values are
    Python scalars of other exact types (an int vs a float node feeding the same template)."""
    rng = random.Random(seed)
    g = fx.Graph()
    xs = []
    for k in range(3):
        x = g.placeholder(f"x{k}")
        x.meta["example_value"] = torch.empty(2, 3, device="meta")
        xs.append(x)
    scalars = []
    for k, v in enumerate((3, 2.5, True)):
        s = g.placeholder(f"s{k}")
        s.meta["example_value"] = v
        scalars.append(s)
    metas = [torch.empty(2, 3, device="meta"), torch.empty(2, 3, dtype=torch.float16, device="meta"),
             torch.empty(4, device="meta"), torch.empty(2, 3, dtype=torch.int64, device="meta"), None,
             (torch.empty(1, 3, device="meta"), torch.empty(1, 3, device="meta")), 3, 2.5,
             (torch.empty(2, device="meta"), torch.empty(2, 3, device="meta"))]
    outs = []
    for _ in range(60):
        lit = rng.choice(LITERALS)
        a, b = rng.choice(xs), rng.choice(xs)
        form = rng.randrange(7)
        if form == 0:
            n = g.call_function(torch.mul, (a, lit))
        elif form == 1:
            n = g.call_function(torch.add, (a, b), {"alpha": lit})
        elif form == 2:
            n = g.call_function(torch.full, ((2, 3), rng.choice(scalars)))
        elif form == 3:
            n = g.call_function(operator.mul, (rng.choice(scalars), lit))
        elif form == 4:
            n = g.call_method("view", (a, 3, 2))
        elif form == 5:
            n = g.call_function(torch.split, (a, 1), {"dim": 0})
        else:
            n = g.call_function(torch.where, (a, b, lit))
        meta = rng.choice(metas)
        if meta is not None:
            n.meta["example_value"] = meta
        outs.append(n)
    g.output(tuple(outs))
    return fx.GraphModule(torch.nn.Module(), g)


def test_label_cache_partial_hits_equal_the_plain_definition():
    """Property: the compiled label pass's partial hits (a call whose cache key differs from an
    earlier miss's only in the output metadata reuses that miss's label text up to the metadata:
    ``form.meta_texts``) give exactly the plain definition's labels, inputs and stored entries on 80
    graphs that repeat argument templates with other output metadata (dtypes, shapes, none, tuples,
    Python scalars), literal-heavy arguments and scalar inputs of other exact types; so does the
    whole form. Where the compiled path is on, the partial hits are taken: fewer misses than with
    them switched off, the same labels either way."""
    from passnet_common.canonical import compiled
    from passnet_common.canonical import form as Fm

    def misses(nodes, gm, index) -> tuple[int, tuple]:
        compiled.cform.clear_label_cache()  # the misses of this graph alone (the cache outlives a pass)
        got = compiled.cform.labels(nodes, gm, None, False, index, True, Fm._slow_label)
        return compiled.cform.last_misses(), got[:3]

    fewer = 0
    for seed in range(80):
        gm = _meta_varied_graph(seed)
        nodes = list(gm.graph.nodes)
        index = {m: i for i, m in enumerate(nodes)}
        want = labels_plain(nodes, gm, None, False, index, True)
        got = _labels(nodes, gm, None, False, index, True)
        assert got[:3] == want[:3], seed
        a = canonicalize(gm, with_wl=False)
        with python_only():
            b = canonicalize(gm, with_wl=False)
        assert (a.graph_hash, a.structure_hash, a.text, a.nodes, a.order) == \
            (b.graph_hash, b.structure_hash, b.text, b.nodes, b.order), seed
        if compiled.cform is not None:
            on, got_on = misses(nodes, gm, index)
            compiled.cform.set_meta_texts(None)
            try:
                off, got_off = misses(nodes, gm, index)
            finally:
                compiled.cform.set_meta_texts(Fm.meta_texts)
            assert got_on == got_off == want[:3], seed
            assert on <= off, seed
            fewer += on < off
    if compiled.cform is not None:
        assert fewer >= 60


def test_symbolic_sizes_read_without_a_guard():
    """A graph holding a SymInt literal and a FakeTensor whose shape has that symbol hashes the same twice
    (found by an attack): ``encode_meta`` read the size with ``int(s)``, which guards on the symbol and
    specialises it, so the literal's text went from the symbol's name to its value between two hashes. The
    size is now its hint, read without a guard, and the symbol stays symbolic."""
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    s = env.create_symintnode(env.create_symbol(4, source=ConstantSource("a")), hint=4, source=ConstantSource("a"))
    with FakeTensorMode(shape_env=env):
        ft = torch.empty(s, 3)
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = ft
    n = g.call_function(torch.flatten, (x, s))
    n.meta["example_value"] = torch.empty(2, device="meta")
    g.output((n,))
    first = canonicalize(g, with_wl=False)
    again = canonicalize(g, with_wl=False)
    with python_only():
        plain = canonicalize(g, with_wl=False)
    assert first.text == again.text == plain.text
    assert '["sym","' + str(s) + '"]' in first.text and str(s) != "4"
    assert '["T","float32",[4,3]]' in first.text  # the size by its hint
