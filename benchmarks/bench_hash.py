"""Canonical hashing throughput: graph_hash + structure_hash in FX nodes/s on one core,
against the GraphNet-style baseline (generate the graph's Python code, sha256 it) measured
on the same graphs in the same run. A printed table, never asserted.

    python -m benchmarks.bench_hash [--max-nodes 100000] [--real llama70b,qwen3next80b] [--reference e221741]
        [--repeat 3] [--out metrics/bench/bench_hash.json]

Graphs at three sizes (~1K, ~10K, ~100K FX nodes), of two kinds:

* synthetic transformer-block chains (linear / view / transpose / matmul / softmax / add, with
  output metadata, as Dynamo records them), 1K, 3K, 10K, 30K and 100K nodes: the scaling curve;
* real graphs captured by Dynamo on the meta device through :func:`extract.capture.capture_row`
  (``--real``): Llama-3.3-70B's true-size config cut to 14 layers (~1K nodes), the true-size
  Llama-3.3-70B (5,651 nodes) and Qwen3-Next-80B-A3B (10,747 nodes), and, at ~100K nodes, the
  two true-size graphs side by side, copied until 100K nodes are reached (disjoint copies in
  one graph: no real model of 100K nodes can be captured here in minutes; the copies are
  identical, so this graph also exercises the tie-breaking of the canonical order).

``graph_hashes`` (hashes only) and ``canonicalize`` (the full form with the stored node list,
no WL bucket) are timed. Times are process CPU seconds (``time.process_time``, best of
``--reps``): the machine is shared, CPU time is what one core spends. ``--repeat N`` runs the
whole measurement N times in a row and reports each graph's median over the runs, with every
run's figures in the record (``per_run``: the code-text baseline of each run is the machine's
speed in it, which drifts on a shared host). The load average at the
start and end of the run is recorded beside the figures. ``--reference REV`` also times the canonical
form as it was at git revision ``REV`` (:func:`reference_canonical`) on the same graphs in the same run,
and records whether it gives the same ``graph_hash`` on each.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic_chain(n_nodes: int, width: int = 64):
    """An FX GraphModule of ~``n_nodes`` nodes: repeated attention-like blocks with
    parameters as placeholders and meta-tensor ``example_value`` metadata."""
    import operator

    import torch
    import torch.fx as fx

    g = fx.Graph()
    meta = torch.device("meta")

    def mk(op, target, args, shape, kwargs=None):
        nd = g.create_node(op, target, args, kwargs or {})
        nd.meta["example_value"] = torch.empty(shape, device=meta)
        return nd

    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 16, width, device=meta)
    h = x
    count = 1
    layer = 0
    while count < n_nodes - 1:
        ws = []
        for k in range(4):
            w = g.placeholder(f"w{layer}_{k}")
            w.meta["example_value"] = torch.empty(width, width, device=meta)
            ws.append(w)
        q = mk("call_function", torch._C._nn.linear, (h, ws[0]), (2, 16, width))
        kk = mk("call_function", torch._C._nn.linear, (h, ws[1]), (2, 16, width))
        v = mk("call_function", torch._C._nn.linear, (h, ws[2]), (2, 16, width))
        qv = mk("call_method", "view", (q, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        kv = mk("call_method", "view", (kk, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        qt = mk("call_method", "transpose", (qv, 1, 2), (2, 4, 16, width // 4))
        kt = mk("call_method", "transpose", (kv, 1, 2), (2, 4, 16, width // 4))
        s = mk("call_function", torch.matmul, (qt, mk("call_method", "transpose", (kt, -2, -1), (2, 4, width // 4, 16))), (2, 4, 16, 16))
        p = mk("call_function", torch.softmax, (s,), (2, 4, 16, 16), {"dim": -1})
        vv = mk("call_method", "view", (v, 2, 16, 4, width // 4), (2, 16, 4, width // 4))
        vt = mk("call_method", "transpose", (vv, 1, 2), (2, 4, 16, width // 4))
        o = mk("call_function", torch.matmul, (p, vt), (2, 4, 16, width // 4))
        o2 = mk("call_method", "reshape", (mk("call_method", "transpose", (o, 1, 2), (2, 16, 4, width // 4)), 2, 16, width), (2, 16, width))
        h = mk("call_function", operator.add, (h, mk("call_function", torch._C._nn.linear, (o2, ws[3]), (2, 16, width))), (2, 16, width))
        count += 4 + 17
        layer += 1
    g.output((h,))
    return fx.GraphModule(torch.nn.Module(), g)


# True-size configs (the published config.json values that shape the graph), captured on the
# meta device: no weights are allocated. Qwen3-Next uses transformers' Qwen3NextConfig
# defaults, which are Qwen3-Next-80B-A3B's.
LLAMA_70B = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 128256, "hidden_size": 8192,
             "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
             "max_position_embeddings": 131072, "rope_theta": 500000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
QWEN3_NEXT_80B = {"model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"]}


def _capture(name: str, cfg: dict, seq_len: int):
    from extract.capture import capture_row
    from extract.sources.rows import row_from_hf_config

    try:
        res = capture_row(row_from_hf_config(cfg, f"local:{name}", name, "local"), {"seq_len": seq_len, "meta": True})
    except Exception as exc:  # noqa: BLE001 - a benchmark input, reported and skipped
        print(f"skipping {name}: {type(exc).__name__}: {exc}")
        return None
    if not res.graphs:
        print(f"skipping {name}: no graph captured ({getattr(res, 'error', None)})")
        return None
    g = max(res.graphs, key=lambda g: len(g.gm.graph.nodes))
    return g.gm, g.kinds


def disjoint_copies(parts: list, min_nodes: int):
    """One GraphModule holding disjoint copies of the graphs ``parts`` (``(gm, kinds)``, taken
    in turn) until it has at least ``min_nodes`` nodes: each copy has its own placeholders, its
    output values are appended to one output tuple. Returns ``(gm, kinds)``; the sub-modules
    of each part are shared (a copy's ``get_attr`` / ``call_module`` targets stay valid)."""
    import torch
    import torch.fx as fx

    g = fx.Graph()
    root = torch.nn.Module()
    outs, kinds, count, k = [], [], 0, 0
    while count < min_nodes:
        gm, kd = parts[k % len(parts)]
        prefix = f"part{k % len(parts)}"
        if not hasattr(root, prefix):
            root.add_module(prefix, gm)
        env: dict = {}
        for nd in gm.graph.nodes:
            if nd.op == "output":
                val = fx.map_arg(nd.args[0], lambda m: env[m])
                outs.extend(val if isinstance(val, (tuple, list)) else [val])
                continue
            new = g.node_copy(nd, lambda m: env[m])
            if nd.op == "placeholder":  # the argument name of the generated code: one per copy
                new.target = f"c{k}_{nd.target}"
            elif nd.op in ("get_attr", "call_module"):
                new.target = f"{prefix}.{nd.target}"
            env[nd] = new
        kinds.extend(kd if kd is not None else ["input"] * sum(1 for n in gm.graph.nodes if n.op == "placeholder"))
        count += len(gm.graph.nodes) - 1
        k += 1
    g.output(tuple(outs))
    return fx.GraphModule(root, g), kinds


def real_graphs(which: tuple[str, ...] = ("llama70b", "qwen3next80b"), seq_len: int = 16, max_nodes: int = 100_000):
    """(name, GraphModule, kinds) of real graphs captured on meta (each capture costs tens of
    CPU seconds): Llama-3.3-70B cut to 14 layers (~1K nodes), the true-size Llama-3.3-70B
    and Qwen3-Next-80B-A3B, and their disjoint copies up to ``max_nodes`` (see the module
    docstring). A capture that fails is printed and skipped."""
    out, full = [], []
    if "llama70b" in which and max_nodes >= 1_000:
        got = _capture("llama70b-14-layers", dict(LLAMA_70B, num_hidden_layers=14), seq_len)
        if got is not None:
            out.append(("Llama-3.3-70B, 14 of 80 layers (Dynamo, meta)", *got))
    configs = {"llama70b": ("Llama-3.3-70B (Dynamo, meta)", LLAMA_70B),
               "qwen3next80b": ("Qwen3-Next-80B-A3B (Dynamo, meta)", QWEN3_NEXT_80B)}
    for key in which:
        name, cfg = configs[key]
        got = _capture(key, cfg, seq_len)
        if got is not None:
            out.append((name, *got))
            full.append(got)
    if full and max_nodes >= 100_000:
        gm, kinds = disjoint_copies(full, 100_000)
        out.append((f"Llama-3.3-70B + Qwen3-Next-80B, disjoint copies ({len(gm.graph.nodes) // 1000}K)", gm, kinds))
    return out


_CANONICAL_FILES = ("compiled", "labels", "fastpath", "stored", "effects", "order", "form", "seam", "__init__")
_OPTIONAL_FILES = ("compiled", "seam")  # absent at older revisions
_COMPILED_FILES = ("_cmerkle", "_cform")


def build_extension(source: str, ext: str, module_name: str):
    """Compile the Cython ``source`` of the extension ``ext`` (``_cform``, ``_cmerkle``) in a
    temporary folder and load it as ``module_name`` (whose last part must be ``ext``). Returns the
    module, or None when Cython or a C compiler is missing or the build fails (printed)."""
    import contextlib
    import importlib.util
    import io
    import shutil
    import tempfile

    try:
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
    except ImportError:
        return None
    work = Path(tempfile.mkdtemp(prefix=f"passnet-ref-{ext}-"))
    (work / f"{ext}.pyx").write_text(source)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            mods = cythonize([Extension(ext, [str(work / f"{ext}.pyx")])], compiler_directives={"language_level": 3},
                             quiet=True, build_dir=str(work / "c"))
            dist = Distribution({"ext_modules": mods})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib, cmd.build_temp = str(work / "lib"), str(work / "tmp")
            dist.run_command("build_ext")
        so = next((work / "lib").glob(f"{ext}*.so"))
        spec = importlib.util.spec_from_file_location(module_name, so)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except Exception as exc:  # noqa: BLE001 - the reference then runs its Python loops (printed by the caller)
        print(f"building {ext} of the reference failed: {type(exc).__name__}: {exc}")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a loaded extension stays mapped


def reference_canonical(rev: str):
    """The canonical package as it was at git revision ``rev`` of this repository, loaded beside
    the current one under the module name ``_canonical_ref`` (sources from ``git show``, their
    ``passnet_common.canonical`` imports pointed at the copy), so that the implementation
    before a change is timed on the same graphs in the same run. A compiled extension whose
    Cython source at ``rev`` is the same as the current one (``_cmerkle.pyx``) is the built
    module of the current package, so a reference that used it runs with it, as it did
    (else its import fails and the reference runs its Python loops). Returns the package
    module; raises ``subprocess.CalledProcessError`` when ``rev`` lacks the files. A compiled
    extension whose source at ``rev`` differs is compiled from that source (:func:`build_extension`),
    so the reference runs its own compiled loops, not its slower Python fallbacks."""
    import importlib
    import subprocess
    import types

    name = "_canonical_ref"
    pkg = types.ModuleType(name)
    pkg.__path__ = []
    sys.modules[name] = pkg
    for ext in _COMPILED_FILES:
        old = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:passnet_common/canonical/{ext}.pyx"],
                             capture_output=True, text=True)
        here = ROOT / "passnet_common" / "canonical" / f"{ext}.pyx"
        if old.returncode == 0 and here.exists() and old.stdout == here.read_text():
            try:
                sys.modules[f"{name}.{ext}"] = importlib.import_module(f"passnet_common.canonical.{ext}")
            except ImportError:
                pass
        elif old.returncode == 0:
            built = build_extension(old.stdout, ext, f"{name}.{ext}")
            if built is not None:
                sys.modules[f"{name}.{ext}"] = built
            else:
                print(f"reference {rev}: {ext}.pyx differs from the built one and could not be compiled "
                      "(Cython missing?): the reference runs its Python loops for it")
    for mod in _CANONICAL_FILES:
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:passnet_common/canonical/{mod}.py"],
                               check=mod not in _OPTIONAL_FILES, capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        src = shown.stdout
        src = src.replace("passnet_common.canonical", name)
        m = pkg if mod == "__init__" else types.ModuleType(f"{name}.{mod}")
        m.__file__ = f"<{rev}:passnet_common/canonical/{mod}.py>"
        if mod != "__init__":
            m.__package__ = name
            sys.modules[m.__name__] = m
            setattr(pkg, mod, m)
        exec(compile(src, m.__file__, "exec"), m.__dict__)
    return pkg


def cpu_time(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return max(best, 1e-9)


def _rate(rows: list[dict], key: str) -> int:
    """Nodes per CPU second over ``rows`` together (total nodes / total seconds)."""
    return round(sum(r["nodes"] for r in rows) / sum(r["nodes"] / r[key] for r in rows)) if rows else 0


def _size_class(n: int) -> str:
    return "1k" if n < 3_162 else ("10k" if n < 31_623 else "100k")  # nearest power of ten (log scale)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nodes", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3,
                    help="whole runs over every graph, one after another; figures are per-graph medians over them "
                         "(one run alone moves with the host: see docs/hashing.md)")
    ap.add_argument("--real", default="llama70b,qwen3next80b", help="true-size captures (comma list; '' for none)")
    ap.add_argument("--out", type=Path, default=ROOT / "metrics" / "bench" / "bench_hash.json")
    ap.add_argument("--reference", default="e221741",
                    help="git revision whose canonical form is also timed in the same run (the implementation "
                         "before the hashing speed work); '' for none")
    args = ap.parse_args(argv)

    import torch

    from passnet_common.canonical import CANONICAL_VERSION, canonicalize, graph_hashes
    from passnet_common.io import atomic_write_json

    torch.set_num_threads(1)
    ref = None
    if args.reference:
        try:
            ref = reference_canonical(args.reference)
        except Exception as exc:  # noqa: BLE001 - the reference column is optional
            print(f"no reference implementation {args.reference!r}: {type(exc).__name__}: {exc}")
    load_start = os.getloadavg()[0]
    cases = []
    for n in (1_000, 3_000, 10_000, 30_000, 100_000):
        if n <= args.max_nodes:
            cases.append((f"synthetic chain {n // 1000}K", synthetic_chain(n), None))
    cases += real_graphs(tuple(k for k in args.real.split(",") if k), max_nodes=args.max_nodes)

    # Each run times every graph once (best of --reps); with --repeat the runs follow one another and
    # each graph's figures are its medians over the runs (this machine's speed drifts between runs).
    per_run: list[list[dict]] = []
    for run in range(args.repeat):
        measured = []
        for name, gm, kinds in cases:
            n = len(gm.graph.nodes)
            reps = args.reps if n <= 30_000 else 1
            base = cpu_time(lambda: hashlib.sha256(gm.graph.python_code("self").src.encode()).hexdigest(), reps)
            hashes = cpu_time(lambda: graph_hashes(gm, kinds), reps)
            full = cpu_time(lambda: canonicalize(gm, kinds, with_wl=False), reps)
            row = {"graph": name, "nodes": n, "baseline_nodes_per_s": n / base, "graph_hashes_nodes_per_s": n / hashes,
                   "canonicalize_nodes_per_s": n / full, "real": not name.startswith("synthetic")}
            if ref is not None:
                same = ref.canonicalize(gm, kinds, with_wl=False).graph_hash == canonicalize(gm, kinds, with_wl=False).graph_hash
                ref_full = cpu_time(lambda: ref.canonicalize(gm, kinds, with_wl=False), reps)
                ref_hashes = cpu_time(lambda: ref.graph_hashes(gm, kinds), reps)
                row.update({"reference_canonicalize_nodes_per_s": n / ref_full,
                            "reference_graph_hashes_nodes_per_s": n / ref_hashes, "same_graph_hash_as_reference": same})
            measured.append(row)
            print(f"run {run + 1}/{args.repeat}: {name}: canonicalize {n / full:,.0f} nodes/s, baseline {n / base:,.0f}"
                  + (f", reference {row['reference_canonicalize_nodes_per_s']:,.0f}" if ref is not None else ""), flush=True)
        per_run.append(measured)
    rows, results = [], []
    for k in range(len(cases)):
        runs_k = [run[k] for run in per_run]
        row = {key: (statistics.median(r[key] for r in runs_k) if isinstance(v, float) else v)
               for key, v in runs_k[0].items()}
        if ref is not None:
            row["same_graph_hash_as_reference"] = all(r["same_graph_hash_as_reference"] for r in runs_k)
        name, n = row["graph"], row["nodes"]
        secs = {key: n / row[key] for key in row if key.endswith("_nodes_per_s")}  # CPU seconds of each
        rows.append([name, n, f"{row['baseline_nodes_per_s']:,.0f}", f"{row['graph_hashes_nodes_per_s']:,.0f}",
                     f"{secs['baseline_nodes_per_s'] / secs['graph_hashes_nodes_per_s']:.2f}x",
                     f"{row['canonicalize_nodes_per_s']:,.0f}",
                     f"{secs['baseline_nodes_per_s'] / secs['canonicalize_nodes_per_s']:.2f}x"])
        if ref is not None:
            rows[-1] += [f"{row['reference_canonicalize_nodes_per_s']:,.0f}",
                         f"{row['canonicalize_nodes_per_s'] / row['reference_canonicalize_nodes_per_s']:.2f}x",
                         "yes" if row["same_graph_hash_as_reference"] else "NO"]
        results.append(row)
    load_end = os.getloadavg()[0]
    print(f"\n## Canonical hashing throughput (v{CANONICAL_VERSION}; 1 core, process CPU seconds, best of {args.reps}"
          f" (1 above 30K nodes)" + (f", median of {args.repeat} runs" if args.repeat > 1 else "")
          + f"; load average {load_start:.1f} at the start, {load_end:.1f} at the end;"
          " target >= 200K nodes/s for canonicalize)\n")
    header = ["graph", "FX nodes", "baseline nodes/s (code text sha256)", "graph_hashes nodes/s", "vs baseline",
              "canonicalize (full form, node list) nodes/s", "vs baseline"]
    if ref is not None:
        header += [f"canonicalize at {args.reference} nodes/s", "speed-up", "same graph_hash"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    chains = [r for r in results if not r["real"]]
    real = [r for r in results if r["real"]]
    metrics: dict = {"canonical_version": CANONICAL_VERSION, "load_average_start": round(load_start, 1),
                     "load_average_end": round(load_end, 1), "machine": platform.platform(),
                     "command": " ".join(["python -m benchmarks.bench_hash", *(argv if argv is not None else sys.argv[1:])])}
    for kind, group in (("chain", chains), ("real", real)):
        for size in ("1k", "10k", "100k"):
            sel = [r for r in group if _size_class(r["nodes"]) == size]
            if not sel:
                continue
            full, base = _rate(sel, "canonicalize_nodes_per_s"), _rate(sel, "baseline_nodes_per_s")
            metrics[f"canonicalize_nodes_per_s_{kind}_{size}"] = full
            metrics[f"canonicalize_vs_baseline_{kind}_{size}"] = round(full / max(base, 1), 2)
            metrics[f"graph_hashes_nodes_per_s_{kind}_{size}"] = _rate(sel, "graph_hashes_nodes_per_s")
            if ref is not None:
                metrics[f"reference_canonicalize_nodes_per_s_{kind}_{size}"] = _rate(sel, "reference_canonicalize_nodes_per_s")
                metrics[f"canonicalize_vs_reference_{kind}_{size}"] = round(
                    full / max(metrics[f"reference_canonicalize_nodes_per_s_{kind}_{size}"], 1), 2)
    full_chain = [r["canonicalize_nodes_per_s"] for r in chains]
    full_real = [r["canonicalize_nodes_per_s"] for r in real]
    metrics.update({
        "canonicalize_nodes_per_s_chains_min": round(min(full_chain)) if full_chain else 0,
        "canonicalize_nodes_per_s_chains_max": round(max(full_chain)) if full_chain else 0,
        "canonicalize_nodes_per_s_real_min": round(min(full_real)) if full_real else 0,
        "canonicalize_nodes_per_s_real_max": round(max(full_real)) if full_real else 0,
        "baseline_nodes_per_s_chains": _rate(chains, "baseline_nodes_per_s"),
        "baseline_nodes_per_s_real": _rate(real, "baseline_nodes_per_s"),
        "largest_real_nodes": max((r["nodes"] for r in real), default=0),
        "reference_revision": args.reference if ref is not None else "",
        "all_graph_hashes_same_as_reference": all(r.get("same_graph_hash_as_reference", True) for r in results),
        "graphs": [{k: (round(v) if isinstance(v, float) else v) for k, v in r.items()} for r in results],
        "runs": args.repeat,
    })
    if args.repeat > 1:
        # every run's figures, for the spread: per run the code-text baseline (the machine's speed in
        # that run) and the full form's rate of each graph
        metrics["per_run"] = [{"baseline_nodes_per_s_chains": _rate([r for r in run if not r["real"]], "baseline_nodes_per_s"),
                               "baseline_nodes_per_s_real": _rate([r for r in run if r["real"]], "baseline_nodes_per_s"),
                               "canonicalize_nodes_per_s_real_min": round(min(
                                   (r["canonicalize_nodes_per_s"] for r in run if r["real"]), default=0)),
                               "canonicalize_nodes_per_s": {r["graph"]: round(r["canonicalize_nodes_per_s"]) for r in run}}
                              for run in per_run]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, metrics)
    print(f"\nwrote {args.out}: " + ", ".join(f"{k}={v}" for k, v in metrics.items() if k not in ("graphs", "per_run")))
    return metrics


if __name__ == "__main__":
    main()
