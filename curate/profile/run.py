"""Run the profile stage: variants, the compile phase in parallel, the timing phase alone.

The compile phase runs either first (``compile_workers`` children) or, with ``overlap_compile``,
in its own process pinned to every core but the timing core, beside timing run 0 and, while run 0
waits for a compile, beside the full-protocol and quiet-agreement attempts the timing core takes on
meanwhile (:func:`profile_all`); a timing child never shares its core with a compile.

:func:`profile_all` is what ``python -m curate profile`` calls; the per-variant work is in
:mod:`curate.profile.variant` (its docstring states the protocol). Runs are given as a plan
(:func:`run_plan`): run 0 profiles the whole sample; runs 1 and 2 re-time an agreement
subset, run 2 under the stated stress (:func:`curate.profile.variant.stress_plan`: one hog pinned
to the timing core, one to the other cores). The label agreement of runs 0/1 is
``label_agreement``, of runs 1/2 ``label_agreement_pinned`` (measured on the agreement subset alone).
With ``stress_confirm`` run 2 also re-times every subgraph with a run-0 variant that may be slower
(:func:`confirm_hashes`), so a possible member is also measured with a hog on the timing core and
one on the others, the load a busy machine adds, and the curate stage pools that run with the
others (:func:`curate.select.longtail.long_tail_variants`).

Every subgraph has a variant per shape (:data:`curate.profile.sizes.SIZES`) and per dtype
(``curate.profile.dtypes``). With ``screen`` run 0 times in two phases: a **screen** of every
variant (``screen_timing``: few trials, the compiler ratio alone gated, no re-measurement), then the
**full protocol** (``timing``, with re-measurement) on the screen's candidates (:func:`screen_candidate`:
every variant whose screen has not settled "not slower") plus a seeded **audit sample** of the
others (``audit_share``, :func:`audit_sample`); a row timed only by the screen keeps the screen's
timing (``phase screen``). The audit measures what the screen misses (``metrics/bench/screen_audit.json``).
Runs 1 and 2 time every variant of the agreement subset with the full protocol.
Within each run, the variants that came out unstable are re-timed up to ``remeasure_passes``
times (:func:`time_passes`, under the run's own stress condition); each run's labels come
from its own final passes, so the agreement still compares independent runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import torch.fx as fx

from curate.profile.config import ProtocolTimingConfig
from curate.profile.replicates import pool_replicates
from curate.profile.sizes import write_variants
from curate.profile.variant import (
    PROFILE_VERSION,
    attempt_key,
    check_task,
    code_version,
    fingerprint,
    inputs_digest,
    merge_passes,
    needs_remeasure,
    over_time_cap,
    stress_plan,
    time_task,
)
from passnet_common import gcfreeze
from passnet_common.io import atomic_write_json
from passnet_common.store import store_path
from passnet_common.worker import child_dies_with_parent, run_isolated

_PREIMPORTED = False


def preimport(warm: bool = True) -> None:
    """Import Dynamo / Inductor / AOTAutograd once in the parent, before any fork (each child
    then starts with them loaded); with ``warm`` one tiny single-thread compile runs the lazy
    set-up (ISA probes, compiler checks). One thread: no OpenMP pool exists, forking stays safe."""
    global _PREIMPORTED
    if _PREIMPORTED:
        return
    _PREIMPORTED = True
    import torch._dynamo  # noqa: PLC0415  (fork: Dynamo / Inductor load here, once in the parent before it forks; env: after the CLI set TORCHINDUCTOR_CACHE_DIR, which torch._dynamo reads at import)
    import torch._functorch.config as fc  # noqa: PLC0415  (fork / env: as above)
    import torch._inductor.codecache  # noqa: PLC0415, F401  (fork / env: as above)
    import torch._inductor.compile_fx  # noqa: PLC0415, F401  (fork / env: as above)
    import torch._inductor.config as ic  # noqa: PLC0415  (fork / env: as above)

    ic.compile_threads = 1
    ic.fx_graph_cache = True
    fc.enable_autograd_cache = True
    if warm:
        torch.set_num_threads(1)
        g = fx.Graph()
        x, w = g.placeholder("x"), g.placeholder("w")
        y = g.call_function(torch.relu, (g.call_function(torch.nn.functional.linear, (x, w)),))
        g.output((g.call_function(torch.sum, (y, -1)),))
        torch._dynamo.reset()
        torch.compile(fx.GraphModule(torch.nn.Module(), g), backend="inductor", dynamic=False)(torch.ones(2, 8), torch.ones(4, 8))
        torch._dynamo.reset()


@contextlib.contextmanager
def stress(active: bool, timing_core: int | None = None) -> Iterator[list[int]]:
    """While active: the hogs of :func:`curate.profile.variant.stress_plan` (one pinned to
    ``timing_core``, one to the other usable cores), ended by their pids after; they also die
    with this process (``PR_SET_PDEATHSIG``: a profile stage killed by a signal left the stress
    spinning and loading every later measurement). Yields the hogs' pids."""
    if not active:
        yield []
        return

    try:
        usable = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = []
    procs = []
    for h in stress_plan(timing_core, usable):
        def start(cores=h["cores"]) -> None:
            child_dies_with_parent()
            if cores:
                os.sched_setaffinity(0, set(cores))
        procs.append(subprocess.Popen(h["cmd"], preexec_fn=start))
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def screen_candidate(row: dict, min_effect: float) -> bool:
    """Whether a screen result goes on to the full protocol: a timed result whose
    ``speedup_compiler`` interval is not wholly at or above ``1 - min_effect`` (it may be slower),
    and every crash or child failure (the protocol judges it again). A result settled "not
    slower" is labelled from the screen (not long tail, whatever ``speedup_e2e`` says)."""
    if row.get("status") or row.get("speedup_compiler_ci_low") is None:
        return True
    return float(row["speedup_compiler_ci_low"]) < 1.0 - float(min_effect)


def audit_sample(keys: list, share: float, seed: int) -> set:
    """A seeded random ``share`` of ``keys`` (rounded up when ``share`` > 0): the screen's
    non-candidates re-timed with the full protocol to measure what the screen misses."""
    if share <= 0 or not keys:
        return set()
    k = min(len(keys), math.ceil(share * len(keys)))
    return set(random.Random(seed).sample(sorted(keys), k))


def run_plan(hashes: list[str], runs: int, agreement_size: int, stress_run: bool, seed: int) -> list[dict]:
    """``[{run, hashes, stress}]``: run 0 on all; runs 1 (quiet) and 2 (stressed, when
    ``stress_run``) on the first ``agreement_size`` hashes of a seeded shuffle."""
    sub = sorted(random.Random(seed).sample(sorted(hashes), min(agreement_size, len(hashes))))
    plan = [{"run": 0, "hashes": list(hashes), "stress": False}]
    if runs >= 2:
        plan.append({"run": 1, "hashes": sub, "stress": False})
    if stress_run:
        plan.append({"run": 2, "hashes": sub, "stress": True})
    return plan


def confirm_hashes(rows: list[dict], min_effect: float, already: list[str]) -> list[str]:
    """Subgraphs (first-seen order, not in ``already``) with a run-0 row whose ``speedup_compiler``
    interval ends below ``1 - min_effect`` (Inductor's code possibly slower than Dynamo-only: a
    superset of the curate stage's long tail, which also widens the interval by the build spread).
    A stressed run re-times all their variants, so a long-tail variant and its task are labelled
    under a hog pinned to the timing core too."""
    seen = set(already)
    out = []
    for r in rows:
        h, hi = r["subgraph_hash"], r.get("speedup_compiler_ci_high")
        if r.get("run") == 0 and hi is not None and float(hi) < 1.0 - min_effect and h not in seen:
            seen.add(h)
            out.append(h)
    return out


def key_phase(phase: str, c: dict) -> str:
    """The phase an attempt's resume key names (:func:`curate.profile.variant.attempt_key`, which keys the
    timing knobs of phase ``time`` alone): the screen's own knobs (``c["timing"]``: ``screen_timing``, and
    ``c["decide"]``) are folded into ``screen-<sha256 of them, 16 hex>``, so a screen knob changed between
    runs of a kept output folder times the screen again instead of resuming results of the old knobs. Every
    other phase is named as it is (the check and protocol keys of earlier runs stay valid)."""
    if phase != "screen":
        return phase
    knobs = json.dumps({"timing": c["timing"], "decide": c["decide"]}, sort_keys=True, default=str)
    return "screen-" + hashlib.sha256(knobs.encode()).hexdigest()[:16]


def pass_dir(d: Path, p: int) -> Path:
    """Folder of timing pass ``p`` of the attempt folder ``d`` (pass 0: ``d`` itself)."""
    return Path(d) if p == 0 else Path(d) / f"pass{p}"


def read_passes(d: Path) -> list[dict]:
    """Every timing pass of the attempt folder ``d`` that has run, in order (a child that left
    no ``result.json`` reads as ``isolation_failed``)."""
    out, p = [], 0
    while (pass_dir(d, p) / "result.json").exists() or (pass_dir(d, p) / "error.json").exists():
        out.append(_read(pass_dir(d, p) / "result.json", pass_dir(d, p)))
        p += 1
    return out


def _clear_passes(d: Path) -> None:
    for p in range(1, 1 << 10):
        if not pass_dir(d, p).exists():
            break
        shutil.rmtree(pass_dir(d, p))
    for name in ("result.json", "error.json"):
        (Path(d) / name).unlink(missing_ok=True)


def memory_failure(row: dict) -> bool:
    """Whether a kept check or timing result records running out of memory (``MemoryError`` under the
    child's address-space cap, or the allocator's "can't allocate memory" / "out of memory"): a property of
    the run's memory cap and free memory, not of the variant, so the next run tries it again (the cap is no
    part of the resume key)."""
    msg = str(row.get("error_message") or "").lower()
    return row.get("error_class") == "MemoryError" or "can't allocate memory" in msg or "out of memory" in msg


def drop_unresumable_results(att: Path, env: dict) -> dict[str, int]:
    """Before a run on the kept attempts folder ``att``, remove the timings it must not resume: every timing
    folder (an attempt's, a replicate's ``rep<r>/``; its ``result.json`` / ``error.json`` and those of its
    ``pass<p>/`` folders together) one of whose results

    * names another ``device_name`` than this run's (``env``: :func:`curate.profile.variant.fingerprint` of
      the run's device -- the CPU model, or the CUDA device): another machine's trials (a ``data/profile``
      pulled with ``dvc pull``, a folder copied between hosts) are never pooled with this one's;
    * records running out of memory (:func:`memory_failure`).

    Only results of this run's kind are looked at (a CUDA timing carries ``cuda_version``; a crash row carries
    no fingerprint and counts as a CPU one), so the CPU and CUDA runs of one stage on one folder keep each
    other's, and what a run writes stays until the next run. The variant is then timed again here. Compile checks
    stay (a check that ran out of memory is checked again by :func:`profile_all`), as do a crash row of
    another kind (it names no device) and a result that is not readable.

    Returns:
        ``{device_name or "out_of_memory": files removed}``.
    """
    cuda = "cuda_version" in env
    removed: dict[str, int] = {}
    for p in sorted(att.rglob("result.json")) if att.is_dir() else []:
        try:
            row = json.loads(p.read_bytes())
            named, kind = row.get("device_name"), "cuda_version" in row
        except (ValueError, OSError, AttributeError, RecursionError):
            continue  # gone with its folder already, or torn: the folder's own rules handle it
        if kind != cuda:
            continue
        if memory_failure(row):
            why = "out_of_memory"
        elif named is not None and named != env["device_name"]:
            why = str(named)
        else:
            continue
        unit = p.parent.parent if p.parent.name.startswith("pass") else p.parent
        files = [unit / "result.json", unit / "error.json", *unit.glob("pass*/result.json"), *unit.glob("pass*/error.json")]
        removed[why] = removed.get(why, 0) + sum(f.is_file() for f in files)
        _clear_passes(unit)  # the folder's passes and files, as time_passes clears a variant it measures afresh
    return removed


def time_passes(keyed: list[tuple[str, Any, Path]], run_batch: Callable[[list[tuple[str, Any, Path]]], None],
                passes: int, first_only: bool = False) -> list[int]:
    """Pass 0 for every ``(key, arg, d)`` in ``keyed``, then up to ``passes`` re-measurement
    passes, each re-timing (fresh child, fresh inputs, fresh trials) the variants whose latest
    pass is unstable (:func:`curate.profile.variant.needs_remeasure`); pass ``p`` writes under
    :func:`pass_dir`. Resumes: passes already on disk are kept, a pass whose child died
    (``isolation_failed``) runs again, and a variant whose every pass ran and is still unstable, or that
    holds more passes than ``passes + 1`` (made with a higher ``remeasure_passes``), is cleared first, so
    this build measures it afresh (what else a run does not resume: :func:`drop_unresumable_results`).

    Args:
        run_batch: runs a list of ``(key, arg, out_dir)`` tasks (the profile:
            :func:`passnet_common.worker.run_isolated` with :func:`curate.profile.variant.time_task`).
        first_only: run pass 0 only (the resume rules above still count ``passes``); a later
            call with the same tasks runs their re-measurement passes. The overlapped timing run 0
            times each variant as soon as its compile is done and re-measures at the run's end.

    Returns:
        tasks run in each pass (index 0 = pass 0).
    """
    done = {}
    for key, arg, d in keyed:
        ps = read_passes(d)
        if ps and ps[-1].get("status") == "isolation_failed":
            ps = ps[:-1]  # a child that died left no result: that pass runs again (as before the passes)
        if ps and (len(ps) > passes + 1 or (needs_remeasure(ps[-1]) and len(ps) > passes)):
            # more passes than this run makes (remeasure_passes lowered), or every pass ran and is still unstable
            _clear_passes(d)
            ps = []
        done[key] = len(ps)
    counts = []
    for p in range(passes + 1):
        tasks = []
        for key, arg, d in keyed:
            if done[key] != p:
                continue
            ps = read_passes(d)  # a child killed without a word leaves no pass p - 1: nothing to re-measure
            if p == 0 or (len(ps) >= p and needs_remeasure(ps[p - 1])):
                tasks.append((key if p == 0 else f"{key}-pass{p}", arg, pass_dir(d, p)))
        if p > 0 and not tasks:
            break
        run_batch(tasks)
        for t in tasks:
            done[t[0].split("-pass")[0]] = p + 1
        counts.append(len(tasks))
        if first_only:
            break
    return counts


def _timing_core() -> int | None:
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def compile_cores(timing_core: int | None) -> list[int]:
    """Cores the compile phase may use while the timing phase runs on ``timing_core``: every
    usable core but that one (empty on a one-core machine or where affinity is unknown)."""
    try:
        usable = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []
    return [c for c in usable if c != timing_core] if timing_core is not None else []


def start_compile_process(tasks: list[tuple[str, Any, Path]], cores: list[int], timeout_s: float,
                          mem_cap_bytes: int | None, threads: int, workdir: Path) -> subprocess.Popen:
    """Run the compile phase of ``tasks`` (``(key, (folder, cfg), out_dir)``) in a separate
    Python process (``python -m curate.profile.run <plan>``: not a fork, so the parent may keep
    forking timing children) pinned to ``cores``, one :func:`curate.profile.variant.check_task` child per
    core at a time. The process writes ``<workdir>/compile_stats.json`` (``seconds``) at its end.

    Raises:
        ValueError: ``cores`` is empty.
    """
    if not cores:
        raise ValueError("start_compile_process needs at least one core besides the timing core")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    plan = {"tasks": [[k, [str(a[0]), a[1]], str(d)] for k, a, d in tasks], "cores": cores, "timeout_s": timeout_s,
            "mem_cap_bytes": mem_cap_bytes, "threads": threads, "stats": str(workdir / "compile_stats.json")}
    (workdir / "compile_plan.json").write_text(json.dumps(plan, default=str))
    return subprocess.Popen([sys.executable, "-m", "curate.profile.run", str(workdir / "compile_plan.json")])


def record_killed(dirs: dict[str, Path]) -> Callable:
    """``on_done`` for :func:`passnet_common.worker.run_isolated`: a child that ended without
    writing ``check.json`` / ``result.json`` / ``error.json`` (killed by the watchdog for memory,
    time or a hang, or by a signal) gets ``error.json`` with the parent's error class. Without it
    the folder stays empty: timing run 0 (:func:`wait_checks`) waited for the whole compile
    phase to end before timing that subgraph (a workload variant killed at the memory cap
    stalled the timing core for minutes), and a timing pass read as never run."""
    def on_done(outcome) -> None:
        d = dirs.get(outcome.key)
        if outcome.ok or d is None or any((d / n).exists() for n in ("check.json", "result.json", "error.json")):
            return
        atomic_write_json(d / "error.json", {"error_class": outcome.error_class, "error_message": outcome.error_message})
    return on_done


def _compile_main(plan_path: str) -> int:
    """Entry of the compile process (:func:`start_compile_process`)."""
    plan = json.loads(Path(plan_path).read_text())
    os.sched_setaffinity(0, set(plan["cores"]))  # children inherit it
    tasks = [(k, (a[0], a[1]), Path(d)) for k, a, d in plan["tasks"]]
    cache = next((a[1].get("cache_dir") for _, a, _ in tasks if a[1].get("cache_dir")), None)
    if cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cache).resolve())

    preimport()
    t0 = time.perf_counter()
    run_isolated(tasks, check_task, workers=len(plan["cores"]), timeout_s=plan["timeout_s"],
                 mem_cap_bytes=plan["mem_cap_bytes"], threads_per_worker=plan["threads"],
                 on_done=record_killed({k: d for k, _, d in tasks}))
    atomic_write_json(Path(plan["stats"]), {"seconds": time.perf_counter() - t0, "attempts": len(tasks)})
    return 0


def wait_checks(dirs: list[Path], proc: subprocess.Popen | None, poll_s: float = 0.2) -> None:
    """Block until every attempt folder in ``dirs`` holds ``check.json`` or ``error.json``, or
    the compile process ``proc`` has ended (a folder it left empty then reads as
    ``isolation_failed``)."""
    while not all((d / "check.json").exists() or (d / "error.json").exists() for d in dirs):
        if proc is None or proc.poll() is not None:
            return
        time.sleep(poll_s)


def profile_all(subgraphs: list[dict], store_root: Path, cfg: dict, out: Path, plan: list[dict], sizes: dict, *,
                compile_workers: int, timeout_s: float, mem_cap_bytes: int | None, remeasure_passes: int,
                overlap_compile: bool, skip_over_cap: bool, screen: dict | None, stress_confirm: bool,
                replicates: int, extra_replicates: int, log=print) -> tuple[list[dict], dict[str, Any]]:
    """Profile every variant of ``subgraphs`` (rows with ``subgraph_hash``) along ``plan``;
    in every run the unstable variants get up to ``remeasure_passes`` more passes (:func:`time_passes`).
    The keyword settings are ``curate.profile``'s (:class:`curate.profile.config.ProfileConfig`:
    ``compile_workers``, ``timeout_s`` seconds per child, ``mem_cap_bytes`` = ``mem_cap_gb`` in bytes
    (None: no cap), ``remeasure_passes``, ``overlap_compile``, ``skip_over_cap`` = ``skip_over_time_cap``);
    the caller passes every one, so no default lives here.

    A variant is ``(subgraph, size, dtype)``: every shape of :func:`curate.profile.sizes.write_variants`
    times every dtype of ``cfg["dtypes"]`` (default ``[cfg["dtype"]]``).

    Compile phase: without ``overlap_compile``, ``compile_workers`` children at once, and every
    timing run after it. With ``overlap_compile`` (and >= 2 usable cores) the compile phase runs
    in a separate process pinned to every core but the timing core (:func:`compile_cores`,
    :func:`start_compile_process`) while timing run 0 times each subgraph's variants as soon as
    their compiles are done (every such subgraph at once, in run order), pass 0 only, and re-measures
    the run's unstable variants at its end. While the next subgraph is not compiled yet, the timing
    core times fillers instead of waiting: the full protocol of variants the screen has already made
    candidates, then pass 0 of the first unstressed run >= 1 (the quiet agreement run) on subgraphs
    already compiled; their own phases later resume them (``filled_while_compiling`` in the run's
    stats; its ``attempts`` / ``seconds`` and the screen's ``protocol_variants`` / ``protocol_seconds``
    include them). Timing never shares a core with a compile; the stressed run starts after the
    compile process has ended.
    With ``skip_over_cap`` a variant the time cap cannot hold (:func:`curate.profile.variant.over_time_cap`)
    is not timed: status ``skipped``, ``skip_reason`` ``over_time_cap``.
    With ``screen`` (``{"timing": <screen TimingConfig knobs>, "audit_share": float, "seed": int,
    "build_spread": float}``, the last ``curate.curate.build_spread``: where the label's edge sits, which the
    second stage of the replicates targets, :func:`undecided`)
    run 0 first screens every variant (module docstring), then times the candidates and the audit
    sample with the full protocol (``cfg["timing"]``) after its screen, with re-measurement.
    With ``stress_confirm`` a stressed run also times every subgraph that run 0 found possibly
    slower (:func:`confirm_hashes`), so long-tail membership is judged with the timing core loaded
    too; ``stats["stress_confirm"]`` counts them.

    Returns:
        ``(rows, stats)``: one ``profiles`` row per (subgraph, size, dtype, run) with the check and
        timing columns (child failures: status ``isolation_failed``; a variant whose check
        failed carries the check's status in every run; ``phase`` ``screen`` or ``protocol``,
        ``screen_candidate``, ``audit`` and the screen's ``screen_speedup_compiler*`` on run 0
        rows of a screened run) and per-phase seconds / counts (``screen``: seconds, variants,
        candidates, audited, protocol seconds; ``seconds`` counts the screen's timing alone, its waits
        for the compile phase are in ``wall_seconds``).
    """
    out = Path(out)
    att = out / "attempts"
    dtypes = list(cfg.get("dtypes") or [cfg["dtype"]])
    variants: dict[str, list[dict]] = {}
    for sg in subgraphs:
        h = sg["subgraph_hash"]
        shapes = write_variants(store_path(store_root, h), out / "variants" / h[:2] / h, sizes)
        variants[h] = [{**v, "dtype": dt} for v in shapes for dt in dtypes]
    env = fingerprint(cfg["device"])
    stats: dict[str, Any] = {}
    dropped = drop_unresumable_results(att, env)
    if dropped:  # only on a kept folder: a clean build's stats are as they were
        stats["results_dropped"] = dropped
        log(f"profile: kept timings not resumed (another device, out of memory; timed again): {dropped}")
    tcfg = {**cfg, "timing_core": _timing_core()}
    cores = compile_cores(tcfg["timing_core"]) if overlap_compile else []

    def vcfg(c: dict, v: dict) -> dict:
        return {**c, "dtype": v["dtype"]}

    # phase 1: compile, once per variant (in run 0's order)
    checks, tasks = {}, []
    for h in plan[0]["hashes"] + [h for h in variants if h not in set(plan[0]["hashes"])]:
        for v in variants[h]:
            if not v["folder"]:
                continue
            key = attempt_key(h, v["size"], None, vcfg(cfg, v), inputs_digest(Path(v["folder"])), "check")
            d = att / key[:2] / key
            checks[(h, v["size"], v["dtype"])] = (key, d)
            if memory_failure(_read(d / "check.json", d) if (d / "check.json").exists() else {}):
                (d / "check.json").unlink()  # out of memory under an earlier run's cap: checked again
            if not (d / "check.json").exists():
                # an error file a killed check left (an earlier run, or a resumed shard's pack) goes before the
                # check runs again: compiled() takes an error file as the check's end, so a stale one read the
                # variant as isolation_failed while its new check was still running
                (d / "error.json").unlink(missing_ok=True)
                tasks.append((key, (v["folder"], vcfg(cfg, v)), d))
    proc, tmp = None, tempfile.TemporaryDirectory(prefix="passnet-compile-")
    t0 = time.perf_counter()
    if cores and tasks:
        proc = start_compile_process(tasks, cores, timeout_s, mem_cap_bytes, cfg["threads"], Path(tmp.name))
        log(f"profile compile phase: {len(tasks)} variants on cores {cores} beside timing run 0 on core {tcfg['timing_core']}")
        preimport()  # the parent forks the timing children: Dynamo / Inductor loaded once, before any fork
    else:
        preimport()
        run_isolated(tasks, check_task, workers=compile_workers, timeout_s=timeout_s, mem_cap_bytes=mem_cap_bytes,
                     threads_per_worker=cfg["threads"])
        log(f"profile compile phase: {len(tasks)} variants in {time.perf_counter() - t0:.1f} s ({len(checks) - len(tasks)} resumed)")
    stats.update(compile_attempts=len(tasks), compile_seconds=time.perf_counter() - t0,
                 compile_workers=len(cores) if proc else compile_workers, compile_overlap=proc is not None, variants=len(checks))
    checked: dict[tuple, dict] = {}

    def check_of(ck: tuple) -> dict:
        if ck not in checked:
            d = checks[ck][1]
            checked[ck] = _read(d / "check.json", d)
        return checked[ck]

    def finish_compile() -> None:
        nonlocal proc
        if proc is None:
            return
        rc = proc.wait()
        st = Path(tmp.name) / "compile_stats.json"
        stats["compile_seconds"] = json.loads(st.read_text())["seconds"] if st.exists() else time.perf_counter() - t0
        stats["compile_rc"] = rc
        log(f"profile compile phase: {len(tasks)} variants in {stats['compile_seconds']:.1f} s on {len(cores)} core(s), rc {rc}")
        proc = None
        if rc != 0:  # one bad variant is an isolated child's error.json; a dead compile process is not input
            raise RuntimeError(f"the compile process exited with code {rc} (see its traceback above); "
                               "finished attempts are kept and the next run resumes")

    # phase 2: time (one child at a time, pinned), per run of the plan
    rows: list[dict] = []
    stats["timing"] = []

    def batch(ts: list) -> None:  # a timing child killed (time, memory, signal) leaves error.json with its class
        run_isolated(ts, time_task, workers=1, timeout_s=timeout_s, mem_cap_bytes=mem_cap_bytes,
                     threads_per_worker=cfg["threads"], on_done=record_killed({k: d for k, _, d in ts}))

    def dirs_of(h: str) -> list[Path]:
        return [checks[(h, v["size"], v["dtype"])][1] for v in variants[h] if v["folder"]]

    def compiled(h: str) -> bool:
        return proc is None or proc.poll() is not None or all((d / "check.json").exists() or (d / "error.json").exists()
                                                               for d in dirs_of(h))

    def timing_tasks(part: list[str], step: dict, phase: str, c: dict, sink: list | None = None) -> tuple[list, list]:
        sink = rows if sink is None else sink  # rows of variants that are not timed (skipped, failed check)
        tasks_t, keyed = [], []
        for h in part:
            for v in variants[h]:
                base = {"subgraph_hash": h, "size": v["size"], "size_kind": v["size_kind"], "size_scale": v["scale"],
                        "run": step["run"], "stress": step["stress"], "device": cfg["device"], "dtype": v["dtype"],
                        "threads": cfg["threads"], "profile_version": PROFILE_VERSION, "code_version": code_version(),
                        "phase": phase, **env}
                if not v["folder"]:
                    sink.append({**base, "status": "skipped", "skip_reason": v.get("skip_reason")})
                    continue
                chk = check_of((h, v["size"], v["dtype"]))
                if chk.get("status") not in ("ok", "accuracy_error"):
                    sink.append({**base, **chk})
                    continue
                if skip_over_cap and over_time_cap(chk, cfg.get("timing") or {}):
                    sink.append({**base, **chk, "status": "skipped", "skip_reason": "over_time_cap"})
                    continue
                key = attempt_key(h, v["size"], step["run"], vcfg(c, v), inputs_digest(Path(v["folder"])),
                                  key_phase(phase, c))
                d = att / key[:2] / key
                tasks_t.append((key, (v["folder"], vcfg(c, v)), d))
                keyed.append(({**base, "attempt_key": key}, chk, d))
        return tasks_t, keyed

    scfg = {**tcfg, "timing": screen["timing"], "decide": ["speedup_compiler"]} if screen else None
    # Work for the timing core while the overlapped run 0 waits for the compile phase (fillers), in
    # this order: the full protocol of variants the screen has already made candidates, then pass 0
    # of the quiet agreement run (the first unstressed run >= 1) on subgraphs already compiled. Each
    # filler is the same attempt (same key, same folder) its own phase would run later; that phase
    # then resumes it (time_passes keeps a pass on disk), so a filled variant is timed once, by the
    # same child on the same core, and only when it is timed moves.
    fill_step = next((s for s in plan if s["run"] != 0 and not s["stress"]), None)
    fill_keyed: list = []  # run 0's screened (base, chk, d), in timing order
    fill_done: set = set()  # attempt keys timed as fillers
    fill_hashes = list(fill_step["hashes"]) if fill_step else []
    fill_count = {"protocol": 0, "run": 0}
    fill_secs = {"protocol": 0.0, "run": 0.0}

    def next_filler() -> tuple[str, tuple] | None:
        while fill_keyed:
            base, chk, d = fill_keyed[0]
            r = _timed_row(base, chk, d)  # fill_keyed holds screened rows only, so ``screen`` is set
            if screen_candidate({**r, "status": None if r.get("status") in ("ok", "accuracy_error") else r.get("status")},
                                float(screen["timing"]["min_effect"])):
                t = protocol_task(base, args_of[base["attempt_key"]], tcfg, att)
                if t[0] not in fill_done and not read_passes(t[2]):
                    return "protocol", t
            fill_keyed.pop(0)
        while fill_hashes and compiled(fill_hashes[0]):
            tasks_f, _ = timing_tasks([fill_hashes[0]], fill_step, "time", tcfg, sink=[])
            t = next((t for t in tasks_f if t[0] not in fill_done and not read_passes(t[2])), None)
            if t is not None:
                return "run", t
            fill_hashes.pop(0)
        return None

    def fill_until_compiled(h: str) -> None:
        """Time fillers one at a time until subgraph ``h`` is compiled (or none is left: then wait)."""
        while not compiled(h):
            f = next_filler()
            if f is None:
                wait_checks(dirs_of(h), proc)
                return
            kind, t = f
            tb = time.perf_counter()
            batch([t])
            fill_secs[kind] += time.perf_counter() - tb
            fill_done.add(t[0])
            fill_count[kind] += 1

    args_of: dict = {}  # screen attempt key -> (variant folder, dtype)
    frozen = not gcfreeze.heap_frozen()  # one frozen heap for every timing batch (run_isolated then skips its own)
    if frozen:
        gcfreeze.freeze()
    try:
        for step in plan:
            if step["run"] != 0:
                finish_compile()
            if step["stress"] and stress_confirm:
                extra = confirm_hashes(rows, float(cfg["timing"]["min_effect"]), step["hashes"])
                step = {**step, "hashes": list(step["hashes"]) + extra}
                stats["stress_confirm"] = {"run": step["run"], "subgraphs": len(extra)}
            t0s = time.perf_counter()
            screened = scfg is not None and step["run"] == 0
            phase, c = ("screen", scfg) if screened else ("time", tcfg)
            keyed_all, tasks_all, counts = [], [], [0] * (remeasure_passes + 1)
            busy = 0.0  # seconds spent timing (not waiting for the compile phase)
            overlapped = proc is not None
            remaining = list(step["hashes"])
            while remaining:
                # overlapped run 0: every subgraph whose compiles are done, in run order, at once
                # (pass 0 only; the run's re-measurement passes follow at its end)
                if overlapped:
                    fill_until_compiled(remaining[0])
                    k = 1
                    while k < len(remaining) and compiled(remaining[k]):
                        k += 1
                else:
                    k = len(remaining)
                part, remaining = remaining[:k], remaining[k:]
                tasks_t, keyed = timing_tasks(part, step, phase, c)
                tb = time.perf_counter()
                with stress(step["stress"], tcfg["timing_core"]):
                    cnt = time_passes(tasks_t, batch, 0 if screened else remeasure_passes, first_only=overlapped or screened)
                busy += time.perf_counter() - tb
                counts = [a + b for a, b in zip(counts, cnt + [0] * (len(counts) - len(cnt)))]
                keyed_all += keyed
                tasks_all += tasks_t
                if screened:
                    args_of.update({k: (a[0], a[1]["dtype"]) for k, a, _ in tasks_t})
                    fill_keyed.extend(keyed)
            if overlapped and remeasure_passes and not screened:
                with stress(step["stress"], tcfg["timing_core"]):
                    cnt = time_passes(tasks_all, batch, remeasure_passes)
                counts = [a + b for a, b in zip(counts, cnt + [0] * (len(counts) - len(cnt)))]
            secs = time.perf_counter() - t0s
            if screened:
                args = {k: (a[0], a[1]["dtype"]) for k, a, _ in tasks_all}
                rows += _screen_then_protocol(keyed_all, args, screen, tcfg, att, batch, remeasure_passes, stats, busy,
                                              counts[0], log, replicates=replicates, extra_replicates=extra_replicates)
                sc = stats["screen"]  # the protocol's variants and seconds include those timed as fillers
                sc.update(wall_seconds=secs, protocol_filled_while_compiling=fill_count["protocol"],
                          protocol_variants=sc["protocol_variants"] + fill_count["protocol"],
                          protocol_seconds=sc["protocol_seconds"] + fill_secs["protocol"])
            else:
                for base, chk, d in keyed_all:
                    rows.append({**_timed_row(base, chk, d), "phase": "protocol"})
            # a run's attempts and seconds include its variants timed as fillers while run 0 waited
            kind = "protocol" if screened else "run" if step is fill_step else None
            filled, fsecs = (fill_count[kind], fill_secs[kind]) if kind else (0, 0.0)
            stats["timing"].append({"run": step["run"], "stress": step["stress"],
                                    "attempts": counts[0] + (filled if kind == "run" else 0),
                                    "seconds": secs + (fsecs if kind == "run" else 0.0),
                                    "busy_seconds": busy + fsecs, "remeasured": [x for x in counts[1:] if x], "phase": phase,
                                    "filled_while_compiling": filled})
            log(f"profile timing run {step['run']} ({phase}, stress {step['stress']}): {counts[0]} variants, re-measured "
                f"{counts[1:]}, in {secs:.1f} s ({len(keyed_all) - counts[0]} resumed)")
        finish_compile()
    finally:
        if frozen:
            gcfreeze.unfreeze()
        if proc is not None:
            proc.kill()
            proc.wait()
        tmp.cleanup()
    return rows, stats


def protocol_task(base: dict, arg: tuple[str, str], tcfg: dict, att: Path, replicate: int = 0) -> tuple[str, tuple, Path]:
    """The full-protocol attempt ``(key, (folder, cfg), out_dir)`` of run 0 for the screened
    variant ``base`` (a screen row's ``subgraph_hash`` / ``size``); ``arg`` = (variant folder, dtype).
    ``replicate`` r >= 1: the r-th further child timing the same variant (:mod:`curate.profile.replicates`):
    task key ``<key>-rep<r>``, folder ``rep<r>/`` inside replicate 0's, so it carries the same resume key."""
    folder, dtype = arg
    c = {**tcfg, "dtype": dtype}
    key = attempt_key(base["subgraph_hash"], base["size"], 0, c, inputs_digest(Path(folder)), "time")
    d = att / key[:2] / key
    return (key, (folder, c), d) if replicate == 0 else (f"{key}-rep{replicate}", (folder, c), d / f"rep{replicate}")


def with_replicates(row0: dict, reps: list[dict], level: float, min_effect: float) -> dict:
    """Run 0's protocol row ``row0`` (replicate 0) with its ratios and intervals replaced by the pool
    of every replicate's row ``reps`` (``row0`` first; :func:`curate.profile.replicates.pool_replicates`).
    Status: the check's (``ok`` / ``accuracy_error``) when >= 2 replicates are stable, ``unstable``
    when fewer are (one child's interval does not hold the between-child spread), a timing failure
    of replicate 0 (``runtime_crash``, ``isolation_failed``) kept as it is when no replicate is stable."""
    pooled = pool_replicates(reps, level, min_effect)
    row = {**row0, **pooled}
    if pooled["stable"]:
        row["status"] = "accuracy_error" if row0.get("status") == "accuracy_error" or any(
            r.get("status") == "accuracy_error" for r in reps) else "ok"
        row["error_code"] = row0.get("error_code") if row["status"] == "accuracy_error" else None
    elif pooled["replicates"] or row0.get("status") in ("ok", "accuracy_error", "unstable"):
        row["status"] = "unstable"
    return row


def undecided(row: dict, min_effect: float, build_spread: float) -> bool:
    """Whether a pooled protocol row's ``speedup_compiler`` interval holds the edge the long-tail label
    reads: the label is ``ci_high x exp(build_spread) < 1 - min_effect`` (``curate.curate.build_spread``,
    :func:`curate.select.longtail.widened`), so the edge on the interval is ``(1 - min_effect) x
    exp(-build_spread)`` and the label is not settled when ``ci_low < edge <= ci_high``. False for a row
    without a pooled interval (unstable, failed)."""
    lo, hi = row.get("speedup_compiler_ci_low"), row.get("speedup_compiler_ci_high")
    if lo is None or hi is None or row.get("status") not in ("ok", "accuracy_error"):
        return False
    edge = (1.0 - min_effect) * math.exp(-build_spread)
    return lo < edge <= hi


def _screen_then_protocol(keyed: list, args: dict, screen: dict, tcfg: dict, att: Path, batch: Callable, passes: int,
                          stats: dict, screen_s: float, screened: int, log, replicates: int,
                          extra_replicates: int) -> list[dict]:
    """Run 0's second phase (:func:`profile_all` with ``screen``): the full protocol on the
    screen's candidates and the audit sample; returns run 0's rows (module docstring).
    ``args``: screen attempt key -> ``(variant folder, dtype)``.

    Replicates: every protocol variant is timed by ``replicates`` children, one round per replicate;
    then a variant whose pooled ``speedup_compiler`` interval still holds the long-tail edge
    ``1 - min_effect`` (``lo < edge <= hi``: :func:`undecided`) gets ``extra_replicates`` more children
    (further rounds) and is pooled over all of them -- a two-stage sequential design, as the timing
    protocol's own ``stop: label`` rule is for trials: the label gets more data where it is undecided,
    on either side of the edge, so that a rebuild does not flip it on the interval's half-width alone.
    The row records ``replicates_extended``."""
    min_effect = float(screen["timing"]["min_effect"])
    srows = [(base, chk, d, _timed_row(base, chk, d)) for base, chk, d in keyed]
    cand = {base["attempt_key"] for base, _, _, r in srows
            if screen_candidate({**r, "status": None if r.get("status") in ("ok", "accuracy_error") else r.get("status")}, min_effect)}
    rest = [base["attempt_key"] for base, _, _, _ in srows if base["attempt_key"] not in cand]
    audit = audit_sample(rest, float(screen["audit_share"]), int(screen["seed"]))
    tasks_p, keyed_p = [], {}
    for base, chk, d, r in srows:
        k = base["attempt_key"]
        if k in cand or k in audit:
            t = protocol_task(base, args[k], tcfg, att)
            tasks_p.append(t)
            keyed_p[k] = (t[0], t[2])
    t0 = time.perf_counter()
    cnt = time_passes(tasks_p, batch, passes)
    prot_s = time.perf_counter() - t0
    # replicates 1..R-1: every protocol variant again, one round per replicate (so a variant's
    # children are minutes apart), each its own child with re-measurement
    reps: dict[str, list[tuple[str, Path]]] = {}
    rep_n, t1 = 0, time.perf_counter()
    for rep in range(1, replicates):
        tasks_r = []
        for base, _, _, _ in srows:
            if base["attempt_key"] in keyed_p:
                t = protocol_task(base, args[base["attempt_key"]], tcfg, att, replicate=rep)
                tasks_r.append(t)
                reps.setdefault(base["attempt_key"], []).append((t[0], t[2]))
        cr = time_passes(tasks_r, batch, passes)
        rep_n += cr[0] if cr else 0
    rep_s = time.perf_counter() - t1
    tc = ProtocolTimingConfig(**tcfg["timing"])  # the block's level and threshold (a partly written block: its defaults)
    level, min_eff = float(tc.ci_level), float(tc.min_effect)

    def screen_fields(k: str, r: dict) -> dict:  # what the screen said about a variant, on its run-0 row
        return {"screen_candidate": k in cand, "audit": k in audit,
                **{f"screen_{c}": r.get(c) for c in ("speedup_compiler", "speedup_compiler_ci_low", "speedup_compiler_ci_high")}}

    def protocol_row(base: dict, chk: dict, r: dict) -> dict:
        k = base["attempt_key"]
        key, dp = keyed_p[k]
        row0 = {**_timed_row({**base, "attempt_key": key}, chk, dp), "phase": "protocol", **screen_fields(k, r)}
        if replicates > 1:
            row0 = with_replicates(row0, [row0] + [_timed_row({**base, "attempt_key": kr}, chk, dr) for kr, dr in reps.get(k, [])],
                                   level, min_eff)
        return row0

    # the second stage: more children for the variants whose pooled interval holds the edge
    ext: set[str] = set()
    ext_n, t2 = 0, time.perf_counter()
    if replicates > 1 and extra_replicates > 0:
        ext = {base["attempt_key"] for base, chk, _, r in srows
               if base["attempt_key"] in keyed_p and undecided(protocol_row(base, chk, r), min_eff,
                                                                float(screen["build_spread"]))}
        for rep in range(replicates, replicates + extra_replicates):
            tasks_r = []
            for base, _, _, _ in srows:
                if base["attempt_key"] in ext:
                    t = protocol_task(base, args[base["attempt_key"]], tcfg, att, replicate=rep)
                    tasks_r.append(t)
                    reps.setdefault(base["attempt_key"], []).append((t[0], t[2]))
            cr = time_passes(tasks_r, batch, passes)
            ext_n += cr[0] if cr else 0
    ext_s = time.perf_counter() - t2
    out = []
    for base, chk, d, r in srows:
        k = base["attempt_key"]
        if k in keyed_p:
            out.append({**protocol_row(base, chk, r), "replicates_extended": k in ext})
        else:
            out.append({**r, "phase": "screen", **screen_fields(k, r)})
    stats["screen"] = {"variants": screened, "seconds": screen_s, "candidates": len(cand), "audited": len(audit),
                       "protocol_variants": cnt[0] if cnt else 0, "protocol_remeasured": cnt[1:], "protocol_seconds": prot_s,
                       "replicates": replicates, "replicate_attempts": rep_n, "replicate_seconds": rep_s,
                       "extra_replicates": extra_replicates, "extended_variants": len(ext), "extended_attempts": ext_n,
                       "extended_seconds": ext_s,
                       "cpu_seconds": sum(r.get("time_cpu_seconds") or 0.0 for _, _, _, r in srows),
                       "protocol_cpu_seconds": sum(o.get("time_cpu_seconds") or 0.0 for o in out if o["phase"] == "protocol")}
    log(f"profile screen: {len(srows)} variants in {screen_s:.1f} s, {len(cand)} candidates + {len(audit)} audited -> "
        f"full protocol in {prot_s:.1f} s, {replicates - 1} more replicate(s) of each in {rep_s:.1f} s, "
        f"{extra_replicates} more of {len(ext)} undecided in {ext_s:.1f} s")
    return out


def _timed_row(base: dict, chk: dict, d: Path) -> dict:
    ps = read_passes(d)
    timed = merge_passes(ps) if ps and not ps[-1].get("status") else (ps[-1] if ps else _read(d / "result.json", d))
    row = {**base, **chk, **{k: v for k, v in timed.items() if k != "status"}}
    if timed.get("status"):
        row["status"] = timed["status"]
        row["error_code"] = timed.get("error_code")
    elif row["status"] == "ok" and timed.get("stable") is False:
        row["status"] = "unstable"
    return row


def _read(path: Path, d: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    err = json.loads((d / "error.json").read_text()) if (d / "error.json").exists() else {}
    return {"status": "isolation_failed", "error_class": err.get("error_class"),
            "error_message": (err.get("error_message") or "")[:500], "error_code": None}


if __name__ == "__main__":
    sys.exit(_compile_main(sys.argv[1]))
