"""``metrics/full/summary.json``: what the full-scale build found, from whatever shards are committed.

Every figure is recomputed from the committed shard tables (never typed), deduplicated by hash
across shards:

- ``models`` / ``captured``: catalog rows of the done shards and of the census shards of every other
  shard id (:func:`fullscale.shards.census_only`) / extractions with status ``ok``, in total and per
  source (``by_source``); ``models_profiled``: those of the done (full) shards; ``catalog_models``: the
  whole catalog;
- ``unique_graphs``: distinct ``graph_hash`` of those shards' ``graphs`` rows; ``unique_graphs_by_source``:
  per source, the distinct graphs its models gave (a graph two sources gave counts for both);
  ``unique_graphs_shared_across_sources``: graphs that models of more than one source gave (e.g. a GraphNet
  sample and the timm model it was traced from, when their canonical forms agree);
- ``families``: distinct structure families (``pattern``) among the decomposed subgraphs (full and
  census shards); ``structures`` (distinct ``structure_hash``) and ``structures_timed`` (those with a
  member the profile timed); ``subgraphs_skipped_structure_quota``: subgraphs left out by ``fullscale.structure_quota``
  (:func:`fullscale.shards.structure_picks`), or by the rate floor in a structure a shard has profiled since,
  timed in no shard and not waiting below the rate floor;
  ``structures_below_rate_floor``: structures that ``fullscale.rate_floor`` left out in a shard
  (:func:`fullscale.order.rate_floor_picks`) and of which no full or drain shard has profiled a member (left it
  ``ok``, timed or not), and ``subgraphs_below_rate_floor`` their members left out (by the floor, or by the
  quota beside the member the floor left out) and timed in no shard;
- ``variants_screened``: variants (subgraph x size x dtype, run 0) the profile timed;
  ``variants_confirmed``: those with a label (stable) from the full protocol. Where the profile
  has a screen phase (a ``phase`` column: ``screen`` / ``protocol``), the two counts come from it
  (:func:`profile_variants`). Each variant counts once: shards that ran at the same time do not see each
  other's subgraphs, so both may time one variant; its rows are taken from the shard that finished first
  (:func:`first_finished`), for these counts and for the slowdown shares -- what the build would hold had
  the shards run one after another in that order (the later one skips a subgraph an earlier one profiled);
  ``variants_timed_again``: how many variant timings a later-finishing shard repeated;
- ``tasks``: release tasks (variants regrouped across shards by family, :mod:`fullscale.release`)
  when a release exists, else the sum of shard tasks; ``tasks_shortfall_reason`` when below 200;
- ``slowdown_share_e2e`` / ``slowdown_share_compiler``: share of run 0's timed variants slower
  than eager / than Dynamo-only with confidence (``curate.select.longtail``'s labels);
- ``phases``: wall and CPU seconds per phase summed over shards, ``cpu_s_per_model``;
  ``projected_core_hours_remaining``: the CPU per model of the shards that ran with the design (stage
  params digest, structure quota and rate floor) of the most recently finished one, or of the whole build when those
  hold fewer than :data:`PROJECTION_MIN_MODELS` models (``projection_basis``), times the models left --
  linear, so an upper bound where fewer structures are new in later shards;
  ``profile_core_hours_known_structures``: the structures known and not yet timed times the profile CPU
  seconds per timed structure of the same shards (those that ran their profile in one run: a shard that
  resumed earlier attempts records its last run's CPU alone; the quota times one member per structure, so this is
  the profile still owed to the structures the census and the shards found); ``tasks_target_projection``
  (below 200 tasks): the shard tasks per timed structure of the current design's shards, the structures still
  to time for 200 at that rate (linear: an estimate, not a promise) and their profile core-hours, and
  ``highest_rate_first``: the same when the untimed structures are timed in the order of their kind's task
  rate (``fullscale.order: yield``), with the tasks the untimed structures are expected to give, and
  ``yield_order``: the same in whole shards, the pending ones walked in the yield order
  (:func:`fullscale.order.shard_walk`: each shard profiles every new structure it holds, not only the
  highest-rate ones, so it takes more; under the design's ``fullscale.rate_floor`` it profiles those at or
  above the floor, and ``by_rate_floor`` walks the same shards under other floors); ``census``: the census
  shards (count, models, CPU per model, phases) and the census CPU still owed to the catalog models no
  shard of either kind holds yet; ``capture_measured``:
  the capture CPU seconds of every attempt that failed shards' records hold (their progress; a model
  tried twice, e.g. after an ``oom``, counts both), per model and projected over the catalog;
  ``order_estimates``: the estimates the shards were started with (``fullscale.order: cost``) against
  the subgraphs they profiled and the CPU they took (:func:`fullscale.order.estimate_accuracy`);
  ``task_rates``: structures profiled and those with a task, per size and per common anchor
  (:func:`_task_rates_block`);
- ``failure_classes``: extraction failures by error class; ``shards_failed``: per shard that did not
  finish, the phase that broke, its exit code (None: ran past ``shard_timeout_s``), the phases' times and
  ``attempts_packed`` (attempt files its next run resumes on any machine: :func:`fullscale.shards.pack_attempts`);
- ``drain``: the drain shards (:mod:`fullscale.shards`; ``python -m fullscale run --drain``): how many are done,
  their CPU and wall seconds and phases (not in the full shards' ``phases``, ``cpu_s`` and projections), the
  tasks they gave (in ``tasks``), the structures they profiled that no full shard had, and ``shards_pending``:
  the full shards with a structure still waiting below the rate floor and no drain shard yet, and
  ``structures_left_after_drains``: those waiting though every full shard that left them out has had its drain
  (a member the drain could not profile: it is not run again), and ``projected_core_hours_remaining``: the drains'
  CPU seconds per structure they profiled first times the structures still waiting (None before a drain has
  profiled one; a linear estimate from the drains done, whose kinds differ from shard to shard); their profiles,
  subgraphs and tasks count in the figures above like a full shard's, their models do not;
- ``machine``: the machines the full shards ran on, one entry per ``cpu_identity`` (the manifest's
  :func:`fullscale.shards.host_identity`: model name, microarchitecture, vector ISA) and core count; manifests
  that name no identity are grouped by ``cpu_model``, a name that may cover two CPUs (``written_on``: the one
  writing the summary);
  ``complete``: every shard done and no structure left below the rate floor (the drain shards time them).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from fullscale.order import (
    BACKTEST_FRACTIONS,
    OPS_BUCKET_CAP,
    Profiled,
    TaskRates,
    estimate_accuracy,
    estimates_by_floor,
    profiled_structure_rows,
    rates_backtest,
    rates_of,
    resumed,
    shard_walk,
)
from fullscale.pipeline import machine
from fullscale.shards import (
    CENSUS,
    DRAIN,
    FLOOR_REASON,
    QUOTA_REASON,
    SEEN_REASON,
    SHARDS,
    TIMED,
    done_shards,
    read_manifest,
    resume_pack_path,
    shards_root,
)
from passnet_common.io import atomic_write_json

TARGET_TASKS = 200
WALK_FLOORS = (None, 0.05, 0.1, 0.15, 0.2)  # the rate floors yield_order.by_rate_floor walks the pending shards under
RATES_MIN_STRUCTURES = 10  # the summary's task_rates lists anchors of at least this many profiled structures
PROJECTION_MIN_MODELS = 10  # fewer models in the latest design's shards: projected from the whole build


def _pack_rows(pack: Path) -> int:
    """Attempt files in a stopped shard's pack (0 when it has none or it cannot be read: its next run then
    profiles them again, and its failure record's ``resumed_from_pack`` will say why)."""
    try:
        return pq.ParquetFile(pack).metadata.num_rows if pack.is_file() else 0
    except (OSError, ValueError):
        return 0


def _highest_rate_first(out: Path, rows: dict[str, Profiled], untimed: list[tuple[str | None, int | None]], need: int,
                        known: dict | None) -> dict | None:
    """What ``need`` more tasks take when the ``untimed`` structures (anchor op, FX ops) are timed in the order
    of their kind's task rate per structure (the rates of ``rows``, :func:`fullscale.order.profiled_structure_rows`
    of ``out``; the order ``fullscale.order: yield`` follows shard by shard):
    ``tasks_expected_untimed`` (every untimed structure's rate summed: the tasks the rest of the build is
    expected to give), ``structures_to_time`` (the fewest, highest rate first, whose rates sum to ``need``;
    None where they never do) and their profile ``core_hours`` at the known CPU per structure -- a structure
    with a task counting as one task, as it is under ``structure_quota: 1``; ``backtest``:
    :func:`fullscale.order.rates_backtest` of the committed shards, with ``at_projection`` its entry at the
    share of the untimed structures that ``structures_to_time`` is (widened to
    :data:`fullscale.order.BACKTEST_MIN_STRUCTURES` of the backtest's; applied to the profiled structures,
    whose mix of kinds is not the untimed ones'), and ``structures_to_time`` /
    ``core_hours`` divided by that share's ``actual_over_predicted`` (the rates' own count where the backtest
    found them right, more where the highest rates were partly noise; None where that ratio is 0 or the
    count passes the untimed structures). None before any subgraph was timed."""
    rates = rates_of(rows.values())
    if rates.overall is None:
        return None
    per = sorted((rates.rate(anchor, ops) for anchor, ops in untimed), reverse=True)
    acc, n = 0.0, None
    for i, r in enumerate(per, 1):
        acc += r
        if acc >= need:
            n = i
            break

    def hours(k: int | None) -> float | None:
        return round(k * known["profile_cpu_s_per_structure"] / 3600, 1) if known and k else None

    got = {"tasks_expected_untimed": round(sum(per), 1), "structures_to_time": n, "core_hours": hours(n)}
    bt = rates_backtest(out, BACKTEST_FRACTIONS, n / len(per) if n else None, rows=rows)
    if bt is not None:
        at = bt.pop("at", None)
        ratio = at["actual_over_predicted"] if at else None
        scaled = -(-n * 100 // round(ratio * 100)) if n and ratio else None  # ceil(n / ratio), the ratio as shown
        scaled = scaled if scaled is not None and scaled <= len(per) else None
        bt = {**bt, "at_projection": at, "structures_to_time": scaled, "core_hours": hours(scaled)}
    return {**got, "backtest": bt}


def _task_rates_block(r: TaskRates) -> dict | None:
    """``task_rates``: ``[profiled structures, with a task]`` of the committed full and drain shards
    (:func:`fullscale.order.task_rates`) per size in FX ops (``by_ops``: ``"6+"`` is that many ops or more,
    ``"unknown"`` a table without ``num_ops``) and per anchor op of at least :data:`RATES_MIN_STRUCTURES`
    structures (``by_anchor``, most profiled first); None before any structure was profiled."""
    if r.overall is None:
        return None
    anchors = sorted(((a, c) for a, c in r.by_anchor.items() if c[0] >= RATES_MIN_STRUCTURES), key=lambda ac: (-ac[1][0], str(ac[0])))
    name = {OPS_BUCKET_CAP: f"{OPS_BUCKET_CAP}+", None: "unknown"}
    return {"by_ops": {name.get(k, str(k)): list(v) for k, v in sorted(r.by_ops.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))},
            "by_anchor": {str(a): list(c) for a, c in anchors}}


def _yield_order(out: Path, pending: list[int], design: dict, need: int, rates: TaskRates,
                 rate_floor: float | None) -> dict | None:
    """``yield_order``: :func:`fullscale.order.shard_walk` of the ``pending`` shards toward ``need`` tasks
    under ``rate_floor`` (``fullscale.rate_floor`` of the params the summary is written with: what the next
    run does), priced at the profile CPU rate of the CPU model most of the current ``design``'s shards ran on
    (named in ``cpu_model``, so the figure is the same whichever machine writes the summary; None where their
    manifests name none, and then this machine's rate prices it), and ``by_rate_floor``: the same walk under
    each floor of :data:`WALK_FLOORS` and ``rate_floor`` (``null``: none),
    each with ``structures_below_floor``, the distinct structures that floor leaves out of all the pending
    shards (walked or not; a shard's structures are those the quota would pick in it now); a walk's keys
    are null where no pending shard has expected tasks under its floor. None unless the
    design's ``structure_quota`` is 1 (what the walk models) or before any shard has expected tasks under
    any floor."""
    if design["quota"] != 1:
        return None
    cpu = design["cpu_models"].most_common(1)[0][0] if design["cpu_models"] else None
    floors = sorted({*WALK_FLOORS, rate_floor}, key=lambda f: -1.0 if f is None else f)
    walks, walked = {}, False
    for floor, ests in estimates_by_floor(out, pending, 1, floors, cpu=cpu, rates=rates).items():
        walk = shard_walk(ests, need)
        walked = walked or walk is not None
        walks[floor] = {"rate_floor": floor, **(walk or {"shards": None, "tasks_expected": None, "core_hours": None}),
                        "structures_below_floor": len({h for e in ests for h in e.below})}
    if not walked:
        return None
    return {**walks[rate_floor], "cpu_model": cpu, "by_rate_floor": list(walks.values())}


def _read(folder: Path, table: str) -> list[dict]:
    p = folder / "tables" / f"{table}.parquet"
    return pq.read_table(p).to_pylist() if p.is_file() else []


def _add_phases(acc: dict, man: dict) -> None:
    """Add a manifest's per-phase wall / CPU seconds into ``acc`` (phase -> wall_s, cpu_s, shards)."""
    for p in man.get("phases", []):
        a = acc.setdefault(p["phase"], {"wall_s": 0.0, "cpu_s": 0.0, "shards": 0})
        a["wall_s"] += p["wall_s"]
        a["cpu_s"] += p["cpu_s"]
        a["shards"] += 1


def _graph_side(d: Path, man: dict, src_of: dict, models: Counter, captured: Counter, failures: Counter,
                graph_hashes: dict) -> None:
    """Add a shard's models (per source), captures, extraction failures and graph hashes with the sources
    that captured them (``graph_hashes``: hash -> set of sources; full and census shards alike)."""
    for m in man["models"]:
        models[src_of.get(m, m.split(":", 1)[0])] += 1
    for r in _read(d, "extractions"):
        if r.get("status") == "ok":
            captured[src_of.get(r["model_id"], r["model_id"].split(":", 1)[0])] += 1
        else:
            failures[r.get("error_class") or r.get("status") or "unknown"] += 1
    for r in _read(d, "graphs"):
        if r.get("graph_hash"):
            graph_hashes.setdefault(r["graph_hash"], set()).add(src_of.get(r["model_id"], r["model_id"].split(":", 1)[0]))


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def variant_key(row: dict) -> tuple:
    """A profile or long-tail row's variant: ``(subgraph_hash, size, dtype)``."""
    return (row.get("subgraph_hash"), row.get("size"), row.get("dtype"))


def profile_variants(rows: list[dict]) -> dict[tuple, bool]:
    """The variants one shard's ``profiles`` rows (run 0, CPU) timed (:func:`variant_key`) -> whether
    each is confirmed. With the profile's two phases (``phase``: ``screen`` rows for variants the screen
    left, ``protocol`` rows for the screen's candidates and the audit sample, each screened first):
    screened = the timed rows of both phases, confirmed = the stable ``protocol`` rows. Without a
    ``phase`` column (one phase): screened = the timed rows, confirmed = the stable ones."""
    prof = [r for r in rows if r.get("run") == 0 and r.get("device") == "cpu"]
    out: dict[tuple, bool] = {}
    two = bool(prof) and "phase" in prof[0]
    for r in prof:
        if r.get("status") not in TIMED or (two and r.get("phase") not in ("screen", "protocol")):
            continue
        k = variant_key(r)
        out[k] = out.get(k, False) or bool(r.get("stable") and (not two or r.get("phase") == "protocol"))
    return out


def profile_counts(rows: list[dict]) -> tuple[int, int]:
    """``(variants_screened, variants_confirmed)`` of one shard's ``profiles`` rows (:func:`profile_variants`)."""
    v = profile_variants(rows)
    return len(v), sum(v.values())


def first_finished(per_shard: list[tuple[tuple, dict]]) -> dict:
    """One value per key from ``(shard order, {key: value})`` pairs: the value of the shard that comes
    first in order (``(finished_utc, name)``: the shard that finished first), whatever order the pairs
    come in."""
    best: dict = {}
    for order, values in per_shard:
        for k, v in values.items():
            if k not in best or order < best[k][0]:
                best[k] = (order, v)
    return {k: v for k, (_, v) in best.items()}


def build_summary(out: str | Path, num_shards: int, release_tasks: int | None = None,
                  rate_floor: float | None = None) -> dict[str, Any]:
    """The summary dict (module docstring) of the build folder ``out`` cut into ``num_shards``; ``tasks`` is
    ``release_tasks`` where given (the release's count), else the shards' sum; ``rate_floor``: the
    ``fullscale.rate_floor`` the next run applies, which the ``yield_order`` walk follows."""
    out = Path(out)
    shards = done_shards(out)
    profiled_rows = profiled_structure_rows(out)  # read once: the rates, their backtest and the shard walk use it
    rates = rates_of(profiled_rows.values())
    catalog = out / "catalog.parquet"
    cat_rows = pq.read_table(catalog, columns=["model_id", "source"]).to_pylist() if catalog.is_file() else []
    src_of = {r["model_id"]: r["source"] for r in cat_rows}
    models: Counter = Counter()
    captured: Counter = Counter()
    failures: Counter = Counter()
    graph_hashes: dict[str, set[str]] = {}
    patterns: set[str] = set()
    structures: set[str] = set()
    structures_timed: set[str] = set()
    kinds: dict[str, tuple[str | None, int | None]] = {}  # structure -> anchor op and FX ops of its first subgraph row
    subgraphs: set[str] = set()
    over_quota: dict[str, str] = {}  # subgraph left out by the structure quota -> its structure (else its own hash)
    below_floor: dict[str, str] = {}  # subgraph left out by the rate floor -> its structure (else its own hash)
    profiled_structs: set[str] = set()  # structures (else subgraph hashes) a full or drain shard left a member of ok
    waiting_by_shard: dict[int, set[str]] = {}  # full shard -> the structures its rate floor left out
    timed_hashes: set[str] = set()
    variants: list[tuple[tuple, dict]] = []  # (shard order, variant -> confirmed) per shard
    slow: list[tuple[tuple, dict]] = []  # (shard order, variant -> (slower than eager, than Dynamo-only)) per shard
    shard_tasks = 0
    phases: dict[str, dict[str, float]] = {}
    machines: dict[str, dict] = {}
    wall = cpu = 0.0
    by_design: dict[str, dict] = {}  # stage params digest + structure quota -> shards, models, CPU s, last finish
    drain = {"shards_done": 0, "cpu_s": 0.0, "wall_s": 0.0, "phases": {}, "tasks": 0, "structures_profiled": 0}
    full_ids: set[int] = set()
    drained_ids: set[int] = set()
    # full shards, then drain shards: a drain is the profile side of a full shard run again (fullscale.shards), so
    # it adds no models, graphs, design basis or machine, and its CPU goes to its own block
    for d, is_drain in [*((d, False) for d in shards), *((d, True) for d in done_shards(out, DRAIN))]:
        man = read_manifest(d)
        if is_drain:
            drained_ids.add(man["shard"])
        else:
            full_ids.add(man["shard"])
            _graph_side(d, man, src_of, models, captured, failures, graph_hashes)
        profs = _read(d, "profiles")
        timed = {r["subgraph_hash"] for r in profs if r.get("status") in TIMED}
        timed_hashes |= timed
        shard_timed: set[str] = set()  # structures this shard timed (the projection's basis)
        for r in _read(d, "subgraphs"):
            if r.get("skip_reason") != SEEN_REASON:
                subgraphs.add(r["subgraph_hash"])
                if r.get("pattern"):
                    patterns.add(r["pattern"])
                if r.get("structure_hash"):
                    structures.add(r["structure_hash"])
                    kinds.setdefault(r["structure_hash"], (r.get("anchor"), r.get("num_ops")))
                    if r["subgraph_hash"] in timed:
                        shard_timed.add(r["structure_hash"])
                key = r.get("structure_hash") or r["subgraph_hash"]
                if r.get("skip_reason") == QUOTA_REASON:
                    over_quota[r["subgraph_hash"]] = key
                if r.get("skip_reason") == FLOOR_REASON:
                    below_floor[r["subgraph_hash"]] = key
                    waiting_by_shard.setdefault(man["shard"], set()).add(key)
                if r.get("status") == "ok":
                    drain["structures_profiled"] += is_drain and key not in profiled_structs
                    profiled_structs.add(key)
        structures_timed |= shard_timed
        order = (man.get("finished_utc") or "", f"{DRAIN}/{d.name}" if is_drain else d.name)
        variants.append((order, profile_variants(profs)))
        slow.append((order, {variant_key(r): (bool(r.get("slower_e2e")), bool(r.get("slower_compiler")))
                             for r in _read(d, "long_tail") if r.get("run") == 0 and r.get("status") in TIMED}))
        shard_tasks += int(man["counts"].get("tasks", 0))
        if is_drain:
            drain["tasks"] += int(man["counts"].get("tasks", 0))
            drain["shards_done"] += 1
            drain["cpu_s"] += man.get("cpu_s", 0.0)
            drain["wall_s"] += man.get("wall_s", 0.0)
            _add_phases(drain["phases"], man)
            continue
        _add_phases(phases, man)
        wall += man.get("wall_s", 0.0)
        cpu += man.get("cpu_s", 0.0)
        floor = man.get("rate_floor")
        design = f"{man.get('params_sha256') or ''}:quota={man.get('structure_quota')}" + ("" if floor is None else f":floor={floor}")
        basis = by_design.setdefault(design, {"shards": 0, "models": 0, "cpu_s": 0.0, "last": "",
                                              "profile_cpu_s": 0.0, "structures_priced": 0, "structures_timed": 0,
                                              "tasks": 0, "quota": man.get("structure_quota"), "cpu_models": Counter()})
        basis["cpu_models"][(man.get("machine") or {}).get("cpu_model")] += 1
        basis["tasks"] += int(man["counts"].get("tasks", 0))
        basis["structures_timed"] += len(shard_timed)
        if not resumed(man):  # a resumed profile's CPU is its last run's alone
            basis["profile_cpu_s"] += sum(p["cpu_s"] for p in man.get("phases", []) if p["phase"] == "profile")
            basis["structures_priced"] += len(shard_timed)
        basis["shards"] += 1
        basis["models"] += len(man["models"])
        basis["cpu_s"] += man.get("cpu_s", 0.0)
        basis["last"] = max(basis["last"], man.get("finished_utc") or "")
        mk = man["machine"]
        key = f"{mk.get('cpu_identity') or mk.get('cpu_model')} x{mk.get('cpu_logical_cores')} ({mk.get('node')})"
        machines.setdefault(key, {**{k: mk.get(k) for k in ("cpu_model", "cpu_identity", "cpu_logical_cores", "node", "python",
                                                            "versions")},
                                  "shards": 0, "load_avg_1m": []})
        machines[key]["shards"] += 1
        machines[key]["load_avg_1m"].append(mk.get("load_avg_1m"))
    n_profiled = sum(models.values())
    census_ids: set[int] = set()
    census_cpu, census_models, census_phases = 0.0, 0, {}
    for d in done_shards(out, CENSUS):
        man = read_manifest(d)
        census_ids.add(man["shard"])
        census_cpu += man.get("cpu_s", 0.0)
        census_models += len(man["models"])
        _add_phases(census_phases, man)
        if man["shard"] in full_ids:  # its full shard holds all it holds
            continue
        _graph_side(d, man, src_of, models, captured, failures, graph_hashes)
        for r in _read(d, "subgraphs"):
            subgraphs.add(r["subgraph_hash"])
            if r.get("pattern"):
                patterns.add(r["pattern"])
            if r.get("structure_hash"):
                structures.add(r["structure_hash"])
                kinds.setdefault(r["structure_hash"], (r.get("anchor"), r.get("num_ops")))
    failed = {}
    cap_cpu: Counter = Counter()  # model -> capture CPU s of its attempts in failed shards' progress
    for kind in (SHARDS, CENSUS, DRAIN):
        kroot = shards_root(out, kind)
        for f in sorted(kroot.glob("*.failed.json")) if kroot.is_dir() else []:
            rec = json.loads(f.read_text())
            for a in (rec.get("progress") or {}).get("capture", []):
                if a.get("cpu_s") is not None:
                    cap_cpu[a["model_id"]] += a["cpu_s"]
            name = rec.get("name", f.name.split(".")[0])
            failed[name if kind == SHARDS else f"{kind}/{name}"] = {
                "phase": rec.get("phase"), "rc": rec.get("rc"), "models": rec.get("models"),
                "phases_done": rec.get("phases_done", []), "failure_classes": rec.get("failure_classes", {}),
                # attempt files committed beside the record (fullscale.shards.pack_attempts): what its next run resumes
                "attempts_packed": _pack_rows(resume_pack_path(out, int(rec["shard"]), kind)) if "shard" in rec else 0}
    n_models = n_profiled
    covered = sum(models.values())
    # the projection: CPU per model of the shards run with the design (stage params + structure quota) of
    # the most recently finished shard, when they hold at least PROJECTION_MIN_MODELS models; else the build's
    cur = max(by_design.items(), key=lambda kv: kv[1]["last"], default=(None, None))
    known = None  # profile CPU s per timed structure of the current design's shards -> what the known structures owe
    if cur[1] and cur[1]["structures_priced"]:
        per = cur[1]["profile_cpu_s"] / cur[1]["structures_priced"]
        known = {"structures_untimed": len(structures - structures_timed), "profile_cpu_s_per_structure": round(per, 1),
                 "core_hours": round(per * len(structures - structures_timed) / 3600, 2)}
    if cur[1] and cur[1]["models"] >= PROJECTION_MIN_MODELS:
        basis = {"scope": "design", "design": cur[0], "shards": cur[1]["shards"], "models": cur[1]["models"],
                 "cpu_s_per_model": round(cur[1]["cpu_s"] / cur[1]["models"], 2)}
    elif n_models:
        basis = {"scope": "build", "design": cur[0], "shards": len(shards), "models": n_models,
                 "cpu_s_per_model": round(cpu / n_models, 2)}
    else:
        basis = None
    tasks = release_tasks if release_tasks is not None else shard_tasks
    to_target = None  # what TARGET_TASKS would take at the current design's tasks per timed structure
    # the current design's rate, or the whole build's while that design has given no task (a new design's
    # first shards: a rate of 0 would make every projection infinite)
    rated = cur[1] if cur[1] and cur[1]["structures_timed"] and cur[1]["tasks"] else \
        {"tasks": sum(b["tasks"] for b in by_design.values()), "structures_timed": sum(b["structures_timed"] for b in by_design.values())}
    if tasks < TARGET_TASKS and cur[1] and rated["structures_timed"] and rated["tasks"]:
        rate = rated["tasks"] / rated["structures_timed"]
        need = -(-(TARGET_TASKS - tasks) * rated["structures_timed"] // rated["tasks"])  # ceil, in ints
        untimed = [kinds.get(h, (None, None)) for h in structures - structures_timed]
        missing = TARGET_TASKS - tasks
        to_target = {"design": cur[0], "rate_basis": "design" if rated is cur[1] else "build",
                     "tasks_per_structure_timed": round(rate, 4), "structures_to_time": int(need),
                     "structures_untimed": len(structures - structures_timed),
                     "core_hours": round(need * known["profile_cpu_s_per_structure"] / 3600, 1) if known else None,
                     "highest_rate_first": _highest_rate_first(out, profiled_rows, untimed, missing, known),
                     "yield_order": _yield_order(out, sorted(set(range(num_shards)) - full_ids), cur[1], missing, rates,
                                                 rate_floor)}
    done = sum(1 for i in full_ids if i < num_shards)
    # waiting: a structure the rate floor left out in some shard and no full shard has profiled (left a member
    # ok, timed or not), before or after; its members left out by the floor or the quota wait with it
    floor_structures = set(below_floor.values()) - profiled_structs
    waiting_shards = {i for i, keys in waiting_by_shard.items() if keys & floor_structures} - drained_ids
    # waiting, though every full shard that left it out has had its drain (a member it could not profile)
    stuck = floor_structures - set().union(*(keys for i, keys in waiting_by_shard.items() if i not in drained_ids))
    # left out by the floor in a structure a shard has profiled since: now as the quota's (one member is timed)
    floor_quota = {h for h, k in below_floor.items() if k not in floor_structures}
    floor_left = {h for h, k in {**over_quota, **below_floor}.items() if k in floor_structures} - timed_hashes
    complete = done == num_shards and not floor_structures
    confirmed_by_variant = first_finished(variants)
    screened, confirmed = len(confirmed_by_variant), sum(confirmed_by_variant.values())
    slow_by_variant = list(first_finished(slow).values())
    slow_e2e, slow_comp = [e for e, _ in slow_by_variant], [c for _, c in slow_by_variant]
    reason = None
    if tasks < TARGET_TASKS:
        if not complete:
            reason = (f"build incomplete: {done} of {num_shards} shards done ({n_models} of {len(cat_rows)} catalog "
                      f"models)" + (f", {len(floor_structures)} structures left below the rate floor" if floor_structures else "")
                      + f"; tasks so far {tasks}")
            if to_target:
                reason += (f"; at {to_target['tasks_per_structure_timed']} tasks per timed structure, {TARGET_TASKS} need "
                           f"about {to_target['structures_to_time']} more structures timed of the "
                           f"{to_target['structures_untimed']} known untimed (~{to_target['core_hours']} core-hours)")
                walk = to_target.get("yield_order") or {}
                if walk.get("shards"):
                    floor = walk["rate_floor"]
                    reason += (f"; in the yield order{'' if floor is None else f' under rate floor {floor}'}, about "
                               f"{walk['shards']} more shards (~{walk['core_hours']} core-hours)")
        else:
            reason = (f"all {num_shards} shards done: the long tail of this CPU holds {tasks} tasks "
                      f"({sum(slow_comp)} of {len(slow_comp)} timed variants slower than Dynamo-only with confidence)")
    return {
        "complete": complete, "shards_done": done, "shards_total": num_shards,
        "shards_failed": failed,
        "catalog_models": len(cat_rows),
        "catalog_by_source": dict(sorted(Counter(r["source"] for r in cat_rows).items())),
        "models": covered, "captured": sum(captured.values()), "models_profiled": n_profiled,
        "by_source": {s: {"models": models[s], "captured": captured[s]} for s in sorted(models)},
        "unique_graphs": len(graph_hashes),
        "unique_graphs_by_source": dict(sorted(Counter(src for v in graph_hashes.values() for src in v).items())),
        "unique_graphs_shared_across_sources": sum(1 for v in graph_hashes.values() if len(v) > 1),
        "unique_subgraphs": len(subgraphs), "families": len(patterns),
        "structures": len(structures), "structures_timed": len(structures_timed),
        "subgraphs_skipped_structure_quota": len((set(over_quota) | floor_quota) - timed_hashes - floor_left),
        "subgraphs_below_rate_floor": len(floor_left), "structures_below_rate_floor": len(floor_structures),
        "variants_screened": screened, "variants_confirmed": confirmed,
        "variants_timed_again": sum(len(v) for _, v in variants) - screened,
        "tasks": tasks, "tasks_shortfall_reason": reason,
        "slowdown_share_e2e": _share(slow_e2e), "slowdown_share_compiler": _share(slow_comp),
        "failure_classes": dict(sorted(failures.items())),
        "phases": {k: {"wall_s": round(v["wall_s"], 1), "cpu_s": round(v["cpu_s"], 1), "shards": v["shards"]}
                   for k, v in phases.items()},
        "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
        "cpu_s_per_model": round(cpu / n_models, 2) if n_models else None,
        "projected_core_hours_remaining": (round(basis["cpu_s_per_model"] * (len(cat_rows) - n_models) / 3600, 2)
                                           if basis and cat_rows else None),
        "projection_basis": basis,
        "profile_core_hours_known_structures": known,
        "tasks_target_projection": to_target,
        "order_estimates": estimate_accuracy(out),
        "task_rates": _task_rates_block(rates),
        "drain": {**{k: round(v, 1) if isinstance(v, float) else v for k, v in drain.items() if k != "phases"},
                  "phases": {k: {"wall_s": round(v["wall_s"], 1), "cpu_s": round(v["cpu_s"], 1), "shards": v["shards"]}
                             for k, v in drain["phases"].items()},
                  "shards_pending": len(waiting_shards), "structures_left_after_drains": len(stuck),
                  # the drains' CPU (every phase) per structure they profiled first, times the structures waiting
                  "projected_core_hours_remaining": (round(drain["cpu_s"] / drain["structures_profiled"]
                                                           * len(floor_structures) / 3600, 1)
                                                     if drain["structures_profiled"] else None)},
        "census": {"shards_done": len(census_ids), "models": census_models, "cpu_s": round(census_cpu, 1),
                   "cpu_s_per_model": round(census_cpu / census_models, 2) if census_models else None,
                   "phases": {k: {"wall_s": round(v["wall_s"], 1), "cpu_s": round(v["cpu_s"], 1), "shards": v["shards"]}
                              for k, v in census_phases.items()},
                   "shards_covered": len(full_ids | census_ids),
                   "projected_core_hours_remaining": (round(census_cpu / census_models * (len(cat_rows) - covered) / 3600, 2)
                                                      if census_models and cat_rows else None)},
        "capture_measured": ({"models": len(cap_cpu), "cpu_s": round(sum(cap_cpu.values()), 1),
                              "cpu_s_per_model": round(sum(cap_cpu.values()) / len(cap_cpu), 1),
                              "projected_core_hours_all_models": round(sum(cap_cpu.values()) / len(cap_cpu) * len(cat_rows) / 3600, 1)}
                             if cap_cpu else None),
        "machine": list(machines.values()),
        "written_on": machine(os.getpid()),
        "written_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load_avg_1m_at_write": round(os.getloadavg()[0], 2),
    }


def committed_release_tasks(out: str | Path) -> int | None:
    """The task count of the committed release (``<out>/release/manifest.json``) when it was built from
    exactly the full and drain shards committed now (its ``shards`` and ``drain_shards``), else None (no
    release, or shards committed since: the shards' sum is then the count to give)."""
    man = Path(out) / "release" / "manifest.json"
    try:
        rel = json.loads(man.read_text())
    except (OSError, ValueError):
        return None
    done = sorted(int(read_manifest(d)["shard"]) for d in done_shards(out))
    drained = sorted(int(read_manifest(d)["shard"]) for d in done_shards(out, DRAIN))
    same = sorted(rel.get("shards") or []) == done and sorted(rel.get("drain_shards") or []) == drained
    return int(rel["tasks"]) if same and "tasks" in rel else None


def write_summary(out: str | Path, num_shards: int, path: str | Path = "metrics/full/summary.json",
                  release_tasks: int | None = None, command: str | None = None, rate_floor: float | None = None) -> dict:
    """Compute :func:`build_summary` and write it (atomically) to ``path``."""
    s = build_summary(out, num_shards, release_tasks, rate_floor)
    if command:
        s["command"] = command
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, s, indent=1)
    return s
