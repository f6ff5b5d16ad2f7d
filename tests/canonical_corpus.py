"""Labelled corpus of graph pairs for the canonical hashes (the regression suite).

Each pair builds two small programs (``torch.compile`` through :func:`extract.capture.dynamo.dynamo_capture`,
``torch.fx.symbolic_trace`` or a hand-built FX graph) and carries the right verdict:
``same`` (one computation: the hashes must be equal) or ``different`` (the hashes must
differ), for ``graph_hash`` (``level="graph"``) or ``structure_hash`` (``level="structure"``).
Pairs marked ``accepted_split`` are the same computation hashed apart on purpose, pairs marked
``accepted_merge`` different programs hashed equal on purpose (both documented in the module
docstring of :mod:`passnet_common.canonical`); they are counted separately.

    .venv/bin/python -m tests.canonical_corpus      # prints false merges / false splits
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from passnet_common.canonical import canonicalize


@dataclass
class Pair:
    name: str
    kind: str  # false-merge / false-split case family of the issue
    label: str  # "same" | "different"
    a: Callable[[], tuple]
    b: Callable[[], tuple]
    level: str = "graph"  # "graph" | "structure"
    accepted_split: bool = False
    accepted_merge: bool = False  # a documented merge of different programs (e.g. large constants)


def dyn(model: nn.Module, *inputs) -> tuple:
    """(GraphModule, placeholder kinds) of the single graph Dynamo captures."""
    from extract.capture import dynamo_capture

    torch.manual_seed(0)
    gs = dynamo_capture(model, tuple(inputs))
    assert len(gs) == 1, f"{type(model).__name__}: expected one graph, got {len(gs)}"
    return gs[0].gm, gs[0].kinds


def trace(model: nn.Module) -> tuple:
    return fx.symbolic_trace(model), None


class Fn(nn.Module):
    """A module whose forward is ``fn(self, *args)`` (parameters optional)."""

    def __init__(self, fn, **mods):
        super().__init__()
        self.fn = fn
        for k, v in mods.items():
            setattr(self, k, v)

    def forward(self, *args):
        return self.fn(self, *args)


X = torch.randn(4, 6)


def _x():
    return X.clone()


# ---- 1. false merges: in-place mutation ---------------------------------------------------

def _read_before_after(mutate):
    def before(m, x):
        y = x * 2
        a = y.sum()
        mutate(y)
        return a, y.mean()

    def after(m, x):
        y = x * 2
        mutate(y)
        a = y.sum()
        return a, y.mean()

    return before, after


def _alias_iadd(y):
    z = y
    z += 1


MUTATIONS = {
    "F.relu(inplace=True)": lambda y: F.relu(y, inplace=True),
    "F.hardtanh(inplace=True)": lambda y: F.hardtanh(y, -0.5, 0.5, inplace=True),
    "operator.iadd through an alias": _alias_iadd,
    "method add_": lambda y: y.add_(3),
    "torch.sigmoid_": lambda y: torch.sigmoid_(y),
    "setitem": lambda y: y.__setitem__(0, 0.0),
    # positional ``inplace`` (Dynamo records the modules' flag positionally: F.hardtanh(y, 0.0, 6.0, True))
    "nn.ReLU6(inplace=True)": lambda y: nn.ReLU6(inplace=True)(y),
    "nn.LeakyReLU(inplace=True)": lambda y: nn.LeakyReLU(0.1, inplace=True)(y),
    "nn.Hardswish(inplace=True)": lambda y: nn.Hardswish(inplace=True)(y),
    "nn.Hardsigmoid(inplace=True)": lambda y: nn.Hardsigmoid(inplace=True)(y),
    "nn.ELU(inplace=True)": lambda y: nn.ELU(inplace=True)(y),
    "nn.SELU(inplace=True)": lambda y: nn.SELU(inplace=True)(y),
    "F.relu(t, True)": lambda y: F.relu(y, True),
    "F.hardtanh(t, -0.5, 0.5, True)": lambda y: F.hardtanh(y, -0.5, 0.5, True),
    # a written Tensor(a!)[] list
    "torch._foreach_mul_([t], 3.0)": lambda y: torch._foreach_mul_([y], 3.0),
}


def _inplace_pairs():
    pairs = []
    for name, mut in MUTATIONS.items():
        before, after = _read_before_after(mut)
        pairs.append(Pair(f"read before vs after {name}", "in-place", "different",
                          lambda b=before: dyn(Fn(b), _x()), lambda a=after: dyn(Fn(a), _x())))

    def relu_mod(order):
        def f(m, x):
            y = x * 2
            if order == "before":
                a = y.sum()
                m.act(y)
            else:
                m.act(y)
                a = y.sum()
            return a, y
        return Fn(f, act=nn.ReLU(inplace=True))

    pairs.append(Pair("read before vs after nn.ReLU(inplace=True)", "in-place", "different",
                      lambda: dyn(relu_mod("before"), _x()), lambda: dyn(relu_mod("after"), _x())))

    def out_graph(before: bool):  # a schema-mutating op without a trailing underscore: aten.add.out
        g = fx.Graph()
        x, buf = g.placeholder("x"), g.placeholder("buf")
        if before:
            r = g.call_function(torch.ops.aten.sum.default, (buf,))
        w = g.call_function(torch.ops.aten.add.out, (x, x), {"out": buf})
        if not before:
            r = g.call_function(torch.ops.aten.sum.default, (buf,))
        g.output((r, w))
        gm = fx.GraphModule(nn.Module(), g)
        ShapeProp(gm).propagate(torch.randn(3), torch.randn(3))
        return gm, None

    pairs.append(Pair("read before vs after aten.add.out (schema Tensor(a!))", "in-place", "different",
                      lambda: out_graph(True), lambda: out_graph(False)))
    return pairs


# ---- 1. false merges: higher-order ops, call_module, constants -----------------------------

def _hop_pairs():
    def cond(f1, f2):
        return Fn(lambda m, x: torch.cond(x.sum() > 0, lambda t: f1(t), lambda t: f2(t), (x,)))

    def ckpt(act):
        from torch.utils.checkpoint import checkpoint

        return Fn(lambda m, x: checkpoint(lambda t: act(m.l(t)), x, use_reentrant=False), l=nn.Linear(6, 6))

    def vm(f):
        return Fn(lambda m, x: torch.vmap(f)(x) + 1)

    def gr(f):
        return Fn(lambda m, x: torch.func.grad(lambda t: f(t).sum())(x) + 1)

    return [
        Pair("torch.cond sin/cos vs exp/neg", "higher-order op", "different",
             lambda: dyn(cond(torch.sin, torch.cos), _x()), lambda: dyn(cond(torch.exp, torch.neg), _x())),
        Pair("torch.cond branches swapped", "higher-order op", "different",
             lambda: dyn(cond(torch.sin, torch.cos), _x()), lambda: dyn(cond(torch.cos, torch.sin), _x())),
        Pair("checkpoint body relu vs sigmoid", "higher-order op", "different",
             lambda: dyn(ckpt(torch.relu), _x()), lambda: dyn(ckpt(torch.sigmoid), _x())),
        Pair("vmap body sin vs cos", "functorch", "different",
             lambda: dyn(vm(torch.sin), _x()), lambda: dyn(vm(torch.cos), _x())),
        Pair("grad of sin vs cos", "functorch", "different",
             lambda: dyn(gr(torch.sin), _x()), lambda: dyn(gr(torch.cos), _x())),
        Pair("torch.cond captured twice", "higher-order op", "same",
             lambda: dyn(cond(torch.sin, torch.cos), _x()), lambda: dyn(cond(torch.sin, torch.cos), _x() + 1)),
    ]


class _Const(nn.Module):
    def __init__(self, values):
        super().__init__()
        self.c = torch.tensor(values)  # a plain tensor attribute: get_attr, not a parameter

    def forward(self, x):
        return x[:, :3] * self.c


class _MHA(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, heads)

    def forward(self, x):
        return self.attn(x, x, x)[0]


def _leaf_pairs():
    return [
        Pair("symbolic_trace MultiheadAttention 2 vs 8 heads", "call_module", "different",
             lambda: trace(_MHA(2)), lambda: trace(_MHA(8))),
        Pair("symbolic_trace Dropout p=0.1 vs 0.5", "call_module", "different",
             lambda: trace(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))),
             lambda: trace(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)))),
        Pair("symbolic_trace same MultiheadAttention twice", "call_module", "same",
             lambda: trace(_MHA(2)), lambda: trace(_MHA(2))),
        Pair("get_attr constant [1,2,3] vs [1,2,4]", "constant", "different",
             lambda: trace(_Const([1.0, 2.0, 3.0])), lambda: trace(_Const([1.0, 2.0, 4.0]))),
        Pair("get_attr constant equal values", "constant", "same",
             lambda: trace(_Const([1.0, 2.0, 3.0])), lambda: trace(_Const([1.0, 2.0, 3.0]))),
    ]


class _TracedAct(nn.Module):
    """``y = x * 2``; a read of ``y`` before or after a call_module ``act(y)``
    (``torch.fx.symbolic_trace`` keeps ``act`` as a leaf)."""

    def __init__(self, act: nn.Module, before: bool):
        super().__init__()
        self.act, self.before = act, before

    def forward(self, x):
        y = x * 2
        if self.before:
            a = y.sum()
            self.act(y)
        else:
            self.act(y)
            a = y.sum()
        return a, y


class _TracedBN(nn.Module):
    """A read of the batch norm's running mean (``get_attr``) before or after the call."""

    def __init__(self, before: bool, training: bool):
        super().__init__()
        torch.manual_seed(0)
        self.bn, self.before = nn.BatchNorm1d(6), before
        self.train(training)

    def forward(self, x):
        if self.before:
            a = x + self.bn.running_mean
            y = self.bn(x)
        else:
            y = self.bn(x)
            a = x + self.bn.running_mean
        return a, y


class _EncoderLayer(nn.Module):
    def __init__(self, activation):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=activation)

    def forward(self, x):
        return self.layer(x)


def _dead_nodes(permuted: bool):
    """One program with dead nodes (``tanh(p0)``, ``tanh(p1)``, ... unused) recorded in two
    orders, the second also with its placeholders in another calling order (a renaming of
    the inputs): one computation."""
    ops = [("neg", 0), ("sub", 0, 1), ("maximum", 2, 3), ("tanh", 5), ("neg", 2), ("mul", 2, 4), ("tanh", 1),
           ("tanh", 2), ("relu", 0)]
    order = [8, 4, 7, 6, 1, 5, 0, 2, 3] if permuted else list(range(len(ops)))
    fns = {"neg": torch.neg, "sub": torch.sub, "maximum": torch.maximum, "tanh": torch.tanh, "mul": operator.mul,
           "relu": torch.relu}

    def f():
        g = fx.Graph()
        phs = [None] * 3
        for k in ([1, 0, 2] if permuted else [0, 1, 2]):
            phs[k] = g.placeholder(f"p{k}")
        made = {}
        for i in order:
            name, *src = ops[i]
            made[i] = g.call_function(fns[name], tuple(phs[a] if a < 3 else made[a - 3] for a in src))
        g.output((made[1], made[5]))
        gm = fx.GraphModule(nn.Module(), g)
        ShapeProp(gm).propagate(*[torch.randn(3) for _ in range(3)])
        return gm, None
    return f


def _symbolic_trace_pairs():
    def act_pair(name, make):
        return Pair(f"symbolic_trace: read before vs after call_module {name}", "symbolic_trace mutation", "different",
                    lambda: trace(_TracedAct(make(), True)), lambda: trace(_TracedAct(make(), False)))

    return [
        act_pair("nn.ReLU(inplace=True)", lambda: nn.ReLU(inplace=True)),
        act_pair("nn.Hardtanh(inplace=True)", lambda: nn.Hardtanh(-0.5, 0.5, inplace=True)),
        Pair("symbolic_trace: read before vs after nn.ReLU() (not in place)", "symbolic_trace mutation", "same",
             lambda: trace(_TracedAct(nn.ReLU(), True)), lambda: trace(_TracedAct(nn.ReLU(), False))),
        Pair("symbolic_trace: running_mean read before vs after training-mode BatchNorm", "symbolic_trace mutation",
             "different", lambda: trace(_TracedBN(True, True)), lambda: trace(_TracedBN(False, True))),
        Pair("symbolic_trace: running_mean read before vs after eval-mode BatchNorm", "symbolic_trace mutation",
             "same", lambda: trace(_TracedBN(True, False)), lambda: trace(_TracedBN(False, False))),
        Pair("symbolic_trace: TransformerEncoderLayer activation=torch.tanh vs torch.sigmoid", "module function attribute",
             "different", lambda: trace(_EncoderLayer(torch.tanh)), lambda: trace(_EncoderLayer(torch.sigmoid))),
        Pair("symbolic_trace: TransformerEncoderLayer activation=lambda t: t * 2 vs t * 3", "module function attribute",
             "different", lambda: trace(_EncoderLayer(lambda t: t * 2)), lambda: trace(_EncoderLayer(lambda t: t * 3))),
        Pair("symbolic_trace: TransformerEncoderLayer activation=torch.tanh twice", "module function attribute",
             "same", lambda: trace(_EncoderLayer(torch.tanh)), lambda: trace(_EncoderLayer(torch.tanh))),
        Pair("dead nodes: placeholder permutation plus reorder", "dead-node order", "same",
             _dead_nodes(False), _dead_nodes(True)),
    ]


# ---- decisions (documented): large constants, no-op in-place ops, groups= -------------------

class _BigConst(nn.Module):
    def __init__(self, changed: bool):
        super().__init__()
        c = torch.arange(32 * 64, dtype=torch.float32).reshape(32, 64)  # 8 KiB > CONST_DIGEST_MAX_BYTES
        if changed:
            c[3, 5] = -1.0
        self.c = c

    def forward(self, x):
        return x @ self.c


class _Conv(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups)

    def forward(self, x):
        return self.conv(x).relu()


def _decision_pairs():
    before, after = _read_before_after(lambda y: F.dropout(y, 0.5, False, True))
    x8 = torch.randn(1, 8, 6, 6)
    x16 = torch.randn(1, 16, 6, 6)
    return [
        Pair("32x64 get_attr constant with one value changed (over 4 KiB: shape and dtype only)", "decision: constants",
             "different", lambda: trace(_BigConst(False)), lambda: trace(_BigConst(True)), accepted_merge=True),
        Pair("read before vs after dropout(training=False, inplace=True) (a no-op, still a barrier)",
             "decision: no-op in-place", "same", lambda: dyn(Fn(before), _x()), lambda: dyn(Fn(after), _x()),
             accepted_split=True),
        Pair("dense vs grouped conv (groups=1 vs 4)", "decision: groups", "different",
             lambda: dyn(_Conv(8, 1), x8), lambda: dyn(_Conv(8, 4), x8), level="structure"),
        Pair("depthwise conv at 8 vs 16 channels (groups = channels)", "decision: groups", "same",
             lambda: dyn(_Conv(8, 8), x8), lambda: dyn(_Conv(16, 16), x16), level="structure"),
    ]


# ---- 2. false splits ----------------------------------------------------------------------

class _QK(nn.Module):
    def __init__(self, q_first: bool):
        super().__init__()
        torch.manual_seed(0)
        self.q, self.k = nn.Linear(6, 6), nn.Linear(6, 6)
        self.q_first = q_first

    def forward(self, x):
        if self.q_first:
            q = self.q(x)
            k = self.k(x)
        else:
            k = self.k(x)
            q = self.q(x)
        return torch.softmax(q @ k.t(), dim=-1)


def _fx_pair(build_a, build_b, name, kind, label="same", names_a=("x", "y"), names_b=("x", "y")):
    def mk(build, nm):
        def f():
            g = fx.Graph()
            x, y = g.placeholder(nm[0]), g.placeholder(nm[1])
            g.output(build(g, x, y))
            gm = fx.GraphModule(nn.Module(), g)
            ShapeProp(gm).propagate(torch.randn(2, 3), torch.randn(2, 3))
            return gm, None
        return f

    return Pair(name, kind, label, mk(build_a, names_a), mk(build_b, names_b))


def _split_pairs():
    def sm(spelling):
        fns = {
            "torch.softmax(x, 1)": lambda m, x: torch.softmax(x, 1),
            "torch.softmax(x, dim=1)": lambda m, x: torch.softmax(x, dim=1),
            "x.softmax(1)": lambda m, x: x.softmax(1),
            "x.softmax(dim=1)": lambda m, x: x.softmax(dim=1),
            "F.softmax(x, 1)": lambda m, x: F.softmax(x, 1),
            "F.softmax(x, dim=1)": lambda m, x: F.softmax(x, dim=1),
            "x.sum(1, keepdim=False)": lambda m, x: x.sum(1, keepdim=False),
            "x.sum(1)": lambda m, x: x.sum(1),
            "x.view(4, 6)": lambda m, x: x.view(4, 6) * 2,
            "x.view((4, 6))": lambda m, x: x.view((4, 6)) * 2,
            "torch.softmax(x, dim=-1)": lambda m, x: torch.softmax(x, dim=-1),
        }
        return lambda: dyn(Fn(fns[spelling]), _x())

    def rec_order(first_sin):
        def f(m, x, y):
            if first_sin:
                a = x.sin()
                b = y.cos()
            else:
                b = y.cos()
                a = x.sin()
            return a * b
        return lambda: dyn(Fn(f), _x(), _x())

    def inputs_swapped(swap):
        if swap:
            return lambda: dyn(Fn(lambda m, b, a: a.sin() + b.exp()), _x(), _x())
        return lambda: dyn(Fn(lambda m, a, b: a.sin() + b.exp()), _x(), _x())

    def output_meta(with_meta):
        def build(g, x, y):
            return g.call_function(operator.add, (x, y))
        def f():
            g = fx.Graph()
            x, y = g.placeholder("x"), g.placeholder("y")
            g.output(build(g, x, y))
            gm = fx.GraphModule(nn.Module(), g)
            ShapeProp(gm).propagate(torch.randn(2, 3), torch.randn(2, 3))
            out = next(n for n in gm.graph.nodes if n.op == "output")
            if with_meta:
                out.meta["tensor_meta"] = next(n for n in gm.graph.nodes if n.op == "call_function").meta["tensor_meta"]
                out.meta["val"] = torch.empty(2, 3)
            else:
                out.meta.clear()
            return gm, None
        return f

    return [
        Pair("Dynamo lifts q/k parameters in first-use order", "placeholder order", "same",
             lambda: dyn(_QK(True), _x()), lambda: dyn(_QK(False), _x())),
        Pair("forward(a, b) vs forward(b, a)", "placeholder order", "same", inputs_swapped(False), inputs_swapped(True)),
        Pair("independent ops recorded sin-then-cos vs cos-then-sin (Dynamo)", "recording order", "same",
             rec_order(True), rec_order(False)),
        Pair("torch.softmax(x, 1) vs torch.softmax(x, dim=1)", "argument spelling", "same",
             sm("torch.softmax(x, 1)"), sm("torch.softmax(x, dim=1)")),
        Pair("x.softmax(1) vs x.softmax(dim=1)", "argument spelling", "same", sm("x.softmax(1)"), sm("x.softmax(dim=1)")),
        Pair("F.softmax(x, 1) vs F.softmax(x, dim=1)", "argument spelling", "same", sm("F.softmax(x, 1)"), sm("F.softmax(x, dim=1)")),
        Pair("x.sum(1) vs x.sum(1, keepdim=False) (default spelled out)", "argument spelling", "same",
             sm("x.sum(1)"), sm("x.sum(1, keepdim=False)")),
        Pair("x.view(4, 6) vs x.view((4, 6))", "argument spelling", "same", sm("x.view(4, 6)"), sm("x.view((4, 6))")),
        Pair("softmax dim=1 vs dim=-1 on rank 2", "argument spelling", "same", sm("torch.softmax(x, dim=1)"),
             sm("torch.softmax(x, dim=-1)"), accepted_split=True),
        Pair("output-node metadata written or not", "output metadata", "same", output_meta(True), output_meta(False)),
        _fx_pair(lambda g, x, y: g.call_function(torch.mul, (x, g.call_function(torch.sin, (y,)))),
                 lambda g, x, y: g.call_function(torch.mul, (x, g.call_function(torch.sin, (y,)))),
                 "placeholder names 'x' vs 'L_self_modules_fc_parameters_weight_' without kinds", "placeholder names",
                 names_b=("L_self_modules_fc_parameters_weight_", "L_self_modules_bn_buffers_running_var_")),
    ]


# ---- structure_hash -------------------------------------------------------------------------

def _hf(cfg: dict):
    from extract.capture import capture_row
    from extract.sources.rows import row_from_hf_config

    res = capture_row(row_from_hf_config(cfg, "local:x", "x", "local"), {"seq_len": 8, "meta": True})
    assert len(res.graphs) >= 1
    g = res.graphs[0]
    return g.gm, g.kinds


LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 128, "hidden_size": 32,
         "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "max_position_embeddings": 64}
QWEN = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "vocab_size": 128, "hidden_size": 32,
        "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 64}
VIT = {"model_type": "vit", "architectures": ["ViTModel"], "hidden_size": 32, "num_hidden_layers": 2,
       "num_attention_heads": 4, "intermediate_size": 64, "image_size": 32, "patch_size": 8}


def _widen(cfg, f):
    out = dict(cfg)
    for k in ("hidden_size", "intermediate_size"):
        out[k] = cfg[k] * f
    if "vocab_size" in out:
        out["vocab_size"] = cfg["vocab_size"] * 2 + 6
    return out


def _structure_pairs(with_transformers: bool = True):
    def reshape_net(h):
        return Fn(lambda m, x: m.l(x).reshape([x.shape[0], 4 * h]), l=nn.Linear(6, 4 * h))

    def emb(vocab):
        return Fn(lambda m, i: F.embedding(i, m.w, padding_idx=vocab - 1), w=nn.Parameter(torch.randn(vocab, 8)))

    def lit(width):
        return Fn(lambda m, x: m.l(x) + 3, l=nn.Linear(6, width))

    def dsum(d):
        return Fn(lambda m, x: x.sum(dim=d))

    def act(fn):
        return Fn(lambda m, x: fn(m.l(x)), l=nn.Linear(6, 8))

    x4 = torch.randn(2, 3, 4, 5)
    pairs = [
        Pair("reshape([b, 4*h]) at h=8 vs h=16", "structure: list literal sizes", "same",
             lambda: dyn(reshape_net(8), _x()), lambda: dyn(reshape_net(16), _x()), level="structure"),
        Pair("embedding padding_idx=vocab-1 at vocab 100 vs 250", "structure: derived sizes", "same",
             lambda: dyn(emb(100), torch.randint(0, 50, (2, 5))), lambda: dyn(emb(250), torch.randint(0, 50, (2, 5))),
             level="structure"),
        Pair("literal 3 at width 3 (coincides with a size) vs width 5", "structure: coincidence", "same",
             lambda: dyn(lit(3), _x()), lambda: dyn(lit(5), _x()), level="structure"),
        Pair("sum(dim=2) vs sum(dim=3)", "structure: dim arguments", "different",
             lambda: dyn(dsum(2), x4), lambda: dyn(dsum(3), x4), level="structure"),
        Pair("relu vs gelu", "structure: ops", "different",
             lambda: dyn(act(torch.relu), _x()), lambda: dyn(act(F.gelu), _x()), level="structure"),
    ]
    if with_transformers:
        for name, cfg, f in (("Llama", LLAMA, 2), ("Qwen2", QWEN, 2), ("ViT", VIT, 2)):
            pairs.append(Pair(f"{name} width {cfg['hidden_size']} vs {cfg['hidden_size'] * f}, same depth",
                              "structure: width sweep", "same", lambda c=cfg: _hf(c), lambda c=cfg, f=f: _hf(_widen(c, f)),
                              level="structure"))
        deeper = dict(LLAMA, num_hidden_layers=3)
        pairs.append(Pair("Llama depth 2 vs 3", "structure: depth", "different",
                          lambda: _hf(LLAMA), lambda: _hf(deeper), level="structure"))
    return pairs


# ---- identity from schemas and values: aliases, random ops, literal bits, spellings ----------

def _write_after_identity(f, order):
    """``z = x * 2; y = f(z)``, then a read of ``z`` before or after an in-place write to ``y``:
    when ``f`` returns ``z`` itself the read sees another value."""
    def g(m, x):
        z = x * 2
        y = f(m, z)
        if order == "before":
            a = z.sum()
            y.add_(1)
        else:
            y.add_(1)
            a = z.sum()
        return a, y
    return g


IDENTITY_CALLS = {
    "F.dropout(training=False)": lambda m, z: F.dropout(z, 0.5, training=False),
    "nn.Dropout in eval mode": lambda m, z: m.drop(z),
    "type_as to the same dtype": lambda m, z: z.type_as(z),
    "atleast_2d of a 2-D tensor": lambda m, z: torch.atleast_2d(z),
}


def _random_order(draw_a, draw_b, swapped):
    def g(m, x):
        if swapped:
            b = draw_b(x)
            a = draw_a(x)
        else:
            a = draw_a(x)
            b = draw_b(x)
        return a, b
    return g


RANDOM_CALLS = {
    "F.dropout(training=True)": (lambda x: F.dropout(x, 0.3, True), lambda x: F.dropout(x * 2, 0.6, True)),
    "Tensor.bernoulli()": (lambda x: x.sigmoid().bernoulli(), lambda x: (x * 2).sigmoid().bernoulli()),
    "uniform_ / normal_": (lambda x: torch.empty_like(x).uniform_(), lambda x: torch.empty_like(x).normal_()),
    "torch.multinomial": (lambda x: torch.multinomial(x.softmax(1), 2), lambda x: torch.multinomial(x.exp(), 3)),
    "rand_like": (lambda x: torch.rand_like(x), lambda x: torch.rand_like(x) * 2),
}


def _schema_pairs():
    """False merges and splits of identity read off names instead of schemas and values."""
    pairs = []
    for name, f in IDENTITY_CALLS.items():
        def mk(order, f=f):
            return Fn(_write_after_identity(f, order), drop=nn.Dropout(0.5)).eval()

        pairs.append(Pair(f"read before vs after a write to the result of {name}", "alias", "different",
                          lambda mk=mk: dyn(mk("before"), _x()), lambda mk=mk: dyn(mk("after"), _x())))
    for name, (a, b) in RANDOM_CALLS.items():
        pairs.append(Pair(f"{name}: two draws in swapped order", "random op", "different",
                          lambda a=a, b=b: dyn(Fn(_random_order(a, b, False)), _x()),
                          lambda a=a, b=b: dyn(Fn(_random_order(a, b, True)), _x())))
    pairs.append(Pair("F.dropout(training=False) twice in swapped order", "random op", "same",
                      lambda: dyn(Fn(_random_order(lambda x: F.dropout(x, 0.3, False),
                                                   lambda x: F.dropout(x * 2, 0.6, False), False)), _x()),
                      lambda: dyn(Fn(_random_order(lambda x: F.dropout(x, 0.3, False),
                                                   lambda x: F.dropout(x * 2, 0.6, False), True)), _x())))
    pairs += [
        Pair("1/(x*0.0), 1/(x*-0.0) vs 1/(x*0.0) twice", "literal", "different",
             lambda: dyn(Fn(lambda m, x: (1 / (x * 0.0), 1 / (x * -0.0))), _x()),
             lambda: dyn(Fn(lambda m, x: (1 / (x * 0.0), 1 / (x * 0.0))), _x())),
        Pair("full(0.0), full(-0.0) vs full(0.0) twice", "literal", "different",
             lambda: dyn(Fn(lambda m, x: (x + 1 / torch.full((4, 6), 0.0), x + 1 / torch.full((4, 6), -0.0))), _x()),
             lambda: dyn(Fn(lambda m, x: (x + 1 / torch.full((4, 6), 0.0), x + 1 / torch.full((4, 6), 0.0))), _x())),
        Pair("x*-0.0 recorded before vs after x*0.0", "literal", "same",
             lambda: dyn(Fn(_random_order(lambda x: 1 / (x * -0.0), lambda x: 1 / (x * 0.0), False)), _x()),
             lambda: dyn(Fn(_random_order(lambda x: 1 / (x * -0.0), lambda x: 1 / (x * 0.0), True)), _x())),
    ]

    def and_or(op, read_first):
        def g(m, x, y):
            a, b = x > 0, y > 0
            if read_first:
                s = a.sum()
                c = op(a, b)
            else:
                c = op(a, b)
                s = a.sum()
            return s, c
        return lambda: dyn(Fn(g), _x(), _x())

    pairs += [Pair(f"a {sym} b: a read of a before vs after", "spelling", "same", and_or(op, True), and_or(op, False))
              for sym, op in (("&", operator.and_), ("|", operator.or_))]
    spellings = {
        "torch.arange(6) vs torch.arange(0, 6)": (lambda m, x: x + torch.arange(6), lambda m, x: x + torch.arange(0, 6)),
        "torch.arange(0, 6) vs torch.arange(0, 6, 1)": (lambda m, x: x + torch.arange(0, 6),
                                                        lambda m, x: x + torch.arange(0, 6, 1)),
        "torch.add(x, y, alpha=1) vs torch.add(x, y)": (lambda m, x: torch.add(x, x * 2, alpha=1),
                                                        lambda m, x: torch.add(x, x * 2)),
        "x.clamp(0) vs x.clamp(min=0)": (lambda m, x: x.clamp(0.0), lambda m, x: x.clamp(min=0.0)),
        "torch.max(x, 1) vs torch.max(x, dim=1)": (lambda m, x: torch.max(x, 1)[0], lambda m, x: torch.max(x, dim=1)[0]),
        "x.to(torch.float16) vs x.to(dtype=torch.float16)": (lambda m, x: x.to(torch.float16),
                                                             lambda m, x: x.to(dtype=torch.float16)),
        "torch.where(c, x, y) vs torch.where(c, x, other=y)": (lambda m, x: torch.where(x > 0, x, x * 2),
                                                               lambda m, x: torch.where(x > 0, x, other=x * 2)),
    }
    pairs += [Pair(name, "spelling", "same", lambda a=a: dyn(Fn(a), _x()), lambda b=b: dyn(Fn(b), _x()))
              for name, (a, b) in spellings.items()]
    return pairs


def corpus(with_transformers: bool = True) -> list[Pair]:
    """Every labelled pair (transformers width sweeps optional: they take ~1 min)."""
    return (_inplace_pairs() + _hop_pairs() + _leaf_pairs() + _symbolic_trace_pairs() + _decision_pairs()
            + _split_pairs() + _schema_pairs() + _structure_pairs(with_transformers))


def verdict(pair: Pair) -> tuple[bool, str, str]:
    """(hashes equal?, hash of a, hash of b) at the pair's level."""
    (ga, ka), (gb, kb) = pair.a(), pair.b()
    ca, cb = canonicalize(ga, ka, with_wl=False), canonicalize(gb, kb, with_wl=False)
    attr = "graph_hash" if pair.level == "graph" else "structure_hash"
    ha, hb = getattr(ca, attr), getattr(cb, attr)
    return ha == hb, ha, hb


def evaluate(pairs: list[Pair]) -> dict:
    """Counts of false merges (``different`` pairs hashed equal) and false splits (``same``
    pairs hashed apart; accepted splits counted apart), with the failing pair names."""
    res = {"pairs": len(pairs), "false_merges": [], "false_splits": [], "accepted_splits": [], "accepted_merges": []}
    for p in pairs:
        equal, _, _ = verdict(p)
        if p.label == "different" and equal:
            (res["accepted_merges"] if p.accepted_merge else res["false_merges"]).append(p.name)
        elif p.label == "same" and not equal:
            (res["accepted_splits"] if p.accepted_split else res["false_splits"]).append(p.name)
    return res


if __name__ == "__main__":
    import json
    import sys

    r = evaluate(corpus(with_transformers="--fast" not in sys.argv))
    print(f"pairs: {r['pairs']}  false merges: {len(r['false_merges'])}  false splits: {len(r['false_splits'])}  "
          f"accepted (documented) splits: {len(r['accepted_splits'])}  merges: {len(r['accepted_merges'])}")
    print(json.dumps(r, indent=1))
