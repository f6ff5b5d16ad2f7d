"""Profile unique subgraphs: eager vs ``torch.compile`` (Inductor defaults), one child each.

Each (subgraph, device, dtype, run) is one *attempt*, run by :func:`profile_task` in a forked
child (:func:`passnet_common.worker.run_isolated`: timeout, resident-memory cap; synthesised index
inputs can crash natively). The attempt key (:func:`attempt_key`) lists everything that shapes
the result: subgraph hash, a digest of its input metadata, device, dtype, run index, the timing knobs, thread count, the torch
version and :func:`code_version` (a hash of this package's modules and the store loader), so a
resumed stage re-runs exactly the attempts whose inputs changed; finished attempts are kept
in ``<work>/<key[:2]>/<key>/result.json`` (written last, atomically).

Inside the child (:func:`profile_task`):

1. rebuild the subgraph with :func:`passnet_common.store.load_graph` (inputs synthesised with seed
   ``seed``), cast floating inputs to ``dtype``;
2. eager reference twice with the same RNG seed: outputs that differ mark the subgraph
   ``deterministic = False`` (random ops); such outputs are recorded but not judged;
   a missing CPU kernel (``NotImplementedError: Could not run ...``) is ``skipped /
   no_cpu_kernel``, any other eager failure ``eager_failed``;
3. compile with Inductor (:func:`curate.timing.compile_candidate`, ``fallback_random`` on):
   failure = error code 3;
4. one compiled call on fresh inputs: failure = error code 2; outputs compared per output
   at every level t = -10..5 (:func:`curate.tolerance.compare_outputs`); failing every level
   = error code 1;
5. timing protocol of :mod:`curate.timing` (interleaved trials, medians, noise gate).

Inductor's persistent caches (FX graph cache, AOTAutograd cache) live under
``TORCHINDUCTOR_CACHE_DIR`` = ``<cache_dir>`` (``data/work/inductor_cache`` in dvc.yaml), so
a re-run (the second profile run, a resumed stage, another machine with the folder)
loads compiled kernels instead of running gcc.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import resource
import time
from pathlib import Path
from typing import Any

PROFILE_VERSION = 1

_CODE_FILES = ("curate/profile.py", "curate/timing.py", "curate/tolerance.py", "passnet_common/store.py")


def code_version() -> str:
    """sha256 (first 16 hex) of the source of the modules that shape a profile result."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"profile-v{PROFILE_VERSION}".encode())
    for rel in _CODE_FILES:
        p = root / rel
        h.update(rel.encode())
        h.update(p.read_bytes() if p.exists() else b"<missing>")
    return h.hexdigest()[:16]


def inputs_digest(folder: Path) -> str:
    """sha256 (16 hex) of a subgraph folder's input/weight metadata (what inputs are
    synthesised from; not part of the graph hash)."""
    h = hashlib.sha256()
    for name in ("input_meta.json", "weight_meta.json"):
        p = Path(folder) / name
        h.update(p.read_bytes() if p.exists() else b"<missing>")
    return h.hexdigest()[:16]


def attempt_key(subgraph_hash: str, run: int, cfg: dict, inputs: str = "") -> str:
    """Resume key of one attempt: every input that shapes the result (module docstring);
    ``inputs`` is :func:`inputs_digest` of the subgraph folder."""
    import torch

    parts = {"subgraph": subgraph_hash, "inputs": inputs, "run": run, "device": cfg["device"], "dtype": cfg["dtype"],
             "timing": cfg["timing"], "threads": cfg["threads"], "seed": cfg["seed"], "torch": torch.__version__,
             "code": code_version()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (platform.processor() as fallback)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(device: str) -> dict[str, Any]:
    """Versions and hardware recorded beside every profile row."""
    import torch

    name = cpu_model()
    if device.startswith("cuda") and torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
    return {"device_name": name, "torch_version": torch.__version__, "python_version": platform.python_version(),
            "cpu_model": cpu_model(), "platform": platform.platform()}


def _flat(out: Any) -> list:
    from torch.utils._pytree import tree_flatten

    return tree_flatten(out)[0]


def _same(a: Any, b: Any) -> bool:
    import torch

    fa, fb = _flat(a), _flat(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or not torch.equal(torch.nan_to_num(x.detach().float() if x.is_floating_point() else x),
                                                     torch.nan_to_num(y.detach().float() if y.is_floating_point() else y)):
                return False
        elif x != y:
            return False
    return True


def profile_subgraph(folder: Path, cfg: dict, backend: Any = "inductor") -> dict[str, Any]:
    """Profile one stored subgraph in this process (steps 1-5 of the module docstring).

    Args:
        folder: subgraph store folder.
        cfg: ``device``, ``dtype``, ``seed``, ``threads``, ``timing`` (dict of
            :class:`curate.timing.TimingConfig` fields).
        backend: passed to :func:`curate.timing.compile_candidate` (tests pass a backend
            that raises or crashes).

    Returns:
        A dict of ``profiles`` columns (without key, run and environment columns), plus
        ``phase_s``: wall seconds of the steps (``load_s``, ``eager_ref_s``,
        ``correctness_s``, ``timing_s``; compile is ``compile_s``) for the benchmark.
    """
    import torch

    from curate.timing import CompileError, RunError, TimingConfig, compile_candidate, measure_pair
    from curate.tolerance import ERROR_ACCURACY, ERROR_COMPILE, ERROR_RUNTIME, compare_outputs, sample_min_pass_t
    from passnet_common.store import load_graph

    seed = int(cfg.get("seed", 0))
    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(int(cfg.get("threads", 1)))
    dtype = getattr(torch, cfg.get("dtype", "float32"))
    t_load = time.perf_counter()
    gm, inputs = load_graph(folder, device=cfg.get("device", "cpu"), seed=seed)
    phases = {"load_s": time.perf_counter() - t_load}
    inputs = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]

    def fresh() -> list:
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

    row: dict[str, Any] = {"status": "ok", "error_code": None, "error_class": None, "error_message": None, "skip_reason": None,
                           "phase_s": phases}
    t_check = time.perf_counter()
    try:
        torch.manual_seed(seed)
        expected = gm(*fresh())
        torch.manual_seed(seed)
        again = gm(*fresh())
    except NotImplementedError as exc:
        msg = str(exc)
        if "Could not run" in msg or "not implemented for" in msg:
            return {**row, "status": "skipped", "skip_reason": "no_cpu_kernel", "error_class": "NotImplementedError", "error_message": msg[:500]}
        return {**row, "status": "eager_failed", "error_class": type(exc).__name__, "error_message": msg[:500]}
    except Exception as exc:  # noqa: BLE001 - recorded
        return {**row, "status": "eager_failed", "error_class": type(exc).__name__, "error_message": str(exc)[:500]}
    row["deterministic"] = _same(expected, again)
    phases["eager_ref_s"] = time.perf_counter() - t_check
    try:
        compiled, compile_s = compile_candidate(gm, fresh(), backend)
    except RunError as exc:  # error code 2
        return {**row, "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_class": type(exc.__cause__).__name__,
                "error_message": str(exc)[:500]}
    except Exception as exc:  # noqa: BLE001 - CompileError or anything else while compiling: error code 3
        cause = exc.__cause__ if isinstance(exc, CompileError) and exc.__cause__ is not None else exc
        return {**row, "status": "compile_failure", "error_code": ERROR_COMPILE, "error_class": type(cause).__name__,
                "error_message": str(exc)[:500]}
    row["compile_s"] = compile_s
    t_check = time.perf_counter()
    try:
        torch.manual_seed(seed)
        actual = compiled(*fresh())
    except Exception as exc:  # noqa: BLE001 - error code 2
        return {**row, "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_class": type(exc).__name__,
                "error_message": str(exc)[:500]}
    comps = compare_outputs(actual, expected)
    row["output_dtypes"] = [c.dtype for c in comps]
    row["output_min_pass_t"] = [c.min_pass_t for c in comps]
    row["output_max_abs_diff"] = [c.max_abs_diff for c in comps]
    row["output_trivial"] = [c.trivial for c in comps]
    row["min_pass_t"] = sample_min_pass_t(c.min_pass_t for c in comps)
    if row["min_pass_t"] is None and row["deterministic"]:
        row.update(status="accuracy_error", error_code=ERROR_ACCURACY)
    phases["correctness_s"] = time.perf_counter() - t_check
    t_timing = time.perf_counter()
    try:
        timing = measure_pair(gm, compiled, fresh, TimingConfig(**cfg.get("timing", {})))
    except Exception as exc:  # noqa: BLE001 - a crash while timing is a runtime crash
        return {**row, "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_class": type(exc).__name__,
                "error_message": str(exc)[:500]}
    row.update(speedup=timing.speedup, eager_trials_ms=timing.eager_ms, compiled_trials_ms=timing.candidate_ms,
               eager_median_ms=float(_median(timing.eager_ms)), compiled_median_ms=float(_median(timing.candidate_ms)),
               inner=timing.inner, iqr_ratio_eager=timing.iqr_ratio_eager, iqr_ratio_compiled=timing.iqr_ratio_candidate,
               stable=timing.stable, timing_attempts=timing.attempts)
    phases["timing_s"] = time.perf_counter() - t_timing
    return row


def _median(xs):
    import statistics

    return statistics.median(xs)


def profile_task(arg: tuple[str, dict], out_dir: Path) -> None:
    """Child entry point for :func:`passnet_common.worker.run_isolated`: ``arg = (folder, cfg)``;
    writes ``result.json`` (last, atomically) with the row, wall seconds and peak RSS."""
    from passnet_common.io import atomic_write_json

    folder, cfg = arg
    if cfg.get("cache_dir"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cfg["cache_dir"]).resolve())
    import torch._inductor.config as ic

    ic.compile_threads = 1  # no compile-worker pool per child (2 cores; the child is short-lived)
    ic.fx_graph_cache = True
    try:
        import torch._functorch.config as fc

        fc.enable_autograd_cache = True
    except (ImportError, AttributeError):
        pass
    t0 = time.perf_counter()
    row = profile_subgraph(Path(folder), cfg)
    row["seconds"] = time.perf_counter() - t0
    row["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    atomic_write_json(out_dir / "result.json", row)


_PREIMPORTED = False


def preimport(warm: bool = True) -> None:
    """Import Dynamo / Inductor / AOTAutograd once in the parent, before any fork: each child
    then starts with them loaded (seconds per child on 2 cores). Importing runs no kernel, so
    the fork stays safe (no OpenMP pool exists yet); the compile-worker pool is disabled."""
    global _PREIMPORTED
    if _PREIMPORTED:
        return
    _PREIMPORTED = True
    import torch._dynamo  # noqa: F401
    import torch._functorch.config as fc
    import torch._inductor.codecache  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    import torch._inductor.config as ic

    ic.compile_threads = 1
    ic.fx_graph_cache = True
    fc.enable_autograd_cache = True
    if warm:
        # One tiny compile + call with a single thread: Dynamo/Inductor's lazy set-up (ISA
        # probes, compiler checks, lazy imports: ~5 s) is then inherited by every child.
        # With one thread no OpenMP worker pool exists, so forking stays safe. The warm-up
        # compiles a GraphModule (what every child compiles), not a plain function: Dynamo
        # imports more lazily when it wraps a module (``torch.distributed.tensor.experimental``
        # & co.), ~1 s of every warm child's compile before this (measured 1.47 s -> 0.40 s).
        import torch

        torch.set_num_threads(1)
        torch._dynamo.reset()
        torch.compile(_warm_gm(), backend="inductor", dynamic=False)(torch.ones(2, 8), torch.ones(4, 8))
        torch._dynamo.reset()


def _warm_gm():
    """``relu(linear(x, w)).sum(-1)`` as an FX GraphModule (the shape of a profiled subgraph)."""
    import torch
    import torch.fx as fx

    g = fx.Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    y = g.call_function(torch.relu, (g.call_function(torch.nn.functional.linear, (x, w)),))
    g.output((g.call_function(torch.sum, (y, -1)),))
    return fx.GraphModule(torch.nn.Module(), g)


def profile_all(subgraphs: list[dict], store_root: Path, cfg: dict, work: Path, runs: int = 2, workers: int = 1,
                timeout_s: float = 300.0, mem_cap_bytes: int | None = 4 << 30, log=print) -> list[dict]:
    """Profile ``subgraphs`` (rows with ``subgraph_hash``) ``runs`` times; resumable.

    Run ``r`` of every subgraph finishes before run ``r + 1`` starts (the second run then
    meets a warm Inductor cache and a different moment's machine load: its labels measure
    how reproducible the long-tail label is).

    Returns:
        ``profiles`` rows (one per subgraph x run) including failures of the child
        (``timeout``, ``oom``, ``crash``: status ``isolation_failed``) with ``wall_s``.
    """
    from passnet_common.store import store_path
    from passnet_common.worker import run_isolated

    preimport()
    env = environment(cfg["device"])
    rows: list[dict] = []
    for run in range(runs):
        tasks, cached = [], []
        for sg in subgraphs:
            key = attempt_key(sg["subgraph_hash"], run, cfg, inputs_digest(store_path(store_root, sg["subgraph_hash"])))
            out_dir = Path(work) / key[:2] / key
            base = {"subgraph_hash": sg["subgraph_hash"], "run": run, "attempt_key": key, "device": cfg["device"],
                    "dtype": cfg["dtype"], "threads": cfg["threads"], "profile_version": PROFILE_VERSION,
                    "code_version": code_version(), **env}
            if (out_dir / "result.json").exists():
                cached.append((base, out_dir))
            else:
                tasks.append((key, (str(store_path(store_root, sg["subgraph_hash"])), cfg), out_dir))
                cached.append((base, out_dir))
        t0 = time.perf_counter()
        outcomes = {o.key: o for o in run_isolated(tasks, profile_task, workers=workers, timeout_s=timeout_s,
                                                    mem_cap_bytes=mem_cap_bytes, threads_per_worker=cfg["threads"])}
        log(f"profile run {run}: {len(tasks)} attempts in {time.perf_counter() - t0:.1f} s "
            f"({len(subgraphs) - len(tasks)} resumed)")
        for base, out_dir in cached:
            res = out_dir / "result.json"
            if res.exists():
                rows.append({**base, **json.loads(res.read_text())})
                continue
            o = outcomes.get(base["attempt_key"])
            err = json.loads((out_dir / "error.json").read_text()) if (out_dir / "error.json").exists() else {}
            rows.append({**base, "status": "isolation_failed",
                         "error_class": (o.error_class if o else None) or err.get("error_class"),
                         "error_message": ((o.error_message if o else None) or err.get("error_message") or "")[:500],
                         "error_code": None})
    return rows
