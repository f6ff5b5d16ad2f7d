"""A metamorphic generator for the canonical hashes: seeded random straight-line programs, put
through rewrites that keep the computation (must hash equal) and mutations that change it (must
hash apart).

A program is a list of statements over two inputs and one small buffer (kind ``buffer``, whose
bytes enter the hash): unary calls, products with a float literal (``0.0``, ``-0.0``, ...),
binary calls, in-place writes (``add_``, ``mul_``, ``normal_``), calls that return their input
itself or a view of it (``F.dropout(training=False)``, ``type_as`` to the same dtype, ``view``,
``x[:]``, ``detach``, ``contiguous``) and random draws
(``F.dropout(training=True)``, ``rand_like``, ``randn_like``, ``normal_``). Each program is
built as an FX graph by recording its statements in some order while running them eagerly
(``example_value`` is the value itself, so aliases share storage as in Dynamo's fake values).

Rewrites (:func:`rewritten`): another order of the statements that respects what the program
reads and writes (data, storage written in place, the random generator's stream) and every
call spelled another way (positional vs keyword, defaults spelled out). Mutations
(:func:`mutated`): a literal's sign flipped, two random draws swapped, a read moved across an
in-place write, the buffer's values changed. An eager oracle decides the verdict: a rewrite
must give bit-identical outputs under one seed (checked, so the generator cannot mislabel), a
mutation counts only when its outputs differ.

Spellings left out on purpose (documented as splits in :mod:`passnet_common.canonical`): a method
vs its function (``x.add(y)`` / ``torch.add(x, y)``: the call's kind and target enter the label).

    python -m tests.canonical_metamorphic 2000     # prints the counts over seeds 0..1999
"""

from __future__ import annotations

import operator
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx as fx
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHAPE = (3, 4)
INPUTS = ("i0", "i1")
UNARY = ("sin", "cos", "tanh", "neg", "sigmoid")
LITERALS = (0.0, -0.0, 1.5, -2.0, 0.5, 3.0)


@dataclass(frozen=True)
class Stmt:
    """One statement: ``kind`` in unary / scale / binary / inplace / identity / random;
    ``f`` the function's name; ``src`` the variables read (the first is written by ``inplace``
    and by in-place random draws); ``lit`` a float literal where the statement has one."""

    kind: str
    f: str
    src: tuple[str, ...]
    lit: float | None = None


def program(seed: int, n: int | None = None) -> list[Stmt]:
    """A random program of ``n`` (6-11) statements; statement ``k`` defines variable ``v<k>``
    (in-place statements define none)."""
    rng = random.Random(seed)
    n = n or rng.randint(6, 11)
    vars_: list[str] = list(INPUTS)
    out: list[Stmt] = []
    for k in range(n):
        kind = rng.choices(("unary", "scale", "binary", "inplace", "identity", "random", "buffer"),
                           (3, 3, 3, 2, 2, 2, 1))[0]
        a = rng.choice(vars_)
        if kind == "unary":
            st = Stmt("unary", rng.choice(UNARY), (a,))
        elif kind == "scale":
            st = Stmt("scale", "mul", (a,), rng.choice(LITERALS))
        elif kind == "binary":
            st = Stmt("binary", rng.choice(("add", "sub", "mul")), (a, rng.choice(vars_)))
        elif kind == "buffer":
            st = Stmt("binary", "add", (a, "b"))
        elif kind == "inplace":
            targets = [v for v in vars_ if v not in INPUTS]
            if not targets:
                st = Stmt("unary", rng.choice(UNARY), (a,))
            elif rng.random() < 0.5:
                st = Stmt("inplace", "add_", (rng.choice(targets), rng.choice(vars_)))
            else:
                st = Stmt("inplace", "mul_", (rng.choice(targets),), rng.choice(LITERALS[2:]))
        elif kind == "identity":
            st = Stmt("identity", rng.choice(("dropout_eval", "type_as", "view", "slice", "detach", "contiguous")), (a,))
        else:
            f = rng.choice(("dropout_train", "rand_like", "randn_like", "normal_"))
            targets = [v for v in vars_ if v not in INPUTS]
            if f == "normal_" and not targets:
                f = "rand_like"
            st = Stmt("random", f, (rng.choice(targets),) if f == "normal_" else (a,))
        out.append(st)
        if st.kind != "inplace" and st.f != "normal_":
            vars_.append(f"v{k}")
    return out


def defines(prog: list[Stmt], k: int) -> str | None:
    st = prog[k]
    return None if st.kind == "inplace" or st.f == "normal_" else f"v{k}"


def dependencies(prog: list[Stmt]) -> set[tuple[int, int]]:
    """Edges ``(a, b)``, ``a < b``: statement ``b`` must run after ``a`` -- ``b`` reads what
    ``a`` defines, one writes a storage the other reads or writes (identity calls share their
    input's storage), or both draw from the random generator."""
    storage = {v: v for v in (*INPUTS, "b")}
    info = []  # (defined var, reads storages, writes storages, random)
    definer: dict[str, int] = {}
    for k, st in enumerate(prog):
        reads = {storage[v] for v in st.src}
        writes = {storage[st.src[0]]} if st.kind == "inplace" or st.f == "normal_" else set()
        d = defines(prog, k)
        if d is not None:
            storage[d] = storage[st.src[0]] if st.kind == "identity" else d
            definer[d] = k
        info.append((reads, writes, st.kind == "random", {definer[v] for v in st.src if v in definer}))
    edges = set()
    for b, (rb, wb, xb, db) in enumerate(info):
        edges.update((a, b) for a in db)
        for a in range(b):
            ra, wa, xa, _ = info[a]
            if (wa & (rb | wb)) or (ra & wb) or (xa and xb):
                edges.add((a, b))
    return edges


def data_edges(prog: list[Stmt]) -> set[tuple[int, int]]:
    """The edges of :func:`dependencies` where ``b`` reads a variable ``a`` defines (never flipped)."""
    definer = {defines(prog, k): k for k in range(len(prog)) if defines(prog, k) is not None}
    return {(definer[v], b) for b, st in enumerate(prog) for v in st.src if v in definer}


def topo_order(n: int, edges: set[tuple[int, int]], rng: random.Random) -> list[int] | None:
    """A random topological order of ``range(n)`` under ``edges`` (None on a cycle)."""
    indeg = [0] * n
    users: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        indeg[b] += 1
        users[a].append(b)
    ready = [i for i in range(n) if indeg[i] == 0]
    order = []
    while ready:
        i = ready.pop(rng.randrange(len(ready)))
        order.append(i)
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    return order if len(order) == n else None


def _spell(st: Stmt, a, b, variant: int):
    """``(op, target, args, kwargs)`` of a statement in spelling ``variant`` (0 as written;
    1, 2 other spellings of the same call)."""
    if st.kind == "unary":
        return ("call_function", getattr(torch, st.f), (a,), {}) if variant != 1 else \
            ("call_function", getattr(torch, st.f), (), {"input": a})
    if st.kind == "scale":
        return ("call_function", torch.mul, (a, st.lit), {}) if variant != 1 else \
            ("call_function", torch.mul, (a,), {"other": st.lit})
    if st.kind == "binary":
        fn = getattr(torch, st.f)
        if variant == 1:
            return "call_function", fn, (a,), {"other": b}
        if variant == 2 and st.f in ("add", "sub"):
            return "call_function", fn, (a, b), {"alpha": 1}
        return "call_function", fn, (a, b), {}
    if st.kind == "inplace":
        arg = b if st.f == "add_" else st.lit
        if variant == 1:
            return "call_method", st.f, (a,), {"other": arg}
        if variant == 2 and st.f == "add_":
            return "call_method", st.f, (a, arg), {"alpha": 1}
        return "call_method", st.f, (a, arg), {}
    if st.f == "dropout_eval":
        return ("call_function", F.dropout, (a, 0.5, False), {}) if variant != 1 else \
            ("call_function", F.dropout, (a,), {"p": 0.5, "training": False})
    if st.f == "type_as":
        return ("call_method", "type_as", (a, a), {}) if variant != 1 else ("call_method", "type_as", (a,), {"other": a})
    if st.f == "view":
        return ("call_method", "view", (a, *SHAPE), {}) if variant != 1 else ("call_method", "view", (a, SHAPE), {})
    if st.f == "slice":
        return "call_function", operator.getitem, (a, slice(None, None, None)), {}
    if st.f == "detach":
        return "call_method", "detach", (a,), {}
    if st.f == "contiguous":
        return ("call_method", "contiguous", (a,), {}) if variant != 1 else \
            ("call_method", "contiguous", (a,), {"memory_format": torch.contiguous_format})
    if st.f == "dropout_train":
        return ("call_function", F.dropout, (a, 0.5, True), {}) if variant != 1 else \
            ("call_function", F.dropout, (a,), {"p": 0.5, "training": True, "inplace": False})
    if st.f in ("rand_like", "randn_like"):
        return ("call_function", getattr(torch, st.f), (a,), {}) if variant != 1 else \
            ("call_function", getattr(torch, st.f), (a,), {"dtype": None})
    if st.f == "normal_":
        return ("call_method", "normal_", (a,), {}) if variant != 1 else ("call_method", "normal_", (a, 0.0, 1.0), {})
    raise ValueError(st)


def _run(op, target, args, kwargs):
    if op == "call_method":
        return getattr(args[0], target)(*args[1:], **kwargs)
    return target(*args, **kwargs)


def _map(v, f):
    if isinstance(v, tuple):
        return tuple(_map(x, f) for x in v)
    if isinstance(v, dict):
        return {k: _map(x, f) for k, x in v.items()}
    return f(v)


@dataclass
class Built:
    gm: fx.GraphModule
    kinds: list[str]
    values: list[torch.Tensor]
    outputs: list[torch.Tensor]


def build(prog: list[Stmt], order: list[int], spelling: list[int] | None = None, buffer_seed: int = 0) -> Built:
    """The FX graph of ``prog`` recorded in ``order`` (spelling ``spelling[k]`` for statement
    ``k``), run eagerly under seed 0 while recording; outputs are every defined variable's final
    value in definition order."""
    gen = torch.Generator().manual_seed(1234)
    inputs = {v: torch.randn(SHAPE, generator=gen) for v in INPUTS}
    inputs["b"] = torch.randn(SHAPE[1:], generator=torch.Generator().manual_seed(99 + buffer_seed))
    g = fx.Graph()
    node: dict[str, fx.Node] = {}
    value: dict[str, torch.Tensor] = {}
    for v in (*INPUTS, "b"):
        node[v] = g.placeholder(v)
        value[v] = inputs[v].clone()
        node[v].meta["example_value"] = value[v]
    torch.manual_seed(0)
    for k in order:
        st = prog[k]
        a = st.src[0]
        b = st.src[1] if len(st.src) > 1 else None
        op, target, args, kwargs = _spell(st, a, b, spelling[k] if spelling else 0)
        n = g.create_node(op, target, _map(args, lambda x: node.get(x, x) if isinstance(x, str) else x),
                          _map(kwargs, lambda x: node.get(x, x) if isinstance(x, str) and x in node else x))
        res = _run(op, target, _map(args, lambda x: value.get(x, x) if isinstance(x, str) else x),
                   _map(kwargs, lambda x: value[x] if isinstance(x, str) and x in value else x))
        n.meta["example_value"] = res
        d = defines(prog, k)
        if d is not None:
            node[d], value[d] = n, res
    outs = [f"v{k}" for k in range(len(prog)) if defines(prog, k) is not None]
    g.output(tuple(node[v] for v in outs))
    return Built(fx.GraphModule(torch.nn.Module(), g), ["input", "input", "buffer"],
                 [inputs[v] for v in (*INPUTS, "b")], [value[v].clone() for v in outs])


def same_outputs(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Bit-identical outputs (``-0.0`` apart from ``0.0``, NaN equal to an identical NaN)."""
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x.view(torch.int32), y.view(torch.int32))
                                    for x, y in zip(a, b))


def rewritten(prog: list[Stmt], seed: int) -> tuple[list[int], list[int]]:
    """Another valid order and another spelling of every statement."""
    rng = random.Random(seed * 7 + 1)
    order = topo_order(len(prog), dependencies(prog), rng)
    return order, [rng.randrange(3) for _ in prog]


def mutated(prog: list[Stmt], seed: int) -> tuple[str, list[Stmt], list[int], int] | None:
    """One mutation that changes the computation: ``(kind, program, order, buffer seed)``, or
    None when the program offers none."""
    rng = random.Random(seed * 13 + 5)
    n = len(prog)
    base = list(range(n))
    edges = dependencies(prog)
    data = data_edges(prog)
    options = []
    scales = [k for k, st in enumerate(prog) if st.kind == "scale"]
    if scales:
        options.append("literal sign")
    randoms = [k for k, st in enumerate(prog) if st.kind == "random"]
    if len(randoms) >= 2:
        options.append("random order")
    writes = [k for k, st in enumerate(prog) if st.kind == "inplace" or st.f == "normal_"]
    if writes:
        options.append("read across a write")
    if any("b" in st.src for st in prog):
        options.append("buffer value")
    if not options:
        return None
    kind = rng.choice(options)
    if kind == "literal sign":
        k = rng.choice(scales)
        st = prog[k]
        new = list(prog)
        new[k] = Stmt(st.kind, st.f, st.src, -st.lit)
        return kind, new, base, 0
    if kind == "buffer value":
        return kind, prog, base, 1
    if kind == "random order":
        a, b = sorted(rng.sample(randoms, 2))
        if (a, b) in data:
            return None
        flipped = {(x, y) for x, y in edges if (x, y) != (a, b)} | {(b, a)}
        order = topo_order(n, flipped, rng)
        return (kind, prog, order, 0) if order is not None else None
    w = rng.choice(writes)
    touching = [(x, y) for x, y in edges - data if w in (x, y) and prog[x if y == w else y].kind != "random"]
    if not touching:
        return None
    x, y = rng.choice(touching)
    flipped = {e for e in edges if e != (x, y)} | {(y, x)}
    order = topo_order(n, flipped, rng)
    return (kind, prog, order, 0) if order is not None else None


def check(seed: int, canonicalize) -> dict:
    """One seed: ``{"rewrite": "same" | "false split" | "oracle", "mutation": kind, "mutation_verdict":
    "apart" | "false merge" | "no effect" | None}`` (``oracle``: the rewrite changed the eager outputs,
    a fault of the generator)."""
    prog = program(seed)

    def h(b: Built) -> str:
        return canonicalize(b.gm, b.kinds, with_wl=False, placeholder_values=b.values).graph_hash

    ref = build(prog, list(range(len(prog))))
    order, spelling = rewritten(prog, seed)
    rw = build(prog, order, spelling)
    out = {"seed": seed}
    if not same_outputs(ref.outputs, rw.outputs):
        out["rewrite"] = "oracle"
    else:
        out["rewrite"] = "same" if h(ref) == h(rw) else "false split"
    m = mutated(prog, seed)
    if m is None:
        out["mutation"], out["mutation_verdict"] = None, None
        return out
    kind, mprog, morder, bseed = m
    mb = build(mprog, morder, buffer_seed=bseed)
    out["mutation"] = kind
    if same_outputs(ref.outputs, mb.outputs):
        out["mutation_verdict"] = "no effect"
    else:
        out["mutation_verdict"] = "apart" if h(ref) != h(mb) else "false merge"
    return out


def run(seeds, canonicalize=None) -> dict:
    """Counts over ``seeds``: programs, false splits, false merges, oracle faults, mutations by
    kind, and the failing seeds."""
    if canonicalize is None:
        from passnet_common.canonical import canonicalize
    res = {"programs": 0, "false_splits": [], "false_merges": [], "oracle_faults": [], "mutations": {},
           "mutations_without_effect": 0}
    for s in seeds:
        r = check(s, canonicalize)
        res["programs"] += 1
        if r["rewrite"] == "false split":
            res["false_splits"].append(s)
        elif r["rewrite"] == "oracle":
            res["oracle_faults"].append(s)
        if r["mutation"] is not None:
            if r["mutation_verdict"] == "no effect":
                res["mutations_without_effect"] += 1
            else:
                res["mutations"][r["mutation"]] = res["mutations"].get(r["mutation"], 0) + 1
                if r["mutation_verdict"] == "false merge":
                    res["false_merges"].append(s)
    return res


if __name__ == "__main__":
    import json
    import warnings

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    print(json.dumps(run(range(int(sys.argv[1]) if len(sys.argv) > 1 else 200)), indent=1))
