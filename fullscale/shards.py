"""Shards of the full-scale build: which models a shard holds, and the committed shard folders.

**Assignment.** ``shard_of(key, n) = int(sha256(key)[:16], 16) mod n`` with ``key`` the row's
``model_id`` (or, for a config duplicate, the id of the row it duplicates: :func:`shard_key`): a
function of the ids alone, so every machine, Python version and catalog order puts a model in the
same shard, and a model added to the catalog later lands in one shard without moving the others.
GraphNet samples (``graphnet:`` rows, added to a committed catalog by :func:`fullscale.runner.ensure_catalog`
when ``catalog.graphnet_dir`` is set) have shards of their own, numbered after the model shards:
``num_shards + shard_of(key, graphnet_shards)`` (:func:`shard_of_row`), so adding them to a build whose
model shards are done leaves every done shard as it is.

**A committed shard** (``<out>/shards/<id>/``, small, versioned in git)::

    manifest.json        shard id, num_shards, models, counts, phase times (wall / CPU s), machine,
                         code version, params digest, failure classes, seen-before skips
    tables/*.parquet     the shard's rows: models, extractions, graphs, unique_graphs (graphs first seen
                         here), subgraphs (seen ones and those over their structure's quota marked),
                         profiles, long_tail, tasks
    tasks/<task>/        the task folders its long tail gave (task.json + subgraphs/<variant>/)
    runner/              run_task.py and timing_protocol.py (one copy per shard)
    metrics/*.json       dataset.json, decompose.json, profile.json, curate.json of the shard
    DONE                 written last (GraphNet's completion-marker rule)

**A census shard** (``<out>/census/<id>/``, ``python -m fullscale run --census``): the same shard run
through ``decompose`` only (capture, dedupe, decompose; no profile), so the build knows every graph,
structure and capture failure of the catalog long before it has profiled it: ``manifest.json``
(``"census": true``) and ``tables/`` models, extractions, graphs, unique_graphs (graphs first seen in
the census or the full shards), nodes, subgraphs (every subgraph of those graphs, unmarked). A census
shard is never a full shard: it feeds no seen-hash skip, no structure quota and no task; the summary
counts its models and graphs where no full shard of that id exists, and the release takes its graph
tables. The full run of that shard later captures again (on the same machine the capture's resume
folder in ``<work>`` makes that free).

**A drain shard** (``<out>/drain/<id>/``, ``python -m fullscale run --drain``): full shard ``<id>`` run again
for the members the rate floor left waiting (``skip_reason: below_rate_floor``, of a structure no full or
drain shard has profiled a member of: :func:`waiting_structures`). It captures the shard's models again,
decomposes only the unique graphs full shard ``<id>`` decomposed, and profiles, under the structure quota and
no floor, the subgraphs no committed shard has seen (the floor's and the quota's, judged again); everything
else is marked seen. ``manifest.json`` (``"drain": true``) and ``tables/`` subgraphs, profiles, long_tail,
tasks, with ``tasks/``, ``runner/`` and ``metrics/`` as a full shard's; no models or graph tables (full shard
``<id>`` holds them). Its subgraphs count as seen and its timed members against the quota
(:func:`seen_hashes`, :func:`profiled_structures`), the summary adds its profiles, tasks and CPU to the build
(not its models), and the release takes its tables and task folders beside the full shards'.

It is written in a staging folder beside it and renamed into place (:func:`write_shard`), so a
reader sees a whole shard or none. A shard folder without ``DONE`` is not a shard: the next run
redoes it. A shard whose stage failed leaves ``<out>/shards/<id>.failed.json`` (what broke) and no
folder; if its profile had finished attempts, also ``<out>/shards/<id>.attempts.parquet`` (:func:`pack_attempts`:
those attempts, so that the next run of the shard on any machine resumes them instead of timing them again;
each later stop merges its attempts into it). Both go when the shard's folder is written.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from passnet_common.io import atomic_write_json

MARKER = "DONE"
SHARDS, CENSUS, DRAIN = "shards", "census", "drain"  # the kinds of committed shard folder (module docstring)
PROFILED_KINDS = (SHARDS, DRAIN)  # the kinds whose subgraphs are seen and whose timed members fill the quota


def shard_of(model_id: str, num_shards: int) -> int:
    """The shard of ``model_id`` (module docstring).

    Raises:
        ValueError: ``num_shards`` < 1.
    """
    if num_shards < 1:
        raise ValueError(f"num_shards must be >= 1, got {num_shards}")
    return int(hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:16], 16) % num_shards


def shard_key(row: dict) -> str:
    """The id a catalog row is sharded by: its ``duplicate_of`` (the row whose capture it reuses:
    same config bytes, :func:`extract.sources.catalog.build_catalog`) when set, else its own
    ``model_id``. A duplicate thus always shares its original's shard; split by its own id, it
    landed where its original was not captured and was recorded ``missing``."""
    return row.get("duplicate_of") or row["model_id"]


def shard_name(shard: int) -> str:
    """``s0007``: the folder name of shard 7 (sorts in shard order)."""
    return f"s{shard:04d}"


GRAPHNET_PREFIX = "graphnet:"  # model ids of GraphNet samples (extract.sources.graphnet)


def shard_of_row(row: dict, num_shards: int, graphnet_shards: int) -> int:
    """The shard of a catalog row: ``shard_of(shard_key(row), num_shards)``, or for a GraphNet sample
    ``num_shards + shard_of(shard_key(row), graphnet_shards)`` (module docstring).

    Raises:
        ValueError: ``num_shards`` or ``graphnet_shards`` < 1.
    """
    key = shard_key(row)
    if key.startswith(GRAPHNET_PREFIX):
        return num_shards + shard_of(key, graphnet_shards)
    return shard_of(key, num_shards)


def shards_total(rows: Iterable[dict], num_shards: int, graphnet_shards: int) -> int:
    """Shards of a build whose catalog holds ``rows``: ``num_shards``, plus ``graphnet_shards`` when any
    row is a GraphNet sample."""
    return num_shards + (graphnet_shards if any(shard_key(r).startswith(GRAPHNET_PREFIX) for r in rows) else 0)


def build_shards(out: str | Path, num_shards: int, graphnet_shards: int) -> int:
    """Shards of the build in ``out`` (:func:`shards_total` of its committed ``catalog.parquet``;
    ``num_shards`` before the catalog exists), once its committed shards are checked to be cut the same
    way (:func:`check_cut`).

    Raises:
        ValueError: as :func:`check_cut`.
    """
    check_cut(out, num_shards, graphnet_shards)
    cat = Path(out) / "catalog.parquet"
    if not cat.is_file():
        return num_shards
    return shards_total(pq.read_table(cat, columns=["model_id", "duplicate_of"]).to_pylist(), num_shards, graphnet_shards)


def check_cut(out: str | Path, num_shards: int, graphnet_shards: int) -> None:
    """Refuse a build whose committed shards (full, census or drain) were cut with another ``num_shards`` or
    ``graphnet_shards`` than the config's: shard ids would name other models, so done shards would be
    counted for models they do not hold. ``graphnet_shards`` is compared for GraphNet shards only (ids from
    ``num_shards`` on: a model shard's models do not depend on it); a manifest without the field is not
    compared (GraphNet shards always record it).

    Raises:
        ValueError: a manifest's cut differs from the config's (naming the shard and both values).
    """
    for kind in (SHARDS, CENSUS, DRAIN):
        for d in done_shards(out, kind):
            m = read_manifest(d)
            for key, want in (("num_shards", num_shards), ("graphnet_shards", graphnet_shards)):
                if key == "graphnet_shards" and m["shard"] < num_shards:
                    continue
                if m.get(key) is not None and m[key] != want:
                    raise ValueError(f"{d}: cut with fullscale.{key}={m[key]}, the config says {want}; the cut is fixed "
                                     "for the life of a build (change it back, or start a new build in another out folder)")


def split_catalog(rows: Iterable[dict], num_shards: int, graphnet_shards: int) -> dict[int, list[dict]]:
    """Catalog rows by shard (:func:`shard_of_row`; every shard of :func:`shards_total` present, possibly
    empty; rows keep their order)."""
    rows = list(rows)
    out: dict[int, list[dict]] = {i: [] for i in range(shards_total(rows, num_shards, graphnet_shards))}
    for r in rows:
        out[shard_of_row(r, num_shards, graphnet_shards)].append(r)
    return out


def shards_root(out: str | Path, kind: str = SHARDS) -> Path:
    """``<out>/shards`` (full shards), ``<out>/census`` (census shards: ``kind`` :data:`CENSUS`) or
    ``<out>/drain`` (drain shards: :data:`DRAIN`).

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind not in (SHARDS, CENSUS, DRAIN):
        raise ValueError(f"shard kind must be {SHARDS!r}, {CENSUS!r} or {DRAIN!r}, got {kind!r}")
    return Path(out) / kind


def done_shards(out: str | Path, kind: str = SHARDS) -> list[Path]:
    """Committed shard folders of ``kind`` (those holding ``DONE``), in shard order."""
    root = shards_root(out, kind)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / MARKER).is_file())


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text())


def census_only(out: str | Path) -> list[Path]:
    """Census shard folders whose shard has no committed full shard (the full one holds all they hold)."""
    full = {read_manifest(d)["shard"] for d in done_shards(out)}
    return [d for d in done_shards(out, CENSUS) if read_manifest(d)["shard"] not in full]


def unique_graph_hashes(folder: Path) -> list[str]:
    """``graph_hash`` of a committed shard's ``unique_graphs`` table (empty without one)."""
    ug = folder / "tables" / "unique_graphs.parquet"
    return pq.read_table(ug, columns=["graph_hash"]).column("graph_hash").to_pylist() if ug.is_file() else []


def census_graphs(out: str | Path) -> set[str]:
    """``graph_hash`` of the unique graphs the committed census shards decomposed (a later census shard
    does not decompose them again; a full shard does: the census feeds no skip of the full build)."""
    return {h for d in done_shards(out, CENSUS) for h in unique_graph_hashes(d)}


def seen_hashes(out: str | Path, before: int | None = None) -> tuple[set[str], set[str]]:
    """``(graph_hashes, subgraph_hashes)`` of the committed full and drain shards (all, or those with id <
    ``before``): the unique graphs they decomposed and the subgraphs they decomposed (a later shard skips both); a
    subgraph a shard left out for the structure quota or the rate floor is not among them, so a later shard
    judges it again (under the quota and floor then in force)."""
    graphs: set[str] = set()
    subs: set[str] = set()
    for d in (d for kind in PROFILED_KINDS for d in done_shards(out, kind)):
        if before is not None and read_manifest(d)["shard"] >= before:
            continue
        graphs.update(unique_graph_hashes(d))
        sg = d / "tables" / "subgraphs.parquet"
        if sg.is_file():
            t = pq.read_table(sg, columns=["subgraph_hash", "skip_reason"]).to_pylist()
            subs.update(r["subgraph_hash"] for r in t if r["skip_reason"] not in (SEEN_REASON, *DEFERRED))
    return graphs, subs


SEEN_REASON = "seen_in_earlier_shard"
QUOTA_REASON = "structure_quota_reached"
FLOOR_REASON = "below_rate_floor"  # its kind's task rate was under fullscale.rate_floor when the shard ran
DEFERRED = (QUOTA_REASON, FLOOR_REASON)  # skip reasons that leave a subgraph unseen: a later shard judges it again
TIMED = ("ok", "accuracy_error", "unstable")  # profile row statuses that mean the variant was timed


def profiled_structures(out: str | Path) -> Counter:
    """Members profiled per structure (``structure_hash``) over the committed full and drain shards: distinct
    ``subgraph_hash`` that a shard left ``ok`` in its ``subgraphs`` table **and** timed (a ``profiles``
    row with a status of :data:`TIMED`), so a structure whose chosen member produced no timing (every
    variant skipped, crashed or degenerate) keeps its slot for a later member. Rows without a
    structure hash are not counted."""
    members: dict[str, set[str]] = {}
    for d in (d for kind in PROFILED_KINDS for d in done_shards(out, kind)):
        sg, pr = d / "tables" / "subgraphs.parquet", d / "tables" / "profiles.parquet"
        if not sg.is_file() or not pr.is_file():
            continue
        timed = {r["subgraph_hash"] for r in pq.read_table(pr, columns=["subgraph_hash", "status"]).to_pylist()
                 if r["status"] in TIMED}
        for r in pq.read_table(sg, columns=["subgraph_hash", "structure_hash", "status"]).to_pylist():
            if r["status"] == "ok" and r["structure_hash"] and r["subgraph_hash"] in timed:
                members.setdefault(r["structure_hash"], set()).add(r["subgraph_hash"])
    return Counter({k: len(v) for k, v in members.items()})


def waiting_structures(out: str | Path) -> dict[int, set[str]]:
    """Per committed full shard, the structures (``structure_hash``, else the subgraph's own hash) whose members
    it left out for the rate floor (``skip_reason`` :data:`FLOOR_REASON`) and of which no full or drain shard left
    a member ``ok`` (timed or not): what a drain shard of it would profile (the summary's
    ``structures_below_rate_floor`` is their union). Shards with none are left out."""
    rows = {kind: [(read_manifest(d)["shard"], _subgraph_rows(d)) for d in done_shards(out, kind)] for kind in PROFILED_KINDS}
    profiled = {r.get("structure_hash") or r["subgraph_hash"] for _, rs in (*rows[SHARDS], *rows[DRAIN]) for r in rs
                if r.get("status") == "ok"}
    waiting: dict[int, set[str]] = {}
    for shard, rs in rows[SHARDS]:
        keys = {r.get("structure_hash") or r["subgraph_hash"] for r in rs if r.get("skip_reason") == FLOOR_REASON} - profiled
        if keys:
            waiting[shard] = keys
    return waiting


def _subgraph_rows(folder: Path) -> list[dict]:
    sg = folder / "tables" / "subgraphs.parquet"
    if not sg.is_file():
        return []
    t = pq.read_table(sg)
    return t.select([c for c in ("subgraph_hash", "structure_hash", "status", "skip_reason") if c in t.column_names]).to_pylist()


def structure_picks(rows: list[dict], profiled: Counter, quota: int) -> list[bool]:
    """Which of a shard's decomposed ``rows`` (``subgraph_hash``, ``structure_hash``, ``status``) to skip
    for the structure quota: per structure (``structure_hash``: the canonical form with shapes reduced to
    ranks and literals dropped, dense and grouped convolutions apart, ``docs/canonical.md``), the ``ok``
    rows beyond the ``quota - profiled`` slots the committed shards left it, taken in the order of
    ``sha256(subgraph_hash)``: given the committed shards, every machine picks the same members, whatever
    the order of the rows (which shards were committed before, and so the order shards run in, does
    change the pick). Rows not ``ok`` or without a structure hash are never skipped. Returns one flag per
    row (True: skip).

    Raises:
        ValueError: ``quota`` < 1.
    """
    if quota < 1:
        raise ValueError(f"structure quota must be >= 1, got {quota}")
    by_structure: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r["status"] == "ok" and r["structure_hash"]:
            by_structure.setdefault(r["structure_hash"], []).append(i)
    skip = [False] * len(rows)
    for key, idx in by_structure.items():
        slots = max(0, quota - profiled.get(key, 0))
        for i in sorted(idx, key=lambda i: hashlib.sha256(rows[i]["subgraph_hash"].encode()).hexdigest())[slots:]:
            skip[i] = True
    return skip


def write_shard(out: str | Path, shard: int, files: dict[str, bytes], kind: str = SHARDS) -> Path:
    """Write a shard's files (relative path -> bytes; ``manifest.json`` among them) atomically:
    into ``<kind>/.<name>.tmp-<pid>``, ``DONE`` last, then renamed to ``<kind>/<name>`` (``kind``:
    :data:`SHARDS`, :data:`CENSUS` or :data:`DRAIN`). An existing folder of that shard (a re-run) is replaced;
    ``<name>.failed.json`` is removed.

    Raises:
        ValueError: ``files`` has no ``manifest.json`` or a path leaving the folder.
    """
    if "manifest.json" not in files:
        raise ValueError("a shard needs manifest.json")
    root = shards_root(out, kind)
    root.mkdir(parents=True, exist_ok=True)
    name = shard_name(shard)
    stage = root / f".{name}.tmp-{os.getpid()}"
    if stage.exists():
        shutil.rmtree(stage)
    for rel, data in sorted(files.items()):
        p = (stage / rel)
        if not p.resolve().is_relative_to(stage.resolve()) or rel == MARKER:
            raise ValueError(f"shard file {rel!r} leaves the shard folder or is the marker")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (stage / MARKER).write_text(json.loads(files["manifest.json"]).get("finished_utc", "") + "\n")
    final = root / name
    if final.exists():
        old = root / f".{name}.old-{os.getpid()}"
        os.rename(final, old)
        os.rename(stage, final)
        shutil.rmtree(old)
    else:
        os.rename(stage, final)
    (root / f"{name}.failed.json").unlink(missing_ok=True)
    resume_pack_path(out, shard, kind).unlink(missing_ok=True)
    return final


def write_failure(out: str | Path, shard: int, record: dict, kind: str = SHARDS, resume_pack: bytes | None = None) -> Path:
    """``<kind>/<name>.failed.json``: what broke in a shard that did not finish (it stays undone). With
    ``resume_pack`` (bytes from :func:`pack_attempts`: the finished profile attempts of the run that stopped)
    also ``<kind>/<name>.attempts.parquet``, written atomically and merged with the pack already there
    (:func:`merge_packs`: a run that could not read it -- a Ray worker without the committed folder, an
    unreadable file -- never loses what it holds). None leaves any pack as it is: only the shard's folder
    (:func:`write_shard`) removes it."""
    p = shards_root(out, kind) / f"{shard_name(shard)}.failed.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(p, record, indent=1)
    if resume_pack is not None:
        pack = resume_pack_path(out, shard, kind)
        try:
            data = merge_packs(pack, resume_pack)
        except ValueError as exc:  # never stops the build: the record is written, the committed pack kept
            print(f"{shard_name(shard)}: attempts pack not written: {exc}", flush=True)
            return p
        tmp = pack.with_name(f".{pack.name}.tmp-{os.getpid()}-{threading.get_ident()}")
        tmp.write_bytes(data)
        os.replace(tmp, pack)
    return p


def resume_pack_path(out: str | Path, shard: int, kind: str = SHARDS) -> Path:
    """Where a stopped shard's profile attempts are committed: ``<kind>/<name>.attempts.parquet``."""
    return shards_root(out, kind) / f"{shard_name(shard)}.attempts.parquet"


#: a file of a profile attempt, relative to ``profile/attempts`` (``curate.profile.variant`` / ``.run``:
#: ``<key[:2]>/<key>/`` ``check.json`` / ``result.json`` / ``error.json``, a replicate's in ``rep<r>/``, a
#: re-measurement pass's in ``pass<p>/``)
ATTEMPT_FILE = re.compile(r"(?P<pre>[0-9a-f]{2})/(?P=pre)[0-9a-f]{6,62}(/rep[0-9]{1,3})?(/pass[0-9]{1,3})?"
                          r"/(check|result|error)\.json")
PACK_FORMAT = b"passnet-profile-attempts/2"
"""A pack's ``format`` (:func:`pack_attempts`): ``/2`` has a ``host`` column (:func:`host_identity` of the machine
whose scratch folder held the row's file); a ``/1`` pack (``path`` and ``data`` alone) is read with no host."""
#: what :func:`passnet_common.machine.cpu_model` and a result without a model name say: no CPU model known
UNKNOWN_CPU = "unknown"
PACK_FORMATS_READ = (b"passnet-profile-attempts/1", PACK_FORMAT)
NO_HOST = "host not recorded"
"""Where a pack row or a scratch folder names no :func:`host_identity` (a ``/1`` pack, a scratch folder without
its ``attempts.host`` stamp): its timings are never taken for this machine's."""
#: the ``/proc/cpuinfo`` flags that change the kernels Inductor generates for a CPU (its vector ISA and matrix
#: units: ``torch._inductor.cpu_vec_isa``); x86 and Arm names
ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile", "amx_bf16", "amx_int8",
             "asimd", "sve", "sve2")
_NUM = (int, float)


def attempt_problem(name: str, data: bytes) -> str | None:
    """Why ``data`` is not an attempt file ``name`` (``check.json`` / ``result.json`` / ``error.json``) as the
    profile writes it (``curate.profile.variant.check_task`` / ``time_task``, ``curate.profile.run.record_killed``),
    or None: a JSON object; a check with ``status`` (text) and ``check_seconds`` (a number); an error with
    ``error_class``; a result with ``time_seconds`` (a number) and ``cpu_model`` (text) that, unless it records a
    failure (``status`` text), holds a timing: ``stable`` and ``capped`` true/false, ``speedup_*`` numbers or null,
    ``trial_history`` (when there) JSON text of a list of objects."""
    try:
        obj = json.loads(data or b"")
    except (ValueError, RecursionError):
        return "is not JSON"
    if not isinstance(obj, dict):
        return "is not a JSON object"
    if name == "check.json":
        ok = isinstance(obj.get("status"), str) and isinstance(obj.get("check_seconds"), _NUM)
        return None if ok else "is not a compile check (status text, check_seconds a number)"
    if name == "error.json":
        return None if "error_class" in obj else "has no error_class"
    if not (isinstance(obj.get("time_seconds"), _NUM) and isinstance(obj.get("cpu_model"), str)):
        return "is not a timing result (time_seconds a number, cpu_model text)"
    if obj.get("status"):
        return None if isinstance(obj["status"], str) else "has a status that is not text"
    if not (isinstance(obj.get("stable"), bool) and isinstance(obj.get("capped"), bool)):
        return "holds no timing (stable and capped true / false)"
    if any(k.startswith("speedup_") and v is not None and not isinstance(v, _NUM) and not
           (isinstance(v, list) and all(isinstance(x, _NUM) for x in v)) for k, v in obj.items()):
        return "has a speedup that is not a number"
    if "trial_history" in obj:
        try:
            th = json.loads(obj["trial_history"]) if isinstance(obj["trial_history"], str) else None
        except (ValueError, RecursionError):
            th = None
        if not (isinstance(th, list) and all(isinstance(t, dict) for t in th)):
            return "has a trial_history that is not JSON text of a list of objects"
    return None


def _unit(path: str) -> str:
    """The timing folder an attempt file belongs to: ``<pre>/<key>`` or ``<pre>/<key>/rep<r>`` (its passes
    and its check / result / error files together: the profile clears or rewrites them as one)."""
    parts = path.split("/")[:-1]
    return "/".join(parts[:-1] if parts[-1].startswith("pass") else parts)


@functools.lru_cache(maxsize=1)
def _proc_cpuinfo() -> str | None:
    """This machine's ``/proc/cpuinfo`` (read once per process: the chooser prices shards at every start), None
    where it cannot be read."""
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def host_identity(model: str, cpuinfo: str | None = None) -> str:
    """What tells two machines' timings apart: the CPU model name ``model`` (:func:`passnet_common.machine.cpu_model`)
    with the microarchitecture and the vector ISA of every kind of core ``cpuinfo`` lists (the text of
    ``/proc/cpuinfo``; read when None): ``"<model> | <vendor_id> family <F> model <M> | <flags>"`` on x86, with
    ``CPU implementer`` / ``CPU part`` on Arm, ``<flags>`` those of :data:`ISA_FLAGS` the core has; a CPU whose
    processors differ (big.LITTLE, or flags that differ by core) lists each distinct kind, sorted, joined by
    ``" + "``. A VM's model name says ``AMD EPYC`` on a Zen 2 (AVX2) and on a Zen 4 (AVX-512): Inductor
    generates other kernels for each, so their timings must not be pooled in one row, and their identities
    differ. :data:`UNKNOWN_CPU` where ``model`` is unknown or the CPU cannot be read (a machine that cannot name
    its CPU cannot tell its timings from another's)."""
    if model == UNKNOWN_CPU:
        return UNKNOWN_CPU
    cpuinfo = _proc_cpuinfo() if cpuinfo is None else cpuinfo
    if cpuinfo is None:
        return UNKNOWN_CPU
    kinds: set[str] = set()
    for block in re.split(r"\n\s*\n", cpuinfo):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            k, sep, v = line.partition(":")
            if sep:
                fields.setdefault(k.strip(), v.strip())
        fields = {"vendor_id": "?", "model": "?", "CPU implementer": "?", **fields}  # what a block leaves unnamed
        if "cpu family" in fields:
            arch = f"{fields['vendor_id']} family {fields['cpu family']} model {fields['model']}"
        elif "CPU part" in fields:
            arch = f"implementer {fields['CPU implementer']} part {fields['CPU part']}"
        else:
            continue  # a block that names no core (Arm's trailing "Hardware" lines)
        flags = set((fields.get("flags") or fields.get("Features") or "").split())
        kinds.add(f"{arch} | {' '.join(f for f in ISA_FLAGS if f in flags) or 'no vector flags'}")
    return f"{model} | {' + '.join(sorted(kinds))}" if kinds else UNKNOWN_CPU


def pack_attempts(att: Path, params_sha256: str, host: str) -> bytes | None:
    """The finished attempts under ``att`` (a shard's ``profile/attempts``) as one Parquet file (zstd): a row
    per attempt file, ``path`` (relative, :data:`ATTEMPT_FILE`), ``data`` (its JSON bytes) and ``host`` (the
    :func:`host_identity` of the machine that timed it: ``host``, the packing machine's, whose scratch folder
    holds only its own timings, :func:`drop_foreign_timings`), sorted by path; the schema metadata holds
    ``params_sha256`` (the merged params they were made with) and ``format``. None when there is no attempt
    file. A file :func:`attempt_problem` refuses (torn by a crash) is left out."""
    files = sorted((p.relative_to(att).as_posix(), p) for p in att.rglob("*.json")
                   if p.is_file() and ATTEMPT_FILE.fullmatch(p.relative_to(att).as_posix())) if att.is_dir() else []
    data = {r: p.read_bytes() for r, p in files}
    data = {r: d for r, d in data.items() if attempt_problem(r.rsplit("/", 1)[1], d) is None}  # a torn file stays out
    return _pack_bytes(data, params_sha256, dict.fromkeys(data, host)) if data else None


def _pack_bytes(files: dict[str, bytes], params_sha256: str, hosts: dict[str, str | None]) -> bytes:
    paths = sorted(files)
    tbl = pa.table({"path": pa.array(paths, pa.string()), "data": pa.array([files[r] for r in paths], pa.binary()),
                    "host": pa.array([hosts.get(r) for r in paths], pa.string())})
    tbl = tbl.replace_schema_metadata({b"format": PACK_FORMAT, b"params_sha256": params_sha256.encode()})
    buf = io.BytesIO()
    pq.write_table(tbl, buf, compression="zstd")
    return buf.getvalue()


def read_pack(pack: Path | bytes) -> tuple[str, dict[str, bytes], dict[str, str | None]]:
    """``(params_sha256, {path: data}, {path: host})`` of a pack (:func:`pack_attempts`; a file or its bytes);
    the host None for every row of a ``/1`` pack (:data:`PACK_FORMATS_READ`) and where a row names none.

    Raises:
        ValueError: not a readable Parquet file, not a pack (format, columns ``path`` string and ``data``
            binary, ``host`` string in a ``/2`` pack), a path outside :data:`ATTEMPT_FILE` or given twice, or
            data that is not an attempt file of that name (:func:`attempt_problem`); the message names the file
            and row.
    """
    name = pack.name if isinstance(pack, Path) else "the pack"
    try:
        tbl = pq.read_table(pack if isinstance(pack, Path) else pa.BufferReader(pack))
    except Exception as exc:  # noqa: BLE001 - whatever pyarrow raises on a broken file, named in the refusal
        raise ValueError(f"{name} is not a readable Parquet file: {type(exc).__name__}: {exc}") from None
    meta = tbl.schema.metadata or {}
    fmt = meta.get(b"format")
    columns = {"path", "data"} | ({"host"} if fmt == PACK_FORMAT else set())
    if fmt not in PACK_FORMATS_READ or set(tbl.column_names) != columns:
        raise ValueError(f"{name} is not a profile attempts pack (format {fmt!r}, columns {sorted(tbl.column_names)})")
    if tbl.schema.field("path").type != pa.string() or tbl.schema.field("data").type != pa.binary():
        raise ValueError(f"{name}: columns path (string) and data (binary) expected, not "
                         f"{tbl.schema.field('path').type} / {tbl.schema.field('data').type}")
    if "host" in columns and tbl.schema.field("host").type != pa.string():
        raise ValueError(f"{name}: column host (string) expected, not {tbl.schema.field('host').type}")
    files: dict[str, bytes] = {}
    hosts: dict[str, str | None] = {}
    for r in tbl.to_pylist():
        path, data = r["path"], r["data"]
        if path is None or not ATTEMPT_FILE.fullmatch(path):
            raise ValueError(f"{name}: row path {path!r} is not an attempt file")
        if path in files:
            raise ValueError(f"{name}: {path} is given twice")
        why = attempt_problem(path.rsplit("/", 1)[1], data)
        if why:
            raise ValueError(f"{name}: {path} {why}")
        files[path] = data
        hosts[path] = r.get("host")
    return meta.get(b"params_sha256", b"").decode(), files, hosts


def merge_packs(old: Path, new: bytes) -> bytes:
    """``new`` with the timing folders (:func:`_unit`) of the pack at ``old`` that it has no file of, when
    ``old`` is a readable pack made with the same params; else ``new`` alone (a pack of other params, or not a
    pack, is replaced). A folder ``new`` holds is taken whole from ``new``: passes the profile cleared to time a
    variant afresh, or an error file it removed before a retry, do not come back. Each row keeps its host.

    Raises:
        ValueError: ``new`` is not a pack (:func:`read_pack`).
    """
    digest, files, hosts = read_pack(new)
    try:
        old_digest, old_files, old_hosts = read_pack(old) if old.is_file() else (None, {}, {})
    except ValueError:
        return new
    units = {_unit(r) for r in files}
    extra = {r: d for r, d in old_files.items() if _unit(r) not in units}
    if old_digest != digest or not extra:
        return new
    return _pack_bytes({**extra, **files}, digest, {**{r: old_hosts[r] for r in extra}, **hosts})


def foreign_units(models: dict[str, str | None], cpu: str, hosts: dict[str, str | None] | None = None,
                  host: str | None = None) -> dict[str, str]:
    """The timing folders (:func:`_unit`) not known to be timed on this machine, from ``models`` (path of a
    ``result.json``, a re-measurement pass's included -> the ``cpu_model`` it names; of an ``error.json``, which
    names none -> ``cpu``, so its host alone decides): folder -> the first of
    its models that is not ``cpu``, or any where ``cpu`` is :data:`UNKNOWN_CPU` (a machine that cannot name
    its CPU cannot tell its timings from another's). With ``hosts`` (path -> the :func:`host_identity` that
    timed it, None where none is recorded) also every folder of a file whose host is not ``host`` (or any,
    where ``host`` is :data:`UNKNOWN_CPU`): folder -> that host (:data:`NO_HOST` where None). One CPU model
    name can cover two CPUs; the host tells them apart."""
    other: dict[str, str] = {}
    for rel, model in sorted(models.items()):
        model = str(model or UNKNOWN_CPU)
        if model != cpu or cpu == UNKNOWN_CPU:
            other.setdefault(_unit(rel), model)
        elif hosts is not None and (hosts.get(rel) != host or host == UNKNOWN_CPU):
            other.setdefault(_unit(rel), hosts.get(rel) or NO_HOST)
    return other


def drop_foreign_timings(att: Path, cpu: str, host: str, scratch_host: str | None) -> dict[str, int]:
    """Remove from a scratch folder ``att`` the timings of timing folders (:func:`_unit`) not timed on this
    machine (``result.json`` / ``error.json`` of the folder and its ``pass<p>/`` folders; the compile check
    stays), so the profile times those variants again here instead of pooling them with this machine's
    replicates and passes: folders whose result files name another CPU model than ``cpu``, and every folder
    when ``scratch_host`` (the :func:`host_identity` the folder's stamp names, None without one) is not this
    machine's ``host`` -- a scratch folder on storage that machines share (one Ray ``work`` path), a disk moved
    to another host of the same model name, files an earlier unpack wrote, or a folder written before stamps were. A
    result that is not readable JSON, and every result where ``cpu`` is :data:`UNKNOWN_CPU`, stays; so does every
    timing of a folder stamped :data:`UNKNOWN_CPU` on a machine whose ``host`` is :data:`UNKNOWN_CPU` (as a machine
    that cannot name its model, it keeps its own scratch folder and takes no timing from a pack). A folder
    holding only an ``error.json`` (a timing child killed before it wrote a result) is judged by the host alone.

    Returns:
        ``{cpu_model, or the folder's host where the model is this machine's: files removed}``.
    """
    if cpu == UNKNOWN_CPU:
        return {}
    models = {}
    for p in sorted(att.rglob("*.json")) if att.is_dir() else []:
        rel = p.relative_to(att).as_posix()
        if not ATTEMPT_FILE.fullmatch(rel) or p.name == "check.json":
            continue
        if p.name == "error.json":
            models[rel] = cpu  # a killed timing names no model: the host decides
            continue
        try:
            models[rel] = json.loads(p.read_bytes()).get("cpu_model")
        except (ValueError, AttributeError, OSError, RecursionError):
            continue
    hosts = None if scratch_host == host else dict.fromkeys(models, scratch_host)
    removed = Counter()
    for unit, model in foreign_units(models, cpu, hosts, host).items():
        d = att / unit
        for f in [d / "result.json", d / "error.json", *d.glob("pass*/result.json"), *d.glob("pass*/error.json")]:
            if f.is_file() and not f.is_symlink():
                f.unlink()
                removed[model] += 1
    return dict(sorted(removed.items()))


def unpack_attempts(pack: Path, att: Path, params_sha256: str, cpu: str, host: str) -> dict:
    """Write the attempts of ``pack`` (:func:`pack_attempts`) under ``att`` where no file of that path exists
    (the attempts on this machine win). Timings are taken up only where they were made on this machine: its
    CPU model ``cpu`` (:func:`passnet_common.machine.cpu_model`) and its ``host`` (:func:`host_identity`, which
    tells two CPUs of one model name apart); of a timing folder (:func:`foreign_units`) timed on another CPU or
    host, or whose host the pack does not record (a ``/1`` pack), or on any where ``cpu`` or ``host`` is
    :data:`UNKNOWN_CPU`, only the compile check (``check.json``) is written, so the profile times that variant
    again here and, with :func:`drop_foreign_timings` on the files already there (run first), a row's
    replicates, passes and label never mix two CPUs. Nothing is written when the pack is refused
    (:func:`read_pack`'s checks) or was made with other params; no file is written through a symbolic link
    under ``att``.

    Returns:
        ``{"files": written, "kept_local": rows whose file existed, "machines": {cpu_model: result files
        written}, "timings_left_out": {cpu_model (the host where the model is this machine's): files of timing
        folders timed elsewhere, not written}}`` (``unknown`` where a result names no model), or
        ``{"files": n, "refused": reason}`` (a refused pack, other params, a link, a write that failed: named
        in the reason; n files were written before it). The shard then profiles the variants it lacks again.
        Never raises.
    """
    try:
        digest, files, hosts = read_pack(pack)
    except ValueError as exc:
        return {"files": 0, "refused": str(exc)}
    if digest != params_sha256:
        return {"files": 0, "refused": f"{pack.name} was made with other params ({digest[:12]})"}
    models = {r: cpu for r in files if r.endswith("/error.json")}  # a killed timing names no model: the host decides
    models.update({r: json.loads(d).get("cpu_model") for r, d in files.items() if r.endswith("/result.json")})
    other = foreign_units(models, cpu, hosts, host)
    root = att.resolve()
    written, kept, machines, left_out = 0, 0, Counter(), Counter()
    try:
        for rel, data in sorted(files.items()):
            if _unit(rel) in other and not rel.endswith("/check.json"):
                left_out[other[_unit(rel)]] += 1
                continue
            dst = att / rel
            parts = Path(rel).parts
            if any((att / Path(*parts[:i])).is_symlink() for i in range(1, len(parts) + 1)):
                return {"files": written, "refused": f"{pack.name}: {rel} would be written through a symbolic link"}
            if dst.exists():
                kept += 1
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if not dst.parent.resolve().is_relative_to(root):
                return {"files": written, "refused": f"{pack.name}: {rel} leads outside {att}"}
            tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, dst)
            written += 1
            if dst.name == "result.json":
                machines[str(json.loads(data).get("cpu_model") or UNKNOWN_CPU)] += 1
    except OSError as exc:
        return {"files": written, "refused": f"{pack.name}: writing under {att}: {type(exc).__name__}: {exc}"}
    return {"files": written, "kept_local": kept, "machines": dict(sorted(machines.items())),
            "timings_left_out": dict(sorted(left_out.items()))}


def attempt_machines(att: Path) -> dict[str, int]:
    """``cpu_model`` -> how many timed attempt files (``result.json``, passes included) under ``att`` name it
    (``unknown`` where one names none, ``unreadable`` where it is not JSON): the files on disk, a stopped
    run's and the ones it resumed, whether or not a variant of this run's keys uses them."""
    c = Counter()
    for p in sorted(att.rglob("result.json")) if att.is_dir() else []:
        try:
            c[str(json.loads(p.read_bytes()).get("cpu_model") or "unknown")] += 1
        except (ValueError, AttributeError, OSError, RecursionError):  # not JSON, not an object, not a file
            c["unreadable"] += 1
    return dict(sorted(c.items()))


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` as relative path -> bytes (what a Ray task hands back)."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
