"""Canonical hashing throughput: ``canonicalize`` (the full form with the stored node list, no
WL bucket) and ``graph_hashes`` in FX nodes per CPU second on one core, on real graphs, against
the GraphNet-style baseline (generate the graph's Python code, sha256 it) in the same rounds. A
printed table and a record, never asserted.

    nice -n 10 python -m benchmarks.bench_hash [--rounds 5] [--max-nodes 100000] [--real llama70b,qwen3next80b]
        [--store data/graph_store --store-graphs 3] [--no-chains] [--reference REV]
        [--out metrics/bench/bench_hash.json]

Graphs:

* real graphs captured by Dynamo on the meta device through :func:`extract.capture.capture_row`
  (``--real``): Llama-3.3-70B's true-size config cut to 14 layers (~1K nodes), the true-size
  Llama-3.3-70B (5,651 nodes) and Qwen3-Next-80B-A3B (10,747 nodes), and, at ~100K nodes, the
  two true-size graphs side by side, copied until 100K nodes are reached (disjoint copies in
  one graph: no real model of 100K nodes can be captured here in minutes; the copies are
  identical, so this graph also exercises the tie-breaking of the canonical order);
* the ``--store-graphs`` largest graphs of the graph store, rebuilt from their stored node lists
  (:func:`stored_graphs`: what dedupe re-hashes);
* synthetic transformer-block chains of 1K-100K nodes, the scaling curve (``--no-chains``: none).

Timing: process CPU seconds of one call (``time.process_time``: the machine is shared, CPU time
is what one core spends). Each round times, per graph: ``canonicalize`` **fresh** (the label cache,
which the compiled label pass keeps across graphs, emptied just before: the first graph a process
hashes, with the previous graph's objects in the CPU caches), ``canonicalize`` **cold** (the label cache
emptied, then the previous graph's ``graph_hashes`` computed: what a pipeline that hashes each graph
once pays after one other graph -- its caches hold that graph's keys, never this graph's own),
``canonicalize`` **warm** (the same call again at once: the graph's objects, its label-cache keys and
the allocator's free lists hot), ``graph_hashes`` cold and the code-text baseline (the machine's speed
in that round). Per graph the record holds each figure's median over ``--rounds`` rounds, min, max and
every round's value; the headline figures are the cold medians. The load average (start, end,
and the 1-minute figure at each graph's round) and the share of CPU time stolen by the
hypervisor over the run (``/proc/stat``) are recorded beside them. ``--reference REV`` also
times the canonical form of git revision ``REV`` (:func:`reference_canonical`) in the same rounds,
the two alternated (who goes first alternates by round), records the median of the per-round
ratios and whether each graph gets the same ``graph_hash``; the record names the commit ``REV`` meant at
the run (``reference_commit``) and whether the reference ran its compiled path (``reference_compiled``,
its seam's status: a reference on its Python loops is several times slower, and its ratios say nothing
about the compiled forms).
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
_SHAREABLE = ("_cmerkle",)  # compiled extensions without module state that a seam sets


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
    before a change is timed on the same graphs in the same run. Its compiled extensions are
    compiled from their sources at ``rev`` (:func:`build_extension`), so the reference runs its
    own compiled loops, not its slower Python fallbacks; only ``_cmerkle``, which holds no state,
    is the current built module where its source is the same. ``_cform`` is never shared: the
    reference's seam would set its tables into the current package's compiled label pass.
    Returns the package module; raises ``subprocess.CalledProcessError`` when ``rev`` lacks the
    files."""
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
        # _cform holds module-level state that the seam sets (set_context / set_effects_context /
        # set_prefetch): shared with the reference, the reference's seam would rewire the current
        # package's compiled path to the reference's tables. So only the stateless _cmerkle is shared.
        if ext in _SHAREABLE and old.returncode == 0 and here.exists() and old.stdout == here.read_text():
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
    """Best of ``reps`` calls of ``fn`` in process CPU seconds (used by ``bench_hash_ab``)."""
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return max(best, 1e-9)


def once(fn) -> float:
    """Process CPU seconds of one call of ``fn`` (its result freed inside the timing)."""
    t = time.process_time()
    fn()
    return max(time.process_time() - t, 1e-9)


def cpu_ticks() -> tuple[int, int] | None:
    """``(steal, total)`` clock ticks of all CPUs since boot (``/proc/stat``): the share of time
    the hypervisor ran something else on this machine's virtual CPUs, which ``os.getloadavg``
    does not see. None where ``/proc/stat`` is absent."""
    try:
        vals = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return vals[7], sum(vals)
    except (OSError, IndexError, ValueError):
        return None


def stored_graphs(store: Path | list[Path], count: int, sample: int = 0, seed: int = 0) -> list:
    """(name, GraphModule, kinds) of the ``count`` largest graphs of a graph store (by node
    count), each rebuilt from its stored node list by :func:`curate.decompose.segments.build_parent`
    (output metadata on the meta device; kinds from the stored placeholders), as
    ``tests/canonical_store_check.py`` rebuilds them: the graphs dedupe re-hashes. ``store`` may be a
    list of stores (a graph hash found in several is read from the first); ``sample`` > 0 first draws
    that many graph hashes (sorted, then shuffled by ``random.Random(seed)``). A graph that does not
    rebuild (a call target this torch lacks) is printed and skipped. Empty where the store is absent (a
    fresh clone)."""
    import json
    import random

    import torch

    from curate.decompose.segments import build_parent

    paths: dict[str, Path] = {}
    for st in [store] if isinstance(store, Path) else store:
        for gj in sorted(st.glob("*/*/graph.json")):
            paths.setdefault(gj.parent.name, gj)
    names = sorted(paths)
    if sample:
        random.Random(seed).shuffle(names)
        names = names[:sample]
    found = []
    for name in names:
        nodes = json.loads(paths[name].read_text())["nodes"]
        found.append((len(nodes), name, nodes))
    out = []
    for n, name, nodes in sorted(found, key=lambda r: (-r[0], r[1])):
        if len(out) == count:
            break
        try:
            graph, _ = build_parent(nodes)
        except Exception as exc:  # noqa: BLE001 - a benchmark input, reported and skipped
            print(f"skipping stored {name[:12]}: {type(exc).__name__}: {exc}")
            continue
        kinds = [d.get("kind", "input") if d["op"] == "placeholder" else "input" for d in nodes
                 if d["op"] in ("placeholder", "get_attr")]
        out.append((f"stored {name[:12]} ({n} nodes)", torch.fx.GraphModule(torch.nn.Module(), graph), kinds))
    return out


def _commit_of(rev: str) -> str:
    """The commit id ``rev`` names in this repository (``git rev-parse``; a relative name such as
    ``HEAD~1`` is recorded with what it meant at the run); "" where git cannot tell."""
    import subprocess

    got = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True,
                         text=True)
    return got.stdout.strip() if got.returncode == 0 else ""


def _rate(rows: list[dict], key: str) -> int:
    """Nodes per CPU second over ``rows`` together (total nodes / total seconds)."""
    return round(sum(r["nodes"] for r in rows) / sum(r["nodes"] / r[key] for r in rows)) if rows else 0


def _size_class(n: int) -> str:
    return "1k" if n < 3_162 else ("10k" if n < 31_623 else "100k")  # nearest power of ten (log scale)


def short_name(name: str) -> str:
    """A graph's key in the record's top-level figures: ``llama70b_14_layers``, ``llama70b``,
    ``qwen3next80b``, ``copies_100k``, ``chain_1k`` ..., ``stored_<hash prefix>``."""
    if name.startswith("synthetic chain"):
        return "chain_" + name.split()[-1].lower()
    if name.startswith("stored "):
        return "stored_" + name.split()[1][:8]
    if "disjoint copies" in name:
        return "copies_100k"
    if name.startswith("Qwen3-Next"):
        return "qwen3next80b"
    return "llama70b_14_layers" if "14 of 80" in name else "llama70b"


# What each round times per graph (one call each, process CPU seconds): fresh -- the label cache
# emptied after another graph's hashes (a process's first graph); cold -- the label cache emptied, then
# another graph's hashes (what a pipeline that hashes each graph once pays after that graph); warm --
# the same call again at once (the graph's objects, its label-cache keys and the free lists hot).
TIMED = ("canonicalize_fresh", "canonicalize_cold", "canonicalize_warm", "graph_hashes_cold", "baseline")


def label_cache_clear(pkg) -> callable:
    """The ``clear_label_cache`` of package ``pkg``'s compiled label pass (``pkg.compiled.cform``), or a
    no-op where it has none (the Python definition, or a revision whose cache lives one pass)."""
    cform = getattr(getattr(pkg, "compiled", None), "cform", None)
    return getattr(cform, "clear_label_cache", None) or (lambda: None)


def measure_round(cases: list, k: int, canon, hashes, flip: bool = False, clear=lambda: None) -> dict:
    """CPU seconds of one round on graph ``k`` of ``cases`` for one implementation
    (``canon`` / ``hashes``: its ``canonicalize`` / ``graph_hashes``; ``clear``: its
    :func:`label_cache_clear`): :data:`TIMED`, the evictions by the previous graph's
    ``graph_hashes`` (``flip``: the next graph's)."""
    _, gm, kinds = cases[k]
    _, og, okinds = cases[(k + (1 if flip else -1)) % len(cases)]
    evict = (lambda: hashes(og, okinds)) if len(cases) > 1 else (lambda: None)
    evict()
    clear()
    fresh = once(lambda: canon(gm, kinds, with_wl=False))
    clear()
    evict()
    cold = once(lambda: canon(gm, kinds, with_wl=False))
    warm = once(lambda: canon(gm, kinds, with_wl=False))
    clear()
    evict()
    h = once(lambda: hashes(gm, kinds))
    base = once(lambda: hashlib.sha256(gm.graph.python_code("self").src.encode()).hexdigest())
    return {"canonicalize_fresh": fresh, "canonicalize_cold": cold, "canonicalize_warm": warm,
            "graph_hashes_cold": h, "baseline": base}


def _summary(n: int, secs: list[float]) -> dict:
    """Nodes/s of ``n`` nodes over rounds of ``secs`` seconds: median, min, max, each round."""
    rates = [n / s for s in secs]
    return {"median": round(statistics.median(rates)), "min": round(min(rates)), "max": round(max(rates)),
            "per_round": [round(r) for r in rates]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nodes", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5, help="rounds over every graph; per graph the median of the "
                    "rounds, their min and max (one call alone moves with the host: see docs/hashing.md)")
    ap.add_argument("--real", default="llama70b,qwen3next80b", help="true-size captures (comma list; '' for none)")
    ap.add_argument("--store", type=Path, default=ROOT / "data" / "graph_store",
                    help="graph store whose largest graphs are also timed (absent: none)")
    ap.add_argument("--store-graphs", type=int, default=3)
    ap.add_argument("--no-chains", action="store_true", help="real graphs only")
    ap.add_argument("--out", type=Path, default=ROOT / "metrics" / "bench" / "bench_hash.json")
    ap.add_argument("--reference", default="",
                    help="git revision whose canonical form is timed in the same rounds, alternated with the current "
                         "one (who goes first alternates by round); '' for none")
    args = ap.parse_args(argv)

    import torch

    from passnet_common.canonical import CANONICAL_VERSION, canonicalize, compiled, graph_hashes
    from passnet_common.io import atomic_write_json

    torch.set_num_threads(1)
    ref = None
    if args.reference:
        try:
            ref = reference_canonical(args.reference)
        except Exception as exc:  # noqa: BLE001 - the reference column is optional
            print(f"no reference implementation {args.reference!r}: {type(exc).__name__}: {exc}")
    ref_compiled = getattr(getattr(ref, "compiled", None), "status", "") if ref is not None else ""
    if ref is not None:
        print(f"reference {args.reference}: compiled path {ref_compiled or 'absent at that revision'}; "
              f"current: {compiled.status}", flush=True)
    cases = []
    if not args.no_chains:
        for n in (1_000, 3_000, 10_000, 30_000, 100_000):
            if n <= args.max_nodes:
                cases.append((f"synthetic chain {n // 1000}K", synthetic_chain(n), None))
    cases += real_graphs(tuple(k for k in args.real.split(",") if k), max_nodes=args.max_nodes)
    if args.store.is_dir() and args.store_graphs > 0:
        cases += [c for c in stored_graphs(args.store, args.store_graphs) if len(c[1].graph.nodes) <= args.max_nodes]

    load_start, ticks_start = os.getloadavg(), cpu_ticks()
    got: list[dict] = [{"cur": [], "ref": [], "load": []} for _ in cases]
    for rnd in range(args.rounds):
        for k, (name, gm, kinds) in enumerate(cases):
            got[k]["load"].append(round(os.getloadavg()[0], 2))
            sides = [("cur", canonicalize, graph_hashes, label_cache_clear(sys.modules["passnet_common.canonical"]))] + (
                [("ref", ref.canonicalize, ref.graph_hashes, label_cache_clear(ref))] if ref else [])
            for side, canon, hashes, clear in (sides[::-1] if rnd % 2 else sides):
                got[k][side].append(measure_round(cases, k, canon, hashes, flip=bool(rnd % 2), clear=clear))
            r = got[k]["cur"][-1]
            n = len(gm.graph.nodes)
            print(f"round {rnd + 1}/{args.rounds}: {name}: canonicalize cold {n / r['canonicalize_cold']:,.0f} / warm "
                  f"{n / r['canonicalize_warm']:,.0f} nodes/s, baseline {n / r['baseline']:,.0f}"
                  + (f", reference cold {n / got[k]['ref'][-1]['canonicalize_cold']:,.0f}" if ref else ""), flush=True)
    load_end, ticks_end = os.getloadavg(), cpu_ticks()

    graphs, results = [], []
    for k, (name, gm, kinds) in enumerate(cases):
        n = len(gm.graph.nodes)
        g = {"graph": name, "key": short_name(name), "nodes": n, "real": not name.startswith("synthetic"),
             "loadavg_1min_per_round": got[k]["load"]}
        for what in TIMED:
            g[what] = _summary(n, [r[what] for r in got[k]["cur"]])
        if ref is not None:
            for what in TIMED[:3]:
                g["reference_" + what] = _summary(n, [r[what] for r in got[k]["ref"]])
            # same-round ratios (current / reference), their median: the figure that carries across hosts
            g["canonicalize_cold_vs_reference"] = round(statistics.median(
                o["canonicalize_cold"] / c["canonicalize_cold"] for c, o in zip(got[k]["cur"], got[k]["ref"])), 3)
            g["canonicalize_fresh_vs_reference"] = round(statistics.median(
                o["canonicalize_fresh"] / c["canonicalize_fresh"] for c, o in zip(got[k]["cur"], got[k]["ref"])), 3)
            g["graph_hashes_cold_vs_reference"] = round(statistics.median(
                o["graph_hashes_cold"] / c["graph_hashes_cold"] for c, o in zip(got[k]["cur"], got[k]["ref"])), 3)
            g["same_graph_hash_as_reference"] = graph_hashes(gm, kinds)[0] == ref.graph_hashes(gm, kinds)[0]
        graphs.append(g)
        results.append({"nodes": n, "real": g["real"], **{w: g[w]["median"] for w in TIMED}})

    steal = None
    if ticks_start and ticks_end and ticks_end[1] > ticks_start[1]:
        steal = round((ticks_end[0] - ticks_start[0]) / (ticks_end[1] - ticks_start[1]), 4)
    metrics: dict = {"canonical_version": CANONICAL_VERSION, "compiled": compiled.status,
                     "loadavg_start": list(load_start), "loadavg_end": list(load_end),
                     "load_average_start": round(load_start[0], 1), "load_average_end": round(load_end[0], 1),
                     "cpu_steal_share": steal, "machine": platform.platform(), "cpus": os.cpu_count(),
                     "command": " ".join(["python -m benchmarks.bench_hash", *(argv if argv is not None else sys.argv[1:])]),
                     "rounds": args.rounds, "reference_revision": args.reference if ref is not None else "",
                     "reference_commit": _commit_of(args.reference) if ref is not None else "",
                     "reference_compiled": ref_compiled,
                     "timing": "process CPU seconds of one call; per graph and round: canonicalize fresh (the label "
                               "cache emptied after the previous graph's graph_hashes), canonicalize cold (the label cache "
                               "emptied, then the previous graph's graph_hashes), canonicalize warm (the same call again at "
                               "once), graph_hashes cold, the code-text baseline; figures are medians over rounds"}
    chains = [r for r in results if not r["real"]]
    real = [r for r in results if r["real"]]
    for kind, group in (("chain", chains), ("real", real)):
        for size in ("1k", "10k", "100k"):
            sel = [r for r in group if _size_class(r["nodes"]) == size]
            if sel:
                metrics[f"canonicalize_nodes_per_s_{kind}_{size}"] = _rate(sel, "canonicalize_cold")
                metrics[f"canonicalize_warm_nodes_per_s_{kind}_{size}"] = _rate(sel, "canonicalize_warm")
                metrics[f"graph_hashes_nodes_per_s_{kind}_{size}"] = _rate(sel, "graph_hashes_cold")
                metrics[f"canonicalize_vs_baseline_{kind}_{size}"] = round(
                    _rate(sel, "canonicalize_cold") / max(_rate(sel, "baseline"), 1), 2)
    for g in graphs:  # per graph: cold / warm medians, cold spread, the same-round ratio
        key = g["key"]
        metrics[f"{key}_canonicalize_nodes_per_s"] = g["canonicalize_cold"]["median"]
        metrics[f"{key}_canonicalize_spread"] = [g["canonicalize_cold"]["min"], g["canonicalize_cold"]["max"]]
        metrics[f"{key}_canonicalize_fresh_nodes_per_s"] = g["canonicalize_fresh"]["median"]
        metrics[f"{key}_canonicalize_warm_nodes_per_s"] = g["canonicalize_warm"]["median"]
        metrics[f"{key}_graph_hashes_nodes_per_s"] = g["graph_hashes_cold"]["median"]
        if ref is not None:
            metrics[f"{key}_canonicalize_vs_reference"] = g["canonicalize_cold_vs_reference"]
            metrics[f"{key}_canonicalize_fresh_vs_reference"] = g["canonicalize_fresh_vs_reference"]
    cold_real = [g["canonicalize_cold"]["median"] for g in graphs if g["real"]]
    metrics.update({
        "canonicalize_nodes_per_s_real_min": min(cold_real, default=0),
        "canonicalize_nodes_per_s_real_max": max(cold_real, default=0),
        "real_graphs_below_200k": [g["key"] for g in graphs if g["real"] and g["canonicalize_cold"]["median"] < 200_000],
        "canonicalize_fresh_nodes_per_s_real_min": min((g["canonicalize_fresh"]["median"] for g in graphs if g["real"]),
                                                       default=0),
        "real_graphs_fresh_below_200k": [g["key"] for g in graphs
                                         if g["real"] and g["canonicalize_fresh"]["median"] < 200_000],
        "baseline_nodes_per_s_real": _rate(real, "baseline"),
        "all_graph_hashes_same_as_reference": all(g.get("same_graph_hash_as_reference", True) for g in graphs),
        "graphs": graphs,
    })
    print(f"\n## Canonical hashing throughput (v{CANONICAL_VERSION}; 1 core, process CPU seconds, median of {args.rounds} "
          f"rounds; load average {load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end; steal {steal})\n")
    header = ["graph", "FX nodes", "canonicalize cold nodes/s (min-max)", "fresh", "warm", "graph_hashes cold", "baseline"]
    if ref is not None:
        header += [f"cold vs {args.reference}", f"fresh vs {args.reference}", "same graph_hash"]
    print("| " + " | ".join(header) + " |\n|" + "|".join("---" for _ in header) + "|")
    for g in graphs:
        row = [g["graph"], g["nodes"], f"{g['canonicalize_cold']['median']:,} ({g['canonicalize_cold']['min']:,}-"
               f"{g['canonicalize_cold']['max']:,})", f"{g['canonicalize_fresh']['median']:,}",
               f"{g['canonicalize_warm']['median']:,}",
               f"{g['graph_hashes_cold']['median']:,}", f"{g['baseline']['median']:,}"]
        if ref is not None:
            row += [f"{g['canonicalize_cold_vs_reference']:.2f}x", f"{g['canonicalize_fresh_vs_reference']:.2f}x",
                    "yes" if g["same_graph_hash_as_reference"] else "NO"]
        print("| " + " | ".join(str(x) for x in row) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, metrics)
    print(f"\nwrote {args.out}")
    return metrics


if __name__ == "__main__":
    main()
