"""Profile subgraph variants: eager, Dynamo-only and Inductor, in two phases.

A *variant* is ``(subgraph, size)`` (:mod:`curate.profile.sizes`: the catalog size and a workload
size). Profiling runs in two phases so that timing never shares a core with our own compiles:

1. **compile phase** (:func:`check_task`, ``compile_workers`` forked children at once,
   :func:`passnet_common.worker.run_isolated`): rebuild the variant, eager reference twice
   (different outputs = ``deterministic False``), the workload size's shape check
   (:func:`curate.profile.sizes.check_shapes`), compile the Dynamo-only side
   (``torch.compile(backend="eager")``: guards + wrapper, no code generation) and the candidate
   (Inductor), compare outputs at every level t (:func:`curate.tolerance.compare_outputs`).
   This fills Inductor's persistent caches (``TORCHINDUCTOR_CACHE_DIR``);
2. **timing phase** (:func:`time_task`, one child at a time, pinned to the timing core, after
   the variant's compile is done; the compile phase runs either before it or, with
   ``overlap_compile``, beside timing run 0 on the other cores: :mod:`curate.profile.run`):
   rebuild, compile both sides again (cache hits), time the
   three sides interleaved (:func:`curate.timing.measure_sides`, adaptive trial count) and
   compute ``speedup_e2e`` = eager / Inductor (PassNet's figure), ``speedup_compiler`` =
   Dynamo-only / Inductor (the generated code, without the harness) and ``speedup_dynamo`` =
   eager / Dynamo-only, each with its paired bootstrap interval; ``overhead_bound`` = the
   interval of ``speedup_dynamo`` lies below ``1 - min_effect`` (the wrapper alone loses to eager).

Every row carries a hardware fingerprint (:func:`fingerprint`: CPU model, logical cores, the
cores the process may use, torch threads, torch / Python versions, 1-minute load average at
the start and end of the measurement). Trials are measured with the timing thread's CPU clock
(``curate.profile.timing.clock: thread_cpu``) with wall time recorded beside it (``clock_gap``,
``clock_flag``: :mod:`curate.timing`). The timing of one variant stops at ``max_variant_s``
(CPU seconds of the timed trials; :class:`curate.profile.config.ProfileConfig`); a capped row the
gate cannot decide is unstable.

**Degenerate variants** (:func:`degenerate_reason`, compile phase): a variant whose every tensor
output is constant, near zero or empty (:func:`curate.tolerance.trivial_reason`), or whose outputs
do not change when its inputs are drawn with another seed, is ``skipped`` with ``skip_reason``
``degenerate_<why>`` and never timed (METR's KernelBench audit removed such tasks: a candidate
that returns a constant passes their tolerance checks). A row whose noise gate still fires after its
retries is **re-measured within the same run** (``remeasure_passes`` passes, fresh trials on
fresh inputs, after the run's other variants: :func:`curate.profile.run.time_passes`); labels
come from the final pass (:func:`merge_passes`). Still unstable: status ``unstable``, no label,
and the stage's next run measures it afresh.

Resume keys (:func:`attempt_key`) list every input of a result: subgraph hash, size, a digest
of the variant's graph and input metadata, device, dtype, run, the protocol knobs, threads,
seed, torch version and :func:`code_version` (this package's modules and the store loader).
Results live in ``<out>/attempts/<key[:2]>/<key>/{check,result}.json`` (written last,
atomically; re-measurement pass p in ``<key>/pass<p>/result.json``) inside the stage's output
folder, so they travel with ``dvc push`` / ``pull``.
Inductor's cache is *not* an output: it only saves compile time (``compile_s`` of a warm run
is a cache load), never changes a result.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from curate.profile.config import ProfileConfig
from curate.profile.sizes import check_shapes
from curate.timing import CLOCKS, CompileError, RunError, TimingConfig, compile_candidate, measure_sides, pin_allocator, slower
from curate.tolerance import ERROR_ACCURACY, ERROR_COMPILE, ERROR_RUNTIME, compare_outputs, sample_min_pass_t, trivial_reason
from passnet_common.io import atomic_write_json
from passnet_common.machine import host_fingerprint
from passnet_common.store import load_graph

PROFILE_VERSION = 2
SIDES = ("eager", "dynamo", "inductor")
RATIOS = {"speedup_e2e": ("eager", "inductor"), "speedup_compiler": ("dynamo", "inductor"),
          "speedup_dynamo": ("eager", "dynamo")}
"""Row column -> (numerator side, denominator side) of ``median / median``."""

_CODE_FILES = ("curate/profile/variant.py", "curate/timing.py", "curate/profile/sizes.py", "curate/tolerance.py", "passnet_common/store.py")
STRESS_CMD = (sys.executable, "-c", "while True: pass")
"""One CPU-bound hog; :func:`stress_plan` pins one to the timing core and one to the other cores."""


def stress_plan(timing_core: int | None, usable: list[int]) -> list[dict]:
    """The stated stress of an agreement run: ``[{cmd, cores}]``, one :data:`STRESS_CMD` pinned
    to ``timing_core`` (it competes with the timed work for that core) and a second pinned to the
    other usable cores (it competes with the parent, the compile cache and the memory bus).
    Without a known timing core: one unpinned hog."""
    if timing_core is None:
        return [{"cmd": STRESS_CMD, "cores": None}]
    plan = [{"cmd": STRESS_CMD, "cores": [int(timing_core)]}]
    others = [c for c in usable if c != timing_core]
    if others:
        plan.append({"cmd": STRESS_CMD, "cores": others})
    return plan


def code_version() -> str:
    """sha256 (first 16 hex) of the source of the modules that shape a profile result."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256(f"profile-v{PROFILE_VERSION}".encode())
    for rel in _CODE_FILES:
        p = root / rel
        h.update(rel.encode())
        h.update(p.read_bytes() if p.exists() else b"<missing>")
    return h.hexdigest()[:16]


def inputs_digest(folder: Path) -> str:
    """sha256 (16 hex) of a variant folder's graph and input/weight metadata."""
    h = hashlib.sha256()
    for name in ("graph.json", "input_meta.json", "weight_meta.json", "expected.json"):
        p = Path(folder) / name
        h.update(p.read_bytes() if p.exists() else b"<missing>")
    return h.hexdigest()[:16]


def attempt_key(subgraph_hash: str, size: str, run: int | None, cfg: dict, inputs: str, phase: str) -> str:
    """Resume key of one attempt (module docstring); ``run`` None for the compile phase."""
    parts = {"subgraph": subgraph_hash, "size": size, "inputs": inputs, "run": run, "phase": phase,
             "device": cfg["device"], "dtype": cfg["dtype"], "timing": cfg.get("timing") if phase == "time" else None,
             "threads": cfg["threads"], "seed": cfg["seed"], "candidate": str(cfg.get("candidate", "inductor")),
             "torch": torch.__version__, "code": code_version()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def fingerprint(device: str = "cpu") -> dict[str, Any]:
    """Hardware / software fingerprint of this process (columns of every profile row):
    :func:`passnet_common.machine.host_fingerprint` plus ``device_name`` (the CPU model, or the
    CUDA device with ``cuda_version`` and ``cuda_capability`` on a ``cuda`` device)."""
    fp = host_fingerprint()
    fp["device_name"] = fp["cpu_model"]
    if device.startswith("cuda") and torch.cuda.is_available():
        fp.update(device_name=torch.cuda.get_device_name(0), cuda_version=torch.version.cuda,
                  cuda_capability=".".join(map(str, torch.cuda.get_device_capability(0))))
    return fp


def environment(device: str) -> dict[str, Any]:
    """Versions and hardware (kept for the task folders): :func:`fingerprint`."""
    return fingerprint(device)


def _flat(out: Any) -> list:
    return tree_flatten(out)[0]


def _same(a: Any, b: Any) -> bool:
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


def _load(folder: Path, cfg: dict):
    seed = int(cfg.get("seed", ProfileConfig.seed))
    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(int(cfg.get("threads", ProfileConfig.threads)))
    dtype = getattr(torch, cfg.get("dtype", "float32"))
    gm, inputs = load_graph(folder, device=cfg.get("device", ProfileConfig.device), seed=seed)
    inputs = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]

    def fresh() -> list:
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

    def copy_gm():
        return load_graph(folder, device=cfg.get("device", ProfileConfig.device), seed=seed)[0]

    return gm, fresh, copy_gm


def _compile_sides(gm, copy_gm, fresh, candidate: Any) -> tuple[dict, dict]:
    """Dynamo-only and candidate sides, each on its own copy of the graph (own code object)."""
    dyn, dyn_s = compile_candidate(copy_gm(), fresh(), "eager", reset=True)
    cand, cand_s = compile_candidate(gm, fresh(), candidate, reset=False)
    return {"dynamo": dyn, "inductor": cand}, {"compile_s_dynamo": dyn_s, "compile_s": cand_s}


def check_variant(folder: Path, cfg: dict, backend: Any = "inductor") -> dict[str, Any]:
    """Compile phase of one variant in this process (module docstring, phase 1).

    Returns:
        ``status`` (``ok``, ``skipped`` / ``no_cpu_kernel`` or ``size_inconsistent``,
        ``eager_failed``, ``compile_failure`` (code 3), ``runtime_crash`` (code 2),
        ``accuracy_error`` (code 1)), per-output levels, ``min_pass_t``, compile seconds.
    """
    seed = int(cfg.get("seed", ProfileConfig.seed))
    clock = CLOCKS[(cfg.get("timing") or {}).get("clock", TimingConfig.clock)]
    gm, fresh, copy_gm = _load(folder, cfg)
    row: dict[str, Any] = {"status": "ok", "error_code": None, "error_class": None, "error_message": None, "skip_reason": None}
    try:
        torch.manual_seed(seed)
        expected = gm(*fresh())
        calls = []
        for _ in range(2):  # the profile's clock (CPU time of this thread: a loaded compile phase does not inflate it)
            torch.manual_seed(seed)
            args = fresh()
            t_call = clock()
            again = gm(*args)
            calls.append((clock() - t_call) * 1e3)
        row["eager_check_ms"] = min(calls)
        bad = check_shapes(gm, fresh(), folder)
        other = None if bad else _other_seed_outputs(folder, cfg)
    except NotImplementedError as exc:
        msg = str(exc)
        if "Could not run" in msg or "not implemented for" in msg:
            return {**row, "status": "skipped", "skip_reason": "no_cpu_kernel", "error_class": "NotImplementedError",
                    "error_message": msg[:500]}
        return {**row, "status": "eager_failed", "error_class": type(exc).__name__, "error_message": msg[:500]}
    except Exception as exc:  # noqa: BLE001 - recorded
        status = "skipped" if (Path(folder) / "expected.json").exists() else "eager_failed"
        return {**row, "status": status, "skip_reason": "size_inconsistent" if status == "skipped" else None,
                "error_class": type(exc).__name__, "error_message": str(exc)[:500]}
    if bad:
        return {**row, "status": "skipped", "skip_reason": "size_inconsistent", "error_message": bad[:500]}
    row["deterministic"] = _same(expected, again)
    why = degenerate_reason(expected, other)
    if why:
        return {**row, "status": "skipped", "skip_reason": f"degenerate_{why}"}
    try:
        sides, secs = _compile_sides(gm, copy_gm, fresh, backend)
    except RunError as exc:
        return {**row, "status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_class": type(exc.__cause__).__name__,
                "error_message": str(exc)[:500]}
    except Exception as exc:  # noqa: BLE001 - CompileError or anything else while compiling: error code 3
        cause = exc.__cause__ if isinstance(exc, CompileError) and exc.__cause__ is not None else exc
        return {**row, "status": "compile_failure", "error_code": ERROR_COMPILE, "error_class": type(cause).__name__,
                "error_message": str(exc)[:500]}
    row.update(secs)
    try:
        torch.manual_seed(seed)
        actual = sides["inductor"](*fresh())
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
    return row


def _other_seed_outputs(folder: Path, cfg: dict) -> Any:
    """Eager outputs of the variant with inputs drawn from seed ``seed + 1`` (None when the
    graph has no inputs to redraw)."""
    try:
        gm2, fresh2, _ = _load(folder, {**cfg, "seed": int(cfg.get("seed", ProfileConfig.seed)) + 1})
        torch.manual_seed(int(cfg.get("seed", ProfileConfig.seed)))
        ins = fresh2()
        return gm2(*ins) if ins else None
    except Exception:  # noqa: BLE001 - inputs of another seed the graph refuses: not judged on this
        return None


def degenerate_reason(expected: Any, other: Any) -> str | None:
    """Why a variant's outputs make a degenerate task, or None (module docstring).

    ``expected``: eager outputs with the variant's seed; ``other``: with inputs from another seed
    (None: not measured). Returns ``constant`` / ``near_zero`` / ``empty`` when every tensor output
    is trivial (:func:`curate.tolerance.trivial_reason`; the first output's reason), or
    ``input_independent`` when ``other`` equals ``expected`` exactly."""
    outs = [x for x in _flat(expected) if isinstance(x, torch.Tensor)]
    if not outs:
        return "empty"
    reasons = [trivial_reason(x) for x in outs]
    if all(reasons):
        return reasons[0]
    if other is not None and _same(expected, other):
        return "input_independent"
    return None


def time_variant(folder: Path, cfg: dict, backend: Any = "inductor") -> dict[str, Any]:
    """Timing phase of one variant in this process (module docstring, phase 2).

    Returns:
        per side ``<side>_median_ms`` and ``<side>_trials_ms``; for each of :data:`RATIOS`
        the ratio and ``<ratio>_ci_low`` / ``_ci_high``; ``overhead_bound``; ``stable``,
        ``capped``, ``inner_<side>``, ``trials``, ``timing_attempts``, ``min_trial_ms_kept``,
        ``trial_history`` (JSON: every trial of every attempt) (:func:`timing_row`),
        ``load_avg_start`` / ``_end``, ``allocator`` (:func:`curate.timing.pin_allocator`, applied
        before the variant loads) and the :func:`fingerprint`. A side that raises:
        ``status runtime_crash``. ``cfg["timing"]``: the :class:`curate.timing.TimingConfig` knobs;
        ``cfg["decide"]`` (default every ratio of :data:`RATIOS`): the ratios that stop the trials
        and that the gate judges (the screen: ``["speedup_compiler"]``).
    """
    allocator = pin_allocator()
    gm, fresh, copy_gm = _load(folder, cfg)
    tc = TimingConfig(**{**cfg["timing"], "device": cfg.get("device", ProfileConfig.device),
                         "seed": int(cfg.get("seed", ProfileConfig.seed))})
    decide = tuple(RATIOS[r] for r in (cfg.get("decide") or RATIOS))
    load0 = os.getloadavg()[0]
    try:
        sides, secs = _compile_sides(gm, copy_gm, fresh, backend)
        t = measure_sides({"eager": gm, "dynamo": sides["dynamo"], "inductor": sides["inductor"]}, fresh, tc,
                          decide=decide)
    except Exception as exc:  # noqa: BLE001 - a crash while timing is a runtime crash
        return {"status": "runtime_crash", "error_code": ERROR_RUNTIME, "error_class": type(exc).__name__,
                "error_message": str(exc)[:500]}
    row = {"load_avg_start": load0, "load_avg_end": os.getloadavg()[0], **fingerprint(cfg.get("device", ProfileConfig.device)),
           "allocator": allocator,
           "compile_s_warm": secs["compile_s"], **timing_row(t, tc)}
    return row


def timing_row(t, tc) -> dict[str, Any]:
    """Row columns of one :class:`curate.timing.SidesTiming` ``t`` measured with config ``tc``.

    Returns:
        ``stable`` (the gate passed; False for a time-capped attempt the gate cannot decide),
        ``capped`` (``max_variant_s`` stopped the timing), ``timing_elapsed_s``,
        ``timing_attempts``, ``trials`` (kept trials per side), ``min_trial_ms_kept``,
        ``trial_history`` (JSON), per side ``<side>_median_ms`` / ``_trials_ms`` (ms per call) /
        ``inner_<side>`` / ``iqr_ratio_<side>``, ``ratio_iqr``, for each of :data:`RATIOS` the
        median of per-trial ratios with ``_ci_low`` / ``_ci_high`` (paired bootstrap at
        ``tc.ci_level``), ``overhead_bound`` and ``min_effect``; the clock: ``clock`` (what the
        trials were measured with), ``clock_gap`` (median wall / clock ratio), ``clock_flag``,
        ``<side>_wall_median_ms`` and ``timing_wall_s``.
    """
    row: dict[str, Any] = {"stable": t.stable, "capped": t.time_capped, "timing_elapsed_s": t.elapsed_s,
                           "timing_wall_s": t.wall_elapsed_s, "timing_attempts": t.attempts, "trials": len(t.trials_ms["eager"]),
                           "min_trial_ms_kept": t.min_trial_ms_kept, "trial_history": json.dumps(t.history),
                           "clock": t.clock, "clock_gap": t.clock_gap, "clock_flag": t.clock_flag}
    for s in SIDES:
        w = [x for x in t.wall_ms.get(s, []) if x is not None]
        row[f"{s}_wall_median_ms"] = sorted(w)[len(w) // 2] if w else None
        row[f"{s}_median_ms"] = t.medians_ms[s]
        row[f"{s}_trials_ms"] = t.trials_ms[s]
        row[f"inner_{s}"] = t.inner[s]
        row[f"iqr_ratio_{s}"] = t.iqr_ratio[s]
    row["ratio_iqr"] = t.ratio_iqr
    for col, (a, b) in RATIOS.items():
        lo, hi = t.ratio_ci(a, b, tc.ci_level, tc.n_boot, tc.seed)
        row.update({col: t.ratio(a, b), f"{col}_ci_low": lo, f"{col}_ci_high": hi})
    row["overhead_bound"] = slower(row["speedup_dynamo_ci_high"], tc.min_effect)
    row["min_effect"] = tc.min_effect
    return row


def over_time_cap(check: dict, timing: dict) -> bool:
    """True when a variant cannot be timed within the per-variant cap: its eager call in the
    compile phase (``eager_check_ms``, one call after a first one) times 3 sides times
    ``cap_min_trials`` (:class:`curate.timing.TimingConfig`) exceeds twice ``max_variant_s``.
    Such a row would come out ``unstable`` by construction (fewer trials than the gate needs);
    the margin of 2 keeps a compile-phase call slowed by load from skipping a variant that fits.
    No cap (``max_variant_s`` None) or no measurement: False."""
    cap = timing.get("max_variant_s")
    ms = check.get("eager_check_ms")
    if cap is None or ms is None:
        return False
    need = int(timing.get("cap_min_trials", TimingConfig.cap_min_trials))
    return ms / 1e3 * len(SIDES) * need > 2 * float(cap)


def needs_remeasure(result: dict) -> bool:
    """A timing result whose gate did not pass (``stable False``, no crash): re-timed by a
    re-measurement pass (:func:`merge_passes`). Not a time-capped result with fewer trials than
    ``TimingConfig.cap_min_trials``: its calls are so long that the cap holds too few trials for
    the gate in any pass (unstable by construction), so another pass would spend the cap again
    for nothing."""
    if result.get("capped") and (result.get("trials") or 0) < TimingConfig.cap_min_trials:
        return False
    return not result.get("status") and result.get("stable") is False


def merge_passes(results: list[dict]) -> dict[str, Any]:
    """One row from the timing passes of a variant within one run (pass 0, then the
    re-measurement passes of an unstable result, each with fresh trials on fresh inputs).

    Labels come from the **final** pass alone (its trials, ratios, intervals, ``stable``); the
    earlier passes' trials are not pooled with it (pooling would mix a loaded window's trials
    into the final interval) but kept: ``trial_history`` holds every trial of every attempt of
    every pass (key ``pass``), ``pass_stable`` / ``pass_trials`` list each pass's gate result and
    trial count, ``remeasure_pass`` is the final pass's index (0 = not re-measured).

    Raises:
        ValueError: no results.
    """
    if not results:
        raise ValueError("merge_passes needs at least one timing result")
    row = dict(results[-1])
    hist = []
    for p, r in enumerate(results):
        hist += [{**h, "pass": p} for h in json.loads(r.get("trial_history") or "[]")]
    row.update(trial_history=json.dumps(hist), remeasure_pass=len(results) - 1,
               pass_stable=[r.get("stable") for r in results], pass_trials=[r.get("trials") for r in results])
    return row


def profile_subgraph(folder: Path, cfg: dict, backend: Any = "inductor") -> dict[str, Any]:
    """Both phases in this process (tests, the task runner): :func:`check_variant`, then
    :func:`time_variant` when the variant runs, again up to ``cfg["remeasure_passes"]`` times
    (default :attr:`curate.profile.config.ProfileConfig.remeasure_passes`) while it is unstable (:func:`merge_passes`); ``status
    unstable`` when the noise gate still fires."""
    row = check_variant(Path(folder), cfg, backend)
    if row["status"] not in ("ok", "accuracy_error"):
        return row
    passes = [time_variant(Path(folder), cfg, backend)]

    while needs_remeasure(passes[-1]) and len(passes) <= int(cfg.get("remeasure_passes", ProfileConfig.remeasure_passes)):
        passes.append(time_variant(Path(folder), cfg, backend))
    timed = merge_passes(passes) if not passes[-1].get("status") else passes[-1]
    status = timed.pop("status", None)
    row.update(timed)
    if status:
        row["status"] = status
        row["error_code"] = timed.get("error_code")
    elif row["status"] == "ok" and not row["stable"]:
        row["status"] = "unstable"
    return row


def _setup_child(cfg: dict) -> None:
    if cfg.get("cache_dir"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cfg["cache_dir"]).resolve())
    import torch._inductor.config as ic  # noqa: PLC0415  (env: after TORCHINDUCTOR_CACHE_DIR is set above (torch._dynamo reads it at import))

    ic.compile_threads = 1
    ic.fx_graph_cache = True
    try:
        import torch._functorch.config as fc  # noqa: PLC0415  (env: after TORCHINDUCTOR_CACHE_DIR is set above; optional: absent in some torch builds)

        fc.enable_autograd_cache = True
    except (ImportError, AttributeError):
        pass


def check_task(arg: tuple[str, dict], out_dir: Path) -> None:
    """Child entry of the compile phase: writes ``check.json`` (last, atomically)."""
    folder, cfg = arg
    _setup_child(cfg)
    t0 = time.perf_counter()
    row = check_variant(Path(folder), cfg, cfg.get("candidate", "inductor"))
    row["check_seconds"] = time.perf_counter() - t0
    if hasattr(os, "sched_getaffinity"):
        row["compile_cores"] = sorted(os.sched_getaffinity(0))  # where this compile ran (kept in check.json)
    row["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    atomic_write_json(out_dir / "check.json", row)


def time_task(arg: tuple[str, dict], out_dir: Path) -> None:
    """Child entry of the timing phase: pins itself to ``cfg["timing_core"]`` (when set) and
    writes ``result.json`` (last, atomically)."""
    folder, cfg = arg
    _setup_child(cfg)
    if cfg.get("timing_core") is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(cfg["timing_core"])})
    t0, c0 = time.perf_counter(), time.process_time()
    row = time_variant(Path(folder), cfg, cfg.get("candidate", "inductor"))
    row["time_seconds"] = time.perf_counter() - t0
    row["time_cpu_seconds"] = time.process_time() - c0  # the child's CPU seconds: its cost on a core, whatever the load
    atomic_write_json(out_dir / "result.json", row)
