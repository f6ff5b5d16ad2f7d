"""Which pending shard to run next: the profile each one still owes, priced from the census.

A full shard's cost is nearly all its profile (``docs/full_scale.md``), and the profile times what the shard
leaves profilable: the subgraphs of its unique graphs that no committed full shard decomposed, at most
``fullscale.structure_quota`` members per structure over the build (:func:`fullscale.shards.structure_picks`).
The census shards (``<out>/census/``) hold every graph and subgraph of the catalog, so that count is known
for every pending shard before it runs (:func:`estimate`), and with the profile CPU seconds per profiled
subgraph of the committed full shards (:func:`profile_cpu_per_subgraph`: of those run on this machine's CPU
model once there are enough of them) it prices the shard in CPU seconds, less what a stopped run of the shard
on this host left to resume (:func:`resume_credits`).
A shard without a census shard, or with a graph the census could not load, is not priced
(:attr:`Estimate.priced`).

``fullscale.order: cost`` (:func:`pick` with :func:`cost_key`) runs next the cheapest priced shard that has
something to profile, among those whose estimate fits the time left before ``--deadline`` (:func:`fits`); then
priced shards with nothing to profile; then those with graphs the census could not load, by their lower-bound
estimate (a shard with no census shard only without a deadline). Cheap shards first finish the
most shards in a window. ``fullscale.order: yield`` (:func:`yield_key`) runs next, among the same fitting
shards, the one with the most long-tail tasks expected per CPU second: each subgraph it would profile counts
the task rate of its kind (:func:`task_rates`: tasks per profiled structure of the committed full and drain shards, by
size in FX ops smoothed toward the build's overall rate, and by anchor op within a size smoothed toward the
size's rate), so the shards whose subgraphs are of the kinds that have given tasks (one or two ops; a
``conv2d`` or ``softmax`` anchor) run before the rest; every shard still runs in the end. Structures are
shared between shards, so a large shard's estimate shrinks as the shards committed before it time its
structures (the estimate is recomputed from the committed shards at each pick). ``fullscale.order: id``
runs them in id order.

``fullscale.rate_floor`` works inside a shard: a subgraph whose kind's rate is below it is not profiled
(:func:`rate_floor_picks`; the shard records it skipped / ``below_rate_floor`` and a later shard judges it
again), so a shard pays its census phases and the profile of its high-rate structures only, and the estimate
counts those alone. The shards then give more tasks per CPU second, and the structures below the floor wait
(the build is not complete while any does).

The estimate is linear in subgraphs (a subgraph's variants, candidates and replicates vary: it orders
shards, it is not a promise). Its wall seconds are its CPU seconds over :data:`CORES_BUSY`, the fewest cores a
shard was measured to keep busy; a shard that outruns its estimate is stopped at the deadline as any other.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

import pyarrow.parquet as pq

from fullscale.shards import (
    CENSUS,
    DRAIN,
    done_shards,
    host_identity,
    profiled_structures,
    read_manifest,
    resume_pack_path,
    seen_hashes,
    shard_name,
    shards_root,
    structure_picks,
)
from passnet_common.machine import cpu_model

TASK_RATE_PRIOR = 20.0  # pseudo-structures at the build's overall task rate added to each size class's counts
KIND_RATE_PRIOR = 10.0  # pseudo-structures at the size class's rate added to each (anchor, size) kind's counts
OPS_BUCKET_CAP = 6  # structures of this many FX ops or more share one size class of task rate
SAME_CPU_MIN_SHARDS = 2  # shards profiled on this machine's CPU model before their rate replaces the build's
CORES_BUSY = 0.85  # cores a shard keeps busy, the fewest measured: s0000 / s0001 on one-core shares (--workers 2, 2 cores, nice 19)
PRE_PROFILE = ("capture", "dedupe", "decompose")  # the census phases a full run repeats before its profile
BACKTEST_FRACTIONS = (0.05, 0.1, 0.25, 0.5, 1.0)  # top shares of the ranked structures rates_backtest reports
RATES_MODEL = "anchor_ops"  # what an estimate's tasks come from (TaskRates); an estimate without it: anchor alone
BACKTEST_MIN_STRUCTURES = 30  # the fewest backtest structures a projection is scaled by (a smaller share is widened)
RESUME_MIN_SHARE = 0.2  # the least share of its profile price a stopped shard with attempts to resume keeps


@dataclass
class CensusIndex:
    """What the committed census shards say about every shard id: ``graphs[id]`` (graph hashes of the
    shard's captured models), ``pre_cpu_s[id]`` (CPU seconds of its census capture, dedupe and decompose),
    ``subgraphs[graph_hash]`` (rows ``subgraph_hash``, ``structure_hash``, ``status``, ``anchor``, ``num_ops``
    of each subgraph the census decomposed from that graph; anchor / num_ops None where the
    table has no such column), and
    ``unpriced`` (graphs a census shard decomposed without a subgraph row where that shard's decompose skipped
    a graph it could not load: the loader then refused it, the current one may not, so what the graph gives
    is unknown). A graph no census shard decomposed is one a
    committed full shard decomposed (the census skips those, :mod:`fullscale.pipeline`): seen, so no pending
    shard profiles it."""

    graphs: dict[int, set[str]] = field(default_factory=dict)
    pre_cpu_s: dict[int, float] = field(default_factory=dict)
    subgraphs: dict[str, list[dict]] = field(default_factory=dict)
    unpriced: set[str] = field(default_factory=set)


def census_index(out: str | Path) -> CensusIndex:
    """Read :class:`CensusIndex` from ``<out>/census/*`` (a subgraph under several graphs is listed under each;
    a census shard's graph skips are read from its ``metrics/decompose.json``, ``graph_skips``)."""
    idx = CensusIndex()
    for d in done_shards(out, CENSUS):
        man = read_manifest(d)
        sid = int(man["shard"])
        gp, sg, ug = (d / "tables" / f"{t}.parquet" for t in ("graphs", "subgraphs", "unique_graphs"))
        idx.graphs[sid] = (set(pq.read_table(gp, columns=["graph_hash"]).column("graph_hash").to_pylist())
                           if gp.is_file() else set())
        idx.pre_cpu_s[sid] = sum(float(p.get("cpu_s") or 0.0) for p in man.get("phases", [])
                                 if p.get("phase") in PRE_PROFILE)
        decomposed: set[str] = set()
        if sg.is_file():
            cols = ["subgraph_hash", "structure_hash", "status", "members", "anchor", "num_ops"]
            cols = [c for c in cols if c in pq.read_schema(sg).names]
            for r in pq.read_table(sg, columns=cols).to_pylist():
                row = {"subgraph_hash": r["subgraph_hash"], "structure_hash": r["structure_hash"], "status": r["status"],
                       "anchor": r.get("anchor"), "num_ops": r.get("num_ops")}
                for g in sorted({m["graph_hash"] for m in r.get("members") or []}):
                    idx.subgraphs.setdefault(g, []).append(row)
                    decomposed.add(g)
        dm = d / "metrics" / "decompose.json"
        skips = json.loads(dm.read_text()).get("graph_skips") or {} if dm.is_file() else {}
        if any(k.startswith("unloadable") and v for k, v in skips.items()) and ug.is_file():
            idx.unpriced |= set(pq.read_table(ug, columns=["graph_hash"]).column("graph_hash").to_pylist()) - decomposed
    return idx


def resumed(man: dict) -> bool:
    """The shard's profile went on from attempts an earlier run left (its manifest's CPU is the last run's)."""
    return any((man.get("resumed_attempts") or {}).values())


def resume_credits(out: str | Path, cpu: str | None, host: str | None = None) -> dict[int, float]:
    """Profile CPU seconds a stopped shard need not spend again, by shard id: the profile phase of its failure
    record (``<out>/shards/<name>.failed.json``: the last run's ``phases_done``) where that run was on CPU model
    ``cpu`` -- and, with ``host`` (the :func:`fullscale.shards.host_identity` of the machine that will run it),
    on that host (the record's ``machine.cpu_identity``; a record without one names no host) -- and its finished
    attempts are committed beside the record (:func:`fullscale.shards.resume_pack_path`), so the next run there
    resumes them (:func:`fullscale.shards.unpack_attempts`: another host's timings are made again). Without
    ``host`` (a price for a CPU model, whichever machine computes it) the model alone decides. Only the last run's CPU is
    on record (earlier runs' resumed work is not), and attempts made under other resume keys are timed again
    (:func:`estimate` keeps at least :data:`RESUME_MIN_SHARE` of the price): an estimate, as the price is."""
    credits: dict[int, float] = {}
    for rec in sorted(shards_root(out).glob("*.failed.json")):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        shard = r.get("shard") if isinstance(r, dict) else None
        mk = r.get("machine") or {}
        if not isinstance(shard, int) or cpu is None or mk.get("cpu_model") != cpu or (host is not None and mk.get("cpu_identity") != host):
            continue
        if not resume_pack_path(out, shard).is_file():
            continue
        spent = sum(float(p.get("cpu_s") or 0.0) for p in r.get("phases_done") or [] if p.get("phase") == "profile")
        if spent > 0:
            credits[shard] = spent
    return credits


def profile_cpu_per_subgraph(out: str | Path, cpu: str | None = None) -> float | None:
    """Profile CPU seconds per profiled subgraph over the committed full shards that ran a whole profile in
    one run (their manifests' ``profile`` phase and ``counts.subgraphs_profilable_new``; a shard that resumed
    earlier attempts is left out: its CPU is the last run's alone): over those run on a CPU of model ``cpu``
    (``machine.cpu_model``) when at least :data:`SAME_CPU_MIN_SHARDS` were, else over all; None before any."""
    rows = []
    for d in done_shards(out):
        man = read_manifest(d)
        prof = [p for p in man.get("phases", []) if p.get("phase") == "profile" and p.get("rc") == 0]
        k = (man.get("counts") or {}).get("subgraphs_profilable_new") or 0
        if prof and k and not resumed(man):
            rows.append(((man.get("machine") or {}).get("cpu_model"), sum(float(p.get("cpu_s") or 0.0) for p in prof), k))
    same = [r for r in rows if cpu is not None and r[0] == cpu]
    rows = same if len(same) >= SAME_CPU_MIN_SHARDS else rows
    return sum(r[1] for r in rows) / sum(r[2] for r in rows) if rows else None


def ops_bucket(num_ops: int | None) -> int | None:
    """The size class a structure's task rate is kept under: its FX ops (``subgraphs.num_ops``), those of
    :data:`OPS_BUCKET_CAP` or more in one class (None where the row has no count)."""
    return None if num_ops is None else min(int(num_ops), OPS_BUCKET_CAP)


@dataclass(frozen=True)
class TaskRates:
    """Long-tail tasks per profiled structure in the committed full and drain shards, by the structure's kind -- its
    anchor op and :func:`ops_bucket`: ``by_kind[(anchor, ops)] = (profiled structures, those with a task)``.
    Profiled: a member left ``ok`` by its shard (not seen before, under the structure quota, not below the
    rate floor), timed or not --
    what :func:`estimate` counts, one member per structure under ``structure_quota: 1``; per structure, not
    per subgraph, because a shard run without the quota profiled many members of one structure, and each
    can be a task (the curate stage makes one task per subgraph): one such shard gave 21 of the first 36
    ``conv2d`` tasks from 49 members. The size matters more than the anchor: a structure of one or two ops
    (where Inductor's own overhead is most of the time) gave a task several times as often as one of four
    (``docs/full_scale.md``; :func:`rates_backtest` measures what each adds)."""

    by_kind: dict[tuple[str | None, int | None], tuple[int, int]] = field(default_factory=dict)

    @cached_property  # rate() reads it once per subgraph of every pending shard at each pick
    def overall(self) -> float | None:
        """Tasks per profiled structure over every kind (None before any structure was profiled)."""
        n = sum(t for t, _ in self.by_kind.values())
        return sum(k for _, k in self.by_kind.values()) / n if n else None

    @cached_property
    def by_ops(self) -> dict[int | None, tuple[int, int]]:
        """``by_kind`` summed over anchors: ``(profiled, with a task)`` per :func:`ops_bucket`."""
        return _sum_by(self.by_kind, lambda kind: kind[1])

    @cached_property
    def by_anchor(self) -> dict[str | None, tuple[int, int]]:
        """``by_kind`` summed over sizes: ``(profiled, with a task)`` per anchor op."""
        return _sum_by(self.by_kind, lambda kind: kind[0])

    def ops_rate(self, ops: int | None) -> float | None:
        """Expected tasks of one structure of ``ops`` FX ops, whatever its anchor: its size class's structures
        with a task and profiled structures, each plus :data:`TASK_RATE_PRIOR` pseudo-structures at the
        overall rate; None before any was profiled."""
        o = self.overall
        if o is None:
            return None
        t, k = self.by_ops.get(ops_bucket(ops), (0, 0))
        return (k + TASK_RATE_PRIOR * o) / (t + TASK_RATE_PRIOR)

    def rate(self, anchor: str | None, ops: int | None = None) -> float | None:
        """Expected tasks of one structure with ``anchor`` and ``ops`` FX ops: its kind's structures with a
        task and profiled structures, each plus :data:`KIND_RATE_PRIOR` pseudo-structures at its size's
        :meth:`ops_rate` (a kind seen rarely, or never, is near its size's rate; a common one is its own).
        A structure of unknown size (``ops`` None: a table without ``num_ops``) gets its anchor's rate over
        every size, smoothed toward the overall rate by :data:`TASK_RATE_PRIOR`. None before any was
        profiled."""
        if ops is None:
            o = self.overall
            if o is None:
                return None
            t, k = self.by_anchor.get(anchor, (0, 0))
            return (k + TASK_RATE_PRIOR * o) / (t + TASK_RATE_PRIOR)
        r = self.ops_rate(ops)
        if r is None:
            return None
        t, k = self.by_kind.get((anchor, ops_bucket(ops)), (0, 0))
        return (k + KIND_RATE_PRIOR * r) / (t + KIND_RATE_PRIOR)


def _sum_by(counts: dict, key: Callable) -> dict:
    """``(profiled, with a task)`` pairs of ``counts`` summed per ``key`` of their kind."""
    out: dict = {}
    for kind, (t, k) in counts.items():
        a = out.setdefault(key(kind), [0, 0])
        a[0] += t
        a[1] += k
    return {g: (t, k) for g, (t, k) in out.items()}


class Profiled(NamedTuple):
    """One structure profiled in a committed full or drain shard (:func:`profiled_structure_rows`)."""

    shard: str  # the shard folder's name (a drain shard's is its full shard's: the same models, one unit when left out)
    anchor: str | None
    ops: int | None  # its FX ops (subgraphs.num_ops; None where the table has no such column)
    task: bool  # a member of it is in the shard's tasks table


def profiled_structure_rows(out: str | Path) -> dict[str, Profiled]:
    """Per structure profiled in the committed full and drain shards of ``out`` that ran their profile (a
    ``profiles`` table), a :class:`Profiled`: a structure (``structure_hash``; a subgraph without one is its own)
    counts as profiled where a shard's ``subgraphs`` row of it says ``ok``, as one with a task where a row of that
    shard's ``tasks`` table lists such a member; its shard, anchor and ops are the first such row's (full shards
    in id order, then drain shards). A structure profiled in two shards is one row."""
    seen: dict[str, list] = {}  # structure -> [shard, anchor, ops, has a task]
    for d in (*done_shards(out), *done_shards(out, DRAIN)):
        tp, pp, sp = (d / "tables" / f"{t}.parquet" for t in ("tasks", "profiles", "subgraphs"))
        if not (pp.is_file() and sp.is_file()):
            continue
        tasks = set().union(*(r["subgraph_hashes"] or [] for r in pq.read_table(tp, columns=["subgraph_hashes"]).to_pylist())) \
            if tp.is_file() and "subgraph_hashes" in pq.read_schema(tp).names else set()  # a shard without tasks: no column
        cols = [c for c in ("subgraph_hash", "structure_hash", "anchor", "num_ops", "status") if c in pq.read_schema(sp).names]
        for r in pq.read_table(sp, columns=cols).to_pylist():
            if r.get("status") == "ok":
                e = seen.setdefault(r.get("structure_hash") or r["subgraph_hash"],
                                    [d.name, r.get("anchor"), r.get("num_ops"), False])
                e[3] = e[3] or r["subgraph_hash"] in tasks
    return {k: Profiled(*v) for k, v in seen.items()}


def rate_floor_picks(rows: list[dict], rates: TaskRates, floor: float | None) -> list[bool]:
    """Which of a shard's decomposed ``rows`` (``status``, ``anchor``, ``num_ops``) to skip for
    ``fullscale.rate_floor``: the ``ok`` rows whose kind's :meth:`TaskRates.rate` is below ``floor``. None of
    them where ``floor`` is None or ``rates`` has no rate yet (before any structure was profiled, nothing is
    known to be below it). One flag per row (True: skip)."""
    if floor is None or rates.overall is None:
        return [False] * len(rows)
    return [r.get("status") == "ok" and rates.rate(r.get("anchor"), r.get("num_ops")) < floor for r in rows]


def rates_of(rows: Iterable[Profiled]) -> TaskRates:
    """:class:`TaskRates` of :func:`profiled_structure_rows` values."""
    counts: dict[tuple[str | None, int | None], list[int]] = {}
    for r in rows:
        c = counts.setdefault((r.anchor, ops_bucket(r.ops)), [0, 0])
        c[0] += 1
        c[1] += r.task
    return TaskRates({kind: (t, k) for kind, (t, k) in sorted(counts.items(), key=lambda kv: str(kv[0]))})


def task_rates(out: str | Path) -> TaskRates:
    """:class:`TaskRates` of the committed full and drain shards of ``out`` that ran their profile
    (:func:`profiled_structure_rows`)."""
    return rates_of(profiled_structure_rows(out).values())


def _top(preds: list[tuple[float, bool]], k: float) -> tuple[float, float]:
    """Predicted and actual structures with a task among the ``k`` structures of ``preds`` (``(predicted rate,
    has a task)``) with the highest predicted rate; a group of equal rates that ``k`` cuts counts pro rata (its
    share of the group's), so the result does not depend on how ties are broken."""
    groups: dict[float, list[int]] = {}
    for rate, task in preds:
        g = groups.setdefault(rate, [0, 0])
        g[0] += 1
        g[1] += task
    n = predicted = actual = 0.0
    for rate in sorted(groups, reverse=True):
        size, tasks = groups[rate]
        take = min(float(size), k - n)
        if take <= 0:
            break
        n, predicted, actual = n + take, predicted + take * rate, actual + tasks * take / size
    return predicted, actual


def rates_backtest(out: str | Path, fractions: Iterable[float] = BACKTEST_FRACTIONS, at: float | None = None,
                   rows: dict[str, Profiled] | None = None) -> dict | None:
    """How well :meth:`TaskRates.rate` predicts tasks of shards it has not seen: each committed full shard's
    profiled structures, its drain shard's with them (:func:`profiled_structure_rows`), get the rate of their kind in the *other* shards
    (leave one shard out: tasks cluster in shards, so a structure's own shard would flatter the rate), and the
    structures are ranked by it as ``fullscale.order: yield`` ranks the untimed ones. Returns ``shards``,
    ``structures``, ``with_task_predicted`` and ``with_task`` (the structures expected to have a task, and
    those that have one: a structure, not a task, is the unit, as the rates count them; a shard run without
    the structure quota made several tasks of one structure) and ``top``: per fraction ``f`` of
    ``fractions``, the ``predicted`` and ``actual`` structures with a task among the ``f`` x ``structures``
    highest-ranked ones (``structures``, one decimal: :func:`_top` cuts a tie pro rata) and
    ``actual_over_predicted``; ``anchor_only``: what the same top fractions gave when ranked by anchor alone
    (every structure of unknown size: the rates before sizes), what the size adds. A ratio under 1 in the
    top fractions is the winner's curse: the highest rates are partly noise. With ``at`` (a share, 0 to 1),
    ``at`` is that share's entry too, the share widened to at least :data:`BACKTEST_MIN_STRUCTURES`
    structures so that no ratio rests on a few (``share`` keeps the one asked for). None with fewer than two
    such shards. ``rows``: :func:`profiled_structure_rows` of ``out``, already read."""
    rows = list((profiled_structure_rows(out) if rows is None else rows).values())
    shards = sorted({r.shard for r in rows})
    if len(shards) < 2:
        return None
    fractions = list(fractions)
    n_rows = len(rows)
    widened = None if at is None else min(1.0, max(at, BACKTEST_MIN_STRUCTURES / n_rows))
    fractions += [] if widened is None else [widened]

    def tops(rs: list[Profiled]) -> tuple[list[tuple[float, bool]], list[dict]]:
        preds: list[tuple[float, bool]] = []
        for sh in shards:
            rates = rates_of(r for r in rs if r.shard != sh)
            preds += [(rates.rate(r.anchor, r.ops) or 0.0, r.task) for r in rs if r.shard == sh]
        top = []
        for f in fractions:
            p, a = _top(preds, f * len(preds))
            top.append({"fraction": round(f, 4), "structures": round(f * len(preds), 1), "predicted": round(p, 1),
                        "actual": round(a, 1), "actual_over_predicted": round(a / p, 2) if p else None})
        return preds, top

    preds, top = tops(rows)
    _, anchor_only = tops([r._replace(ops=None) for r in rows])
    got = {"method": "leave one shard out", "shards": len(shards), "structures": len(preds),
           "with_task_predicted": round(sum(p for p, _ in preds), 1), "with_task": sum(t for _, t in preds)}
    if widened is not None:  # the last entry is the share asked for, widened
        got["at"] = {**top.pop(), "share": round(at, 4)}
        anchor_only.pop()
    return {**got, "top": top, "anchor_only": [{"fraction": t["fraction"], "actual": t["actual"]} for t in anchor_only]}


@dataclass(frozen=True)
class Estimate:
    """One pending shard: ``subgraphs`` it would profile given the committed shards (None: no census shard
    of it; a lower bound where ``unpriced_graphs`` > 0: its unseen graphs in :attr:`CensusIndex.unpriced`),
    ``cpu_s`` its estimated CPU seconds (census phases + ``subgraphs`` x profile CPU per subgraph, less
    ``resumed_cpu_s``; None where either is unknown), ``tasks`` the long-tail tasks expected of those subgraphs
    (:meth:`TaskRates.rate` of each one's anchor and ops, summed; None without rates), ``resumed_cpu_s`` the profile
    CPU seconds a stopped run of it left to resume (:func:`resume_credits`, at most ``1 -``
    :data:`RESUME_MIN_SHARE` of the profile's price), ``expected`` each profiled subgraph's structure (its
    ``structure_hash``, else its own hash) and expected tasks (empty without rates: :func:`shard_walk`),
    ``pre_cpu_s`` the census capture, dedupe and decompose CPU seconds within ``cpu_s``, ``below`` the
    structures (``structure_hash``, else the subgraph's own hash) of the subgraphs ``fullscale.rate_floor``
    leaves out (:func:`rate_floor_picks`; not in ``subgraphs``; :attr:`below_floor` counts them), ``structures``
    the structures (same keys) of the ``subgraphs`` it would profile: what a shard run at once with it must not
    hold to time nothing twice (:func:`cost_chooser`)."""

    shard: int
    subgraphs: int | None
    cpu_s: float | None
    unpriced_graphs: int = 0
    tasks: float | None = None
    resumed_cpu_s: float = 0.0
    expected: tuple[tuple[str, float], ...] = ()
    pre_cpu_s: float = 0.0
    below: tuple[str, ...] = ()
    structures: frozenset[str] = frozenset()

    @property
    def below_floor(self) -> int:
        """Subgraphs the rate floor leaves out of this shard's profile."""
        return len(self.below)

    @property
    def priced(self) -> bool:
        """The census knows everything this shard would profile."""
        return self.subgraphs is not None and not self.unpriced_graphs


def estimate(idx: CensusIndex, shard: int, seen: tuple[set[str], set[str]], profiled: Counter,
             quota: int | None, cpu_per_subgraph: float | None, rates: TaskRates | None = None,
             resume_credit: float = 0.0, floor: float | None = None) -> Estimate:
    """What ``shard`` would profile if it ran now (:mod:`fullscale.pipeline`'s own steps on the census rows):
    its graphs no committed full shard decomposed (``seen``: :func:`fullscale.shards.seen_hashes`), their
    ``ok`` subgraphs not seen, at most ``quota`` per structure counting ``profiled``
    (:func:`fullscale.shards.profiled_structures`; None: every member), less those whose kind's rate in
    ``rates`` is below ``floor`` (:func:`rate_floor_picks`; None: none); with ``rates``, the tasks they are
    expected to give; ``resume_credit``: the profile CPU seconds a stopped run of it left to resume
    (:func:`resume_credits`)."""
    if shard not in idx.graphs:
        return Estimate(shard, None, None)
    seen_graphs, seen_subs = seen
    rows: dict[str, dict] = {}
    graphs = sorted(idx.graphs[shard] - seen_graphs)
    for g in graphs:
        for r in idx.subgraphs.get(g, []):
            if r["status"] == "ok" and r["subgraph_hash"] not in seen_subs:
                rows.setdefault(r["subgraph_hash"], r)
    ok = list(rows.values())
    picked = ok if quota is None else [r for r, skip in zip(ok, structure_picks(ok, profiled, quota)) if not skip]
    below: tuple[str, ...] = ()
    if floor is not None and rates is not None:
        flags = rate_floor_picks(picked, rates, floor)  # census rows: the subgraphs table's columns
        below = tuple(r.get("structure_hash") or r["subgraph_hash"] for r, skip in zip(picked, flags) if skip)
        picked = [r for r, skip in zip(picked, flags) if not skip]
    n = len(picked)
    kept, cpu = 0.0, None
    if cpu_per_subgraph is not None:
        kept = min(resume_credit, n * cpu_per_subgraph * (1.0 - RESUME_MIN_SHARE))
        cpu = idx.pre_cpu_s.get(shard, 0.0) + n * cpu_per_subgraph - kept
    has_rates = rates is not None and rates.overall is not None
    expected = tuple((r.get("structure_hash") or r["subgraph_hash"], rates.rate(r.get("anchor"), r.get("num_ops")))
                     for r in picked) if has_rates else ()
    tasks = sum(t for _, t in expected) if has_rates else None
    return Estimate(shard, n, cpu, sum(1 for g in graphs if g in idx.unpriced), tasks, kept, expected,
                    idx.pre_cpu_s.get(shard, 0.0) if cpu is not None else 0.0, below,
                    frozenset(r.get("structure_hash") or r["subgraph_hash"] for r in picked))


def estimates(out: str | Path, shards: list[int], quota: int | None, idx: CensusIndex | None = None,
              cpu: str | None = None, rates: TaskRates | None = None, floor: float | None = None) -> list[Estimate]:
    """:func:`estimate` of each of ``shards`` against the shards committed now in ``out``, at the profile CPU
    rate of shards run on CPU model ``cpu`` (None: this machine's, :func:`passnet_common.machine.cpu_model`)
    where there are enough of them (:func:`profile_cpu_per_subgraph`), with their expected tasks at the
    committed shards' :func:`task_rates` (``rates``: those, already read), less what a stopped run on that CPU
    model left to resume (:func:`resume_credits`: on this host where ``cpu`` is None), without the subgraphs
    below ``fullscale.rate_floor`` (``floor``)."""
    return estimates_by_floor(out, shards, quota, (floor,), idx, cpu, rates)[floor]


def estimates_by_floor(out: str | Path, shards: list[int], quota: int | None, floors: Iterable[float | None],
                       idx: CensusIndex | None = None, cpu: str | None = None,
                       rates: TaskRates | None = None) -> dict[float | None, list[Estimate]]:
    """:func:`estimates` under each rate floor of ``floors`` (None: none), the committed shards read once."""
    idx = census_index(out) if idx is None else idx
    host = host_identity(cpu_model()) if cpu is None else None  # this machine's price: its own host's attempts alone
    cpu = cpu_model() if cpu is None else cpu
    seen, profiled = seen_hashes(out), (profiled_structures(out) if quota is not None else Counter())
    per = profile_cpu_per_subgraph(out, cpu)
    rates, credits = task_rates(out) if rates is None else rates, resume_credits(out, cpu, host)
    return {f: [estimate(idx, s, seen, profiled, quota, per, rates, credits.get(s, 0.0), f) for s in shards] for f in floors}


def cost_key(e: Estimate) -> tuple:
    """The order of ``fullscale.order: cost``: priced shards with subgraphs to profile, cheapest first (CPU
    seconds; before any full shard has profiled, subgraphs); then priced shards with nothing to profile; then
    the others (no census shard, or graphs the census could not price: :attr:`Estimate.priced`) by what is
    known of them. Ties: lowest id."""
    tier = 0 if e.priced and e.subgraphs else 1 if e.priced else 2
    size = e.cpu_s if e.cpu_s is not None else float(e.subgraphs or 0)
    return (tier, size, e.shard)


def yield_key(e: Estimate) -> tuple:
    """The order of ``fullscale.order: yield``: the tiers of :func:`cost_key`; among priced shards with
    subgraphs to profile, the most expected tasks per estimated CPU second first (where either is unknown --
    before any full shard has profiled -- as :func:`cost_key`); ties by :func:`cost_key`."""
    tier, size, shard = cost_key(e)
    per = e.tasks / e.cpu_s if tier == 0 and e.tasks is not None and e.cpu_s else None
    return (tier, 0 if per is None else -per, size, shard)


def shard_walk(ests: list[Estimate], need: float, key: Callable[[Estimate], tuple] = yield_key) -> dict | None:
    """What running the shards of ``ests`` in ``key`` order gives toward ``need`` more tasks under
    ``structure_quota: 1`` (one member of a structure profiled over the build; :func:`estimates` made with
    that quota): the priced shards with subgraphs to profile, each counting only the structures of
    :attr:`Estimate.expected` that no shard before it in the walk, nor an earlier subgraph of its own, holds,
    and its profile CPU (``cpu_s`` less ``pre_cpu_s``) cut to that share of its subgraphs; its census phases
    are paid in full. Returns ``shards`` (the fewest whose expected tasks reach ``need``, 0 where ``need``
    is not above 0; None where all of them do not), ``tasks_expected`` and ``core_hours`` (their CPU seconds
    / 3600; of all walked shards where ``shards`` is None), ``shards_walked`` and ``shards_unpriced`` (left
    out: :attr:`Estimate.priced` false). Priced once, in the order the estimates give now; the run re-prices
    after each shard, and the tasks are the rates' (:func:`rates_backtest` says how far to trust them). None
    when no shard has expected tasks."""
    walk = sorted((e for e in ests if e.priced and e.subgraphs and e.cpu_s is not None and e.expected), key=key)
    if not walk:
        return None
    unpriced = sum(1 for e in ests if not e.priced)
    if need <= 0:
        return {"shards": 0, "tasks_expected": 0.0, "core_hours": 0.0, "shards_walked": 0, "shards_unpriced": unpriced}
    held: set[str] = set()
    tasks = cpu = 0.0
    reached = None
    for i, e in enumerate(walk, 1):
        new = 0
        for s, t in e.expected:
            if s not in held:
                held.add(s)
                tasks += t
                new += 1
        cpu += e.pre_cpu_s + (e.cpu_s - e.pre_cpu_s) * new / len(e.expected)
        if tasks >= need:
            reached = i
            break
    return {"shards": reached, "tasks_expected": round(tasks, 1), "core_hours": round(cpu / 3600, 1),
            "shards_walked": i, "shards_unpriced": unpriced}


#: ``fullscale.order`` -> the key its shards are ordered by (``id``: none, id order)
ORDER_KEYS: dict[str, Callable[[Estimate], tuple]] = {"cost": cost_key, "yield": yield_key}


def fits(e: Estimate, seconds_left: float | None, any_priced: bool) -> bool:
    """Whether ``e`` may start with ``seconds_left`` before the deadline (None: no deadline): a shard whose
    wall estimate (``cpu_s`` / :data:`CORES_BUSY`) fits -- for a shard with graphs the census could not load
    that estimate is a lower bound, so it may outrun it and be stopped at the deadline (its capture and
    profile attempts resume in the next run), which is better than holding it back while a priced shard too
    long for the window stays queued --, or a priced one if no full shard has profiled yet (no CPU rate to
    price it with); a shard with no estimate at all (no census shard) only when no shard of the queue is
    priced (``any_priced`` False: a build without a census runs in id order as before)."""
    if seconds_left is None:
        return True
    if not e.priced and e.cpu_s is None:  # no census shard, or no CPU rate yet
        return not any_priced
    return e.cpu_s is None or e.cpu_s / CORES_BUSY <= seconds_left


def pick(ests: list[Estimate], seconds_left: float | None,
         key: Callable[[Estimate], tuple] = cost_key) -> tuple[Estimate | None, list[Estimate]]:
    """``(next, too_long)``: the first of ``ests`` in ``key`` order (:data:`ORDER_KEYS`) that :func:`fits`
    ``seconds_left``, and the estimates that do not fit."""
    any_priced = any(e.priced for e in ests)
    ok = [e for e in ests if fits(e, seconds_left, any_priced)]
    return min(ok, key=key, default=None), [e for e in ests if e not in ok]


def ordered(ests: list[Estimate], key: Callable[[Estimate], tuple] = cost_key) -> list[int]:
    """The shards of ``ests`` in ``key`` order (``--max-shards`` keeps the first; the Ray executor submits
    them in it)."""
    return [e.shard for e in sorted(ests, key=key)]


def _describe(e: Estimate) -> str:
    if e.subgraphs is None:
        return f"{shard_name(e.shard)}, unknown cost (no census shard)"
    what = f"{shard_name(e.shard)}, {'at least ' if e.unpriced_graphs else '~'}{e.subgraphs} subgraphs to profile"
    what += f" ({e.below_floor} below the rate floor)" if e.below_floor else ""
    if e.unpriced_graphs:
        what += f" ({e.unpriced_graphs} graphs the census could not load)"
    what += f", ~{e.cpu_s:.0f} CPU-s" if e.cpu_s is not None and not e.unpriced_graphs else ""
    what += f" (~{e.resumed_cpu_s:.0f} resumed from a stopped run)" if e.resumed_cpu_s and not e.unpriced_graphs else ""
    return what + (f", ~{e.tasks:.1f} tasks expected" if e.tasks is not None and not e.unpriced_graphs else "")


def cost_chooser(out: str | Path, quota: int | None, deadline_epoch: float | None,
                 idx: CensusIndex | None = None, *, order: str, max_starts: int | None = None,
                 floor: float | None = None) -> Callable[[list[dict], list[dict]], int | None]:
    """The ``choose`` of :func:`fullscale.runner.run_local` for ``fullscale.order`` ``cost`` or ``yield``
    (``order``): at each call, :func:`pick` in that order over the specs not yet started (re-priced against
    the shards committed by then, without the subgraphs below ``floor``: ``fullscale.rate_floor``) with the
    seconds left before ``deadline_epoch`` (None: no limit); prints
    its choice, or why none fits. ``max_starts`` (``--max-shards``): no more shards than that start, counted
    among those that fit (a cap applied to the queue before ``fits`` could leave only shards too long).

    ``running`` (the specs started and not yet written, :func:`fullscale.runner.run_local`): a shard run at
    once with them does not see their subgraphs (:mod:`fullscale.pipeline`), so one that would profile a
    structure a running shard profiles (:attr:`Estimate.structures`, as estimated when that one started) waits:
    the next is the first in order that shares none, and only where every shard that fits shares one is the
    first of those started (a core left idle costs more than a repeated timing)."""
    idx = census_index(out) if idx is None else idx
    key = ORDER_KEYS[order]
    started = 0
    profiles: dict[int, frozenset[str]] = {}  # shard -> the structures it was estimated to profile when started

    def choose(queue: list[dict], running: Iterable[dict] = ()) -> int | None:
        nonlocal started
        if max_starts is not None and started >= max_starts:
            print(f"--max-shards {max_starts}: {started} started, no more start", flush=True)
            return None
        left = None if deadline_epoch is None else deadline_epoch - time.time()
        ests = estimates(out, [s["shard"] for s in queue], quota, idx, floor=floor)
        busy = frozenset().union(*(profiles.get(s["shard"], frozenset()) for s in running))
        best, too_long = pick(ests, left, key)
        waiting = 0
        if best is not None and busy & best.structures:
            long = {e.shard for e in too_long}
            fit = [e for e in ests if e.shard not in long]
            clear = [e for e in fit if not busy & e.structures]
            if clear:
                best, waiting = min(clear, key=key), len(fit) - len(clear)
        if best is None:
            print(f"no pending shard fits the {left:.0f} s left before the deadline: {len(too_long)} left for a "
                  f"longer run ({_describe(min(too_long, key=cost_key))} is the cheapest)", flush=True)
            return None
        print(f"next: {_describe(best)} ({len(queue) - 1} pending"
              + (f", {len(too_long)} too long for the {left:.0f} s left" if too_long else "")
              + (f", {waiting} waiting: they share a structure with a running shard" if waiting else "")
              + (f", shares {len(busy & best.structures)} structures with a running shard: every shard that fits "
                 "does" if busy & best.structures else "") + ")", flush=True)
        started += 1
        profiles[best.shard] = best.structures
        i = next(i for i, s in enumerate(queue) if s["shard"] == best.shard)
        queue[i]["estimate"] = {"subgraphs": best.subgraphs, "unpriced_graphs": best.unpriced_graphs,
                                "cpu_s": None if best.cpu_s is None else round(best.cpu_s, 1),
                                "tasks": None if best.tasks is None else round(best.tasks, 2), "order": order,
                                "rates": RATES_MODEL,
                                **({"rate_floor": floor, "below_floor": best.below_floor} if floor is not None else {}),
                                **({"resumed_cpu_s": round(best.resumed_cpu_s, 1)} if best.resumed_cpu_s else {})}
        return i

    return choose


def estimate_accuracy(out: str | Path) -> dict | None:
    """How the estimates the shards were started with (``manifest.estimate``, set by :func:`cost_chooser`)
    compare with what they did: ``shards``; summed ``subgraphs_estimated`` / ``subgraphs_profiled``
    (``counts.subgraphs_profilable_new``) and ``cpu_s_estimated`` / ``cpu_s`` (the manifest's); per shard the
    ratio actual / estimated CPU seconds (``cpu_ratio``: min, median, max); over the shards whose estimate
    expected tasks (``tasks_shards``), ``tasks_expected`` against the ``tasks`` they gave, and the same per rate
    model the estimate came from (``tasks_by_rates``: ``estimate.rates``, :data:`RATES_MODEL`; ``anchor``
    where the manifest names none, the rates by anchor alone; ``@floor=F`` added where the shard ran under
    ``fullscale.rate_floor`` F, whose shards profile only their high-rate subgraphs). Only shards started
    with a priced estimate that ran their profile in one run (not resumed) count. None before any such shard."""
    rows = []
    for d in done_shards(out):
        man = read_manifest(d)
        est = man.get("estimate") or {}
        if est.get("cpu_s") and not est.get("unpriced_graphs") and not resumed(man):
            counts = man.get("counts") or {}
            rows.append((est["subgraphs"], int(counts.get("subgraphs_profilable_new") or 0),
                         float(est["cpu_s"]), float(man.get("cpu_s") or 0.0), est.get("tasks"), int(counts.get("tasks") or 0),
                         (est.get("rates") or "anchor") + ("" if est.get("rate_floor") is None else f"@floor={est['rate_floor']}")))
    if not rows:
        return None
    ratios = [r[3] / r[2] for r in rows]
    with_tasks = [r for r in rows if r[4] is not None]
    by_rates: dict[str, list[tuple]] = {}
    for r in with_tasks:
        by_rates.setdefault(r[6], []).append(r)
    return {"shards": len(rows), "subgraphs_estimated": sum(r[0] for r in rows),
            "subgraphs_profiled": sum(r[1] for r in rows), "cpu_s_estimated": round(sum(r[2] for r in rows), 1),
            "cpu_s": round(sum(r[3] for r in rows), 1),
            "cpu_ratio": {"min": round(min(ratios), 2), "median": round(statistics.median(ratios), 2),
                          "max": round(max(ratios), 2)},
            "tasks_shards": len(with_tasks), "tasks_expected": round(sum(float(r[4]) for r in with_tasks), 1),
            "tasks": sum(r[5] for r in with_tasks),
            "tasks_by_rates": {m: {"shards": len(g), "tasks_expected": round(sum(float(r[4]) for r in g), 1),
                                   "tasks": sum(r[5] for r in g)} for m, g in sorted(by_rates.items())}}
