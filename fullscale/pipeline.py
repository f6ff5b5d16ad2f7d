"""One shard of the full-scale build: capture -> dedupe -> decompose -> profile -> curate, compacted.

:func:`shard_entry` is the whole shard (the same function runs in this process's children or as
one Ray task): it calls each stage family's CLI in a subprocess (``python -m extract capture``,
``python -m dedupe group``, ``python -m curate decompose|profile|curate``) with the shard's merged
params and scratch folders under ``<work>/shards/<name>/``, so this package imports no stage family.
Between the stages it only filters Parquet rows:

- the shard's catalog is the committed full catalog filtered by :func:`fullscale.shards.shard_of_row`
  (config duplicates go with the row they duplicate; GraphNet samples have shards of their own);
- unique graphs that committed earlier shards already decomposed are dropped before ``decompose``
  (their rows stay in the shard's ``graphs`` table, which says which models use them);
- subgraphs that earlier shards already decomposed are marked ``status: skipped``,
  ``skip_reason: seen_in_earlier_shard`` before ``profile`` (kept as rows: the release unions their
  ``model_ids``), so the profile never times a subgraph twice across shards;
- with ``fullscale.structure_quota`` (``spec["structure_quota"]``) the remaining ones beyond the quota
  of their structure (``structure_hash``) over the build are marked ``skip_reason:
  structure_quota_reached`` (:func:`fullscale.shards.structure_picks`: committed shards' timed members
  count against it, the members kept are drawn by the hash), so every structure is screened and common
  ones (a timm ``conv2d>batch_norm>relu``) are not profiled in every shard again;
- with ``fullscale.rate_floor`` (``spec["rate_floor"]``) the remaining ones whose kind's task rate in the
  committed full shards is below the floor are marked ``skip_reason: below_rate_floor``
  (:func:`fullscale.order.rate_floor_picks`, the rates the shard order uses, read when the shard starts), so
  the profile times the structures most likely to give a task; like the quota's, they are not "seen", and a
  later shard that meets them judges them again.

"Earlier" means committed when the shard starts: shards run at once (Ray) do not see each other,
and the release deduplicates by hash across all shards (:mod:`fullscale.release`).

A census shard (``spec["census"]``, ``python -m fullscale run --census``) stops after ``decompose``: its
unique graphs are those new to the committed full shards and census shards, every subgraph of them is
kept unmarked, and nothing is profiled (:mod:`fullscale.shards`: what a census shard is for).

A drain shard (``spec["drain"]``, ``python -m fullscale run --drain``) runs committed full shard ``<id>`` again
for the members its rate floor left waiting: it decomposes only the unique graphs full shard ``<id>`` decomposed
(its ``unique_graphs`` table), marks seen every subgraph a committed full or drain shard has seen, applies the
structure quota and no floor, profiles and curates the rest, and writes the profile side only (subgraphs,
profiles, long_tail, tasks; full shard ``<id>`` holds the models and graphs). Its scratch folder is
``<work>/drain/<name>/`` and its failure record and attempts pack go to ``<out>/drain/``. On the machine that ran
the full shard its first run starts from a copy of the full shard's capture folder (the capture resumes what
its keys still match: the manifest's ``capture_from_full_shard``).

The result is a dict of files (relative path -> bytes) and the manifest; the caller writes it with
:func:`fullscale.shards.write_shard` (atomic, ``DONE`` last).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fullscale.order import TaskRates, rate_floor_picks, task_rates
from fullscale.params import params_digest, write_params
from fullscale.shards import (
    DRAIN,
    FLOOR_REASON,
    GRAPHNET_PREFIX,
    MARKER,
    QUOTA_REASON,
    SEEN_REASON,
    SHARDS,
    TIMED,
    attempt_machines,
    census_graphs,
    drop_foreign_timings,
    folder_files,
    host_identity,
    pack_attempts,
    profiled_structures,
    resume_pack_path,
    seen_hashes,
    shard_name,
    shard_of_row,
    shards_root,
    structure_picks,
    unique_graph_hashes,
    unpack_attempts,
)
from passnet_common.machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]

#: scratch paths under ``<work>/shards/<id>/`` a re-run of the shard keeps (the attempts only under the same params)
RESUME_KEPT = ("capture", "profile/attempts", "profile/attempts.params_sha256", "profile/attempts.host")
#: the phases a shard runs, in order, and the stage command of each (``{...}`` filled per shard)
PHASES = (
    ("capture", ["-m", "extract", "capture", "--params", "{params}", "--catalog", "{w}/catalog.parquet",
                 "--out", "{w}/extract", "--store", "{w}/graph_store", "--work", "{w}/capture", "--no-progress"]),
    ("dedupe", ["-m", "dedupe", "group", "--extract", "{w}/extract", "--store", "{w}/graph_store",
                "--out", "{w}/dedupe", "--metrics", "{w}/metrics/dataset.json", "--plots", "{w}/plots"]),
    ("decompose", ["-m", "curate", "decompose", "--params", "{params}", "--unique", "{w}/new_unique_graphs.parquet",
                   "--store", "{w}/graph_store", "--out", "{w}/decompose"]),
    ("profile", ["-m", "curate", "profile", "--params", "{params}", "--decompose", "{w}/decompose",
                 "--out", "{w}/profile", "--cache", "{cache}"]),
    ("curate", ["-m", "curate", "curate", "--params", "{params}", "--decompose", "{w}/decompose",
                "--profile", "{w}/profile", "--out", "{w}/curate", "--metrics", "{w}/metrics/curate.json",
                "--plots", "{w}/plots"]),
)

#: compact tables of a shard: name -> scratch file it is copied from
TABLES = {
    "extractions": "extract/extractions.parquet",
    "graphs": "extract/graphs.parquet",
    "unique_graphs": "new_unique_graphs.parquet",
    "nodes": "new_nodes.parquet",  # the nodes of the unique graphs first seen in this shard
    "subgraphs": "decompose/subgraphs.parquet",
    "profiles": "profile/profiles.parquet",
    "long_tail": "curate/long_tail.parquet",
    "tasks": "curate/tasks.parquet",
}
DRAIN_TABLES = ("subgraphs", "profiles", "long_tail", "tasks")  # what a drain shard writes (module docstring)
METRICS = {"dataset.json": "metrics/dataset.json", "decompose.json": "decompose/decompose.json",
           "profile.json": "profile/profile.json", "curate.json": "metrics/curate.json"}


class StageFailed(RuntimeError):
    """A stage command of a shard exited non-zero (or ran past ``shard_timeout_s``)."""

    def __init__(self, phase: str, rc: int | None, tail: str, record: dict):
        super().__init__(f"{phase}: exit {rc}: {tail[-500:]}")
        self.phase, self.rc, self.tail, self.record = phase, rc, tail, record


def code_version() -> dict:
    """``commit`` (git HEAD of this checkout, None outside git) and ``dirty`` (uncommitted changes in
    the stage families or the core: the code that decides a shard's rows)."""
    def git(*a: str) -> str | None:
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--", "extract", "dedupe", "curate", "passnet_common", "fullscale")
    return {"commit": commit, "dirty": bool(dirty) if dirty is not None else None}


def machine(pid: int = 0) -> dict:
    """Host (``cpu_model`` and ``cpu_identity``: :func:`fullscale.shards.host_identity`, which tells two CPUs of one
    model name apart), cores, load and library versions (no torch import). ``cpu_cores`` / ``cpu_usable_cores``: the
    cores the caller may use -- with ``pid`` 0 the calling thread's (a shard's worker thread under
    ``--workers``: its share, which its stage commands inherit), with ``os.getpid()`` the process's main
    thread's (the machine the driver was given)."""
    def ver(p: str) -> str | None:
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return None
    try:
        cores: list[int] | None = sorted(os.sched_getaffinity(pid))
    except (AttributeError, OSError):
        cores = None
    model = cpu_model()
    return {"cpu_model": model, "cpu_identity": host_identity(model), "cpu_logical_cores": os.cpu_count(),
            "cpu_usable_cores": len(cores) if cores is not None else os.cpu_count(), "cpu_cores": cores,
            "load_avg_1m": round(os.getloadavg()[0], 2), "python": platform.python_version(),
            "platform": platform.platform(), "node": platform.node(),
            "versions": {p: ver(p) for p in ("torch", "transformers", "timm", "torchvision")}}


_LIVE: set[int] = set()  # process groups of the stage commands running now (one per worker thread at most)
_LIVE_LOCK = threading.Lock()


def kill_running_stages() -> int:
    """SIGKILL the process group of every stage command :func:`run_phase` is waiting for, in any thread (the
    driver's Ctrl-C with ``--workers`` > 1: the commands run in sessions of their own, so the terminal's
    signal does not reach them). Their ``run_phase`` then returns as for a failed command. Returns how many
    groups were signalled."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for g in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(g, signal.SIGKILL)
    return len(groups)


def _reaped(proc: subprocess.Popen, status: int, ru) -> tuple[int, float]:
    """``(exit code, CPU seconds)`` of ``proc`` from its ``os.wait4`` status and rusage (its returncode set, so
    Popen never waits for it again)."""
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_utime + ru.ru_stime


def _wait(proc: subprocess.Popen, timeout_s: float | None) -> tuple[int | None, float]:
    """Wait for ``proc`` (at most ``timeout_s`` seconds; None: no limit) with ``os.wait4``, which reports that
    child's own CPU time: user + system of it and its waited-for children, whatever else this process runs
    meanwhile (``RUSAGE_CHILDREN`` would add the stage commands of shards run at once in other threads).
    Returns ``(exit code, CPU seconds)``; on timeout the child's process group is killed and the code is None.
    Without a limit the wait blocks; with one it polls, at most 0.1 s apart."""
    if timeout_s is None:
        return _reaped(proc, *os.wait4(proc.pid, 0)[1:])
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            return _reaped(proc, status, ru)
        left = deadline - time.monotonic()
        if left <= 0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            return None, _reaped(proc, *os.wait4(proc.pid, 0)[1:])[1]
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.1)


def child_env() -> dict:
    """The environment of a stage command: this interpreter's bin folder first on PATH, the repository
    on PYTHONPATH, the Hub and transformers offline unless the caller's environment says otherwise."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def run_phase(phase: str, argv: list[str], log: Path, timeout_s: float | None) -> dict:
    """Run one stage command (``python`` + ``argv``) from the repository root; its output goes to ``log``.

    Returns ``{phase, wall_s, cpu_s, rc}`` (CPU: user + system of the command and its waited-for children).

    Raises:
        StageFailed: non-zero exit or timeout (the record and the log's tail attached).
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        # its own process group: on timeout the whole group is killed, the stage's helper processes too (the
        # profile's compile phase is a separate `python -m curate.profile.run`, which a kill of the stage alone
        # left running)
        proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=child_env(), stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(proc.pid)
        try:
            rc, cpu_s = _wait(proc, timeout_s)
        except BaseException:  # interrupted (Ctrl-C): the stage's whole group goes too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(proc.pid)
    rec = {"phase": phase, "wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(cpu_s, 2), "rc": rc}
    if rc != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise StageFailed(phase, rc, tail, rec)
    return rec


GRAPHNET_SAMPLE_FILES = ("graph_net.json", "model.py", "weight_meta.py", "input_tensor_constraints.py")  # what the
# importer reads of a sample (extract.sources.graphnet.SAMPLE_FILES; a test keeps the two equal)


def _catalogued_samples(rows: list[dict]):
    """``(model_id, parsed config_json)`` of the runnable GraphNet samples among catalog ``rows`` (``graphnet:``
    rows without a catalog error)."""
    for r in rows:
        if str(r.get("model_id", "")).startswith(GRAPHNET_PREFIX) and not r.get("catalog_error_class"):
            yield r["model_id"], json.loads(r.get("config_json") or "{}")


def check_graphnet_samples(rows: list[dict]) -> list[str]:
    """What is wrong with the GraphNet sample folders the catalog ``rows`` name (``graphnet:`` rows without
    a catalog error: ``config_json.sample_dir``, relative to the repository root, and ``files_sha256``):
    a row without a relative ``sample_dir`` or without ``files_sha256``; a folder that is absent; a file
    the importer reads (:data:`GRAPHNET_SAMPLE_FILES`) whose sha256 differs from the catalogued one, that
    is missing, or that is present but was not catalogued (added since). Empty when every sample is there
    as catalogued. A shard is not run on such samples: its captures would be recorded as failures of the
    models, or as other graphs. (Checked before the capture, not while it reads the files.)"""
    bad = []
    for mid, conf in _catalogued_samples(rows):
        rel, hashes = conf.get("sample_dir"), conf.get("files_sha256")
        if not rel or Path(rel).is_absolute() or not hashes:
            bad.append(f"{mid}: the catalog row has no relative sample_dir or no files_sha256")
            continue
        d = ROOT / rel
        if not d.is_dir():
            bad.append(f"{mid}: sample folder {d} is missing")
            continue
        for f in GRAPHNET_SAMPLE_FILES:
            p = d / f
            if f not in hashes:
                if p.is_file():
                    bad.append(f"{mid}: {f} is in the sample folder but not in the catalog (added since)")
            elif not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != hashes[f]:
                bad.append(f"{mid}: {f} is missing or differs from the catalogued file")
    return bad


def graphnet_samples_absent(rows: list[dict]) -> bool:
    """True when ``rows`` hold runnable GraphNet samples and none of their folders exists here (no GraphNet
    checkout at the catalogued place): such a shard is skipped, not recorded as failed."""
    dirs = [conf.get("sample_dir") for _, conf in _catalogued_samples(rows)]
    return bool(dirs) and not any(d and (ROOT / d).is_dir() for d in dirs)


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist() if path.is_file() else []


def _filter_parquet(src: Path, dst: Path, keep) -> tuple[int, int]:
    """Rows of ``src`` for which ``keep(row)`` holds, written to ``dst`` with ``src``'s schema and
    metadata. Returns ``(kept, total)``."""
    t = pq.read_table(src)
    mask = pa.array([bool(keep(r)) for r in t.to_pylist()], type=pa.bool_())
    out = t.filter(mask) if len(t) else t
    pq.write_table(out, dst, compression="zstd")
    return len(out), len(t)


def _mark_skipped(path: Path, skip: list[bool], reason: str) -> int:
    """Mark the rows of ``subgraphs.parquet`` flagged in ``skip`` (one flag per row) as ``status:
    skipped`` / ``skip_reason: reason`` (in place, schema kept). Returns how many."""
    if not any(skip):
        return 0
    t = pq.read_table(path)
    status = [("skipped" if s else v) for v, s in zip(t.column("status").to_pylist(), skip)]
    why = [(reason if s else v) for v, s in zip(t.column("skip_reason").to_pylist(), skip)]
    i, j = t.schema.get_field_index("status"), t.schema.get_field_index("skip_reason")
    t = t.set_column(i, t.schema.field(i), pa.array(status, type=t.schema.field(i).type))
    t = t.set_column(j, t.schema.field(j), pa.array(why, type=t.schema.field(j).type))
    pq.write_table(t, path, compression="zstd")
    return sum(skip)


def _mark_seen_subgraphs(path: Path, seen: set[str]) -> int:
    """Mark rows of ``subgraphs.parquet`` whose hash an earlier shard decomposed as skipped /
    :data:`fullscale.shards.SEEN_REASON`. Returns how many."""
    hashes = pq.read_table(path, columns=["subgraph_hash"]).column("subgraph_hash").to_pylist()
    return _mark_skipped(path, [h in seen for h in hashes], SEEN_REASON)


def _mark_structure_quota(path: Path, profiled: Counter, quota: int) -> int:
    """Mark the ``ok`` rows of ``subgraphs.parquet`` beyond their structure's quota as skipped /
    :data:`fullscale.shards.QUOTA_REASON` (:func:`fullscale.shards.structure_picks`: ``quota`` members
    per structure over the build, ``profiled`` already timed by committed shards). Returns how many."""
    rows = pq.read_table(path, columns=["subgraph_hash", "structure_hash", "status"]).to_pylist()
    return _mark_skipped(path, structure_picks(rows, profiled, quota), QUOTA_REASON)


def _mark_rate_floor(path: Path, rates: TaskRates, floor: float) -> int:
    """Mark the ``ok`` rows of ``subgraphs.parquet`` whose kind's task rate is below ``floor`` as skipped /
    :data:`fullscale.shards.FLOOR_REASON` (:func:`fullscale.order.rate_floor_picks`). Returns how many."""
    cols = [c for c in ("status", "anchor", "num_ops") if c in pq.read_schema(path).names]
    return _mark_skipped(path, rate_floor_picks(pq.read_table(path, columns=cols).to_pylist(), rates, floor), FLOOR_REASON)


def _compact_profiles(src: Path, keep_history: bool) -> bytes:
    t = pq.read_table(src)
    if not keep_history and "trial_history" in t.column_names:
        t = t.drop(["trial_history"])
    buf = io.BytesIO()
    pq.write_table(t, buf, compression="zstd")
    return buf.getvalue()


def attempt_counts(att: Path) -> dict[str, int]:
    """Profile attempts on disk under ``att`` (a shard's ``profile/attempts``): ``checked`` (compiled,
    ``check.json``) and ``timed`` (``result.json``); zeros where the folder is absent."""
    return {"checked": sum(1 for _ in att.rglob("check.json")) if att.is_dir() else 0,
            "timed": sum(1 for _ in att.rglob("result.json")) if att.is_dir() else 0}


def progress(w: Path) -> dict:
    """What a shard's scratch folder ``w`` holds so far (a failure record carries it): capture attempts
    (model, ok, error class, CPU and wall seconds from the capture's ``timings.jsonl``), unique graphs new to
    the build, decomposed and profilable subgraphs, profile variants checked (compiled) and timed -- every
    attempt on disk, those an earlier run of the shard left included (the record's ``resumed_attempts``)."""
    tl = w / "capture" / "timings.jsonl"
    attempts = [json.loads(line) for line in tl.read_text().splitlines() if line.strip()] if tl.is_file() else []
    subs = _rows(w / "decompose" / "subgraphs.parquet")
    att = attempt_counts(w / "profile" / "attempts")
    return {"capture": [{k: a.get(k) for k in ("model_id", "ok", "error_class", "cpu_s", "seconds")} for a in attempts],
            "unique_graphs_new": len(_rows(w / "new_unique_graphs.parquet")),
            "subgraphs": len(subs), "subgraphs_profilable": sum(1 for r in subs if r.get("status") == "ok"),
            "profile_checked": att["checked"], "profile_timed": att["timed"]}


def shard_entry(spec: dict) -> dict:
    """Run one shard (module docstring). ``spec``: ``shard``, ``num_shards``, ``graphnet_shards``, ``params`` (the merged
    stage params), ``catalog`` (path of the committed full catalog), ``out`` (the committed build folder:
    seen hashes are read from it), ``work`` (scratch root), optional ``shard_timeout_s``,
    ``deadline_epoch`` (Unix time at which a running stage is stopped: the shard is then a failure
    record with the phase it stopped in, ``rc`` None), ``keep_trial_history``, ``census`` (True: stop
    after ``decompose``, module docstring), ``drain`` (True: a drain shard, module docstring),
    ``structure_quota``, ``rate_floor`` (module docstring; a drain applies none).

    A shard run again resumes its profile's finished attempts from this machine's scratch folder (same
    merged params) and from ``<out>/shards/<name>.attempts.parquet`` (:func:`fullscale.shards.pack_attempts`,
    what a stopped run committed: any machine; timings only where they were made on this machine's CPU model
    and host, :func:`fullscale.shards.unpack_attempts`), local files winning where the scratch folder's
    ``profile/attempts.host`` stamp names this host (:func:`fullscale.shards.drop_foreign_timings`); the
    manifest or failure record says how many attempt files it found at the start (``resumed_attempts``), the
    timings it dropped from the scratch folder (``foreign_timings_dropped``), what the pack gave
    (``resumed_from_pack``: files, the CPU models they name, the timings of other CPUs left out, or why it was
    refused); a manifest says on which CPU models its timed profile rows were timed (``timed_on``), a failure
    record which CPU models the attempt files on disk name (``attempt_machines``).

    Returns:
        ``{"shard", "ok": True, "manifest", "files"}`` (files: relative path -> bytes, manifest.json
        included), or ``{"shard", "ok": False, "failure", "resume_pack"}`` when a stage failed (the failure
        record: phase, rc, log tail, phases done; ``resume_pack``: the pack of its finished attempts, None
        when there is none; :func:`fullscale.shards.write_failure` merges it into the committed one).
    """
    shard, n, n_graphnet = int(spec["shard"]), int(spec["num_shards"]), int(spec["graphnet_shards"])
    name = shard_name(shard)
    census, drain = bool(spec.get("census")), bool(spec.get("drain"))
    if census and drain:
        raise ValueError(f"{name}: a shard is a census shard or a drain shard, not both")
    kind = DRAIN if drain else SHARDS  # where its failure record and attempts pack go (a census shard packs none)
    w = Path(spec["work"]).resolve() / kind / name
    digest = params_digest(spec["params"])
    stamp = w / "profile" / "attempts.params_sha256"  # the params the kept attempts were made with
    if w.exists():
        # the stage outputs are rebuilt; the capture's resume folder and the profile's finished attempts (each
        # under a key of its subgraph, size, dtype, inputs, torch and profile code: curate.profile.variant.
        # attempt_key) are kept, so a shard stopped at a deadline resumes its profile on this machine -- the
        # attempts only where they were made with the same merged params (the key leaves some knobs out)
        keep = {w / k for k in RESUME_KEPT}
        if not stamp.is_file() or stamp.read_text().strip() != digest:
            keep.discard(w / "profile" / "attempts")
        for p in [*w.iterdir(), *((w / "profile").iterdir() if (w / "profile").is_dir() else [])]:
            if p not in keep and p != w / "profile":
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    reused_capture = False
    full_capture = Path(spec["work"]).resolve() / SHARDS / name / "capture"
    if drain and not (w / "capture").exists() and full_capture.is_dir():
        # the full shard's capture results on this machine: the capture resumes them under its own keys (models
        # whose key changed since -- code, params -- are captured again), so a drain seldom captures anew
        shutil.copytree(full_capture, w / "capture")
        reused_capture = True
    att = w / "profile" / "attempts"
    cpu = cpu_model()
    host = host_identity(cpu)  # one model name can cover two CPUs (a VM's "AMD EPYC"): the host tells them apart
    host_stamp = w / "profile" / "attempts.host"  # the host whose timings the scratch folder holds
    try:
        scratch_host = host_stamp.read_bytes().decode("utf-8").strip() if host_stamp.is_file() else None
    except (OSError, UnicodeDecodeError):
        scratch_host = None  # unreadable: the folder's timings are nobody's, timed again here
    # timings another CPU model or host made (a shared or moved scratch folder) are timed again here, never pooled
    dropped = drop_foreign_timings(att, cpu, host, scratch_host) if not census else {}
    # a run stopped on another machine (or a scratch folder lost) left its finished attempts committed beside
    # its failure record: taken up under the same params, the local ones winning (fullscale.shards.unpack_attempts)
    pack = resume_pack_path(spec["out"], shard, kind)
    from_pack = None
    if not census and pack.is_file():
        try:
            from_pack = unpack_attempts(pack, att, digest, cpu, host)
        except Exception as exc:  # noqa: BLE001 - unpack_attempts refuses what it knows; a pack never stops a build
            from_pack = {"files": 0, "refused": f"{pack.name}: {type(exc).__name__}: {exc}"}
    resumed = attempt_counts(att)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
    if not census:  # a census shard keeps the attempts it shares the folder with, and leaves their stamp alone
        host_stamp.write_bytes(host.encode("utf-8"))
    w.mkdir(parents=True, exist_ok=True)
    (w / "metrics").mkdir(exist_ok=True)
    started = datetime.now(timezone.utc)
    params_path = write_params(spec["params"], w / "params.yaml")
    cache = Path(spec["work"]).resolve() / "inductor_cache"
    cache.mkdir(parents=True, exist_ok=True)

    cat = pq.read_table(spec["catalog"])
    cat = cat.filter(pa.array([shard_of_row(r, n, n_graphnet) == shard for r in cat.select(
        [c for c in ("model_id", "duplicate_of") if c in cat.column_names]).to_pylist()], type=pa.bool_()))
    pq.write_table(cat, w / "catalog.parquet", compression="zstd")
    models = cat.column("model_id").to_pylist()
    seen_graphs, seen_subs = seen_hashes(spec["out"], before=None)
    if census:  # the census decomposes each graph once over both kinds; it skips no subgraph
        seen_graphs |= census_graphs(spec["out"])
        seen_subs = set()
    own = None  # a drain: the unique graphs its full shard decomposed, the only ones it decomposes again
    if drain:
        full = shards_root(spec["out"]) / name
        if not (full / MARKER).is_file():
            raise ValueError(f"drain {name}: full shard {name} is not committed in {spec['out']}")
        own = set(unique_graph_hashes(full))
    seen_graphs_before, seen_subs_before = len(seen_graphs), len(seen_subs)
    quota = None if census else spec.get("structure_quota")
    structures = profiled_structures(spec["out"]) if quota is not None else Counter()
    floor = None if census or drain else spec.get("rate_floor")
    rates = task_rates(spec["out"]) if floor is not None else None  # the committed shards' when this one starts
    if rates is not None and rates.overall is None:  # no rate yet (nothing profiled, or out unreadable): none applied
        floor, rates = None, None

    fmt = {"params": str(params_path), "w": str(w), "cache": str(cache)}
    phases: list[dict] = []
    skipped: dict[str, str] = {}
    notes: dict[str, Any] = {}

    def go(phase: str) -> None:
        argv = [a.format(**fmt) for a in dict(PHASES)[phase]]
        limit = spec.get("shard_timeout_s")
        if spec.get("deadline_epoch") is not None:  # a session's end: the stage is stopped there, the shard recorded
            left = max(1.0, float(spec["deadline_epoch"]) - time.time())
            limit = left if limit is None else min(limit, left)
        phases.append(run_phase(phase, argv, w / "logs" / f"{phase}.log", limit))

    try:
        bad = check_graphnet_samples(cat.to_pylist()) if models else []
        if bad:
            raise StageFailed("catalog", None, "GraphNet samples not as the committed catalog lists them (check out the "
                              "GraphNet commit docs/full_scale.md names so that each row's sample_dir, relative to "
                              f"{ROOT}, holds it):\n" + "\n".join(bad[:50]),
                              {"phase": "catalog", "wall_s": 0.0, "cpu_s": 0.0, "rc": None})
        if models:
            go("capture")
            go("dedupe")
            kept, total = _filter_parquet(w / "dedupe" / "unique_graphs.parquet", w / "new_unique_graphs.parquet",
                                          (lambda r: r["graph_hash"] in own) if drain else
                                          (lambda r: r["graph_hash"] not in seen_graphs))
            notes["unique_graphs_in_shard"], notes["unique_graphs_new"] = total, kept
            if kept and census:
                go("decompose")
            elif kept:
                go("decompose")
                notes["subgraphs_seen_before"] = _mark_seen_subgraphs(w / "decompose" / "subgraphs.parquet", seen_subs)
                if quota is not None:
                    notes["subgraphs_structure_quota"] = _mark_structure_quota(w / "decompose" / "subgraphs.parquet",
                                                                               structures, int(quota))
                if rates is not None:
                    notes["subgraphs_below_rate_floor"] = _mark_rate_floor(w / "decompose" / "subgraphs.parquet",
                                                                           rates, float(floor))
                ok = [r for r in _rows(w / "decompose" / "subgraphs.parquet") if r["status"] == "ok"]
                if ok:
                    go("profile")
                    go("curate")
                else:
                    why = ("no profilable subgraph new to the build, under its structure's quota and at or above the rate floor"
                           if not drain else "no waiting subgraph left unseen and under its structure's quota")
                    skipped["profile"] = skipped["curate"] = why
            else:
                skipped.update({p: "no unique graph new to this build" if not drain else
                                "none of the full shard's unique graphs captured again"
                                for p in ("decompose", "profile", "curate")})
            if census:
                skipped["profile"] = skipped["curate"] = "census shard: capture, dedupe and decompose only"
        else:
            skipped.update({p: "no model in this shard" for p, _ in PHASES})
    except StageFailed as exc:
        ext = _rows(w / "extract" / "extractions.parquet")
        return {"shard": shard, "ok": False, "failure": {
            "shard": shard, "name": name, "census": census, **({"drain": True} if drain else {}),
            "phase": exc.phase, "rc": exc.rc, "log_tail": exc.tail,
            "phases_done": phases + [exc.record], "models": len(models),
            "failure_classes": dict(Counter(r.get("error_class") or r.get("status") for r in ext if r.get("status") != "ok")),
            "progress": progress(w), "resumed_attempts": resumed, "resumed_from_pack": from_pack,
            "foreign_timings_dropped": dropped, "attempt_machines": attempt_machines(att), "estimate": spec.get("estimate"),
            "started_utc": started.isoformat(timespec="seconds"), "failed_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "code": code_version()},
            # committed beside the record (merged into the pack there): the next run of this shard, on any machine,
            # resumes these attempts
            "resume_pack": None if census else pack_attempts(att, digest, host)}

    files: dict[str, bytes] = {}
    if not drain:  # a drain's models and graphs are its full shard's
        buf = io.BytesIO()
        pq.write_table(cat, buf, compression="zstd")
        files["tables/models.parquet"] = buf.getvalue()
    if (w / "dedupe" / "nodes.parquet").is_file() and (w / "new_unique_graphs.parquet").is_file():
        new_graphs = set(pq.read_table(w / "new_unique_graphs.parquet", columns=["graph_hash"]).column("graph_hash").to_pylist())
        _filter_parquet(w / "dedupe" / "nodes.parquet", w / "new_nodes.parquet", lambda r: r["graph_hash"] in new_graphs)
    for tname, rel in TABLES.items():
        p = w / rel
        if p.is_file() and not (drain and tname not in DRAIN_TABLES):
            files[f"tables/{tname}.parquet"] = (_compact_profiles(p, bool(spec.get("keep_trial_history")))
                                                if tname == "profiles" else p.read_bytes())
    for mname, rel in METRICS.items():
        if (w / rel).is_file():
            files[f"metrics/{mname}"] = (w / rel).read_bytes()
    tasks_dir = w / "curate" / "tasks"
    runner: dict[str, bytes] = {}
    if tasks_dir.is_dir():
        for rel, data in folder_files(tasks_dir).items():
            base = rel.split("/")[-1]
            if rel.count("/") == 1 and base in ("run_task.py", "timing_protocol.py"):
                runner[base] = data  # identical in every folder: one copy per shard
                continue
            files[f"tasks/{rel}"] = data
    files.update({f"runner/{k}": v for k, v in runner.items()})

    ext = _rows(w / "extract" / "extractions.parquet")
    subs = _rows(w / "decompose" / "subgraphs.parquet")
    prof = _rows(w / "profile" / "profiles.parquet")
    tasks = _rows(w / "curate" / "tasks.parquet")
    counts = {
        "models": len(models),
        "captured": sum(1 for r in ext if r.get("status") == "ok"),
        "extraction_status": dict(Counter(r.get("status") for r in ext)),
        "graphs": len(_rows(w / "extract" / "graphs.parquet")),
        "unique_graphs_in_shard": notes.get("unique_graphs_in_shard", 0),
        "unique_graphs_new": notes.get("unique_graphs_new", 0),
        "subgraphs": len(subs),
        "subgraphs_profilable_new": sum(1 for r in subs if r["status"] == "ok"),
        "subgraphs_seen_before": notes.get("subgraphs_seen_before", 0),
        "subgraphs_structure_quota": notes.get("subgraphs_structure_quota", 0),
        "subgraphs_below_rate_floor": notes.get("subgraphs_below_rate_floor", 0),
        "profile_rows": len(prof),
        "tasks": len(tasks),
        "task_variants": sum(int(t.get("num_variants") or 0) for t in tasks),
    }
    finished = datetime.now(timezone.utc)
    manifest = {
        "shard": shard, "name": name, "num_shards": n, "graphnet_shards": n_graphnet, "census": census,
        **({"drain": True, "capture_from_full_shard": reused_capture} if drain else {}), "models": models, "counts": counts,
        "failure_classes": dict(Counter(r.get("error_class") or r.get("status") for r in ext if r.get("status") != "ok")),
        "phases": phases, "skipped_phases": skipped,
        "wall_s": round((finished - started).total_seconds(), 1),
        "cpu_s": round(sum(p["cpu_s"] for p in phases), 1),
        "seen_before": {"graphs": seen_graphs_before, "subgraphs": seen_subs_before,
                        "structures_timed": len(structures)},
        "structure_quota": quota,
        # the floor, and how many profiled structures (with a task) the rates it was applied with came from
        "rate_floor": floor,
        "rates_at_start": (None if rates is None else
                           {"structures": sum(t for t, _ in rates.by_kind.values()),
                            "with_task": sum(k for _, k in rates.by_kind.values())}),
        "started_utc": started.isoformat(timespec="seconds"), "finished_utc": finished.isoformat(timespec="seconds"),
        "machine": machine(), "code": code_version(), "params_sha256": params_digest(spec["params"]),
        "trial_history_kept": bool(spec.get("keep_trial_history")),
        "estimate": spec.get("estimate"), "resumed_attempts": resumed, "resumed_from_pack": from_pack,
        "foreign_timings_dropped": dropped,
        # where the shard's timed profile rows were timed (one CPU model: other models' timings are not resumed)
        "timed_on": dict(sorted(Counter(str(r.get("cpu_model") or "unknown") for r in prof if r.get("status") in TIMED).items())),
        "files": {k: len(v) for k, v in sorted(files.items())},
    }
    files["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True).encode()
    return {"shard": shard, "ok": True, "manifest": manifest, "files": files}
