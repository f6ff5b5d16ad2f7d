"""How many common calls hash alike however their arguments are spelled: per call, two to four
spellings of one computation (positional vs keyword, defaults spelled out, ``arange(8)`` vs
``arange(0, 8)``), each a one-call FX graph with the example values Dynamo would record, hashed
with :func:`passnet_common.canonical.canonicalize`. A call *normalises* when all its spellings
give one ``graph_hash``. With ``--reference REV`` the canonical form as it was at git revision
``REV`` is measured on the same graphs in the same run (:func:`benchmarks.bench_hash.reference_canonical`).

    python -m benchmarks.bench_hash_spellings [--reference REV] [--out metrics/bench/bench_hash_spellings.json]

Method calls are compared with method calls and function calls with function calls: a method and
its function (``x.add(y)``, ``torch.add(x, y)``) are different labels by design (the call's kind
and target enter the label), so they are not spellings of each other here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import torch
import torch.fx as fx
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _inputs() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "x": torch.randn(4, 6, generator=g), "y": torch.randn(4, 6, generator=g), "w": torch.randn(6, 6, generator=g),
        "m": torch.randn(4, 6, generator=g) > 0, "i": torch.randint(0, 4, (4, 6), generator=g),
        "v": torch.randint(0, 6, (3,), generator=g), "b": torch.randn(4, 6, 6, generator=g),
        "q": torch.randn(1, 2, 4, 6, generator=g), "e": torch.randint(0, 6, (2, 3), generator=g),
    }


class P:
    """A placeholder reference in a spelling."""

    def __init__(self, name: str):
        self.name = name


X, Y, W, M, IX, V, B, Q, E = (P(n) for n in "xywmivbqe")

# (name, op, target, [(args, kwargs), ...]): the spellings of one call
CALLS: list[tuple[str, str, object, list[tuple[tuple, dict]]]] = [
    ("torch.add", "call_function", torch.add, [((X, Y), {}), ((X, Y), {"alpha": 1}), ((X,), {"other": Y})]),
    ("torch.add scalar", "call_function", torch.add, [((X, 2.0), {}), ((X, 2.0), {"alpha": 1})]),
    ("torch.sub", "call_function", torch.sub, [((X, Y), {}), ((X, Y), {"alpha": 1})]),
    ("torch.mul", "call_function", torch.mul, [((X, Y), {}), ((X,), {"other": Y})]),
    ("torch.div", "call_function", torch.div, [((X, Y), {}), ((X, Y), {"rounding_mode": None})]),
    ("torch.pow", "call_function", torch.pow, [((X, 2), {}), ((X,), {"exponent": 2})]),
    ("torch.clamp", "call_function", torch.clamp, [((X, 0.0), {}), ((X,), {"min": 0.0}), ((X, 0.0, None), {})]),
    ("torch.where", "call_function", torch.where, [((M, X, Y), {}), ((M, X), {"other": Y})]),
    ("torch.max dim", "call_function", torch.max, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1, False), {})]),
    ("torch.min dim", "call_function", torch.min, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1), {"keepdim": False})]),
    ("torch.softmax", "call_function", torch.softmax, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1), {"dtype": None})]),
    ("torch.sum", "call_function", torch.sum, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1, False), {})]),
    ("torch.mean", "call_function", torch.mean, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1), {"keepdim": False})]),
    ("torch.cat", "call_function", torch.cat, [(([X, Y], 1), {}), (([X, Y],), {"dim": 1})]),
    ("torch.stack", "call_function", torch.stack, [(([X, Y], 0), {}), (([X, Y],), {}), (([X, Y],), {"dim": 0})]),
    ("torch.transpose", "call_function", torch.transpose, [((X, 0, 1), {}), ((X,), {"dim0": 0, "dim1": 1})]),
    ("torch.matmul", "call_function", torch.matmul, [((X, W), {}), ((X,), {"other": W})]),
    ("torch.bmm", "call_function", torch.bmm, [((B, B), {}), ((B,), {"mat2": B})]),
    ("torch.arange", "call_function", torch.arange, [((8,), {}), ((0, 8), {}), ((0, 8, 1), {}), ((), {"end": 8})]),
    ("torch.zeros", "call_function", torch.zeros, [(((2, 3),), {}), (((2, 3),), {"dtype": None})]),
    ("torch.ones", "call_function", torch.ones, [(((2, 3),), {}), (((2, 3),), {"dtype": None})]),
    ("torch.full", "call_function", torch.full, [(((2, 3), 1.5), {}), (((2, 3),), {"fill_value": 1.5})]),
    ("torch.cumsum", "call_function", torch.cumsum, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1), {"dtype": None})]),
    ("torch.argmax", "call_function", torch.argmax, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1, False), {})]),
    ("torch.topk", "call_function", torch.topk, [((X, 2), {}), ((X,), {"k": 2}), ((X, 2, -1), {}),
                                                  ((X, 2), {"dim": -1, "largest": True, "sorted": True})]),
    ("torch.gather", "call_function", torch.gather, [((X, 1, IX), {}), ((X,), {"dim": 1, "index": IX})]),
    ("torch.index_select", "call_function", torch.index_select, [((X, 1, V), {}), ((X,), {"dim": 1, "index": V})]),
    ("torch.flatten", "call_function", torch.flatten, [((B, 1), {}), ((B,), {"start_dim": 1}), ((B, 1, -1), {})]),
    ("torch.squeeze", "call_function", torch.squeeze, [((X, 0), {}), ((X,), {"dim": 0})]),
    ("torch.unsqueeze", "call_function", torch.unsqueeze, [((X, 0), {}), ((X,), {"dim": 0})]),
    ("torch.chunk", "call_function", torch.chunk, [((X, 2), {}), ((X, 2, 0), {}), ((X,), {"chunks": 2, "dim": 0})]),
    ("torch.reshape", "call_function", torch.reshape, [((X, (2, -1)), {}), ((X,), {"shape": (2, -1)})]),
    ("torch.permute", "call_function", torch.permute, [((X, (1, 0)), {}), ((X,), {"dims": (1, 0)})]),
    ("torch.tril", "call_function", torch.tril, [((X,), {}), ((X, 0), {}), ((X,), {"diagonal": 0})]),
    ("torch.triu", "call_function", torch.triu, [((X,), {}), ((X, 0), {}), ((X,), {"diagonal": 0})]),
    ("torch.roll", "call_function", torch.roll, [((X, 1, 0), {}), ((X,), {"shifts": 1, "dims": 0})]),
    ("torch.narrow", "call_function", torch.narrow, [((X, 0, 0, 2), {}), ((X,), {"dim": 0, "start": 0, "length": 2})]),
    ("torch.select", "call_function", torch.select, [((X, 0, 1), {}), ((X,), {"dim": 0, "index": 1})]),
    ("torch.amax", "call_function", torch.amax, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1, False), {})]),
    ("torch.logsumexp", "call_function", torch.logsumexp, [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1, False), {})]),
    ("torch.full_like", "call_function", torch.full_like, [((X, 0.5), {}), ((X,), {"fill_value": 0.5})]),
    ("torch.zeros_like", "call_function", torch.zeros_like, [((X,), {}), ((X,), {"dtype": None})]),
    ("torch.eq", "call_function", torch.eq, [((X, Y), {}), ((X,), {"other": Y})]),
    ("torch.addmm", "call_function", torch.addmm, [((X, X, W), {}), ((X, X, W), {"beta": 1, "alpha": 1})]),
    ("torch.split", "call_function", torch.split, [((X, 2), {}), ((X, 2, 0), {}), ((X, 2), {"dim": 0})]),
    ("F.linear", "call_function", F.linear, [((X, W), {}), ((X, W, None), {}), ((X,), {"weight": W, "bias": None})]),
    ("F.relu", "call_function", F.relu, [((X,), {}), ((X, False), {}), ((X,), {"inplace": False})]),
    ("F.gelu", "call_function", F.gelu, [((X,), {}), ((X,), {"approximate": "none"})]),
    ("F.silu", "call_function", F.silu, [((X,), {}), ((X,), {"inplace": False})]),
    ("F.layer_norm", "call_function", F.layer_norm, [((X, (6,)), {}), ((X, (6,), None, None, 1e-5), {})]),
    ("F.softmax", "call_function", F.softmax, [((X, 1), {}), ((X,), {"dim": 1})]),
    ("F.embedding", "call_function", F.embedding, [((E, W), {}), ((E, W, None), {})]),
    ("F.scaled_dot_product_attention", "call_function", F.scaled_dot_product_attention,
     [((Q, Q, Q), {}), ((Q, Q, Q, None, 0.0, False), {})]),
    ("Tensor.to", "call_method", "to", [((X, torch.float16), {}), ((X,), {"dtype": torch.float16})]),
    ("Tensor.float", "call_method", "float", [((X,), {}), ((X,), {"memory_format": torch.preserve_format})]),
    ("Tensor.contiguous", "call_method", "contiguous", [((X,), {}), ((X,), {"memory_format": torch.contiguous_format})]),
    ("Tensor.type_as", "call_method", "type_as", [((X, Y), {}), ((X,), {"other": Y})]),
    ("Tensor.masked_fill", "call_method", "masked_fill", [((X, M, 0.0), {}), ((X,), {"mask": M, "value": 0.0})]),
    ("Tensor.add", "call_method", "add", [((X, Y), {}), ((X, Y), {"alpha": 1}), ((X,), {"other": Y})]),
    ("Tensor.clamp", "call_method", "clamp", [((X, 0.0), {}), ((X,), {"min": 0.0})]),
    ("Tensor.max dim", "call_method", "max", [((X, 1), {}), ((X,), {"dim": 1})]),
    ("Tensor.sum", "call_method", "sum", [((X, 1), {}), ((X,), {"dim": 1}), ((X, 1), {"keepdim": False})]),
    ("Tensor.transpose", "call_method", "transpose", [((X, 0, 1), {}), ((X,), {"dim0": 0, "dim1": 1})]),
    ("Tensor.view", "call_method", "view", [((X, 2, -1), {}), ((X, (2, -1)), {})]),
    ("Tensor.softmax", "call_method", "softmax", [((X, 1), {}), ((X,), {"dim": 1})]),
    ("Tensor.unsqueeze", "call_method", "unsqueeze", [((X, 0), {}), ((X,), {"dim": 0})]),
]


def _resolve(v, env):
    if isinstance(v, P):
        return env[v.name]
    if isinstance(v, (tuple, list)):
        return type(v)(_resolve(x, env) for x in v)
    if isinstance(v, dict):
        return {k: _resolve(x, env) for k, x in v.items()}
    return v


def one_call_graph(op: str, target, args: tuple, kwargs: dict) -> fx.GraphModule:
    """A graph of the placeholders a spelling uses and its one call, with the example values
    Dynamo records (``example_value``: the tensors themselves for inputs, the call's result)."""
    values = _inputs()
    g = fx.Graph()
    used: list[str] = []

    def note(v):
        if isinstance(v, P) and v.name not in used:
            used.append(v.name)
        elif isinstance(v, (tuple, list)):
            for x in v:
                note(x)
        elif isinstance(v, dict):
            for x in v.values():
                note(x)

    note(args)
    note(kwargs)
    nodes = {}
    for name in sorted(used):
        nodes[name] = g.placeholder(name)
        nodes[name].meta["example_value"] = values[name]
    call = g.create_node(op, target, _resolve(args, nodes), _resolve(kwargs, nodes))
    real_args, real_kwargs = _resolve(args, values), _resolve(kwargs, values)
    out = getattr(real_args[0], target)(*real_args[1:], **real_kwargs) if op == "call_method" \
        else target(*real_args, **real_kwargs)
    call.meta["example_value"] = out
    g.output((call,))
    return fx.GraphModule(torch.nn.Module(), g)


def measure(canonicalize) -> dict[str, bool]:
    """``{call: whether all its spellings give one graph_hash}`` under ``canonicalize``."""
    out = {}
    for name, op, target, spellings in CALLS:
        hashes = {canonicalize(one_call_graph(op, target, a, k), with_wl=False).graph_hash for a, k in spellings}
        out[name] = len(hashes) == 1
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", default=None, help="git revision to measure beside the current form")
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "bench_hash_spellings.json"))
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    load_start = os.getloadavg()
    from passnet_common.canonical import CANONICAL_VERSION, canonicalize

    now = measure(canonicalize)
    rec: dict = {
        "command": " ".join(["python -m benchmarks.bench_hash_spellings", *(argv if argv is not None else sys.argv[1:])]),
        "machine": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
        "canonical_version": CANONICAL_VERSION, "calls": len(CALLS),
        "spellings": sum(len(c[3]) for c in CALLS),
        "normalised": sum(now.values()), "not_normalised": sorted(k for k, v in now.items() if not v),
    }
    if a.reference:
        from benchmarks.bench_hash import reference_canonical

        ref = measure(reference_canonical(a.reference).canonicalize)
        rec["reference"] = a.reference
        rec["reference_normalised"] = sum(ref.values())
        rec["reference_not_normalised"] = sorted(k for k, v in ref.items() if not v)
    rec["loadavg_start"], rec["loadavg_end"] = list(load_start), list(os.getloadavg())
    print(json.dumps({k: v for k, v in rec.items() if k != "machine"}, indent=1))
    if a.out:
        Path(a.out).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return rec


if __name__ == "__main__":
    main()
