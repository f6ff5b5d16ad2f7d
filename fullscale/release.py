"""The release: the committed shards assembled into one dataset folder, with a held-out split kept apart.

    python -m fullscale release            # <out>/release/ from <out>/shards/*/ (no capture, no profile)

Layout of ``<out>/release/`` (committed; published as a Hub dataset by :mod:`fullscale.hub`)::

    README.md                    dataset card: YAML configs (one per table), counts, licences, the splits
    tables/<name>.parquet        models, extractions, graphs, unique_graphs, subgraphs, profiles, long_tail,
                                 tasks (release tasks) -- concatenated over shards (the profile-side tables
                                 and the tasks also over the drain shards), deduplicated by hash
                                 (``unique_graphs``' members over every shard: :func:`release_unique_graphs`); the
                                 graph tables (:data:`GRAPH_TABLES`) also over the census shards of shard ids
                                 with no full shard, so every captured graph is released --
                                 and licences (every catalog model, ``in_release`` when the graphs table holds its graphs)
    tables/nodes/s<id>.parquet   the nodes table (every node of every unique graph, the largest table) in one
                                 file per shard: a graph's nodes in the file of the lowest shard id that holds
                                 it (:func:`node_partitions`), so a rebuild rewrites only the files of shards
                                 that changed and the repository's history grows by what is new
    tasks/<task_id>/             task folders (task.json, run_task.py, timing_protocol.py, subgraphs/<variant>/):
                                 the public variants
    passbench/<task_id>/         PassBench sample layout (python -m curate.passbench export)
    kernelbench/<task_id>/*.py   KernelBench problems (python -m curate.passbench.kernelbench)
    permissive_models.txt        catalog model ids whose code and config licences are both permissive
    secret_split.json            what is held out (counts per task) and a sha256 commitment to it; no key
    summary.json                 metrics/full/summary.json at release time
    manifest.json                sha256 and size of every file above; written last

**Tasks across shards.** Each shard's curate stage makes its own tasks (one per long-tail subgraph,
holding its shape x dtype variants). The release renames them by content: a task's key is its set of
subgraph hashes and its id ``t<sha256(key)[:10]>``, so ids do not move when shards are added. Tasks of
one key from several shards (possible only when shards ran at once) are pooled, deduplicated by
``variant_id``, reduced to one variant per computation (:func:`computation_key`: the dtype variants of an
all-integer subgraph are one) and cut at ``release_task_size`` variants. Every field of the source
``task.json`` (rule, timing protocol, environment) is kept.

**Held-out split** (kernelbot-style re-validation). With a key (``$PASSNET_SECRET_KEY``, or a
random one created in ``secret_dir/key`` on first use), each task with >= 2 variants moves
``max(1, round(secret_share x n))`` of them -- those first in the order of
HMAC-SHA256(key, variant_id) -- to ``<secret_dir>/tasks/<task_id>/`` (a complete task folder), and
every task gets held-out input seeds (HMAC-derived) in ``<secret_dir>/secret.json``. ``secret_dir``
lies outside the repository (default ``../passnet-secret``): it is never committed nor published.
A user sees ``secret_split.json``: per task how many variants are held out, the key's fingerprint
and a sha256 commitment over the held-out variants' graph hashes and the seeds, so a later
re-validation can show that the held-out set was fixed when the release was made. The scorer
re-validates a candidate on it with ``python -m curate score --tasks <secret_dir>/tasks``.

**The split survives rebuilds** (:func:`previous_split`, :func:`split_task`). ``secret_split.json``
records ``variant_split``: every variant id any release of this build made public, and every one it held
out (cumulative, so a task or shard missing from one build and back in the next keeps its side). A
rebuild reads it from the release being replaced, from ``<out>/release`` and from ``secret_dir``
(``split.json`` and the held-out folders), whatever the key: a variant public before stays public, a
variant held out before stays held out (also when its task has another id now, and in every task group
that holds it); a variant new to the release is drawn by the key among the new ones of its task, only as
many as the task needs to reach ``max(1, round(secret_share x n))`` held out. A task whose variants are
all held out is not released. So a host without the key that made the release (a new machine, a lost
``secret_dir``) cannot publish a held-out variant by drawing again; the new key redraws the unpublished
seeds and the new variants' sides only. A release written before ``variant_split`` existed is read by
its tasks table: every variant of a task whose id stem it released that it did not publish is held out.
Held-out folders the secret tasks of a build do not cover move to ``<secret_dir>/kept/`` (not scored,
not in the commitment) until a build holds them again.

Known limits: the ids the split holds out can be read off the public tables (``long_tail``,
``profiles``), and the shards the release is built from are committed, so the held-out *content* is in
the repository; what stays secret is the held-out seeds and which variants a candidate is re-validated
on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from fullscale.config import FullScaleConfig
from fullscale.licences import model_licences
from fullscale.pipeline import ROOT, child_env
from fullscale.shards import (
    DRAIN,
    FLOOR_REASON,
    QUOTA_REASON,
    SEEN_REASON,
    SHARDS,
    build_shards,
    census_only,
    done_shards,
    read_manifest,
    shard_name,
)
from fullscale.summary import write_summary
from passnet_common.io import atomic_write_json

TABLE_NAMES = ("models", "extractions", "graphs", "unique_graphs", "nodes", "subgraphs", "profiles", "long_tail")
GRAPH_TABLES = ("models", "extractions", "graphs", "unique_graphs", "nodes")  # census shards hold these too
DEDUPE_KEY = {"unique_graphs": "graph_hash", "subgraphs": "subgraph_hash"}
# The release's size budget (the "<= ~100 MB" in the repository), counted over distinct file contents
# (``manifest.json``'s ``unique_bytes``): git, and a Hub dataset, store a file's bytes once however many paths
# hold them, and every task folder holds the same ``run_task.py`` / ``timing_protocol.py``
RELEASE_MAX_BYTES = 100 * 1024 * 1024


def secret_key(cfg: FullScaleConfig) -> bytes:
    """The held-out split's key: ``$<secret_key_env>``, else ``<secret_dir>/key`` (created, random,
    mode 0600, on first use)."""
    env = os.environ.get(cfg.secret_key_env)
    if env:
        return env.encode()
    p = Path(cfg.secret_dir) / "key"
    if not p.is_file():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(secrets.token_hex(32))
        p.chmod(0o600)
    return p.read_text().strip().encode()


def _held_in(folder: Path) -> set[str]:
    """Variant ids of the task folders under ``folder`` (``*/task.json``); unreadable ones are skipped."""
    return set().union(*(_held_in_one(d) for d in sorted(folder.iterdir()) if d.is_dir())) if folder.is_dir() else set()


def _held_in_one(task_folder: Path) -> set[str]:
    """Variant ids of one task folder's ``task.json`` (empty when unreadable)."""
    try:
        return {sg["variant_id"] for sg in json.loads((task_folder / "task.json").read_text()).get("subgraphs", [])}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def previous_split(*releases: str | Path, secret_dir: str | Path | None = None) -> dict | None:
    """What earlier releases of this build decided, read from each folder of ``releases`` that holds a
    ``secret_split.json`` or a ``tables/tasks.parquet``: ``{"public": {variant_id}, "held": {variant_id},
    "stems": {task stem}, "key_fingerprint"}`` (``variant_split`` of ``secret_split.json``; for a release
    written before it, ``public`` from ``tables/tasks.parquet`` and ``stems`` its task ids without the
    ``-<k>`` of a cut group), or None when none of them holds either. With ``secret_dir``, its own
    record (``split.json``, written by every build) and the variants of its held-out folders
    (``tasks/``, ``kept/``) count as held out too, so a release built into another path is not forgotten.

    Raises:
        ValueError: a ``tables/tasks.parquet`` without ``task_id`` / ``variant_ids`` in a release without
            ``variant_split`` (the split it made cannot be read, so it cannot be kept).
    """
    found, public, held, stems, fp = False, set(), set(), set(), None
    for release in dict.fromkeys(Path(r) for r in releases):
        sp = release / "secret_split.json"
        meta = json.loads(sp.read_text()) if sp.is_file() else {}
        vs = meta.get("variant_split")
        if vs is not None:
            found = True
            public |= set(vs.get("public") or [])
            held |= set(vs.get("held_out") or [])
        else:
            tp = release / "tables" / "tasks.parquet"
            if not tp.is_file():
                continue
            found = True
            t = pq.read_table(tp)
            if t.num_rows and not {"task_id", "variant_ids"} <= set(t.column_names):
                raise ValueError(f"{tp}: no task_id / variant_ids columns, so the earlier held-out split cannot be kept")
            rows = t.to_pylist() if t.num_rows else []
            public |= {v for r in rows for v in (r["variant_ids"] or [])}
            stems |= {r["task_id"].split("-")[0] for r in rows}
        fp = fp or meta.get("key_fingerprint")
    if secret_dir is not None:
        sd = Path(secret_dir)
        rec = json.loads((sd / "split.json").read_text()).get("variant_split", {}) if (sd / "split.json").is_file() else {}
        in_folders = _held_in(sd / "tasks") | _held_in(sd / "kept")
        if rec or in_folders:
            found = True
            public |= set(rec.get("public") or [])
            held |= set(rec.get("held_out") or []) | in_folders
    if not found:
        return None
    return {"public": public, "held": held - public, "stems": stems, "key_fingerprint": fp}


def split_task(task: dict, key: bytes, share: float, prev: dict | None) -> tuple[set, int]:
    """The held-out ``variant_id`` set of one release task (module docstring) and how many of its
    variants an earlier release put on a side (``prev``, :func:`previous_split`).

    ``k = max(1, round(share x n))`` of the task's ``n >= 2`` variants are to be held out (0 for one
    variant). A variant ``prev`` published stays public, one it held out stays held out (as does, for a
    release written before ``variant_split``, every variant of a task whose stem it released and did not
    publish); the rest are drawn in HMAC-SHA256(key, variant_id) order, as many as ``k`` still needs."""
    ids = [v[2]["variant_id"] for v in task["variants"]]
    k = max(1, round(share * len(ids))) if len(ids) >= 2 else 0
    pub = prev["public"] if prev is not None else set()
    held = {i for i in ids if prev is not None and i in prev["held"]}
    if prev is not None and task["task_id"].split("-")[0] in prev["stems"]:
        held |= {i for i in ids if i not in pub}
    known = held | {i for i in ids if i in pub}
    fresh = sorted((i for i in ids if i not in known), key=lambda i: _mac(key, i))
    return held | set(fresh[:max(0, k - len(held))]), len(known)


def split_tasks(tasks: list[dict], key: bytes, share: float, prev: dict | None) -> list[tuple[set, int]]:
    """:func:`split_task` of every task, then a variant held out in one task is held out in every task
    that holds it (a variant id in two task groups is never public in one and secret in the other).
    Returns ``[(held ids, variants an earlier release placed)]`` in ``tasks``' order."""
    got = [split_task(t, key, share, prev) for t in tasks]
    held_any = set().union(*(h for h, _ in got)) if got else set()
    return [({v[2]["variant_id"] for v in t["variants"]} & held_any, n) for t, (_, n) in zip(tasks, got)]


def _mac(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


# How the nodes files are written (about 1.5x smaller than zstd's defaults on this table, whose int lists
# -- node indexes, input indexes, shapes -- rise in small steps and whose literal texts repeat): ints as
# deltas, the few distinct strings by dictionary, the literal texts plain, zstd level 9.
NODES_ENCODING = {"node_index": "DELTA_BINARY_PACKED", "input_nodes": "DELTA_BINARY_PACKED",
                  "in_shapes": "DELTA_BINARY_PACKED", "out_shapes": "DELTA_BINARY_PACKED", "literal_args": "PLAIN"}
NODES_DICTIONARY = ("graph_hash", "op", "target", "placeholder_kind", "in_dtypes", "out_dtypes")


def release_size(listed: dict[str, dict]) -> dict:
    """The size of a release whose files are ``listed`` (``{path: {"sha256", "bytes"}}``): ``total_bytes`` (every
    file), ``unique_bytes`` (each distinct content once, what the repository stores) and ``over_size_budget``
    (True, only when ``unique_bytes`` exceeds :data:`RELEASE_MAX_BYTES`)."""
    unique = sum({m["sha256"]: m["bytes"] for m in listed.values()}.values())
    return {"total_bytes": sum(m["bytes"] for m in listed.values()), "unique_bytes": unique,
            **({"over_size_budget": True} if unique > RELEASE_MAX_BYTES else {})}


def _leaf(t: pa.Table, name: str) -> str:
    """The Parquet leaf path of top-level column ``name`` (``in_shapes.list.element.list.element``)."""
    path, typ = name, t.schema.field(name).type
    while pa.types.is_list(typ):
        path, typ = path + ".list.element", typ.value_type
    return path


def write_nodes_file(t: pa.Table, path: Path) -> None:
    """Write a release nodes file with :data:`NODES_ENCODING` / :data:`NODES_DICTIONARY` (columns the table
    lacks are left to the defaults)."""
    cols = set(t.column_names)
    pq.write_table(t, path, compression="zstd", compression_level=9,
                   use_dictionary=[_leaf(t, c) for c in NODES_DICTIONARY if c in cols],
                   column_encoding={_leaf(t, c): e for c, e in NODES_ENCODING.items() if c in cols})


def node_partitions(folders: list[Path]) -> dict[str, pa.Table]:
    """The release's ``nodes`` table cut into files: ``{shard name: rows}``, each graph's nodes taken from the
    lowest shard id whose folder (full shard, else census shard of that id) holds them, in that folder's
    row order. Which file holds a graph depends only on which shards hold it, not on the shards done
    since, so the files of unchanged shards are byte-identical across rebuilds (git stores them once)."""
    by_id: dict[int, Path] = {}
    for d in folders:  # a full shard before the census shard of its id
        sid = read_manifest(d)["shard"]
        if sid not in by_id or d.parent.name == SHARDS:
            by_id[sid] = d
    taken: set[str] = set()
    out: dict[str, pa.Table] = {}
    for sid in sorted(by_id):
        f = by_id[sid] / "tables" / "nodes.parquet"
        if not f.is_file():
            continue
        t = pq.read_table(f)
        hashes = t.column("graph_hash").to_pylist()
        keep = [h not in taken for h in hashes]
        taken.update(hashes)
        if any(keep):
            out[shard_name(sid)] = t if all(keep) else t.filter(pa.array(keep, type=pa.bool_()))
    return out


def concat_tables(shards: list[Path], name: str):
    """Table ``name`` over ``shards`` (schemas unified), deduplicated by :data:`DEDUPE_KEY` where it
    applies: a subgraph's first profiled row wins, else its first row left out by the structure quota or
    the rate floor, else its first seen row; its ``model_ids`` (and ``num_models``) become the union over every shard's
    rows of that hash. None when no shard has it."""
    parts = [pq.read_table(d / "tables" / f"{name}.parquet") for d in shards if (d / "tables" / f"{name}.parquet").is_file()]
    if not parts:
        return None
    if name == "nodes":  # a graph's nodes from the first shard that holds them (concurrent shards may repeat a graph)
        taken: set[str] = set()
        kept = []
        for t in parts:
            hashes = set(t.column("graph_hash").to_pylist())
            fresh = hashes - taken
            kept.append(t if fresh == hashes else t.filter(pa.array([h in fresh for h in t.column("graph_hash").to_pylist()])))
            taken |= hashes
        parts = kept
    t = pa.concat_tables(parts, promote_options="permissive")
    key = DEDUPE_KEY.get(name)
    if key and len(t):
        rows = t.to_pylist()
        # a profiled row first, then one left out by the quota or the rate floor, then a seen one
        rank = {SEEN_REASON: 2, QUOTA_REASON: 1, FLOOR_REASON: 1}
        order = sorted(range(len(rows)), key=lambda i: (rank.get(rows[i].get("skip_reason"), 0), i))
        keep, seen = [], set()
        for i in order:
            if rows[i][key] not in seen:
                seen.add(rows[i][key])
                keep.append(i)
        keep.sort()
        if "model_ids" in t.column_names:  # every shard's models of one hash (a seen row lists the later shard's)
            models: dict[str, set] = {}
            for r in rows:
                models.setdefault(r[key], set()).update(r.get("model_ids") or [])
            kept = [rows[i] for i in keep]
            for r in kept:
                r["model_ids"] = sorted(models[r[key]])
                if "num_models" in r:
                    r["num_models"] = len(r["model_ids"])
            return pa.Table.from_pylist(kept, schema=t.schema)
        t = t.take(pa.array(keep, type=pa.int64()))
    return t


def release_unique_graphs(ug: pa.Table, graphs: pa.Table | None, nodes_file: dict[str, str]) -> pa.Table:
    """The release's ``unique_graphs`` rows (one per ``graph_hash``, from :func:`concat_tables`) with
    ``members``, ``num_instances`` and ``num_models`` over the whole release, and ``store_path`` the release
    file that holds the graph's nodes.

    A shard's dedupe writes a row only for a graph no earlier shard holds, with that shard's members: a graph
    captured again in a later shard (another model with the same graph) kept only the first shard's models.
    Here they come from the release's ``graphs`` table, as ``dedupe.group.unique_graphs`` builds them: members
    ``(model_id, graph_index)`` sorted, ``num_instances`` their count, ``num_models`` the distinct models
    (a graph without a row there keeps its shard's values). ``store_path`` named a graph-store folder on
    the build's machine; the release has no graph store, so it names ``tables/nodes/<shard>.parquet``
    (``nodes_file``; ``""`` for a graph without nodes)."""
    members: dict[str, list] = {}
    if graphs is not None:
        for r in graphs.select(["graph_hash", "model_id", "graph_index"]).to_pylist():
            members.setdefault(r["graph_hash"], []).append((r["model_id"], r["graph_index"]))
    rows = ug.to_pylist()
    for r in rows:
        got = sorted(set(members.get(r["graph_hash"], [])))  # a (model, graph index) once, should a row repeat
        if got:
            r["members"] = [{"model_id": m, "graph_index": i} for m, i in got]
            r["num_instances"] = len(got)
            r["num_models"] = len({m for m, _ in got})
        r["store_path"] = nodes_file.get(r["graph_hash"], "")
    return pa.Table.from_pylist(rows, schema=ug.schema)


# torch dtype names of the tensors a variant dtype casts (``Tensor.is_floating_point``: complex is not floating, so a
# complex tensor keeps its dtype in every variant)
_FLOATING = ("float", "bfloat", "half", "double")


def computation_key(sg: dict) -> tuple:
    """What a task variant (a ``task.json`` subgraph entry) computes: ``(subgraph_hash, size, dtype)``, the dtype
    None when every input and weight of the variant is known to be integer, bool or complex. The variant dtype only
    casts floating inputs and weights (``curate.profile.variant``: ``is_floating_point``, False for complex), so the
    float32 and bfloat16 variants of such a subgraph are one computation, measured twice. Anything unknown keeps the dtype: an entry without
    both metadata lists, a metadata entry that is not a dict or has no dtype name."""
    metas = (sg.get("input_meta"), sg.get("weight_meta"))
    if any(not isinstance(m, list) for m in metas):
        return (sg["subgraph_hash"], sg.get("size"), sg.get("dtype"))
    names = [d.removeprefix("torch.") if isinstance(d := m.get("dtype") if isinstance(m, dict) else None, str) else ""
             for ms in metas for m in ms]
    floating = any(not d or d.startswith(_FLOATING) for d in names)
    return (sg["subgraph_hash"], sg.get("size"), sg.get("dtype") if floating else None)


def _one_per_computation(vs: list[tuple], public_before: set, held_before: set) -> tuple[list[tuple], int]:
    """``vs`` (variants ``(shard folder, task folder, entry)``) with one variant per :func:`computation_key`:
    one an earlier release published if there is one (its twin held out would be a copy of a public variant,
    no secret: it is dropped, and its folder moves to the secret folder's ``kept/``), else one an earlier
    release held out (it stays secret, its twin is not published), else the float32 one, else the lowest
    ``variant_id``. Returns the kept variants (in ``vs``' order) and how many were dropped."""
    best: dict[tuple, tuple] = {}
    for v in vs:
        k, vid = computation_key(v[2]), v[2]["variant_id"]
        rank = (vid not in public_before, vid not in held_before, v[2].get("dtype") != "float32", vid)
        if k not in best or rank < best[k][0]:
            best[k] = (rank, v)
    keep = {id(v) for _, v in best.values()}
    return [v for v in vs if id(v) in keep], len(vs) - len(keep)


def regroup_tasks(shards: list[Path], task_size: int, max_tasks: int | None,
                  prev: dict | None = None) -> list[dict]:
    """Release tasks (module docstring): ``[{task_id, key, base (the first source task.json),
    variants: [(shard folder, task folder, subgraph entry)], runner, twins_dropped}]`` in task-id order.

    A task's key is the sorted set of its subgraph hashes (the curate stage makes one task per
    subgraph): tasks of one key from several shards (shards run at once) are pooled, deduplicated
    by ``variant_id``, then to one variant per computation (:func:`_one_per_computation`: the dtype
    variants of an all-integer subgraph are one; ``prev``: the earlier split, :func:`previous_split`, whose
    public then held-out variants are kept in preference), ordered slowest first (``baseline_speedup_e2e``)
    and cut at ``task_size``."""
    groups: dict[str, dict] = {}
    for d in shards:
        for tj in sorted((d / "tasks").glob("*/task.json")):
            task = json.loads(tj.read_text())
            key = ",".join(sorted({sg["subgraph_hash"] for sg in task["subgraphs"]}))
            g = groups.setdefault(key, {"key": key, "base": task, "variants": {}, "runner": d / "runner"})
            for sg in task["subgraphs"]:
                g["variants"].setdefault(sg["variant_id"], (d, tj.parent, sg))
    out = []
    public_before, held_before = (set(prev["public"]), set(prev["held"])) if prev else (set(), set())
    for key in sorted(groups):
        g = groups[key]
        vs = sorted(g["variants"].values(), key=lambda v: (v[2].get("baseline_speedup_e2e") or 1.0, v[2]["variant_id"]))
        vs, dropped = _one_per_computation(vs, public_before, held_before)
        stem = "t" + hashlib.sha256(key.encode()).hexdigest()[:10]
        for k in range(0, len(vs), task_size):
            out.append({"task_id": stem if len(vs) <= task_size else f"{stem}-{k // task_size}", "key": key,
                        "pattern": g["base"].get("pattern"), "base": g["base"], "variants": vs[k:k + task_size],
                        "runner": g["runner"], "twins_dropped": dropped if k == 0 else 0})
    out.sort(key=lambda t: t["task_id"])
    return out[:max_tasks] if max_tasks else out


def _write_task(dst: Path, task: dict, variants: list, extra: dict) -> dict:
    (dst / "subgraphs").mkdir(parents=True)
    subs, mods = [], set()
    for _, tfolder, sg in variants:
        shutil.copytree(tfolder / "subgraphs" / sg["folder"], dst / "subgraphs" / sg["folder"])
        subs.append(sg)
        mods.update(sg.get("op_modules") or [])
    for f in ("run_task.py", "timing_protocol.py"):
        src = task["runner"] / f
        if src.is_file():
            shutil.copy2(src, dst / f)
    # every field of the source task.json is kept (rule, timing protocol, environment...): run_task.py reads them
    body = {**task["base"], "task_id": task["task_id"], "op_modules": sorted(mods), "subgraphs": subs, **extra}
    (dst / "task.json").write_text(json.dumps(body, indent=1))
    return body


def _variant_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _run(argv: list[str], cwd: Path = ROOT) -> str:
    r = subprocess.run([sys.executable, *argv], cwd=cwd, env=child_env(), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {(r.stderr or r.stdout)[-2000:]}")
    return r.stdout.strip()


def table_path(name: str) -> str:
    """A release table's path (glob) relative to the release folder: ``tables/nodes/*.parquet`` for the
    nodes table (one file per shard, :func:`node_partitions`), ``tables/<name>.parquet`` otherwise."""
    return "tables/nodes/*.parquet" if name == "nodes" else f"tables/{name}.parquet"


def _card(summary: dict, tables: dict[str, int], lic: list[dict], n_tasks: int, n_public: int, n_held: int,
          exports: dict) -> str:
    header = {"license": "other", "pretty_name": "PassNet full-scale long-tail benchmark",
              "tags": ["pytorch", "torch.fx", "compilers", "inductor", "benchmark"],
              "configs": [{"config_name": n, "data_files": [{"split": "train", "path": table_path(n)}]}
                          for n in sorted(tables)]}
    perm = [r for r in lic if r["permissive"]]
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
             "# PassNet full-scale long-tail benchmark", "",
             "FX graphs captured from model architectures (built from configurations; no weights), deduplicated",
             "canonically, decomposed into subgraphs and profiled eager vs Dynamo-only vs TorchInductor on CPU. Tasks",
             "hold the subgraph variants that Inductor's generated code makes slower with confidence. Models of",
             "census shards (captured, deduplicated and decomposed, not yet profiled) are in the graph tables",
             "(`models`, `extractions`, `graphs`, `unique_graphs`, `nodes`) and in no profile or task.", "",
             "## Figures (from `summary.json`)", "", "| figure | value |", "|---|---|"]
    for k in ("complete", "shards_done", "shards_total", "models", "captured", "models_profiled", "unique_graphs",
              "families", "structures", "structures_timed", "variants_screened", "variants_confirmed",
              "slowdown_share_e2e", "slowdown_share_compiler"):
        lines.append(f"| `{k}` | {summary.get(k)} |")
    lines += [f"| tasks (release) | {n_tasks} ({n_public} public variants, {n_held} held out) |", "",
              "## Layout", "",
              "- `tables/*.parquet`: " + ", ".join(f"`{n}` ({c} rows)" for n, c in sorted(tables.items())) +
              " (`nodes`: `tables/nodes/*.parquet`, one file per shard)",
              "- `tasks/<task_id>/`: task folders (`python -B run_task.py` inside one reproduces its verdict; `-B` "
              "writes no `__pycache__/` into the release, which `python -m fullscale fetch` would report as an extra file)",
              f"- `passbench/`: PassBench sample layout ({exports.get('passbench')})",
              f"- `kernelbench/`: KernelBench problems, `Model` / `get_inputs` / `get_init_inputs` ({exports.get('kernelbench')})",
              "- `secret_split.json`: the held-out split's counts, commitment and variant ids (the ids can also be read "
              "off `long_tail` and `profiles`, and a held-out variant is often a public variant's graph and shapes at the "
              "other dtype); the held-out folders and input seeds are not here",
              "", "## Licences", "",
              "Each source model's graph comes from its library's code and a configuration; no weights. "
              "`tables/licences.parquet` has one row per model: `code_licence` (the library's package metadata), "
              "`config_licence` (timm: the default pretrained config's `license`; transformers/torchvision: the "
              "library's own default config) and `permissive`. `unknown` means not stated offline, never assumed.",
              "", f"Every source model of the build's catalog is listed ({len(lic)}; `in release`: its graphs are in the "
              f"`graphs` table, from a full or a census shard: {sum(1 for r in lic if r.get('in_release'))}; a model whose "
              f"capture failed is in the `models` table with its error only; "
              f"the models a task was profiled from are the `tasks` table's `model_ids`). Permissive subset: "
              f"{len(perm)} of {len(lic)} models (`permissive_models.txt`).", "",
              "| model | code licence | config licence | permissive | in release |", "|---|---|---|---|---|"]
    lines += [f"| `{r['model_id']}` | {r['code_licence']} | {r['config_licence']} | {'yes' if r['permissive'] else 'no'} | "
              f"{'yes' if r.get('in_release') else 'no'} |" for r in lic]
    return "\n".join(lines) + "\n"


def build_release(out: str | Path, cfg: FullScaleConfig, summary: dict | Callable[[int], dict],
                  release: str | Path | None = None) -> dict:
    """Assemble ``<out>/release`` (module docstring) from the committed shards; returns its manifest.
    ``summary``: the build's summary (its ``tasks`` replaced by the release's), or a function of the release's
    task count that returns it (:func:`release_with_summary`: the figures that follow from the count, such as
    ``tasks_shortfall_reason``, then count the release's tasks, which pooling and held-out tasks make fewer
    than the shards' sum).

    With no committed shard the release holds the licences of every catalog model, the summary and an
    empty held-out split (an incomplete build's release says so in its card and ``summary.json``).

    Raises:
        RuntimeError: an export command failed.
    """
    out = Path(out)
    release = Path(release) if release else out / "release"
    shards = done_shards(out)
    drains = done_shards(out, DRAIN)  # profile side only: subgraphs, profiles, long_tail, tasks (fullscale.shards)
    census = census_only(out)
    prev = previous_split(release, out / "release", secret_dir=cfg.secret_dir)  # before any staging
    stage = release.with_name(f".{release.name}.tmp-{os.getpid()}")
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "tables").mkdir(parents=True)
    tables: dict[str, int] = {}
    parts = node_partitions(shards + census)
    graphs = None
    for name in TABLE_NAMES:
        if name == "nodes":
            for part, t in parts.items():
                (stage / "tables" / "nodes").mkdir(exist_ok=True)
                write_nodes_file(t, stage / "tables" / "nodes" / f"{part}.parquet")
            if parts:
                tables[name] = sum(len(t) for t in parts.values())
            continue
        t = concat_tables(shards + census if name in GRAPH_TABLES else shards + drains, name)
        if name == "graphs":
            graphs = t
        if name == "unique_graphs" and t is not None:
            t = release_unique_graphs(t, graphs, {h: f"tables/nodes/{part}.parquet" for part, nt in parts.items()
                                                  for h in set(nt.column("graph_hash").to_pylist())})
        if t is not None:
            pq.write_table(t, stage / "tables" / f"{name}.parquet", compression="zstd")
            tables[name] = len(t)
    # in the release: the model's graphs are (a model whose capture failed has its row in `models` only)
    released = set(graphs.column("model_id").to_pylist()) if graphs is not None else set()
    catalog = out / "catalog.parquet"
    sources = (pq.read_table(catalog).select(["model_id", "source", "name"]).to_pylist() if catalog.is_file()
               else pq.read_table(stage / "tables" / "models.parquet").to_pylist() if "models" in tables else [])
    lic = [{**r, "in_release": r["model_id"] in released} for r in model_licences(sources)]
    pq.write_table(pa.Table.from_pylist(lic) if lic else pa.table({"model_id": pa.array([], pa.string())}),
                   stage / "tables" / "licences.parquet", compression="zstd")
    tables["licences"] = len(lic)
    (stage / "permissive_models.txt").write_text("".join(f"{r['model_id']}\n" for r in lic if r["permissive"]))

    key = secret_key(cfg)
    secret_root = Path(cfg.secret_dir)
    secret_stage = secret_root / f".tasks.tmp-{os.getpid()}"
    if secret_stage.exists():
        shutil.rmtree(secret_stage)
    secret_stage.mkdir(parents=True)
    tasks = regroup_tasks(shards + drains, cfg.release_task_size, cfg.release_max_tasks, prev)
    task_rows, held_per_task, seeds, commit_items, n_known, held_now = [], {}, {}, [], 0, set()
    all_public, all_held = set(prev["public"]) if prev else set(), set(prev["held"]) if prev else set()
    for task, (held, decided) in zip(tasks, split_tasks(tasks, key, cfg.secret_share, prev)):
        vs = task["variants"]
        n_known += decided
        public = [v for v in vs if v[2]["variant_id"] not in held]
        hidden = [v for v in vs if v[2]["variant_id"] in held]
        all_public |= {v[2]["variant_id"] for v in public}
        all_held |= held
        held_now |= held
        seeds[task["task_id"]] = [int(_mac(key, f"seed:{task['task_id']}:{i}")[:8], 16) for i in range(3)]
        if public:  # a task whose every variant stays held out is not released (its held-out folder is kept)
            _write_task(stage / "tasks" / task["task_id"], task, public,
                        {"split": {"public": len(public), "held_out": len(hidden)}})
        if hidden:
            _write_task(secret_stage / task["task_id"], task, hidden, {"split": "held_out"})
            for _, tf, sg in hidden:
                commit_items.append(f"{task['task_id']}:{sg['variant_id']}:{_variant_digest(tf / 'subgraphs' / sg['folder'])}")
        commit_items.append(f"{task['task_id']}:seeds:{seeds[task['task_id']]}")
        held_per_task[task["task_id"]] = len(hidden)
        if not public:
            continue
        task_rows.append({"task_id": task["task_id"], "pattern": task["pattern"], "num_variants": len(public),
                          "held_out_variants": len(hidden), "variant_ids": [sg["variant_id"] for _, _, sg in public],
                          "subgraph_hashes": sorted({sg["subgraph_hash"] for _, _, sg in public}),
                          "model_ids": sorted({m for _, _, sg in public for m in (sg.get("model_ids") or [])}),
                          "folder": f"tasks/{task['task_id']}"})
    empty = pa.table({"task_id": pa.array([], pa.string())})
    pq.write_table(pa.Table.from_pylist(task_rows) if task_rows else empty, stage / "tables" / "tasks.parquet", compression="zstd")
    tables["tasks"] = len(task_rows)
    n_held = sum(held_per_task.values())
    commitment = hashlib.sha256("\n".join(sorted(commit_items)).encode()).hexdigest()
    split_record = {"public": sorted(all_public), "held_out": sorted(all_held - all_public)}
    atomic_write_json(stage / "secret_split.json", {
        "held_out_variants": n_held, "held_out_per_task": held_per_task, "seeds_per_task": 3,
        "commitment_sha256": commitment, "key_fingerprint": hashlib.sha256(key).hexdigest()[:16],
        "kept_from_previous": n_known,
        "previous_key_fingerprint": prev["key_fingerprint"] if prev else None,
        "variant_split": split_record,
        "how": "a variant keeps the side any earlier release of this build put it on (variant_split, cumulative); "
               "new variants are drawn per task by HMAC-SHA256(key, variant_id) up to the task's held-out share; "
               "seeds HMAC-derived; kept outside the repository (fullscale.secret_dir) and never published; the "
               "commitment is sha256 over the sorted 'task:variant:content-sha256' and 'task:seeds:[...]' lines"},
        indent=1)
    exports = {}
    if task_rows:
        # run from the staged release folder with relative paths: their reports name files as a user of the
        # release sees them (``tasks/...``), not the staging folder's temporary name
        exports["passbench"] = _run(["-m", "curate.passbench", "export", "--tasks", "tasks", "--out", "passbench"], cwd=stage)
        exports["kernelbench"] = _run(["-m", "curate.passbench.kernelbench", "--tasks", "tasks", "--out", "kernelbench"],
                                      cwd=stage)
    summary = {**(summary(len(task_rows)) if callable(summary) else summary), "tasks": len(task_rows)}
    atomic_write_json(stage / "summary.json", summary, indent=1)
    (stage / "README.md").write_text(_card(summary, tables, lic, len(task_rows), sum(r["num_variants"] for r in task_rows),
                                           n_held, exports))
    files = {p.relative_to(stage).as_posix(): p for p in sorted(stage.rglob("*")) if p.is_file()}
    listed = {k: {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size} for k, p in files.items()}
    manifest = {"files": listed, **release_size(listed),
                "tasks": len(task_rows), "held_out_variants": n_held, "tables": tables,
                "dtype_twins_dropped": sum(t["twins_dropped"] for t in tasks),
                "shards": [read_manifest(d)["shard"] for d in shards],
                "drain_shards": [read_manifest(d)["shard"] for d in drains],
                "census_shards": [read_manifest(d)["shard"] for d in census], "exports": exports,
                "codes": sorted({json.dumps(read_manifest(d)["code"], sort_keys=True) for d in shards + drains})}
    atomic_write_json(stage / "manifest.json", manifest, indent=1)
    # held-out folders the new secret tasks do not cover (a shard or task missing from this build) move to
    # <secret_dir>/kept/, outside the scored folder and the commitment, until a build holds them again
    kept_stage = secret_root / f".kept.tmp-{os.getpid()}"
    if kept_stage.exists():
        shutil.rmtree(kept_stage)
    kept_stage.mkdir(parents=True)
    seen_sets: set[frozenset] = set()
    for src in (secret_root / "kept", secret_root / "tasks"):
        for d in sorted(src.iterdir()) if src.is_dir() else []:
            vids = frozenset(_held_in_one(d))
            if vids and vids - held_now and vids not in seen_sets:
                seen_sets.add(vids)
                name = d.name
                while (kept_stage / name).exists():
                    name += "+"
                shutil.copytree(d, kept_stage / name)
    # public folder, then the secret one: each replaced whole
    for final, staged in ((release, stage), (secret_root / "tasks", secret_stage), (secret_root / "kept", kept_stage)):
        if final.exists():
            shutil.rmtree(final)
        os.rename(staged, final)
    atomic_write_json(secret_root / "secret.json", {"seeds": seeds, "commitment_sha256": commitment,
                                                    "held_out_per_task": held_per_task}, indent=1)
    atomic_write_json(secret_root / "split.json", {"variant_split": split_record}, indent=1)
    return manifest


def release_with_summary(out: str | Path, cfg: FullScaleConfig, metrics_path: str | Path, command: str) -> dict:
    """``python -m fullscale release``: the summary of the committed shards (``metrics_path``), then the
    release (:func:`build_release`) with the summary made again from the release's task count, written to
    ``metrics_path`` and as the release's ``summary.json`` (the two the same). Returns the release manifest."""
    out = Path(out)
    total = build_shards(out, cfg.num_shards, cfg.graphnet_shards)
    write_summary(out, total, metrics_path, command=command, rate_floor=cfg.rate_floor)  # the shards' figures, should the release fail
    return build_release(out, cfg, lambda n: write_summary(out, total, metrics_path, release_tasks=n, command=command,
                                                           rate_floor=cfg.rate_floor))


HUB_BOOKKEEPING = ".cache/huggingface/"  # what huggingface_hub's download into a local folder leaves there


def hub_bookkeeping(rel: str) -> bool:
    """Whether release-relative path ``rel`` is a file huggingface_hub's download into a local folder writes
    (``.cache/huggingface/.gitignore``, ``.cache/huggingface/download/<path>.metadata`` / ``.lock``), which a
    release verified after such a download may hold; any other file under ``.cache/`` is unlisted."""
    if rel == HUB_BOOKKEEPING + ".gitignore":
        return True
    return rel.startswith(HUB_BOOKKEEPING + "download/") and rel.endswith((".metadata", ".lock"))


def _sha256_hex(v) -> bool:
    return isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v)


def _release_manifest(mpath: Path) -> tuple[dict, int, int, dict | None]:
    """``(files, tasks, total_bytes, tables)`` of a release manifest (``tables``: its row counts, None where it
    gives none), its shape checked: a regular file; ``files`` maps
    relative paths inside the release (no absolute path, no ``..``) to ``{"sha256": <64 hex>, "bytes": <size>}``;
    ``total_bytes`` (and ``unique_bytes``, where given) what those entries sum to (:func:`release_size`).

    Raises:
        FileNotFoundError: no ``manifest.json``.
        ValueError: anything else wrong with it (the message names the file).
    """
    if not mpath.exists() and not mpath.is_symlink():
        raise FileNotFoundError(f"{mpath}: no manifest.json (not a finished release)")
    if mpath.is_symlink() or not stat.S_ISREG(mpath.stat().st_mode):
        raise ValueError(f"{mpath}: not a regular file (a link, folder or pipe is no release manifest)")
    try:
        man = json.loads(mpath.read_text())
        files, tasks, total = man["files"], man["tasks"], man["total_bytes"]
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{mpath}: not a release manifest ({type(exc).__name__}: {exc})") from exc

    def count(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(files, dict) or not count(tasks) or not count(total):
        raise ValueError(f"{mpath}: not a release manifest ('files' must map paths to entries; 'tasks', "
                         "'total_bytes' integers >= 0)")
    for rel, m in files.items():
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or not parts:
            raise ValueError(f"{mpath}: lists {rel!r}, a path outside the release")
        if not isinstance(m, dict) or not _sha256_hex(m.get("sha256")):
            raise ValueError(f"{mpath}: the entry of {rel!r} has no sha256 (64 lowercase hex digits)")
        if not count(m.get("bytes")):
            raise ValueError(f"{mpath}: the entry of {rel!r} has no size ('bytes', an integer >= 0)")
    size = release_size(files)
    if total != size["total_bytes"]:
        raise ValueError(f"{mpath}: 'total_bytes' {total} is not the sum of its files' sizes ({size['total_bytes']})")
    if "unique_bytes" in man and man["unique_bytes"] != size["unique_bytes"]:
        raise ValueError(f"{mpath}: 'unique_bytes' {man['unique_bytes']!r} is not its distinct files' size "
                         f"({size['unique_bytes']})")
    return files, tasks, total, man.get("tables") if isinstance(man.get("tables"), dict) else None


def verify_release(release: str | Path) -> dict:
    """Check a release folder against its ``manifest.json``: every listed file present with its sha256, and
    nothing the manifest does not list (a task folder added by hand would otherwise be scored).

    Returns ``{"files", "differ", "missing", "extra", "links", "bad", "tasks", "task_folders", "total_bytes"}``:
    ``differ`` listed files whose size or bytes differ, ``missing`` listed files absent, ``extra`` files present
    and not listed (``manifest.json`` itself and huggingface_hub's bookkeeping files aside: :func:`hub_bookkeeping`),
    pipes, sockets and devices (never read), and folders that hold no file (``<folder>/``), ``links`` symbolic
    links anywhere in the folder (a release holds none: a linked file or folder can hold anything, and the
    scorer follows it), ``rows`` tables whose row count is not the manifest's ``tables`` figure (:func:`table_rows_differ`;
    checked once every listed file matched), ``bad`` all of them together plus ``tasks/`` when the task folders
    on disk are not the manifest's count (empty: the release verifies), ``tasks`` the manifest's task count and
    ``task_folders`` the ``tasks/*/task.json`` on disk.

    Raises:
        FileNotFoundError: no ``manifest.json`` (not a finished release).
        ValueError: ``release`` is a symbolic link, or ``manifest.json`` is not a release manifest (not a
            regular file; a path outside the release; an entry without a sha256 or size; ``total_bytes`` or
            ``unique_bytes`` not what its entries sum to: :func:`_release_manifest`; the message names it).
    """
    release = Path(release)
    if release.is_symlink():  # the folder itself: it could point anywhere, as a link inside it could
        raise ValueError(f"{release}: a symbolic link, not a release folder (a release holds no link)")
    listed, tasks, total, table_rows = _release_manifest(release / "manifest.json")
    disk: dict[str, int] = {}  # regular file -> its size
    links, special, dirs_on_disk = [], [], []
    for root, dirs, files in os.walk(release, followlinks=False):
        for name in dirs + files:
            p = Path(root) / name
            rel = p.relative_to(release).as_posix()
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                links.append(rel)
            elif stat.S_ISDIR(st.st_mode):
                dirs_on_disk.append(rel)
            elif stat.S_ISREG(st.st_mode):
                disk[rel] = st.st_size
            else:  # a pipe, socket or device: never read (a pipe would block the check)
                special.append(rel)
    differ, missing = [], []
    for rel, m in listed.items():
        p = release / rel
        if rel not in disk:
            missing.append(rel)
        elif disk[rel] != m["bytes"] or hashlib.sha256(p.read_bytes()).hexdigest() != m["sha256"]:
            differ.append(rel)
    extra = [rel for rel in disk if rel not in listed and rel != "manifest.json" and not hub_bookkeeping(rel)]
    # a folder with nothing in it but folders (an empty task folder, a .git/): not the release's
    holding = {a.as_posix() for rel in [*disk, *special, *links] for a in Path(rel).parents}
    extra = sorted(extra + special + [f"{d}/" for d in dirs_on_disk if d not in holding])
    n_folders = sum(1 for _ in (release / "tasks").glob("*/task.json"))
    rows = [] if differ or missing or table_rows is None else table_rows_differ(release, table_rows)
    bad = differ + missing + extra + sorted(links) + ([] if n_folders == tasks else ["tasks/"]) + rows
    return {"files": len(listed), "differ": differ, "missing": missing, "extra": extra, "links": sorted(links),
            "rows": rows, "bad": bad, "tasks": tasks, "task_folders": n_folders, "total_bytes": total}


def table_rows_differ(release: Path, tables: dict) -> list[str]:
    """The tables whose row count (Parquet footers; the nodes table summed over its files) is not the one
    ``tables`` (the manifest's, what the card and the summary report) gives, as ``<table path> (<rows> rows,
    manifest <n>)``. Read after the files matched their sha256: a footer that does not parse is a wrong count,
    named the same way."""
    out = []
    for name, n in sorted(tables.items()):
        files = sorted(release.glob(table_path(name)))
        try:
            got = sum(pq.read_metadata(f).num_rows for f in files) if files else None
        except (OSError, pa.ArrowInvalid) as exc:
            got = f"unreadable: {type(exc).__name__}"
        if got != n:
            out.append(f"{table_path(name)} ({got} rows, manifest {n})")
    return out


def describe_check(v: dict) -> str:
    """One line of :func:`verify_release`'s verdict: ``all match manifest.json``, else the counts of
    differing, missing and extra files with a few names of each."""
    if not v["bad"]:
        return "all match manifest.json"
    parts = [f"{len(v[k])} {k}: {v[k][:3]}" for k in ("differ", "missing", "extra", "links", "rows") if v.get(k)]
    if v["task_folders"] != v["tasks"]:
        parts.append(f"{v['task_folders']} task folders on disk for {v['tasks']} tasks")
    return "; ".join(parts) + " (against manifest.json)"
