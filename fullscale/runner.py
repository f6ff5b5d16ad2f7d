"""Running the shards of a build: the local executor, the Ray executor, resume and optional commits.

:func:`run_build` (``python -m fullscale run``) builds the committed catalog once (``python -m extract catalog`` into
``<out>/catalog.parquet``), then runs every shard that has no ``DONE`` folder yet -- so a run on
another machine, or after a kill, continues from the committed shards -- and after each shard
rewrites ``metrics/full/summary.json`` (:func:`fullscale.summary.write_summary`) and the task-rate plot drawn from it.

Which pending shard runs next: ``fullscale.order`` (:mod:`fullscale.order`: the cheapest with subgraphs left
to profile that fits the time before ``--deadline``, priced from the census shards, or among those the one
with the most long-tail tasks expected per CPU second).

Executors: ``local`` runs :func:`fullscale.pipeline.shard_entry` for one shard after another (each
stage in its own subprocess), or ``fullscale.local_workers`` shards at once, each pinned to its own cores
(:func:`run_local`); ``ray`` submits one Ray task per shard (``cpus_per_shard`` CPUs each)
and writes each shard's files on the driver as its task returns, so workers need no shared file
system (ComPile's shape: one task and one manifest per shard). The entry function is a parameter,
so a test can run the wrapper with a stub entry.

``--census`` runs the pending census shards instead (capture, dedupe, decompose: :mod:`fullscale.shards`),
written to ``<out>/census/``; a shard with a committed full shard or census shard is not pending.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from fullscale.config import FullScaleConfig
from fullscale.order import ORDER_KEYS, census_index, cost_chooser, estimates, ordered
from fullscale.params import write_params
from fullscale.pipeline import ROOT, child_env, graphnet_samples_absent, kill_running_stages, shard_entry
from fullscale.plots import write_task_rate_plot
from fullscale.shards import (
    CENSUS,
    DRAIN,
    GRAPHNET_PREFIX,
    SHARDS,
    build_shards,
    done_shards,
    read_manifest,
    resume_pack_path,
    shard_name,
    split_catalog,
    waiting_structures,
    write_failure,
    write_shard,
)
from fullscale.summary import write_summary


def ensure_catalog(params_path: Path, out: Path, params: dict | None = None) -> Path:
    """``<out>/catalog.parquet``: built once from the merged params (``python -m extract catalog``) and
    committed with the build; later runs reuse it, so shard membership never depends on the
    libraries installed on the machine that continues the build.

    GraphNet samples join later: when ``params`` set ``catalog.graphnet_dir`` and the committed catalog
    holds no ``graphnet:`` row yet, the catalog command lists that checkout's samples alone (the model
    sources off) and they are appended (:func:`add_graphnet_rows`); they have shards of their own
    (:func:`fullscale.shards.shard_of_row`), so no committed shard changes.

    Raises:
        subprocess.CalledProcessError: the catalog command failed.
        FileNotFoundError: ``catalog.graphnet_dir`` is set but is not a folder.
    """
    cat = out / "catalog.parquet"
    if not cat.is_file():
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "extract", "catalog", "--params", str(params_path), "--out", str(cat)],
                       cwd=ROOT, env=child_env(), check=True)
    gn_dir = params["catalog"].get("graphnet_dir") if params else None
    if gn_dir and not any(m.startswith(GRAPHNET_PREFIX) for m in pq.read_table(cat, columns=["model_id"]).column("model_id").to_pylist()):
        add_graphnet_rows(cat, params, Path(gn_dir))
    return cat


def add_graphnet_rows(cat: Path, params: dict, graphnet_dir: Path) -> int:
    """Append the samples of the GraphNet checkout ``graphnet_dir`` (its ``samples/`` folder, given relative
    to the repository root, so the committed rows name no machine's path) to the committed catalog
    ``cat``: ``python -m extract catalog`` with the merged ``params`` but every other source off
    (``mode: default`` with an empty list, no local / Hub / module folder, no ``limit``), so only
    ``graphnet:`` rows are listed (:func:`extract.sources.graphnet.graphnet_catalog`: static checks,
    refused samples as error rows). Rows already in ``cat`` are kept as they are; the result is written
    atomically. Returns the number of rows added.

    Raises:
        ValueError: ``graphnet_dir`` is absolute, or the command listed a row that is not a GraphNet sample.
        FileNotFoundError: ``graphnet_dir`` is not a folder.
        subprocess.CalledProcessError: the catalog command failed.
    """
    if graphnet_dir.is_absolute():
        raise ValueError(f"catalog.graphnet_dir {graphnet_dir} must be relative to the repository root ({ROOT}): the "
                         "committed catalog records each sample's folder under it")
    if not (ROOT / graphnet_dir).is_dir():
        raise FileNotFoundError(f"catalog.graphnet_dir {graphnet_dir} is not a folder under {ROOT} (clone GraphNet there first)")
    with tempfile.TemporaryDirectory() as tmp:
        only = copy.deepcopy(params)
        only["catalog"] = {**only["catalog"], "mode": "default", "default": [], "graphnet_dir": str(graphnet_dir),
                           "local_dir": None, "hub_dir": None, "module_dir": None, "limit": None}
        p = write_params(only, Path(tmp) / "params.yaml")
        subprocess.run([sys.executable, "-m", "extract", "catalog", "--params", str(p), "--out", str(Path(tmp) / "gn.parquet")],
                       cwd=ROOT, env=child_env(), check=True)
        old, new = pq.read_table(cat), pq.read_table(Path(tmp) / "gn.parquet")
        ids = new.column("model_id").to_pylist()
        stray = [m for m in ids if not m.startswith(GRAPHNET_PREFIX)]
        if stray:
            raise ValueError(f"the GraphNet catalog listed rows of other sources: {stray[:5]}")
        have = set(old.column("model_id").to_pylist())
        new = new.filter(pa.array([m not in have for m in ids], type=pa.bool_()))
        both = pa.concat_tables([old, new.cast(old.schema)])
        part = cat.with_name(cat.name + ".part")
        pq.write_table(both, part, compression="zstd")
        os.replace(part, cat)
    return new.num_rows


def skip_absent_graphnet(pending: list[int], catalog: Path, cfg: FullScaleConfig) -> tuple[list[int], list[int]]:
    """``(pending, skipped)``: the GraphNet shards of ``pending`` none of whose samples exists on this machine
    (:func:`fullscale.pipeline.graphnet_samples_absent`: no GraphNet checkout where the catalog says) are left
    out, so a machine without the checkout neither writes a failure record per such shard nor replaces one
    that a machine with it wrote. A shard whose samples are there but differ still runs into its
    ``catalog`` check (a failure record naming them)."""
    if not any(i >= cfg.num_shards for i in pending):
        return pending, []
    cols = ["model_id", "duplicate_of", "config_json", "catalog_error_class"]
    by_shard = split_catalog(pq.read_table(catalog, columns=cols).to_pylist(), cfg.num_shards, cfg.graphnet_shards)
    skipped = [i for i in pending if i >= cfg.num_shards and graphnet_samples_absent(by_shard.get(i, []))]
    return [i for i in pending if i not in skipped], skipped


def pending_shards(out: Path, num_shards: int, only: Iterable[int] | None = None, census: bool = False) -> list[int]:
    """Shard ids below ``num_shards`` (the build's total, :func:`fullscale.shards.build_shards`) without a committed ``DONE``
    folder (in order; restricted to ``only`` when given); with ``census``, without a committed full shard
    or census shard."""
    done = {read_manifest(d)["shard"] for kind in ((SHARDS, CENSUS) if census else (SHARDS,)) for d in done_shards(out, kind)}
    ids = range(num_shards) if only is None else sorted(set(only))
    return [i for i in ids if i not in done and 0 <= i < num_shards]


def pending_drains(out: Path, only: Iterable[int] | None = None) -> list[int]:
    """Committed full shards (in id order; restricted to ``only`` when given) whose rate floor left members of
    a structure no full or drain shard has profiled (:func:`fullscale.shards.waiting_structures`) and without a
    committed drain shard: what ``--drain`` runs."""
    drained = {read_manifest(d)["shard"] for d in done_shards(out, DRAIN)}
    waiting = waiting_structures(out)
    only = None if only is None else set(only)
    return [i for i in sorted(waiting) if i not in drained and (only is None or i in only)]


def drain_chooser(out: Path) -> Callable[[list[dict], list[dict]], int | None]:
    """The ``choose`` of :func:`run_local` for drain shards: at each call the structures still waiting are read
    again (:func:`fullscale.shards.waiting_structures`: a drain committed since may have profiled them), and the
    first queued drain (id order) with a waiting structure that no running drain was started for starts; where
    every one shares such a structure, the first of them (an idle core costs more than a repeated timing, as in
    :func:`fullscale.order.cost_chooser`). None -- no more starts -- when no queued drain has anything left to
    profile."""
    started: dict[int, set[str]] = {}  # drain shard -> the waiting structures it was started for

    def choose(queue: list[dict], running: Iterable[dict] = ()) -> int | None:
        waiting = waiting_structures(out)
        busy = set().union(*(started.get(s["shard"], set()) for s in running))
        useful = [(i, waiting[s["shard"]]) for i, s in enumerate(queue) if waiting.get(s["shard"])]
        if not useful:
            if queue:
                print(f"{len(queue)} drain shard(s) left with nothing waiting: profiled by the drains run before them",
                      flush=True)
            return None
        i, keys = next(((i, k) for i, k in useful if not k & busy), useful[0])
        started[queue[i]["shard"]] = keys
        print(f"next: drain {shard_name(queue[i]['shard'])}, {len(keys)} structures waiting ({len(queue) - 1} queued"
              + (f", shares {len(keys & busy)} with a running drain: every queued drain does" if keys & busy else "")
              + ")", flush=True)
        return i

    return choose


def _past(stop_after_epoch: float | None) -> bool:
    return stop_after_epoch is not None and time.time() >= stop_after_epoch


def commit_shard(out: Path, shard: int, message: str, kind: str = SHARDS, written: Iterable[str | Path] = ()) -> None:
    """``git add`` + ``git commit --only`` of the shard's folder of ``kind`` (or failure record), the catalog
    and the files the run rewrote after it (``written``: the summary, the plot and its CSV; one outside the
    repository is left out): nothing else that is staged in the tree enters the commit."""
    root = out / kind
    cands = [root / shard_name(shard), root / f"{shard_name(shard)}.failed.json", resume_pack_path(out, shard, kind),
             out / "catalog.parquet", *[Path(p) for p in written if Path(p).resolve().is_relative_to(ROOT)]]
    rels = [str(p.resolve().relative_to(ROOT)) for p in cands]
    tracked = subprocess.run(["git", "ls-files", "--", *rels], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    # a path that is gone but tracked (the failure record and pack of a shard now done) is committed as removed
    rel = [r for p, r in zip(cands, rels) if p.exists() or any(t == r or t.startswith(r + "/") for t in tracked)]
    for _ in range(10):  # another process may hold .git/index.lock for a moment: retry, never crash the build
        add = subprocess.run(["git", "add", "-A", "--", *rel], cwd=ROOT, capture_output=True, text=True)
        done = add.returncode == 0 and subprocess.run(["git", "commit", "-q", "-m", message, "--only", "--", *rel], cwd=ROOT,
                                                      capture_output=True, text=True).returncode == 0
        if done:
            return
        time.sleep(3)
    print(f"commit of shard {shard} did not go through (index locked?): commit {rel} by hand", flush=True)


def _finish(out: Path, result: dict, on_done: Callable[[dict], None] | None) -> dict:
    """Write a shard's ``result`` (its folder, or its failure record), call ``on_done``; returns the result
    without its files (what the executors return)."""
    rec = result.get("manifest") if result["ok"] else result.get("failure")
    kind = CENSUS if (rec or {}).get("census") else DRAIN if (rec or {}).get("drain") else SHARDS
    if result["ok"]:
        write_shard(out, result["shard"], result["files"], kind)
    else:  # the shard's own record brings its attempts pack (merged into the committed one); a crashed Ray task's none
        write_failure(out, result["shard"], result["failure"], kind, resume_pack=result.get("resume_pack"))
    if on_done:
        on_done(result)
    return {k: v for k, v in result.items() if k not in ("files", "resume_pack")}


def physical_cores(usable: list[int], sysfs: Path = Path("/sys/devices/system/cpu")) -> list[list[int]]:
    """``usable`` logical cores grouped by physical core (Linux ``<sysfs>/cpu<i>/topology/thread_siblings_list``:
    SMT siblings share one group), groups in the order of their lowest id; each core alone where the
    topology cannot be read."""
    groups: dict[tuple, list[int]] = {}
    for c in sorted(set(usable)):
        try:
            text = (sysfs / f"cpu{c}" / "topology" / "thread_siblings_list").read_text().strip()
            sib: tuple = tuple(sorted(_cpu_list(text)))
        except (OSError, ValueError):
            sib = (c,)
        groups.setdefault(sib, []).append(c)
    return sorted(groups.values(), key=min)


def _cpu_list(text: str) -> set[int]:
    """``0-3,8,10-11`` -> {0, 1, 2, 3, 8, 10, 11} (the kernel's cpu list format)."""
    out: set[int] = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def core_shares(usable: list[int], workers: int, groups: list[list[int]] | None = None) -> list[list[int]]:
    """``usable`` cores cut into ``workers`` disjoint shares of whole physical cores (``groups``:
    :func:`physical_cores` of ``usable`` unless given), consecutive in that order, share sizes in physical
    cores differing by at most one (the first shares the larger): ``core_shares([0, 1, 2, 3, 4], 2)`` on a
    machine without SMT is ``[[0, 1, 2], [3, 4]]``. SMT siblings stay in one share, so two shards never time
    on one physical core; with fewer physical cores than workers, the logical cores are cut instead.

    Raises:
        ValueError: ``workers`` < 1, or more workers than usable logical cores (a share would be empty).
    """
    cores = sorted(set(usable))
    if workers < 1 or workers > len(cores):
        raise ValueError(f"fullscale.local_workers={workers}: needs 1 to {len(cores)} (the cores this process may use: "
                         f"{cores})")
    groups = physical_cores(cores) if groups is None else [sorted(g) for g in groups]
    if len(groups) < workers:
        groups = [[c] for c in cores]
    size, extra = divmod(len(groups), workers)
    shares, start = [], 0
    for w in range(workers):
        end = start + size + (w < extra)
        shares.append(sorted(c for g in groups[start:end] for c in g))
        start = end
    return shares


def run_local(specs: list[dict], out: Path, entry: Callable[[dict], dict] = shard_entry,
              on_done: Callable[[dict], None] | None = None, stop_after_epoch: float | None = None,
              workers: int = 1, choose: Callable[[list[dict], list[dict]], int | None] | None = None) -> list[dict]:
    """Run ``specs`` with ``entry``, ``workers`` at a time; each result is written (and ``on_done`` called,
    one result at a time) as it arrives. No shard starts after ``stop_after_epoch`` (Unix time: the
    ``--stop-after`` HH:MM UTC read by :func:`deadline_epoch`, so a time past midnight is tomorrow's). ``choose``
    (None: the first) gets the specs not yet started and the specs running (started, not yet written) and
    returns the index of the next one, or None to start no more (:func:`fullscale.order.cost_chooser`); with
    workers > 1, a worker for which it chose nothing waits while another runs a shard and asks again once that
    shard is written. Returns the results
    (files dropped) in shard order.

    With ``workers`` > 1 each worker is a thread pinned to its own share of this process's usable cores
    (:func:`core_shares`; Linux ``sched_setaffinity`` of the thread, which the stage commands it starts
    inherit), so each shard's profile times on the highest core of its share
    (``curate.profile.run``'s timing core) and compiles on the rest: shards run at once never time on one
    core. Each stage command's CPU time is its own (:func:`fullscale.pipeline.run_phase`). As with Ray,
    shards run at once do not see each other's subgraphs (:mod:`fullscale.pipeline`): ``choose`` is told which
    are running (:func:`fullscale.order.cost_chooser` then starts one that shares no structure with them). On Ctrl-C (any
    exception in the calling thread) every running stage command is killed
    (:func:`fullscale.pipeline.kill_running_stages`), the workers record their shards as failed in the phase
    they stopped in, and the exception is raised.

    Raises:
        ValueError: ``workers`` < 1, ``workers`` > 1 where affinity cannot be set, or more workers than usable
            cores.
        Exception: what ``entry`` raised (the other workers finish their shard and start no other; further
            errors are printed).
    """
    if workers < 1:
        raise ValueError(f"fullscale.local_workers={workers}: needs at least 1")
    choose = choose or (lambda queue, running: 0)
    queue: list[dict] = list(specs)

    if workers == 1:
        results = []
        while queue and not _past(stop_after_epoch) and (i := choose(queue, [])) is not None:
            results.append(_finish(out, entry(queue.pop(i)), on_done))
        return results
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError("fullscale.local_workers > 1 pins each worker to its own cores: this platform has no "
                         "sched_setaffinity (run with local_workers: 1, or the Ray executor)")
    shares = core_shares(sorted(os.sched_getaffinity(0)), workers)
    results, errors = [], []
    take, finish = threading.Condition(), threading.Lock()  # the queue and `running`; the writes, on_done, results
    stop = threading.Event()
    running: list[dict] = []  # specs started and not yet written

    def take_spec() -> dict | None:
        """The next spec, or None: stopped, queue empty, past stop_after, or nothing chosen while no other
        worker runs a shard. Nothing chosen while another runs: wait for it to finish (its commit re-prices
        the queue, :mod:`fullscale.order`), then choose again."""
        with take:
            while not stop.is_set() and queue and not _past(stop_after_epoch):
                i = choose(queue, list(running))
                if i is not None:
                    running.append(queue[i])
                    return queue.pop(i)
                if not running:
                    break
                take.wait()
            take.notify_all()  # the waiting workers see the end too
            return None

    def work(cores: list[int]) -> None:
        try:
            os.sched_setaffinity(0, cores)  # this thread only (Linux): the stage commands it starts inherit it
            while (spec := take_spec()) is not None:
                try:
                    r = entry(spec)
                    with finish:
                        results.append(_finish(out, r, on_done))
                finally:
                    with take:
                        running.remove(spec)
                        take.notify_all()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller after the other workers stop
            with finish:
                errors.append(exc)
            stop.set()
            with take:
                take.notify_all()

    threads = [threading.Thread(target=work, args=(c,), name=f"fullscale-worker-{i}", daemon=True)
               for i, c in enumerate(shares)]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(0.5)
    except BaseException:  # Ctrl-C: no new shard; the running stage commands (own sessions) are killed
        stop.set()
        with take:
            take.notify_all()
        kill_running_stages()
        for t in threads:
            t.join()
        raise
    if errors:  # as with one worker, an error of the entry itself (not a shard's failure record) stops the run
        for e in errors[1:]:
            print(f"another worker also stopped: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        raise errors[0]
    return sorted(results, key=lambda r: r["shard"])


def run_ray(specs: list[dict], out: Path, entry: Callable[[dict], dict] = shard_entry,
            on_done: Callable[[dict], None] | None = None, ray_options: dict | None = None,
            *, cpus_per_shard: int) -> list[dict]:
    """One Ray task per spec (``cpus_per_shard`` CPUs: ``fullscale.cpus_per_shard``); each returned shard is written on the driver
    as it arrives. Ray is initialised with ``ray_options`` unless it already is (and shut down
    only if this call started it). A task that raises becomes a failure record of its shard.

    Raises:
        ImportError: Ray is not installed.
    """
    import ray  # noqa: PLC0415  (optional dependency: only the ray executor needs it)

    started = not ray.is_initialized()
    if started:
        ray.init(**{"include_dashboard": False, "log_to_driver": False, **(ray_options or {})})
    try:
        remote = ray.remote(num_cpus=cpus_per_shard, max_retries=0)(entry)
        pending = {remote.remote(s): s for s in specs}
        results = []
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            ref = ready[0]
            spec = pending.pop(ref)
            try:
                r = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a task's crash is that shard's failure record
                r = {"shard": spec["shard"], "ok": False,  # filed with the shard's kind (_finish): census, drain or full
                     "failure": {"shard": spec["shard"], "name": shard_name(spec["shard"]), "phase": "ray_task",
                                 "census": bool(spec.get("census")), **({"drain": True} if spec.get("drain") else {}),
                                 "rc": None, "log_tail": f"{type(exc).__name__}: {exc}"[-4000:]}}
            results.append(_finish(out, r, on_done))
        return sorted(results, key=lambda r: r["shard"])
    finally:
        if started:
            ray.shutdown()


DEADLINE_PAST_H = 12  # a --deadline that passed less than this many hours ago is refused, not moved to tomorrow


def deadline_epoch(hhmm: str | None, now: datetime | None = None, flag: str = "--deadline") -> float | None:
    """Unix time of the next ``HH:MM`` UTC (today's, or tomorrow's when it passed at least
    :data:`DEADLINE_PAST_H` hours ago); None for None.

    Raises:
        ValueError: not ``HH:MM`` (00:00-23:59; the message names ``flag`` and the value), or the time
            passed less than :data:`DEADLINE_PAST_H` hours ago (a deadline typed late would otherwise give
            the run about a day, and the shard order would start shards that long).
    """
    if not hhmm:
        return None
    hh, sep, mm = hhmm.partition(":")
    if not (sep and hh.isdigit() and mm.isdigit() and len(mm) == 2 and int(hh) < 24 and int(mm) < 60):
        raise ValueError(f"{flag} {hhmm!r}: give a UTC time as HH:MM (00:00 to 23:59)")
    hh, mm = int(hh), int(mm)
    now = now or datetime.now(timezone.utc)
    t = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if t <= now:
        if now - t < timedelta(hours=DEADLINE_PAST_H):
            raise ValueError(f"{flag} {hhmm} UTC passed {(now - t).total_seconds() / 60:.0f} min ago "
                             f"(it is {now:%H:%M} UTC): give a time still ahead")
        t += timedelta(days=1)
    return t.timestamp()


def make_specs(shards: list[int], cfg: FullScaleConfig, params: dict, catalog: Path, out: Path, work: Path,
               deadline_at: float | None = None, census: bool = False, drain: bool = False) -> list[dict]:
    """The ``shard_entry`` argument of each shard (``deadline_at``: Unix time at which running stages stop,
    :func:`deadline_epoch` of ``--deadline``; ``census``: census shards; ``drain``: drain shards)."""
    return [{"shard": i, "num_shards": cfg.num_shards, "graphnet_shards": cfg.graphnet_shards, "params": params,
             "catalog": str(catalog), "out": str(out),
             "work": str(work), "shard_timeout_s": cfg.shard_timeout_s, "keep_trial_history": cfg.keep_trial_history,
             "structure_quota": cfg.structure_quota, "rate_floor": cfg.rate_floor, "census": census,
             **({"drain": True} if drain else {}), "deadline_epoch": deadline_at} for i in shards]


PLAN_NEXT = 10  # shards ``plan`` lists in the order they would run


def build_plan(params_path: Path, out: Path, cfg: FullScaleConfig, params: dict | None = None,
               only: Iterable[int] | None = None) -> dict:
    """``python -m fullscale plan``: the committed catalog (built once, :func:`ensure_catalog`), its
    model count, the shards (model shards and GraphNet shards), the smallest and largest shard, how many
    shards are pending and, with ``fullscale.order`` ``cost`` or ``yield``, the next ones in that order with
    their estimates (:func:`fullscale.order.estimates`: subgraphs to profile, CPU seconds and expected tasks,
    None where unknown; the subgraphs ``fullscale.rate_floor`` leaves out), and how many drain shards
    ``--drain`` would run (:func:`pending_drains`)."""
    catalog = ensure_catalog(params_path, out, params)
    build_shards(out, cfg.num_shards, cfg.graphnet_shards)  # refuses shards cut another way
    rows = pq.read_table(catalog).select(["model_id", "duplicate_of"]).to_pylist()
    sizes = {k: len(v) for k, v in split_catalog(rows, cfg.num_shards, cfg.graphnet_shards).items()}
    total = len(sizes)
    pending = pending_shards(out, total, only)
    plan = {"catalog": str(catalog), "models": len(rows), "num_shards": cfg.num_shards,
            "graphnet_shards": total - cfg.num_shards, "shards_total": total,
            "models_per_shard": {"min": min(sizes.values()), "max": max(sizes.values())},
            "pending": len(pending), "order": cfg.order, "rate_floor": cfg.rate_floor,
            "drains_pending": len(pending_drains(out, only))}
    if cfg.order in ORDER_KEYS:
        ests = sorted(estimates(out, pending, cfg.structure_quota, floor=cfg.rate_floor), key=ORDER_KEYS[cfg.order])
        plan["next"] = [{"shard": shard_name(e.shard), "subgraphs_to_profile": e.subgraphs,
                         "cpu_s": None if e.cpu_s is None else round(e.cpu_s),
                         "tasks_expected": None if e.tasks is None else round(e.tasks, 1),
                         **({"resumed_cpu_s": round(e.resumed_cpu_s)} if e.resumed_cpu_s else {}),
                         **({"below_rate_floor": e.below_floor} if e.below_floor else {})} for e in ests[:PLAN_NEXT]]
    return plan


def shard_state(res: dict) -> tuple[str, str]:
    """``(state, counts)`` of a finished shard ``res``: ``done`` or ``failed in <phase>``, and the
    model / capture / task counts of its manifest (``-`` where it has none)."""
    state = "done" if res["ok"] else f"failed in {res['failure']['phase']}"
    c = (res.get("manifest") or {}).get("counts") or {}
    return state, f"{c.get('models', '-')} models, {c.get('captured', '-')} captured, {c.get('tasks', '-')} tasks"


def run_build(params: dict, cfg: FullScaleConfig, params_path: Path, metrics_path: str | Path, command: str, *,
              only: Iterable[int] | None, max_shards: int | None, executor: str | None, commit: bool,
              stop_after_utc: str | None, deadline_utc: str | None, census: bool = False, drain: bool = False,
              workers: int | None = None, order: str | None = None, plot_path: str | Path | None = None) -> list[dict]:
    """``python -m fullscale run``: every pending shard of ``only`` (None: all; at most ``max_shards``)
    with ``executor`` (None: ``cfg.executor``); after each shard ``metrics_path`` is rewritten, the task-rate
    plot drawn from it at ``plot_path`` (None: none; :func:`fullscale.plots.write_task_rate_plot`), a line
    printed and, with ``commit``, the shard committed with those files (:func:`commit_shard`). ``stop_after_utc`` (None:
    ``cfg.stop_after_utc``): no shard starts after it (local executor; the next such time, as for the deadline:
    past midnight it is tomorrow's, and one that passed less than :data:`DEADLINE_PAST_H` hours ago is
    refused, :func:`deadline_epoch`); ``deadline_utc``: running
    stages stop then; ``census``: census shards (module docstring); ``drain``: drain shards of the committed full
    shards with members waiting below the rate floor (:func:`pending_drains`, in id order; the local executor
    starts one only while it still has a waiting structure, :func:`drain_chooser`; :mod:`fullscale.pipeline`);
    ``workers`` (None:
    ``cfg.local_workers``): shards the local executor runs at once (:func:`run_local`); ``order`` (None:
    ``cfg.order``): which pending shard runs next (:mod:`fullscale.order`). Returns the shards' results.

    Raises:
        ValueError: ``order`` is not ``cost``, ``yield`` or ``id``; ``max_shards`` < 0; ``workers`` with the Ray
            executor; both ``census`` and ``drain``.
    """
    if max_shards is not None and max_shards < 0:
        raise ValueError(f"--max-shards {max_shards}: a number of shards, 0 or more")
    if census and drain:
        raise ValueError("--census and --drain: a run makes census shards or drain shards, not both")
    stop_after_utc = stop_after_utc or cfg.stop_after_utc
    stop_at = deadline_epoch(stop_after_utc, flag="--stop-after")  # both read before anything runs
    deadline_at = deadline_epoch(deadline_utc)
    out, work = Path(cfg.out), Path(cfg.work)
    catalog = ensure_catalog(params_path, out, params)
    total = build_shards(out, cfg.num_shards, cfg.graphnet_shards)
    pending = pending_drains(out, only) if drain else pending_shards(out, total, only, census)
    pending, absent = skip_absent_graphnet(pending, catalog, cfg)
    if absent:
        print(f"skipped {len(absent)} GraphNet shard(s) (first {shard_name(absent[0])}): none of their samples is at the "
              "catalogued place (their rows' sample_dir under the repository root; docs/full_scale.md, GraphNet samples)",
              flush=True)
    order = order or cfg.order
    if order not in (*ORDER_KEYS, "id"):
        raise ValueError(f"order={order!r}: {', '.join(ORDER_KEYS)} or id")
    by_cost = order in ORDER_KEYS and not census and not drain  # census and drain shards run in id order
    idx = census_index(out) if by_cost else None
    if by_cost:
        pending = ordered(estimates(out, pending, cfg.structure_quota, idx, floor=cfg.rate_floor), ORDER_KEYS[order])
    ray = (executor or cfg.executor) == "ray"
    if max_shards is not None and (ray or not by_cost):  # else the local chooser caps the starts among shards that fit
        pending = pending[:max_shards]
    specs = make_specs(pending, cfg, params, catalog, out, work, deadline_at, census, drain)
    kind = CENSUS if census else DRAIN if drain else SHARDS

    def on_done(res: dict) -> None:
        s = write_summary(out, total, metrics_path, command=command, rate_floor=cfg.rate_floor)
        try:
            png = write_task_rate_plot(s, plot_path) if plot_path else None
        except Exception as exc:  # noqa: BLE001 - a plot never stops a build: the summary is written, `summary` redraws it
            png = None
            print(f"task-rate plot not drawn ({type(exc).__name__}: {exc}); `python -m fullscale summary` draws it", flush=True)
        state, counts = shard_state(res)
        where = (f"census {s['census']['shards_done']}/{s['shards_total']} shards" if census
                 else f"build {s['shards_done']}/{s['shards_total']} shards, {s['structures_below_rate_floor']} structures "
                      "waiting below the rate floor" if drain
                 else f"build {s['shards_done']}/{s['shards_total']} shards")
        what = "census shard" if census else "drain shard" if drain else "shard"
        print(f"{'census' if census else what} {res['shard']}: {state}; {counts}; {where}", flush=True)
        if commit:
            commit_shard(out, res["shard"], f"fullscale: {what} {res['shard']} {state} "
                                            f"({counts}); {where}", kind,
                         written=[metrics_path, *([png, png.with_suffix(".csv")] if png is not None else [])])

    if ray:
        if workers is not None:
            raise ValueError("--workers is for the local executor; Ray runs as many shard tasks as "
                             "fullscale.cpus_per_shard lets it")
        return run_ray(specs, out, on_done=on_done, ray_options=cfg.ray, cpus_per_shard=cfg.cpus_per_shard)
    choose = (cost_chooser(out, cfg.structure_quota, deadline_at, idx, order=order, max_starts=max_shards,
                           floor=cfg.rate_floor)
              if by_cost else drain_chooser(out) if drain else None)
    results = run_local(specs, out, on_done=on_done, stop_after_epoch=stop_at,
                        workers=cfg.local_workers if workers is None else workers, choose=choose)
    if _past(stop_at) and len(results) < len(specs):
        print(f"--stop-after {stop_after_utc} UTC reached: {len(specs) - len(results)} pending "
              "shard(s) left for a later run", flush=True)
    return results
