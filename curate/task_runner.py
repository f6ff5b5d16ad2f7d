"""Run one PassNet task standalone: load its subgraphs, run eager and torch.compile, time both.

Copied as ``run_task.py`` into every task folder; needs only ``torch`` (no PassNet code):

    python run_task.py                    # Inductor vs eager on every subgraph of the task
    python run_task.py --backend eager --trials 5

Layout beside this script: ``task.json`` (subgraphs, input metadata, baseline timings) and
``subgraphs/<hash>/graph.json`` (canonical FX node list: op, target, args, output metadata),
``input_meta.json`` / ``weight_meta.json`` (shapes, dtypes, statistics; never values). Graphs
are rebuilt by resolving call targets against an allowlist (torch, operator, math): nothing
is ``exec``-ed. Custom operators (``torch.ops.<namespace>.*``) resolve only for torch's own
namespaces and the trusted table ``OP_NAMESPACE_MODULES`` (a copy of
``passnet_common.store.OP_NAMESPACE_MODULES``): the registering module (e.g.
``transformers.integrations.moe`` for ``torch.ops.transformers.grouped_mm_fallback``) is
imported first; ``task.json`` lists the ones the task needs under ``op_modules``, and they
are imported (and checked to be installed) before anything runs. Inputs are synthesised from the metadata with a fixed seed. Timing: one
untimed call, 3 warm-up calls, interleaved trials, medians, speedup = eager / compiled.
"""

import argparse
import builtins
import importlib
import json
import statistics
import time
from pathlib import Path

import torch
import torch.fx as fx

ALLOWED = ("torch.", "_operator.", "operator.", "math.")
BUILTINS = {"getattr", "len", "max", "min", "abs", "int", "float", "bool", "tuple", "list", "range", "slice", "round", "sum", "all", "any"}
TORCH_OP_NAMESPACES = {"aten", "prims", "prim", "higher_order", "quantized", "rngprims", "inductor", "mkldnn", "mkl", "onednn",
                       "_c10d_functional", "c10d_functional", "profiler"}
OP_NAMESPACE_MODULES = {
    "torchvision": ("torchvision",),
    "transformers": ("transformers.integrations.moe",),
    "transformers_msa": ("transformers.integrations.msa_attention",),
}


def import_op_modules(modules):
    """Import the registering modules a task lists (only those of the trusted table)."""
    trusted = {m for mods in OP_NAMESPACE_MODULES.values() for m in mods}
    for mod in modules:
        if mod not in trusted:
            raise ValueError(f"task.json asks for module {mod!r}, which is not in the trusted table {sorted(trusted)}")
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            raise SystemExit(f"this task needs {mod!r} installed (it registers custom operators): {exc}")


def resolve(name):
    if name.startswith("builtins."):
        if name.split(".", 1)[1] not in BUILTINS:
            raise ValueError(f"builtin {name} not allowed")
        return getattr(builtins, name.split(".", 1)[1])
    if not name.startswith(ALLOWED):
        raise ValueError(f"call target {name} outside the allowlist")
    parts = name.split(".")
    if parts[:2] == ["torch", "ops"]:
        ns = parts[2] if len(parts) > 2 else ""
        if ns not in TORCH_OP_NAMESPACES and ns not in OP_NAMESPACE_MODULES:
            raise ValueError(f"call target {name}: operator namespace {ns!r} is not trusted")
        import_op_modules(OP_NAMESPACE_MODULES.get(ns, ()))
    obj = importlib.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def decode(v, built):
    if not isinstance(v, list):
        return v
    tag, rest = v[0], v[1:]
    if tag == "%":
        return built[rest[0]]
    if tag in ("list", "tuple", "size"):
        items = [decode(x, built) for x in rest]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {k: decode(x, built) for k, x in rest}
    if tag in ("dtype", "memory_format", "layout"):
        return getattr(torch, rest[0])
    if tag == "device":
        return torch.device("cpu")
    if tag == "slice":
        return slice(*[decode(x, built) for x in rest])
    if tag == "ellipsis":
        return Ellipsis
    if tag == "float":
        return float(rest[0])
    if tag == "complex":
        return complex(decode(rest[0], built), decode(rest[1], built))
    if tag == "fn":
        return resolve(rest[0])
    raise ValueError(f"cannot rebuild argument {v!r}")


def synth(meta, kind, stats, int_high, gen):
    _, dtype_name, shape = meta
    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype)
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=gen)
        if stats and stats.get("mean") is not None:
            t = t * float(stats.get("std") or 0.0) + float(stats["mean"])
            if stats.get("min") is not None and stats.get("max") is not None:
                t = t.clamp(float(stats["min"]), float(stats["max"]))
        elif kind == "buffer":
            t = (1.0 + 0.02 * t).abs()
        elif kind == "parameter":
            t = t * 0.02
        return t.to(dtype)
    if stats and stats.get("min") is not None and stats.get("max") is not None:
        return torch.randint(int(stats["min"]), int(stats["max"]) + 1, shape, generator=gen, dtype=dtype)
    if kind == "input":
        return torch.randint(0, int(int_high or 2), shape, generator=gen, dtype=dtype)
    return torch.zeros(shape, dtype=dtype)


def load(folder, seed=0):
    data = json.loads((folder / "graph.json").read_text())
    imeta = json.loads((folder / "input_meta.json").read_text())
    wmeta = json.loads((folder / "weight_meta.json").read_text())
    stats = {p["position"]: p.get("stats") for p in imeta["placeholders"] + wmeta["placeholders"]}
    gen = torch.Generator().manual_seed(seed)
    nodes = data["nodes"]
    g, built, phs = fx.Graph(), [None] * len(nodes), []
    # placeholders in calling order (their position), as passnet_common.store.load_graph builds them
    for i in sorted((i for i, n in enumerate(nodes) if n["op"] == "placeholder"), key=lambda i: nodes[i]["position"]):
        n = nodes[i]
        built[i] = g.placeholder(f"arg{n['position']}")
        phs.append((n["position"], synth(n["meta"], n.get("kind", "input"), stats.get(n["position"]), imeta.get("int_high"), gen)))
    for i, n in enumerate(nodes):
        if n["op"] == "placeholder":
            continue
        if n["op"] == "call_function":
            node = g.call_function(resolve(n["target"]), decode(n["args"], built), decode(n["kwargs"], built))
        elif n["op"] == "call_method":
            node = g.call_method(n["target"], decode(n["args"], built), decode(n["kwargs"], built))
        elif n["op"] == "output":
            node = g.output(decode(n["args"], built)[0])
        else:
            raise ValueError(f"op {n['op']} not supported")
        built[i] = node
    return fx.GraphModule(torch.nn.Module(), g), [v for _, v in sorted(phs, key=lambda pv: pv[0])]


def time_pair(eager, compiled, inputs, trials, warmup=3):
    ins_e = [x.clone() for x in inputs]
    ins_c = [x.clone() for x in inputs]
    for f, ins in ((eager, ins_e), (compiled, ins_c)):
        for _ in range(1 + warmup):
            torch.manual_seed(0)
            f(*ins)
    e, c = [], []
    for _ in range(trials):
        for f, ins, acc in ((eager, ins_e, e), (compiled, ins_c, c)):
            torch.manual_seed(0)
            t0 = time.perf_counter()
            f(*ins)
            acc.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(e), statistics.median(c)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--trials", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    import torch._inductor.config as ic

    ic.fallback_random = True
    here = Path(__file__).resolve().parent
    task = json.loads((here / "task.json").read_text())
    import_op_modules(task.get("op_modules", []))
    print(f"task {task['task_id']} ({task['pattern']}): {len(task['subgraphs'])} subgraphs, backend {args.backend}")
    print(f"{'subgraph':14} {'eager ms':>10} {'compiled ms':>12} {'speedup':>8} {'baseline':>9} {'max|diff|':>10}")
    for sg in task["subgraphs"]:
        gm, inputs = load(here / "subgraphs" / sg["subgraph_hash"])
        torch._dynamo.reset()
        compiled = torch.compile(gm, backend=args.backend)
        torch.manual_seed(0)
        ref = gm(*[x.clone() for x in inputs])
        torch.manual_seed(0)
        out = compiled(*[x.clone() for x in inputs])
        diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(out, ref)
                    if isinstance(a, torch.Tensor) and a.numel() and a.dtype.is_floating_point), default=0.0)
        me, mc = time_pair(gm, compiled, inputs, args.trials)
        print(f"{sg['subgraph_hash'][:12]:14} {me:10.4f} {mc:12.4f} {me / mc:8.3f} {sg['baseline_speedup']:9.3f} {diff:10.2e}")


if __name__ == "__main__":
    main()
