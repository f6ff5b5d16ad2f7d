"""Run one PassNet task standalone: load its variants, time eager, Dynamo-only and a candidate.

Copied as ``run_task.py`` into every task folder, beside ``timing_protocol.py`` (a copy of
``curate/timing.py``: the exact protocol the ``profile`` stage used); needs only ``torch``
and ``numpy``:

    python run_task.py                                # Inductor (the default candidate)
    python run_task.py --backend eager                # the no-op control: compiles nothing
    python run_task.py --backend-module my_backend.py # a file exposing backend(gm, example_inputs)
    python run_task.py --pass-file my_pass.py         # a file exposing PATTERNS = [(pattern, replacement)]

It times with the profile's protocol (``task.json`` ``timing``: the same clock -- the timing
thread's CPU time, wall time recorded beside it --, gate, stop rule, trial counts and time cap as
the ``profile`` stage that labelled the task), so it prints PASS / FAIL wherever the profile would
have given a label. Each variant runs in its dtype (``task.json`` ``dtype``: floating inputs and
weights cast).

Per variant it prints speedup_e2e (eager / candidate, PassNet's figure) and speedup_compiler
(Dynamo-only / candidate: what the candidate changes, without Dynamo's harness) with their
bootstrap intervals, the profile's baseline, and whether the outputs pass at the task's
tolerance level t; the last line is the verdict (:func:`verdict`), and the exit status is 0
for PASS, 1 for FAIL, 2 for RERUN (a timing the noise gate could not decide).

Layout beside this script: ``task.json`` (variants, input metadata, baselines) and
``subgraphs/<hash>-<size>/graph.json`` (canonical FX node list), ``input_meta.json`` /
``weight_meta.json`` (shapes, dtypes, statistics; never values). Graphs are rebuilt by
resolving call targets against an allowlist (torch, operator, math): nothing is ``exec``-ed.
Custom operators (``torch.ops.<namespace>.*``) resolve only for torch's own namespaces and the
trusted table ``OP_NAMESPACE_MODULES`` (a copy of ``passnet_common.store.OP_NAMESPACE_MODULES``);
``task.json`` lists the modules the task needs under ``op_modules``, imported first. Inputs
are synthesised from the metadata with a fixed seed.
"""

import argparse
import builtins
import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path

import torch
import torch.fx as fx
from torch.fx import subgraph_rewriter
from torch.utils._pytree import tree_flatten

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


# dtype -> (atol exponent factor, rtol exponent factor), as curate/tolerance.py
EXPONENTS = {"float16": (1.0, 3 / 5), "bfloat16": (1.0, 1.796 / 5), "float32": (1.0, 5.886 / 5), "float64": (7 / 5, 7 / 5)}


def correct_at(out, ref, t):
    """Every tensor output of ``out`` within ``atol + rtol |ref|`` at level ``t`` (ints exact)."""
    fo, fr = tree_flatten(out)[0], tree_flatten(ref)[0]
    if len(fo) != len(fr):
        return False
    for a, b in zip(fo, fr):
        if not isinstance(a, torch.Tensor):
            continue
        name = str(b.dtype).replace("torch.", "")
        if name in EXPONENTS:
            ea, er = EXPONENTS[name]
            if a.shape != b.shape or not torch.isclose(a.double(), b.double(), rtol=10 ** (er * t), atol=10 ** (ea * t),
                                                       equal_nan=True).all():
                return False
        elif a.shape != b.shape or not torch.equal(a, b):
            return False
    return True


def protocol():
    """The shipped protocol module (``timing_protocol.py`` beside this file; ``curate.timing``
    when run from the repository)."""
    p = Path(__file__).resolve().parent / "timing_protocol.py"
    if p.exists():
        spec = importlib.util.spec_from_file_location("timing_protocol", p)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["timing_protocol"] = mod
        spec.loader.exec_module(mod)
        return mod
    from curate import timing  # noqa: PLC0415  (standalone: the run_task.py copy in a task folder has no curate package; only a run from the repository falls back to curate.timing)

    return timing


def _load_file(path):
    spec = importlib.util.spec_from_file_location(f"candidate_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def candidate_of(args):
    """``(name, backend)``: a backend name, a module's ``backend`` callable, or a pass file's
    ``PATTERNS`` applied with ``torch.fx.subgraph_rewriter.replace_pattern`` (run eagerly)."""
    if args.backend_module:
        mod = _load_file(args.backend_module)
        if not callable(getattr(mod, "backend", None)):
            raise SystemExit(f"{args.backend_module}: no backend(gm, example_inputs) function")
        return args.backend_module, mod.backend
    if args.pass_file:
        mod = _load_file(args.pass_file)
        patterns = getattr(mod, "PATTERNS", None)
        if not patterns:
            raise SystemExit(f"{args.pass_file}: no PATTERNS = [(pattern, replacement), ...]")

        def backend(gm, example_inputs):
            for pat, rep in patterns:
                subgraph_rewriter.replace_pattern(gm, pat, rep)
            gm.recompile()
            return gm

        return args.pass_file, backend
    return args.backend, args.backend


def run_variant(folder, backend, t, tc, tp, dtype="float32"):
    """Speedups (with intervals), correctness and the clock check of one variant folder, its
    floating inputs (weights included) cast to ``dtype``."""
    gm, inputs = load(folder)
    dt = getattr(torch, dtype)
    inputs = [x.to(dt) if x.is_floating_point() else x for x in inputs]
    fresh = lambda: [x.clone() for x in inputs]  # noqa: E731
    torch.manual_seed(0)
    ref = gm(*fresh())
    dyn, _ = tp.compile_candidate(load(folder)[0], fresh(), "eager", reset=True)
    cand, _ = tp.compile_candidate(gm, fresh(), backend, reset=False)
    torch.manual_seed(0)
    out = cand(*fresh())
    s = tp.measure_sides({"eager": gm, "dynamo": dyn, "candidate": cand}, fresh, tc,
                         decide=(("eager", "candidate"), ("dynamo", "candidate"), ("eager", "dynamo")))
    return {"correct": correct_at(out, ref, t), "e2e": s.ratio("eager", "candidate"),
            "e2e_ci": s.ratio_ci("eager", "candidate", tc.ci_level, tc.n_boot),
            "compiler": s.ratio("dynamo", "candidate"),
            "compiler_ci": s.ratio_ci("dynamo", "candidate", tc.ci_level, tc.n_boot),
            "stable": s.stable, "eager_ms": s.medians_ms["eager"], "clock": s.clock, "clock_gap": s.clock_gap,
            "clock_flag": s.clock_flag}


def verdict(results, margin, rule="compiler"):
    """``(PASS|FAIL|RERUN, reason)``: FAIL when a variant is incorrect at the task's level;
    RERUN when a variant's timing did not pass the noise gate (``stable`` false: its interval
    decides nothing, as PassBench's "re-run"); else PASS when the geometric mean of the
    per-variant speedup interval upper ends is not below ``1 - margin``, FAIL otherwise.

    ``rule`` picks the speedup (the ``curate.curate.rule`` switch of the profile stage):
    ``compiler`` (default) judges ``speedup_compiler`` (Dynamo-only / candidate: what the
    candidate changes, so the no-op control ``--backend eager`` sits at 1 and passes on any
    machine); ``e2e`` judges ``speedup_e2e`` (eager / candidate, PassNet's figure, which
    includes Dynamo's per-call guard cost, so a tiny subgraph fails it whatever the candidate)."""
    bad = [r["id"] for r in results if not r["correct"]]
    if bad:
        return "FAIL", f"{len(bad)} variant(s) incorrect at the task's tolerance: {', '.join(bad)}"
    noisy = [r["id"] for r in results if not r.get("stable", True)]
    if noisy:  # PassBench: IQR/median > 0.2 -> "re-run"; an undecided timing judges nothing
        return "RERUN", (f"timing not decided for {len(noisy)} variant(s) (noise gate failed; re-run on a quieter machine "
                         f"or with more trials): {', '.join(noisy)}")
    key = "compiler_ci" if rule == "compiler" else "e2e_ci"
    name = "speedup_compiler" if rule == "compiler" else "speedup_e2e"
    hi = math.exp(sum(math.log(r[key][1]) for r in results) / len(results))
    ref = "Dynamo-only" if rule == "compiler" else "eager"
    if hi < 1 - margin:
        return "FAIL", f"slower than {ref} with confidence (geomean {name} interval upper end {hi:.3f})"
    return "PASS", f"correct on {len(results)} variant(s); geomean {name} upper end {hi:.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="inductor", help="torch.compile backend name")
    ap.add_argument("--backend-module", default=None, help="a .py file exposing backend(gm, example_inputs)")
    ap.add_argument("--pass-file", default=None, help="a .py file exposing PATTERNS = [(pattern, replacement)]")
    ap.add_argument("--trials", type=int, default=None, help="most trials (default: the protocol's)")
    ap.add_argument("--min-trial-ms", type=float, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rule", choices=("compiler", "e2e"), default=None,
                    help="speedup the verdict judges: compiler (vs Dynamo-only) or e2e (vs eager, PassNet's); "
                         "default: the task's rule, else compiler")
    ap.add_argument("--task", default=None, help="task folder (default: this script's folder)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    tp = protocol()
    tp.pin_allocator()  # the profile's allocator state (timing_protocol.pin_allocator)
    kw = {k: v for k, v in (("trials", args.trials), ("min_trial_ms", args.min_trial_ms)) if v is not None}
    here = Path(args.task).resolve() if args.task else Path(__file__).resolve().parent
    task = json.loads((here / "task.json").read_text())
    tc = tp.TimingConfig(**{**(task.get("timing") or {}), **kw})  # the profile's protocol, CLI overrides on top
    import_op_modules(task.get("op_modules", []))
    name, backend = candidate_of(args)
    t = int(task["tolerance_t"])
    print(f"task {task['task_id']} ({task['pattern']}): {len(task['subgraphs'])} variants, candidate {name}, tolerance t={t}, "
          f"clock {tc.clock}, gate {tc.gate}, stop {tc.stop}, <= {tc.trials} trials")
    print(f"{'variant':22} {'eager ms':>9} {'speedup_e2e [CI]':>24} {'speedup_compiler [CI]':>24} {'baseline':>8} {'ok':>3}")
    results = []
    for sg in task["subgraphs"]:
        r = run_variant(here / "subgraphs" / sg.get("folder", sg["subgraph_hash"]), backend, t, tc, tp, sg.get("dtype", "float32"))
        r["id"] = sg.get("variant_id", sg["subgraph_hash"])
        results.append(r)
        base = sg.get("baseline_speedup_e2e", sg.get("baseline_speedup")) or float("nan")
        short = r["id"][:12] + (r["id"][64:] if ":" in r["id"] else "")
        print(f"{short:22} {r['eager_ms']:9.4f} {r['e2e']:7.3f} [{r['e2e_ci'][0]:.3f}, {r['e2e_ci'][1]:.3f}]"
              f" {r['compiler']:8.3f} [{r['compiler_ci'][0]:.3f}, {r['compiler_ci'][1]:.3f}] {base:8.3f}"
              f" {'yes' if r['correct'] else 'NO':>3}" + (f"  wall/{r['clock']} {r['clock_gap']:.2f} (flagged)" if r["clock_flag"] else ""))
    v, why = verdict(results, tc.min_effect, args.rule or task.get("rule", "compiler"))
    print(f"verdict: {v} ({why})")
    return {"PASS": 0, "FAIL": 1}.get(v, 2)


if __name__ == "__main__":
    sys.exit(main())
