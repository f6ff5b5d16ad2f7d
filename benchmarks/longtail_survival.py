"""Per long-tail variant: does the slowdown survive frozen weights, and inside its parent graph?

    python -m benchmarks.longtail_survival [--long-tail data/curate/long_tail.parquet]
        [--decompose data/decompose] [--graph-store data/graph_store] [--params params.yaml]
        [--limit N] [--work /tmp/longtail_survival] [--keep] [--out metrics/bench/longtail_survival.json]

Reads the curate stage's ``long_tail.parquet`` (a row per profile row with its labels) and takes the
long-tail variants (:func:`curate.select.longtail.long_tail_variants`: long tail in every run that
labelled them). Each variant ``(subgraph_hash, size, dtype)`` is rebuilt as the profile builds it
(:func:`curate.profile.sizes.write_variants` on the subgraph's store folder; floating inputs and
weights cast to the dtype) and timed in a forked child (:func:`passnet_common.worker.run_isolated`:
wall-time limit, memory cap, torch threads 1, one child at a time; it compiles on the cores but the
timing core, then pins itself to the timing core, the highest usable one, to time; graph code from a
store never runs in this process) with the profile's protocol (``curate.profile.timing``: the timing
thread's CPU clock, ``gate: ci``, ``stop: label``, its trial counts and time cap;
:func:`curate.timing.measure_sides`), every side under ``torch.no_grad()`` (the frozen side needs it,
and the others must not differ from it):

* **freezing** (:func:`variant_task`): four sides interleaved: eager, Dynamo-only
  (``torch.compile(backend="eager")``), Inductor as the profile compiled it (weights are runtime
  inputs of the graph) and **Inductor frozen**: the weight placeholders (store kind ``parameter`` /
  ``buffer``) become attributes of a module that calls the graph (:class:`FrozenWeights`), compiled
  with ``torch._inductor.config.freezing = True``, so Inductor treats them as constants (folds
  weight-only work, lays a convolution's weight out once). ``retimed_slower`` says whether the
  unfrozen Inductor side is slower than Dynamo-only with confidence in this child (the variant's
  slowdown reproduces here; the stage's rule). ``speedup_compiler_frozen`` = Dynamo-only / Inductor
  frozen with its paired bootstrap interval; ``survives_freezing`` = that interval lies below ``1 -
  min_effect`` (the stage's rule with frozen weights), judged only where ``retimed_slower`` holds
  (a slowdown that did not reproduce cannot be said to survive or vanish), else None, as it is when
  the frozen outputs fail at ``tolerance_t`` or the timing is unstable.
* **parent** (:func:`parent_task`): the captured model graph the subgraph was cut from
  (``subgraphs.members``: the parent unique graphs; the one with the fewest nodes in
  ``--graph-store`` under ``--max-parent-bytes`` of tensor inputs is taken), at the variant's size
  (``write_variants`` on the parent's store folder; a parent without that size: not judged) and dtype,
  compiled whole: eager, Dynamo-only and Inductor interleaved. ``survives_parent`` = the parent's
  ``speedup_compiler`` interval lies below ``1 - min_effect`` (Inductor's code for the whole graph is
  slower than Dynamo's replay of it with confidence), None when the parent fails at ``tolerance_t``,
  is unstable or could not be built, compiled or timed in its child (``parent.status``). It is a
  whole-graph figure: False means the slowdown does not show at the parent's level (fused away by the
  wider graph, or too small a share of it); ``subgraph_share_of_parent`` (the variant's eager ms
  over the parent's) and ``parent_loss_ms`` / ``subgraph_loss_ms`` (Inductor minus Dynamo-only,
  ms per call) say which.

With ``--variants h:size:dtype,...`` the named variants are measured instead of a build's long tail
(``source`` says which); ``retimed_slower`` then is the stage's rule applied in this child.

Writes per variant the stage's run-0 figures beside these, counts (``survives_freezing``,
``survives_parent`` as true / false / not judged), the machine, the 1-minute load average at the start
and end and per child, the children's wall seconds, and the command, to ``--out``: once after the variants (parents
``not_measured_yet``) and again after the parents. Children's results stay in ``--work`` (``--keep`` resumes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

VARIANT_SIDES = ("eager", "dynamo", "inductor", "frozen")
PARENT_SIDES = ("eager", "dynamo", "inductor")
WEIGHT_KINDS = ("parameter", "buffer")


class FrozenWeights(torch.nn.Module):
    """A graph whose weight placeholders are module attributes: ``forward(*inputs)`` takes the
    real inputs only (in placeholder order) and calls ``gm`` with the weights in their places, so
    ``torch.compile`` with Inductor's ``freezing`` sees them as parameters it may treat as
    constants. ``values``: every placeholder's value in position order; ``kinds``: their store
    kinds (``input`` / ``parameter`` / ``buffer``)."""

    def __init__(self, gm: torch.nn.Module, values: list, kinds: list[str]):
        super().__init__()
        self.gm = gm
        self.slots: list[str | None] = []
        for i, (v, k) in enumerate(zip(values, kinds)):
            if k in WEIGHT_KINDS and isinstance(v, torch.Tensor):
                name = f"w{i}"
                if v.is_floating_point():
                    self.register_parameter(name, torch.nn.Parameter(v, requires_grad=False))
                else:
                    self.register_buffer(name, v)
                self.slots.append(name)
            else:
                self.slots.append(None)

    def forward(self, *inputs):
        it = iter(inputs)
        return self.gm(*[next(it) if s is None else getattr(self, s) for s in self.slots])


def placeholder_kinds(folder: Path) -> list[str]:
    """Store kinds of a graph folder's placeholders in position order (the order
    :func:`passnet_common.store.load_graph` returns its inputs in)."""
    nodes = json.loads((Path(folder) / "graph.json").read_text())["nodes"]
    ph = sorted((n for n in nodes if n["op"] == "placeholder"), key=lambda n: n["position"])
    return [n.get("kind", "input") for n in ph]


def tensor_bytes(folder: Path) -> int:
    """Bytes of a graph folder's tensor placeholders and stored constants (from their metadata)."""
    nodes = json.loads((Path(folder) / "graph.json").read_text())["nodes"]
    total = 0
    for n in nodes:
        m = n.get("meta")
        if n["op"] in ("placeholder", "get_attr") and isinstance(m, list) and m and m[0] == "T":
            numel = 1
            for d in m[2]:
                numel *= int(d)
            total += numel * getattr(torch, m[1]).itemsize
    return total


def survives(ci_high: float | None, min_effect: float, correct: bool | None, stable: bool | None) -> bool | None:
    """The stage's rule on another measurement: True when the ratio's interval lies below ``1 -
    min_effect`` (slower with confidence, :func:`curate.timing.slower`), False when it does not,
    None when not judged (no interval, outputs incorrect at the tolerance, or an unstable timing)."""
    from curate.timing import slower

    if ci_high is None or not correct or not stable:
        return None
    return slower(ci_high, min_effect)


def _load(folder: Path, dtype: str, seed: int) -> tuple:
    """``(gm, inputs, kinds)`` of a variant folder, floating inputs and weights cast to ``dtype``
    (as :mod:`curate.profile.variant` builds a variant)."""
    from passnet_common.store import load_graph

    torch.manual_seed(seed)
    gm, inputs = load_graph(folder, seed=seed)
    dt = getattr(torch, dtype)
    inputs = [x.to(dt) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return gm, inputs, placeholder_kinds(folder)


def _ratio(t, a: str, b: str, tc) -> list[float]:
    lo, hi = t.ratio_ci(a, b, tc.ci_level, tc.n_boot, tc.seed)
    return [t.ratio(a, b), lo, hi]


def _measure(folder: Path, cfg: dict, freeze: bool) -> dict[str, Any]:
    """Compile and time one graph folder in this process (the child): sides of
    :data:`VARIANT_SIDES` with ``freeze``, else :data:`PARENT_SIDES`."""
    import torch._inductor.config as ic

    from curate.profile.sizes import check_shapes
    from curate.timing import TimingConfig, compile_candidate, measure_sides, pin_allocator
    from curate.tolerance import compare_outputs, passes_at, sample_min_pass_t

    allocator = pin_allocator()
    seed, t = int(cfg["seed"]), int(cfg["tolerance_t"])
    torch.set_num_threads(1)
    row: dict[str, Any] = {"status": "ok", "load_avg_start": os.getloadavg()[0], "allocator": allocator}
    with torch.no_grad():
        gm, inputs, kinds = _load(folder, cfg["dtype"], seed)

        def fresh() -> list:
            return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

        bad = check_shapes(gm, fresh(), folder)
        if bad:
            return {**row, "status": "size_inconsistent", "error": bad[:300]}
        torch.manual_seed(seed)
        expected = gm(*fresh())
        sides: dict[str, Any] = {"eager": gm}
        c0 = time.perf_counter()
        try:
            from passnet_common.store import load_graph

            sides["dynamo"], _ = compile_candidate(load_graph(folder, seed=seed)[0], fresh(), "eager", reset=True)
            sides["inductor"], _ = compile_candidate(load_graph(folder, seed=seed)[0], fresh(), "inductor", reset=False)
            if freeze:
                wrapped = FrozenWeights(load_graph(folder, seed=seed)[0], fresh(), kinds)
                real = [i for i, k in enumerate(kinds) if k not in WEIGHT_KINDS or not isinstance(inputs[i], torch.Tensor)]
                ic.freezing = True
                try:
                    frozen, _ = compile_candidate(wrapped, [inputs[i].clone() if isinstance(inputs[i], torch.Tensor)
                                                            else inputs[i] for i in real], "inductor", reset=False)
                finally:
                    ic.freezing = False
                row["frozen_weights"] = len(wrapped.slots) - sum(1 for s in wrapped.slots if s is None)

                def frozen_side(*args, _f=frozen, _idx=tuple(real)):
                    return _f(*[args[i] for i in _idx])
                sides["frozen"] = frozen_side
        except Exception as exc:  # noqa: BLE001 - recorded: the comparison is then not judged
            return {**row, "status": "compile_failure", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        row["compile_s"] = time.perf_counter() - c0
        for name in (("inductor", "frozen") if freeze else ("inductor",)):
            torch.manual_seed(seed)
            mpt = sample_min_pass_t(c.min_pass_t for c in compare_outputs(sides[name](*fresh()), expected))
            row[f"{name}_min_pass_t"] = mpt
            row[f"{name}_correct"] = passes_at(mpt, t)
        if cfg.get("timing_core") is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {int(cfg["timing_core"])})  # compiled on the other cores, timed here
        tc = TimingConfig(**{**cfg["timing"], "seed": seed})
        decide = (("dynamo", "inductor"), ("dynamo", "frozen")) if freeze else (("dynamo", "inductor"), ("eager", "inductor"))
        m = measure_sides(sides, fresh, tc, decide=decide)
    row.update(stable=m.stable, capped=m.time_capped, trials=len(m.trials_ms["eager"]), clock=m.clock, clock_gap=m.clock_gap,
               clock_flag=m.clock_flag, min_effect=tc.min_effect, load_avg_end=os.getloadavg()[0],
               **{f"{s}_median_ms": m.medians_ms[s] for s in sides},
               speedup_compiler=_ratio(m, "dynamo", "inductor", tc), speedup_e2e=_ratio(m, "eager", "inductor", tc))
    if freeze:
        row.update(speedup_compiler_frozen=_ratio(m, "dynamo", "frozen", tc), speedup_e2e_frozen=_ratio(m, "eager", "frozen", tc),
                   speedup_frozen_vs_inductor=_ratio(m, "inductor", "frozen", tc))
    return row


def _task(arg: tuple[str, dict, bool], out_dir: Path) -> None:
    """Child entry: compiles on the other cores, then pins itself to the timing core and times;
    writes ``result.json`` last."""
    from passnet_common.io import atomic_write_json

    folder, cfg, freeze = arg
    if cfg.get("cache_dir"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cfg["cache_dir"])
    import torch._inductor.config as ic

    ic.compile_threads = 1
    others = [c for c in os.sched_getaffinity(0) if c != cfg.get("timing_core")] if hasattr(os, "sched_getaffinity") else []
    if others and cfg.get("timing_core") is not None:
        os.sched_setaffinity(0, set(others))  # compile off the timing core (as the profile's compile phase)
    t0, c0 = time.perf_counter(), time.process_time()
    row = _measure(Path(folder), cfg, freeze)
    row.update(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
    atomic_write_json(Path(out_dir) / "result.json", row)


def variant_task(arg: tuple[str, dict], out_dir: Path) -> None:
    """Child entry of one long-tail variant (module docstring, freezing)."""
    _task((arg[0], arg[1], True), out_dir)


def parent_task(arg: tuple[str, dict], out_dir: Path) -> None:
    """Child entry of one parent graph at one size and dtype (module docstring, parent)."""
    _task((arg[0], arg[1], False), out_dir)


def pick_parent(members: list[dict], graph_store: Path, max_bytes: int) -> tuple[str | None, str | None, int | None]:
    """``(parent graph_hash, why none, nodes)``: among the subgraph's parent unique graphs found in
    ``graph_store`` with at most ``max_bytes`` of tensor inputs, the one with the fewest nodes."""
    from passnet_common.store import store_path

    found, why = [], "not_in_graph_store"
    for h in sorted({m["graph_hash"] for m in members or []}):
        p = store_path(graph_store, h)
        if not (p / "graph.json").exists():
            continue
        if tensor_bytes(p) > max_bytes:
            why = "parent_bytes_cap"
            continue
        found.append((len(json.loads((p / "graph.json").read_text())["nodes"]), h))
    if not found:
        return None, why, None
    n, h = min(found)
    return h, None, n


def resolve_variants(spec: str, hashes: list[str]) -> set[tuple[str, str, str]]:
    """``"h:size:dtype,..."`` -> variant keys, each hash a unique prefix of one of ``hashes``.

    Raises:
        ValueError: a malformed item, or a prefix that matches no hash or several.
    """
    out = set()
    for item in filter(None, (x.strip() for x in spec.split(","))):
        parts = item.split(":")
        if len(parts) != 3:
            raise ValueError(f"--variants item {item!r}: expected subgraph_hash:size:dtype")
        hit = [h for h in hashes if h.startswith(parts[0])]
        if len(hit) != 1:
            raise ValueError(f"--variants item {item!r}: hash prefix matches {len(hit)} subgraphs")
        out.add((hit[0], parts[1], parts[2]))
    return out


def _result(d: Path) -> dict:
    if (d / "result.json").exists():
        return json.loads((d / "result.json").read_text())
    err = json.loads((d / "error.json").read_text()) if (d / "error.json").exists() else {}
    return {"status": "isolation_failed", "error": f"{err.get('error_class')}: {(err.get('error_message') or '')[:300]}"}


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def survival_row(key: tuple[str, str, str], stage: dict, v: dict, parent: dict | None, parent_info: dict) -> dict[str, Any]:
    """One output row from a variant's child result ``v`` and its parent's ``parent`` (None: not
    measured; ``parent_info``: ``graph_hash``, ``nodes``, ``why``)."""
    h, size, dtype = key
    m = float(v.get("min_effect") or 0.05)
    ok = v.get("status") == "ok"
    row = {"variant": f"{h}:{size}:{dtype}", "subgraph_hash": h, "size": size, "dtype": dtype, **stage,
           "status": v.get("status"), "error": v.get("error"),
           "stable": v.get("stable"), "trials": v.get("trials"), "clock_gap": _round(v.get("clock_gap")),
           "seconds": _round(v.get("seconds")),
           "load_avg": _round(v.get("load_avg_start")), "frozen_weights": v.get("frozen_weights"),
           "speedup_compiler": _round(v.get("speedup_compiler")), "speedup_e2e": _round(v.get("speedup_e2e")),
           "retimed_slower": survives((v.get("speedup_compiler") or [None] * 3)[2], m, v.get("inductor_correct"), v.get("stable"))
           if ok else None,
           "speedup_compiler_frozen": _round(v.get("speedup_compiler_frozen")),
           "speedup_e2e_frozen": _round(v.get("speedup_e2e_frozen")),
           "speedup_frozen_vs_inductor": _round(v.get("speedup_frozen_vs_inductor")),
           "frozen_min_pass_t": v.get("frozen_min_pass_t"),
           "survives_freezing": survives((v.get("speedup_compiler_frozen") or [None] * 3)[2], m, v.get("frozen_correct"),
                                         v.get("stable")) if ok and v.get("inductor_correct") and
           survives((v.get("speedup_compiler") or [None] * 3)[2], m, True, v.get("stable")) else None,
           "parent": {"graph_hash": parent_info.get("graph_hash"), "nodes": parent_info.get("nodes")}}
    if parent is None:
        row["parent"]["status"] = parent_info.get("why")
        row["survives_parent"] = None
        return row
    p_ok = parent.get("status") == "ok"
    row["parent"].update(status=parent.get("status"), error=parent.get("error"), stable=parent.get("stable"),
                         trials=parent.get("trials"), min_pass_t=parent.get("inductor_min_pass_t"),
                         speedup_compiler=_round(parent.get("speedup_compiler")), speedup_e2e=_round(parent.get("speedup_e2e")),
                         eager_ms=_round(parent.get("eager_median_ms")), load_avg=_round(parent.get("load_avg_start")),
                         seconds=_round(parent.get("seconds")))
    row["survives_parent"] = survives((parent.get("speedup_compiler") or [None] * 3)[2], float(parent.get("min_effect") or m),
                                      parent.get("inductor_correct"), parent.get("stable")) if p_ok else None
    if p_ok and ok:
        row["subgraph_share_of_parent"] = _round(v["eager_median_ms"] / parent["eager_median_ms"]) \
            if parent.get("eager_median_ms") else None
        row["subgraph_loss_ms"] = _round(v["inductor_median_ms"] - v["dynamo_median_ms"])
        row["parent_loss_ms"] = _round(parent["inductor_median_ms"] - parent["dynamo_median_ms"])
    return row


def counts(rows: list[dict]) -> dict[str, Any]:
    """``variants`` (rows) and ``survives_freezing`` / ``survives_parent`` / ``retimed_slower`` as
    ``{true, false, not_judged}``."""
    out: dict[str, Any] = {"variants": len(rows)}
    for col in ("retimed_slower", "survives_freezing", "survives_parent"):
        vals = [r.get(col) for r in rows]
        out[col] = {"true": sum(1 for x in vals if x is True), "false": sum(1 for x in vals if x is False),
                    "not_judged": sum(1 for x in vals if x is None)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--long-tail", default="data/curate/long_tail.parquet")
    ap.add_argument("--decompose", default="data/decompose")
    ap.add_argument("--graph-store", default="data/graph_store")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--variants", default=None,
                    help="comma-separated subgraph_hash:size:dtype to measure instead of the long tail of --long-tail "
                         "(a hash may be a unique prefix); stage figures are then absent")
    ap.add_argument("--limit", type=int, default=None, help="first N long-tail variants (sorted) only")
    ap.add_argument("--no-parent", action="store_true", help="skip the parent graphs")
    ap.add_argument("--max-parent-bytes", type=int, default=1 << 30, help="tensor inputs of a parent (bytes) at catalog size")
    ap.add_argument("--timeout-s", type=float, default=600.0, help="wall seconds per child")
    ap.add_argument("--mem-cap-gb", type=float, default=6.0, help="resident memory cap per child (GiB)")
    ap.add_argument("--work", default="/tmp/longtail_survival")
    ap.add_argument("--keep", action="store_true", help="reuse --work (resume) instead of starting afresh")
    ap.add_argument("--out", default="metrics/bench/longtail_survival.json")
    args = ap.parse_args(argv)

    import polars as pl
    import yaml

    from curate.profile.config import ProfileConfig
    from curate.profile.sizes import write_variants
    from curate.select.longtail import long_tail_variants
    from passnet_common.io import atomic_write_json
    from passnet_common.machine import host_fingerprint
    from passnet_common.store import store_path
    from passnet_common.worker import run_isolated

    work = Path(args.work)
    if work.exists() and not args.keep:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    params = yaml.safe_load(Path(args.params).read_text())["curate"]
    pcfg = ProfileConfig.from_params(params.get("profile"), "curate.profile")
    t = int(params["curate"]["tolerance_t"])
    try:
        core = max(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        core = None
    base = {"seed": pcfg.seed, "tolerance_t": t, "timing": pcfg.timing.to_params(), "timing_core": core,
            "cache_dir": str((work / "inductor_cache").resolve())}
    subs = {r["subgraph_hash"]: r for r in pl.read_parquet(Path(args.decompose) / "subgraphs.parquet").to_dicts()}
    if args.variants:
        labelled, keys = [], sorted(resolve_variants(args.variants, list(subs)))[: args.limit]
    else:
        labelled = pl.read_parquet(args.long_tail).to_dicts()
        keys = sorted(long_tail_variants(labelled))[: args.limit]
    sizes = pcfg.sizes.to_params()
    store = Path(args.decompose) / "subgraph_store"
    load0, t0 = os.getloadavg(), time.perf_counter()

    def folder_of(root: Path, h: str, size: str, out: Path) -> tuple[str | None, str | None]:
        vs = {v["size"]: v for v in write_variants(store_path(root, h), out, sizes)}
        v = vs.get(size) or {}
        return v.get("folder"), v.get("skip_reason") or (None if v else "no_such_size")

    v_tasks, p_tasks, plan = [], {}, {}
    for key in keys:
        h, size, dtype = key
        folder, why = folder_of(store, h, size, work / "variants" / h[:2] / h)
        d = work / "runs" / f"{h[:16]}-{size}-{dtype}"
        if folder:
            v_tasks.append((f"{h}:{size}:{dtype}", (folder, {**base, "dtype": dtype}), d))
        pinfo: dict[str, Any] = {}
        if not args.no_parent:
            ph, pwhy, nodes = pick_parent(subs.get(h, {}).get("members") or [], Path(args.graph_store), args.max_parent_bytes)
            pinfo = {"graph_hash": ph, "nodes": nodes, "why": pwhy}
            if ph:
                pfolder, pwhy = folder_of(Path(args.graph_store), ph, size, work / "parents" / ph[:2] / ph)
                pinfo["why"] = pwhy
                pk = (ph, size, dtype)
                if pfolder and pk not in p_tasks:
                    p_tasks[pk] = (f"parent:{ph}:{size}:{dtype}", (pfolder, {**base, "dtype": dtype}),
                                   work / "runs" / f"parent-{ph[:16]}-{size}-{dtype}")
        else:
            pinfo = {"why": "not_measured"}
        plan[key] = {"dir": d if folder else None, "why": why, "parent": pinfo,
                     "parent_dir": p_tasks[(pinfo["graph_hash"], size, dtype)][2]
                     if pinfo.get("graph_hash") and (pinfo["graph_hash"], size, dtype) in p_tasks else None}
    cap = int(args.mem_cap_gb * 2**30)
    todo_v = [x for x in v_tasks if not (x[2] / "result.json").exists()]
    todo_p = [x for x in p_tasks.values() if not (x[2] / "result.json").exists()]
    print(f"longtail_survival: {len(keys)} variants, {len(todo_v)} variant and {len(todo_p)} parent children to run",
          flush=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = base["cache_dir"]
    run0 = {(r["subgraph_hash"], r["size"], r.get("dtype") or "float32"): r for r in labelled if r["run"] == 0}
    fp = host_fingerprint()

    def write(parents_done: bool) -> dict:
        rows = []
        for key in keys:
            p = plan[key]
            s0 = run0.get(key, {})
            stage = {"pattern": s0.get("pattern") or subs.get(key[0], {}).get("pattern"),
                     "stage_run0": {"speedup_compiler": _round(s0.get("speedup_compiler")),
                                    "speedup_compiler_ci_high": _round(s0.get("speedup_compiler_ci_high")),
                                    "overhead_bound": s0.get("overhead_bound"),
                                    "eager_median_ms": _round(s0.get("eager_median_ms"))} if s0 else None}
            v = _result(p["dir"]) if p["dir"] else {"status": "skipped", "error": p["why"]}
            parent = _result(p["parent_dir"]) if p["parent_dir"] and parents_done else None
            rows.append(survival_row(key, stage, v, parent, p["parent"] if parents_done else {"why": "not_measured_yet"}))
        result = {
            "command": " ".join([Path(sys.executable).name, "-m", "benchmarks.longtail_survival",
                                 *(argv if argv is not None else sys.argv[1:])]),
            "source": f"--variants {args.variants}" if args.variants else f"long tail of {args.long_tail}",
            "tolerance_t": t, "protocol": base["timing"], "parents_measured": parents_done and not args.no_parent,
            **counts(rows), "rows": rows, "wall_s": round(time.perf_counter() - t0, 1),
            "children_wall_s": round(sum(r.get("seconds") or 0.0 for r in rows)
                                     + sum({(r["parent"]["graph_hash"], r["size"], r["dtype"]): r["parent"]["seconds"]
                                            for r in rows if r["parent"].get("seconds")}.values()), 1),
            "machine": {"cpu_model": fp["cpu_model"], "logical_cores": fp["cpu_logical_cores"],
                        "usable_cores": fp["cpu_usable_cores"], "torch": fp["torch_version"], "timing_core": core},
            "load_avg_1min": {"start": round(load0[0], 2), "end": round(os.getloadavg()[0], 2),
                              "children_median": _median([r.get("load_avg") for r in rows]),
                              "parent_children_median": _median([r["parent"].get("load_avg") for r in rows])},
        }
        atomic_write_json(args.out, result, indent=2)
        return result

    run_isolated(todo_v, variant_task, workers=1, timeout_s=args.timeout_s, mem_cap_bytes=cap, threads_per_worker=1)
    write(False)  # the freezing figures stand on their own while the parents compile
    run_isolated(todo_p, parent_task, workers=1, timeout_s=args.timeout_s, mem_cap_bytes=cap, threads_per_worker=1)
    result = write(True)
    print(json.dumps({k: result[k] for k in ("source", "variants", "retimed_slower", "survives_freezing", "survives_parent",
                                             "load_avg_1min")}))
    return 0


def _median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 2) if xs else None


if __name__ == "__main__":
    raise SystemExit(main())
