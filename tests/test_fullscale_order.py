"""Which pending shard runs next (fullscale/order.py): the profile each shard owes, priced from the census
shards and the committed full shards, and the local executor's pick of the cheapest shard that fits the
time before the deadline."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from fullscale.order import CORES_BUSY, census_index, cost_chooser, estimates, ordered, pick
from fullscale.runner import run_local
from fullscale.shards import CENSUS, QUOTA_REASON, done_shards, read_manifest
from tests.test_fullscale import _prof, _table_shard


def _s(h, structure, graphs, status="ok", why=None):
    return {"subgraph_hash": h, "structure_hash": structure, "status": status, "skip_reason": why,
            "members": [{"graph_hash": g, "segment_index": 0, "node_start": 0, "node_end": 1} for g in graphs]}


def _pre(capture, dedupe=0.0, decompose=0.0):
    return [{"phase": ph, "cpu_s": c, "wall_s": c, "rc": 0}
            for ph, c in (("capture", capture), ("dedupe", dedupe), ("decompose", decompose))]


def _graphs(*hashes):
    return [{"model_id": "m", "graph_index": i, "graph_hash": h} for i, h in enumerate(hashes)]


@pytest.fixture
def build(tmp_path):
    """Census shards 0-3 and one committed full shard (id 5) that decomposed g2 and g9, timed a member of
    structures A and C, at 400 profile CPU-s for its 2 profiled subgraphs (200 CPU-s each), and left h5 out for
    the quota (H keeps its slot: no member of it was timed, so a shard that decomposed g2 again would time h5;
    none does: g2 is seen)."""
    _table_shard(tmp_path, 0, {"graphs": _graphs("g1", "g2"),
                               "subgraphs": [_s("a1", "A", ["g1"]), _s("a2", "A", ["g1"]), _s("b1", "B", ["g1"]),
                                             _s("c1", "C", ["g2"]), _s("h5", "H", ["g2"]),
                                             _s("x1", "X", ["g2"], "skipped", "param_bytes_cap")]},
                 CENSUS, census=True, phases=_pre(100.0, 5.0, 10.0))
    _table_shard(tmp_path, 1, {"graphs": _graphs("g2", "g3"),  # g2 was decomposed in census shard 0
                               "subgraphs": [_s("d1", "D", ["g3"]), _s("a3", "A", ["g3"])]},
                 CENSUS, census=True, phases=_pre(50.0))
    _table_shard(tmp_path, 2, {"graphs": _graphs("g4"),
                               "subgraphs": [_s("e1", "E", ["g4"]), _s("e2", "E", ["g4"]), _s("f1", "F", ["g4"]),
                                             _s("c2", "C", ["g4"])]},
                 CENSUS, census=True, phases=_pre(20.0))
    _table_shard(tmp_path, 3, {}, CENSUS, census=True, phases=_pre(30.0))  # every capture failed
    _table_shard(tmp_path, 5, {"unique_graphs": [{"graph_hash": "g2"}, {"graph_hash": "g9"}],
                               "subgraphs": [_s("c1", "C", ["g2"]), _s("a9", "A", ["g9"]),
                                             _s("h5", "H", ["g2"], "skipped", QUOTA_REASON),
                                             _s("x1", "X", ["g2"], "skipped", "param_bytes_cap")],
                               "profiles": [_prof("c1"), _prof("a9")]},
                 phases=[{"phase": "profile", "cpu_s": 400.0, "rc": 0}], counts={"subgraphs_profilable_new": 2})
    return tmp_path


def test_a_shard_is_priced_by_what_its_profile_would_time(build):
    """Shard 0 keeps g1 (g2 is decomposed by the full shard): A is timed already, so only B is left, at 115
    census CPU-s + 1 x 200; shard 1 finds its g3 in its own census rows (D; A is timed); shard 2 keeps one
    member each of E and F (C is timed); shard 3 captured nothing; shard 4 has no census shard. Without a
    quota every ok member counts."""
    got = {e.shard: (e.subgraphs, e.cpu_s) for e in estimates(build, [0, 1, 2, 3, 4], 1)}
    assert got == {0: (1, 315.0), 1: (1, 250.0), 2: (2, 420.0), 3: (0, 30.0), 4: (None, None)}
    every = {e.shard: e.subgraphs for e in estimates(build, [0, 1, 2], None)}
    assert every == {0: 3, 1: 2, 2: 4}  # x1 (skipped), c1 (decomposed by shard 5) and h5 (in the seen g2) never count


def test_the_order_is_cheapest_productive_first_then_nothing_to_profile_then_unknown(build):
    assert ordered(estimates(build, [0, 1, 2, 3, 4], 1)) == [1, 0, 2, 3, 4]
    ests = estimates(build, [0, 1, 2, 3, 4], 1)
    best, too_long = pick(ests, 300.0)  # wall estimate = CPU / CORES_BUSY: shard 1 needs 294 s, shard 0 371 s
    assert best.shard == 1 and sorted(e.shard for e in too_long) == [0, 2, 4]  # 4: no price, no start before a deadline
    assert pick(ests, None)[1] == []
    assert 250.0 / CORES_BUSY <= 300.0 < 315.0 / CORES_BUSY
    assert pick(ests, 280.0)[0].shard == 3  # shard 1's 250 CPU-s need 294 s wall: only the cheap or unknown fit
    assert pick(ests, 100.0)[0].shard == 3
    assert pick([e for e in ests if e.shard in (0, 2)], 100.0)[0] is None


def test_a_committed_shard_that_times_a_structure_lowers_the_others_price(build):
    """Shard 6 commits a timed member of B: shard 0 has nothing left to profile and moves behind the
    productive shards."""
    _table_shard(build, 6, {"unique_graphs": [{"graph_hash": "g7"}], "subgraphs": [_s("b7", "B", ["g7"])],
                            "profiles": [_prof("b7")]},
                 phases=[{"phase": "profile", "cpu_s": 200.0, "rc": 0}], counts={"subgraphs_profilable_new": 1})
    got = {e.shard: (e.subgraphs, e.cpu_s) for e in estimates(build, [0, 1, 2], 1)}
    assert got == {0: (0, 115.0), 1: (1, 250.0), 2: (2, 420.0)}  # 600 CPU-s / 3 subgraphs: still 200 each
    assert ordered(estimates(build, [0, 1, 2, 3], 1)) == [1, 2, 3, 0]


def test_the_local_executor_runs_the_cheapest_that_fits_and_leaves_the_rest(build, capsys):
    """With 300 s before the deadline the chooser starts shard 1, then the cheap shard 3, and starts neither
    0 nor 2 (too long for what is left) nor 4 (no census shard to price it); they stay pending."""
    ran = []

    def entry(spec):
        ran.append(spec["shard"])
        man = {"shard": spec["shard"], "models": [], "counts": {}, "phases": [], "machine": {}, "code": {}}
        return {"shard": spec["shard"], "ok": True, "manifest": man, "files": {"manifest.json": json.dumps(man).encode()}}

    specs = [{"shard": i} for i in range(5)]
    run_local(specs, build, entry=entry, choose=cost_chooser(build, 1, time.time() + 300.0, order="cost"))
    assert ran == [1, 3]
    assert sorted(read_manifest(d)["shard"] for d in done_shards(build)) == [1, 3, 5]
    out = capsys.readouterr().out
    assert "next: s0001, ~1 subgraphs to profile, ~250 CPU-s, ~0.0 tasks expected (4 pending" in out
    assert "no pending shard fits" in out


def test_a_shard_that_would_time_a_structure_a_running_shard_times_waits(build, capsys):
    """Census shard 6 holds a member of D, as shard 1 does: it is the cheapest (10 + 200 CPU-s). While 6 runs
    (not yet committed, so shard 1's estimate still counts D), shard 1 (next in cost order) waits and shard 0
    starts; once 6 is written, or with nothing else that fits, shard 1 starts."""
    _table_shard(build, 6, {"graphs": _graphs("g6"), "subgraphs": [_s("d6", "D", ["g6"])]},
                 CENSUS, census=True, phases=_pre(10.0))
    assert {e.shard: e.structures for e in estimates(build, [0, 1, 2, 6], 1)} == {
        0: {"B"}, 1: {"D"}, 2: {"E", "F"}, 6: {"D"}}
    choose = cost_chooser(build, 1, None, order="cost")
    queue = [{"shard": s} for s in (0, 1, 2, 6)]
    six = queue.pop(choose(queue))
    assert six["shard"] == 6
    assert queue[choose(queue, [six])]["shard"] == 0
    assert "next: s0000, ~1 subgraphs to profile, ~315 CPU-s, ~0.0 tasks expected (2 pending, 1 waiting: they " \
        "share a structure with a running shard)" in capsys.readouterr().out
    assert queue[choose(queue, [])]["shard"] == 1  # 6 written: nothing running
    assert choose([{"shard": 1}], [six]) == 0  # the only shard left shares D: it starts rather than leave a core idle
    assert "shares 1 structures with a running shard: every shard that fits does" in capsys.readouterr().out
    # 300 s left: shard 0 (315 CPU-s, 371 s wall) does not fit, so shard 1 is the only one that does
    assert cost_chooser(build, 1, time.time() + 300.0, order="cost")([{"shard": 0}, {"shard": 1}], []) == 1
    late = cost_chooser(build, 1, time.time() + 300.0, order="cost")
    assert late([{"shard": 6}], []) == 0 and late([{"shard": 0}, {"shard": 1}], [six]) == 1
    assert queue[cost_chooser(build, 1, None, order="cost")(queue, [{"shard": 2}])]["shard"] == 1  # 2 unknown: started elsewhere


def test_the_local_executor_tells_the_chooser_which_shards_are_running(tmp_path):
    """Two workers: the first choice sees nothing running, the second the shard the first took (shards 0 and 1
    wait for each other inside the entry, so 0 cannot have finished), the third at most those two."""
    seen, both = [], threading.Barrier(2)

    def choose(queue, running):
        seen.append((len(queue), sorted(s["shard"] for s in running)))
        return 0

    def entry(spec):
        if spec["shard"] < 2:
            both.wait(timeout=60)
        return {"shard": spec["shard"], "ok": True, "manifest": {}, "files": {"manifest.json": b"{}"}}

    run_local([{"shard": i} for i in range(3)], tmp_path, entry=entry, workers=2, choose=choose)
    assert seen[:2] == [(3, []), (2, [0])]
    assert len(seen) == 3 and seen[2][0] == 1 and set(seen[2][1]) <= {0, 1}


def test_census_index_maps_each_shard_to_its_graphs_and_each_graph_to_its_subgraphs(build):
    idx = census_index(build)
    assert sorted(r["subgraph_hash"] for r in idx.subgraphs["g2"]) == ["c1", "h5", "x1"]  # census 0's rows
    assert "g9" not in idx.subgraphs  # only a full shard decomposed it: seen, never profiled again
    assert idx.graphs == {0: {"g1", "g2"}, 1: {"g2", "g3"}, 2: {"g4"}, 3: set()}
    assert idx.pre_cpu_s == {0: 115.0, 1: 50.0, 2: 20.0, 3: 30.0}


def test_the_estimate_a_shard_was_started_with_is_compared_with_what_it_did(build):
    """The chooser writes its estimate into the spec (the pipeline keeps it in the manifest); the summary's
    order_estimates sums estimated and actual subgraphs and CPU and gives the per-shard CPU ratio."""
    specs = [{"shard": 1}, {"shard": 2}]
    choose = cost_chooser(build, 1, None, order="cost")
    assert choose(specs) == 0 and specs[0]["estimate"] == {"subgraphs": 1, "unpriced_graphs": 0, "cpu_s": 250.0,
                                                           "tasks": 0.0, "order": "cost", "rates": "anchor_ops"}  # shard 5 gave no task
    assert "estimate" not in specs[1]
    from fullscale.order import estimate_accuracy

    assert estimate_accuracy(build) is None  # shard 5 ran before any estimate
    _table_shard(build, 1, {}, counts={"subgraphs_profilable_new": 2}, cpu_s=500.0,
                 estimate={"subgraphs": 1, "cpu_s": 250.0})
    _table_shard(build, 2, {}, counts={"subgraphs_profilable_new": 2, "tasks": 1}, cpu_s=210.0,
                 estimate={"subgraphs": 2, "cpu_s": 420.0, "tasks": 0.4, "rates": "anchor_ops"})
    _table_shard(build, 3, {}, counts={"subgraphs_profilable_new": 1, "tasks": 0}, cpu_s=100.0,  # before sizes
                 estimate={"subgraphs": 1, "cpu_s": 100.0, "tasks": 2.0})
    _table_shard(build, 7, {}, counts={"subgraphs_profilable_new": 9}, cpu_s=90.0,  # resumed: its CPU is one run's
                 estimate={"subgraphs": 9, "cpu_s": 1800.0}, resumed_attempts={"checked": 20, "timed": 5})
    assert estimate_accuracy(build) == {"shards": 3, "subgraphs_estimated": 4, "subgraphs_profiled": 5,
                                        "cpu_s_estimated": 770.0, "cpu_s": 810.0,
                                        "cpu_ratio": {"min": 0.5, "median": 1.0, "max": 2.0},
                                        "tasks_shards": 2, "tasks_expected": 2.4, "tasks": 1,
                                        "tasks_by_rates": {"anchor": {"shards": 1, "tasks_expected": 2.0, "tasks": 0},
                                                           "anchor_ops": {"shards": 1, "tasks_expected": 0.4, "tasks": 1}}}
    # a shard run under a rate floor is kept apart: it profiled only its high-rate subgraphs
    _table_shard(build, 8, {}, counts={"subgraphs_profilable_new": 1, "tasks": 2}, cpu_s=100.0,
                 estimate={"subgraphs": 1, "cpu_s": 100.0, "tasks": 1.5, "rates": "anchor_ops", "rate_floor": 0.1})
    assert estimate_accuracy(build)["tasks_by_rates"] == {
        "anchor": {"shards": 1, "tasks_expected": 2.0, "tasks": 0}, "anchor_ops": {"shards": 1, "tasks_expected": 0.4, "tasks": 1},
        "anchor_ops@floor=0.1": {"shards": 1, "tasks_expected": 1.5, "tasks": 2}}


def test_a_resumed_profile_does_not_lower_the_price_of_a_subgraph(build):
    """Shard 8 profiled 4 subgraphs for 100 CPU-s in its last run after an earlier run had done most of the
    work (resumed attempts): it does not count, so a subgraph still costs 200 CPU-s."""
    from fullscale.order import profile_cpu_per_subgraph

    _table_shard(build, 8, {}, phases=[{"phase": "profile", "cpu_s": 100.0, "rc": 0}],
                 counts={"subgraphs_profilable_new": 4}, resumed_attempts={"checked": 30, "timed": 12})
    assert profile_cpu_per_subgraph(build) == 200.0
    _table_shard(build, 9, {}, phases=[{"phase": "profile", "cpu_s": 100.0, "rc": 0}],
                 counts={"subgraphs_profilable_new": 4}, resumed_attempts={"checked": 0, "timed": 0})
    assert profile_cpu_per_subgraph(build) == 500.0 / 6


def test_graphs_the_census_could_not_load_leave_their_shard_unpriced(build):
    """Census shard 10 skipped a graph it could not load (graph_skips unloadable:*): its row-less unique graph
    g10b is unpriced (today's loader may take it), so shard 10's 1 subgraph is a lower bound; it is ordered
    after the priced shards, and before a deadline it starts only where its lower-bound estimate fits (a run
    stopped at the deadline resumes), also while a priced shard too long for the window stays queued."""
    _table_shard(build, 10, {"graphs": _graphs("g10a", "g10b"), "unique_graphs": [{"graph_hash": "g10a"}, {"graph_hash": "g10b"}],
                             "subgraphs": [_s("k1", "K", ["g10a"])]}, CENSUS, census=True, phases=_pre(10.0))
    d = build / CENSUS / "s0010"
    (d / "metrics").mkdir()
    (d / "metrics" / "decompose.json").write_text(json.dumps({"graph_skips": {"unloadable:UnsafeTarget": 1}}))
    assert census_index(build).unpriced == {"g10b"}
    e10 = estimates(build, [10], 1)[0]
    assert (e10.subgraphs, e10.unpriced_graphs, e10.priced) == (1, 1, False)
    assert ordered(estimates(build, [0, 3, 10], 1)) == [0, 3, 10]
    assert pick(estimates(build, [10], 1), None)[0].shard == 10
    # its lower bound at the fixture's 200 profile CPU-s per subgraph: 10 census + 1 x 200 CPU-s; it starts
    # before a deadline where that fits (after the priced shards: shard 1 goes first where both fit)
    assert e10.cpu_s == 210.0
    assert pick([e10], 210.0 / CORES_BUSY)[0] is e10 and pick([e10], 200.0 / CORES_BUSY)[0] is None
    assert pick(estimates(build, [10, 1], 1), 1e9)[0].shard == 1
    assert pick(estimates(build, [10, 1], 1), 260.0) == (e10, [estimates(build, [1], 1)[0]])  # shard 1: 250 / 0.85 s
    # a shard with no census shard at all (4) has no estimate: it waits for a run without a deadline while a
    # priced shard is queued
    e4 = estimates(build, [4], 1)[0]
    e1 = estimates(build, [1], 1)[0]
    assert (e4.subgraphs, e4.cpu_s) == (None, None) and pick([e4, e1], 1e9) == (e1, [e4])
    assert pick([e4], 1e9)[0] is e4 and pick([e4], None)[0] is e4
    assert pick([e10], None)[0] is e10
    # a census shard whose decompose skipped no unloadable graph prices a row-less graph as giving nothing
    (d / "metrics" / "decompose.json").write_text(json.dumps({"graph_skips": {"trivial_graph": 1}}))
    assert census_index(build).unpriced == set() and estimates(build, [10], 1)[0].priced


def test_before_any_profile_shards_go_by_subgraphs_and_without_a_census_by_id(tmp_path):
    """No committed full shard: no CPU rate, so priced shards are ordered by their subgraphs and may start
    before a deadline; with no census shard at all every shard is unpriced and they run in id order."""
    _table_shard(tmp_path, 0, {"graphs": _graphs("g1"), "subgraphs": [_s("a", "A", ["g1"]), _s("b", "B", ["g1"])]},
                 CENSUS, census=True, phases=_pre(10.0))
    _table_shard(tmp_path, 1, {"graphs": _graphs("g2"), "subgraphs": [_s("c", "C", ["g2"])]},
                 CENSUS, census=True, phases=_pre(10.0))
    ests = estimates(tmp_path, [0, 1], 1)
    assert [(e.subgraphs, e.cpu_s) for e in ests] == [(2, None), (1, None)]
    assert ordered(ests) == [1, 0] and pick(ests, 60.0)[0].shard == 1
    bare = estimates(tmp_path / "none", [3, 2], 1)
    assert ordered(bare) == [2, 3] and pick(bare, 60.0)[0].shard == 2


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
def test_a_worker_for_which_nothing_fits_waits_for_the_others_commit(tmp_path):
    """Three shards share structure X: each alone is priced at 2 subgraphs (210 CPU-s, over the 200 s left).
    Shard 0 (1 subgraph, fits) starts; the second worker finds nothing that fits, and instead of stopping
    waits for shard 0's commit, which times X and makes shards 1 and 2 fit: the two run on both workers."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    _table_shard(tmp_path, 0, {"graphs": _graphs("g0"), "subgraphs": [_s("x0", "X", ["g0"])]}, CENSUS, census=True,
                 phases=_pre(10.0))
    for k in (1, 2):
        _table_shard(tmp_path, k, {"graphs": _graphs(f"g{k}"), "subgraphs": [_s(f"x{k}", "X", [f"g{k}"]),
                                                                             _s(f"y{k}", f"Y{k}", [f"g{k}"])]},
                     CENSUS, census=True, phases=_pre(10.0))
    _table_shard(tmp_path, 5, {"unique_graphs": [{"graph_hash": "g5"}], "subgraphs": [_s("c", "C", ["g5"])],
                               "profiles": [_prof("c")]},
                 phases=[{"phase": "profile", "cpu_s": 100.0, "rc": 0}], counts={"subgraphs_profilable_new": 1})

    def table(rows):
        b = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), b)
        return b.getvalue()

    ran = []

    def entry(spec):
        s = spec["shard"]
        ran.append((s, threading.current_thread().name))
        time.sleep(0.5)
        subs = [_s(f"x{s}", "X", [f"g{s}"])] + ([_s(f"y{s}", f"Y{s}", [f"g{s}"])] if s else [])
        man = {"shard": s, "models": [], "counts": {"subgraphs_profilable_new": len(subs)}, "machine": {}, "code": {},
               "phases": [{"phase": "profile", "cpu_s": 100.0 * len(subs), "rc": 0}]}
        files = {"manifest.json": json.dumps(man).encode(), "tables/unique_graphs.parquet": table([{"graph_hash": f"g{s}"}]),
                 "tables/subgraphs.parquet": table(subs), "tables/profiles.parquet": table([_prof(r["subgraph_hash"]) for r in subs])}
        return {"shard": s, "ok": True, "manifest": man, "files": files}

    run_local([{"shard": i} for i in range(3)], tmp_path, entry=entry, workers=2,
              choose=cost_chooser(tmp_path, 1, time.time() + 200.0, order="cost"))
    assert sorted(s for s, _ in ran) == [0, 1, 2] and ran[0][0] == 0
    assert {w for s, w in ran if s in (1, 2)} == {"fullscale-worker-0", "fullscale-worker-1"}


def test_a_deadline_typed_late_is_refused_and_one_long_past_means_tomorrow():
    from datetime import datetime, timezone

    from fullscale.runner import deadline_epoch

    now = datetime(2026, 12, 6, 8, 36, tzinfo=timezone.utc)
    assert deadline_epoch("09:00", now) == datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc).timestamp()
    with pytest.raises(ValueError, match="passed 1 min ago"):
        deadline_epoch("08:35", now)
    assert deadline_epoch("02:00", datetime(2026, 12, 6, 20, 0, tzinfo=timezone.utc)) == datetime(
        2026, 12, 7, 2, 0, tzinfo=timezone.utc).timestamp()  # 18 h past: tomorrow's
    assert deadline_epoch(None) is None
    for bad in ("1730", "25:00", "ab:cd", "9:5", "09:60", ":30"):  # the message names the flag and the value
        with pytest.raises(ValueError, match=f"--stop-after '{bad}': give a UTC time as HH:MM"):
            deadline_epoch(bad, now, flag="--stop-after")


def test_a_stop_after_time_past_midnight_is_tomorrows_and_one_passed_starts_nothing(tmp_path, monkeypatch):
    """``--stop-after`` is read as the deadline is: at 23:49, 00:40 is tomorrow's (a clock comparison read it
    as passed, and the run started no shard without a word), 23:30 is refused by name; a stop time passed
    starts no shard, one ahead starts them all."""
    from datetime import datetime, timezone

    from fullscale.runner import deadline_epoch

    late = datetime(2026, 12, 6, 23, 49, tzinfo=timezone.utc)
    assert deadline_epoch("00:40", late, flag="--stop-after") == datetime(2026, 12, 7, 0, 40, tzinfo=timezone.utc).timestamp()
    with pytest.raises(ValueError, match="--stop-after 23:30 UTC passed 19 min ago"):
        deadline_epoch("23:30", late, flag="--stop-after")

    def entry(spec):
        return {"shard": spec["shard"], "ok": True, "manifest": {}, "files": {"manifest.json": b"{}"}}

    ran = run_local([{"shard": i} for i in range(2)], tmp_path / "a", entry=entry, stop_after_epoch=time.time() - 1)
    assert ran == []
    ran = run_local([{"shard": i} for i in range(2)], tmp_path / "b", entry=entry, stop_after_epoch=time.time() + 3600)
    assert [r["shard"] for r in ran] == [0, 1]


def test_the_cpu_rate_is_this_cpu_models_once_two_shards_ran_on_it(build):
    """The fixture's shard 5 ran on CPU model "x" (200 CPU-s a subgraph). One shard on model "slow" (600) does
    not replace the build's rate for a "slow" machine; two do; other models keep the build's rate."""
    from fullscale.order import profile_cpu_per_subgraph

    def shard(i):
        _table_shard(build, i, {}, phases=[{"phase": "profile", "cpu_s": 600.0, "rc": 0}],
                     counts={"subgraphs_profilable_new": 1}, machine={"cpu_model": "slow"})

    shard(11)
    assert profile_cpu_per_subgraph(build, "slow") == 1000.0 / 3
    shard(12)
    assert profile_cpu_per_subgraph(build, "slow") == 600.0 and profile_cpu_per_subgraph(build, "x") == 1600.0 / 4
    assert estimates(build, [0], 1, cpu="slow")[0].cpu_s == 115.0 + 600.0


def test_a_stopped_shard_is_priced_less_what_its_committed_attempts_resume(build):
    """Shard 2 (20 census CPU-s + 2 subgraphs x 200) stopped after 300 profile CPU-s on CPU model "x" with its
    attempts packed: it is priced at 120 here, on "x"; at 100 (the 20% floor of its profile) after 1,000; at
    420 on another CPU model, or on another host of model "x" (or one the record does not name), whose run
    times the pack's timings again, or with no pack to resume."""
    from fullscale.order import resume_credits
    from fullscale.shards import host_identity, resume_pack_path, write_failure
    from passnet_common.machine import cpu_model

    def stop(cpu_s, cpu="x", host=None):
        host = host_identity(cpu) if host is None else host
        write_failure(build, 2, {"shard": 2, "phase": "profile", "rc": None, "machine": {"cpu_model": cpu, "cpu_identity": host},
                                 "phases_done": [*_pre(20.0), {"phase": "profile", "cpu_s": cpu_s, "rc": None}]})

    stop(300.0)
    assert resume_credits(build, "x") == {}  # no pack: nothing to resume
    resume_pack_path(build, 2).write_bytes(b"pack")
    e = estimates(build, [2], 1, cpu="x")[0]
    assert (e.cpu_s, e.resumed_cpu_s, e.subgraphs) == (120.0, 300.0, 2)
    assert estimates(build, [2], 1, cpu="y")[0].cpu_s == 420.0
    stop(1000.0)
    assert estimates(build, [2], 1, cpu="x")[0].cpu_s == 100.0
    stop(1000.0, cpu="y")
    assert estimates(build, [2], 1, cpu="x")[0].cpu_s == 420.0
    # the machine that will run it resumes only its own host's timings; a price for CPU model "x" (the summary's,
    # whichever machine writes it) goes by the model alone
    stop(300.0, host="x | GenuineTest family 0 model 0 | avx2")  # another CPU the name "x" covers
    assert resume_credits(build, "x", host_identity("x")) == {} and resume_credits(build, "x") == {2: 300.0}
    stop(300.0)
    assert resume_credits(build, "x", host_identity("x")) == {2: 300.0}
    write_failure(build, 2, {"shard": 2, "phase": "profile", "rc": None, "machine": {"cpu_model": "x"},
                             "phases_done": [*_pre(20.0), {"phase": "profile", "cpu_s": 300.0, "rc": None}]})
    assert resume_credits(build, "x", host_identity("x")) == {}  # a record that names no host
    here = cpu_model()  # estimates without a CPU: this machine's price, its host's credit
    stop(300.0, cpu=here)
    assert estimates(build, [2], 1)[0].resumed_cpu_s == 300.0
    stop(300.0, cpu=here, host=f"{here} | GenuineTest family 0 model 0 | avx2")
    assert estimates(build, [2], 1)[0].resumed_cpu_s == 0.0


def _anchored(h, structure, graphs, anchor):
    return {**_s(h, structure, graphs), "anchor": anchor}


def test_yield_order_runs_first_the_shard_with_the_most_tasks_expected_per_cpu_second(tmp_path):
    """Committed full shards profiled 10 conv2d structures (5 of them with a task) and 10 linear ones (no task)
    at 100 profile CPU-s each, none with an ops count (size unknown: by anchor alone): overall 0.25 tasks a
    subgraph, conv2d (5 + 20 x 0.25) / (10 + 20) = 1/3, linear 5 / 30 = 1/6, an anchor never timed the
    overall 0.25. Census shard 0 would profile one linear subgraph (110 CPU-s), shard 1 two conv2d ones (210
    CPU-s), shard 2 one of an unseen anchor (110 CPU-s): cost order runs 0 and 2 first, yield order 1 (0.67
    tasks / 210 CPU-s), then 2, then 0; a pick under a deadline still starts only what fits."""
    from fullscale.order import task_rates, yield_key
    from tests.test_fullscale import _table_shard

    for sid, anchor, tasks in ((20, "conv2d", 5), (21, "linear", 0)):
        hs = [f"{anchor}{i}" for i in range(10)]
        _table_shard(tmp_path, sid, {"unique_graphs": [{"graph_hash": f"g{sid}"}],
                                     "subgraphs": [_anchored(h, h.upper(), [f"g{sid}"], anchor) for h in hs],
                                     "profiles": [_prof(h) for h in hs],
                                     "tasks": [{"subgraph_hashes": [h]} for h in hs[:tasks]]},
                     phases=[{"phase": "profile", "cpu_s": 1000.0, "wall_s": 1000.0, "rc": 0}],
                     counts={"subgraphs_profilable_new": 10, "tasks": tasks}, structure_quota=1)
    _table_shard(tmp_path, 0, {"graphs": _graphs("g0"), "subgraphs": [_anchored("l0", "L0", ["g0"], "linear")]},
                 CENSUS, census=True, phases=_pre(10.0))
    _table_shard(tmp_path, 1, {"graphs": _graphs("g1"), "subgraphs": [_anchored("k0", "K0", ["g1"], "conv2d"),
                                                                     _anchored("k1", "K1", ["g1"], "conv2d")]},
                 CENSUS, census=True, phases=_pre(10.0))
    _table_shard(tmp_path, 2, {"graphs": _graphs("g2"), "subgraphs": [_anchored("m0", "M0", ["g2"], "softmax")]},
                 CENSUS, census=True, phases=_pre(10.0))
    rates = task_rates(tmp_path)
    assert rates.by_anchor == {"conv2d": (10, 5), "linear": (10, 0)} and rates.overall == 0.25
    assert (rates.rate("conv2d"), rates.rate("linear"), rates.rate("softmax")) == (1 / 3, 1 / 6, 0.25)
    ests = estimates(tmp_path, [0, 1, 2], 1)
    assert [(e.shard, e.subgraphs, e.cpu_s, round(e.tasks, 4)) for e in ests] == \
        [(0, 1, 110.0, 0.1667), (1, 2, 210.0, 0.6667), (2, 1, 110.0, 0.25)]
    assert ordered(ests) == [0, 2, 1] and ordered(ests, yield_key) == [1, 2, 0]
    assert pick(ests, 200.0, yield_key)[0].shard == 2  # shard 1's 210 CPU-s need 247 s wall: it does not fit
    specs = [{"shard": 0}, {"shard": 1}, {"shard": 2}]
    assert cost_chooser(tmp_path, 1, None, order="yield")(specs) == 1 and specs[1]["estimate"]["order"] == "yield"
    # --max-shards 1 with 200 s left: the cap counts starts among the shards that fit (shard 2), not the first
    # of the yield order (shard 1, too long), and no second shard starts
    choose = cost_chooser(tmp_path, 1, time.time() + 200.0, order="yield", max_starts=1)
    queue = [{"shard": 0}, {"shard": 1}, {"shard": 2}]
    assert queue[choose(queue)]["shard"] == 2 and choose(queue) is None
    # the summary walks the pending shards in that order: 0.67 + 0.25 + 0.17 tasks expected of 430 CPU-s, far
    # from the 195 missing
    from fullscale.summary import build_summary
    walk = build_summary(tmp_path, 3)["tasks_target_projection"]["yield_order"]
    assert {k: v for k, v in walk.items() if k != "by_rate_floor"} == {
        "rate_floor": None, "shards": None, "tasks_expected": 1.1, "core_hours": 0.1, "shards_walked": 3,
        "shards_unpriced": 0, "structures_below_floor": 0, "cpu_model": "x"}
    # under rate floors: 0.2 leaves out shard 0's linear subgraph (1/6), and shard 0 then has nothing to
    # profile; 0.05 none; 0.15 none; every floor of the list is walked
    by = {w["rate_floor"]: (w["tasks_expected"], w["shards_walked"], w["structures_below_floor"]) for w in walk["by_rate_floor"]}
    assert by == {None: (1.1, 3, 0), 0.05: (1.1, 3, 0), 0.1: (1.1, 3, 0), 0.15: (1.1, 3, 0), 0.2: (0.9, 2, 1)}
    # one task short of 200 (a release of 199): the walk reaches it in all 3 shards, and the reason says so
    s = build_summary(tmp_path, 3, release_tasks=199)
    assert s["tasks_target_projection"]["yield_order"]["shards"] == 3
    assert s["tasks_shortfall_reason"].endswith("; in the yield order, about 3 more shards (~0.1 core-hours)")



def test_a_negative_max_shards_is_refused_before_anything_runs(tmp_path):
    """``--max-shards -1`` was ``pending[:-1]`` in id order (all shards but one) and nothing in the cost and
    yield orders: refused, before the catalog is built."""
    from fullscale.config import FullScaleConfig
    from fullscale.runner import run_build

    with pytest.raises(ValueError, match="--max-shards -1: a number of shards, 0 or more"):
        run_build({}, FullScaleConfig(out=str(tmp_path / "out")), tmp_path / "params.yaml", tmp_path / "m.json", "cmd",
                  only=None, max_shards=-1, executor=None, commit=False, stop_after_utc=None, deadline_utc=None)
    assert not (tmp_path / "out").exists()


def test_task_rates_count_a_structure_once_however_many_members_were_profiled(tmp_path):
    """A shard run without the structure quota profiled three members of structure S (two of them tasks) and
    one of T (none); a later shard profiled S's member again: conv2d has 2 profiled structures, 1 with a task."""
    from fullscale.order import task_rates
    from tests.test_fullscale import _table_shard

    subs = [_anchored(h, st, ["g0"], "conv2d") for h, st in (("s1", "S"), ("s2", "S"), ("s3", "S"), ("t1", "T"))]
    _table_shard(tmp_path, 20, {"subgraphs": subs, "profiles": [_prof(r["subgraph_hash"]) for r in subs],
                                "tasks": [{"subgraph_hashes": ["s1"]}, {"subgraph_hashes": ["s2"]}]})
    _table_shard(tmp_path, 21, {"subgraphs": [_anchored("s4", "S", ["g1"], "conv2d")], "profiles": [_prof("s4")]})
    assert task_rates(tmp_path).by_anchor == {"conv2d": (2, 1)}


def _two_shard_rates(out, b_tasks_on: str, **man_fields):
    """Full shard 20: 4 conv2d structures (2 with a task) and 4 linear (none); full shard 21: 2 conv2d and 2
    linear, one ``b_tasks_on`` structure with a task; 100 profile CPU-s a structure."""
    from tests.test_fullscale import _table_shard

    for sid, n, tasks in ((20, 4, ["c20_0", "c20_1"]), (21, 2, [f"{b_tasks_on[0]}21_0"])):
        subs = [_anchored(f"{a[0]}{sid}_{i}", f"{a[0].upper()}{sid}_{i}", [f"g{sid}"], a)
                for a in ("conv2d", "linear") for i in range(n)]
        _table_shard(out, sid, {"subgraphs": subs, "profiles": [_prof(r["subgraph_hash"]) for r in subs],
                                "tasks": [{"subgraph_hashes": [h]} for h in tasks]},
                     phases=[{"phase": "profile", "cpu_s": 100.0 * len(subs), "wall_s": 100.0 * len(subs), "rc": 0}],
                     counts={"subgraphs_profilable_new": len(subs), "tasks": len(tasks)}, **man_fields)


def test_the_rates_backtest_scores_each_shard_with_the_other_shards_rates(tmp_path):
    """Leave one shard out (no ops counts: rates by anchor alone). Shard 21's task is a linear one: shard 20's
    structures get shard 21's rates (overall 1/4: conv2d (0 + 20/4) / 22, linear 6/22) and shard 21's get
    shard 20's (overall 2/8: conv2d 7/24, linear 5/24). Ranked: shard 21's conv2d (7/24, no task), shard 20's
    linear (6/22, none), shard 20's conv2d (5/22, 2 tasks), shard 21's linear (5/24, 1 task). The top half (6
    structures) expected 7/12 + 24/22 = 1.67 structures with a task and had none; the top three quarters (9)
    cut shard 20's conv2d group at 3 of 4, counted pro rata: 1.67 + 15/22 = 2.36 expected, 3/4 x 2 = 1.5
    had one; all 12: 3.0 expected, 3 had one."""
    from fullscale.order import _top, profiled_structure_rows, rates_backtest

    _two_shard_rates(tmp_path, "linear")
    rows = profiled_structure_rows(tmp_path)
    assert len(rows) == 12 and rows["C20_0"] == ("s0020", "conv2d", None, True) \
        and rows["L21_0"] == ("s0021", "linear", None, True)
    bt = rates_backtest(tmp_path, (0.5, 0.75, 1.0))
    assert (bt["shards"], bt["structures"], bt["with_task_predicted"], bt["with_task"]) == (2, 12, 3.0, 3)
    assert [(t["structures"], t["predicted"], t["actual"], t["actual_over_predicted"]) for t in bt["top"]] == \
        [(6, 1.7, 0.0, 0.0), (9, 2.4, 1.5, 0.64), (12, 3.0, 3.0, 1.0)]
    # a cut tie group counts pro rata, whatever order its rows come in
    assert _top([(0.5, True), (0.5, False), (0.2, True)], 1) == _top([(0.2, True), (0.5, False), (0.5, True)], 1) == (0.5, 0.5)


def test_the_rates_backtest_needs_two_shards(tmp_path):
    from fullscale.order import rates_backtest
    from tests.test_fullscale import _table_shard

    assert rates_backtest(tmp_path) is None
    _table_shard(tmp_path, 20, {"subgraphs": [_anchored("c0", "C0", ["g"], "conv2d")], "profiles": [_prof("c0")]})
    assert rates_backtest(tmp_path) is None


def test_the_summary_scales_the_highest_rate_first_projection_by_the_backtest(tmp_path, monkeypatch):
    """Shard 21's task is a conv2d one: 3 tasks of 12 structures (size unknown: by anchor), conv2d (3 + 5) /
    26, linear 5 / 26. The 197 tasks still missing need ceil(197 x 26 / 8) = 641 of the census's 1,282
    untimed conv2d structures (half of them; 17.8 core-hours at 100 CPU-s). Left out, each shard's conv2d rate
    is the other's: shard 21's conv2d 7/24 and shard 20's 6/22 rank first, and that top half expected 7/12 +
    24/22 = 1.67 structures with a task and had 3 (1.79 x): the projection scaled by it is ceil(641 / 1.79) =
    359 structures, 10.0 core-hours. Half of 12 structures is fewer than the 30 a scaling rests on: by
    default the share is widened to all 12 (3.0 expected, 3 had one: 1.0 x, 641 structures)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fullscale.summary import build_summary
    from tests.test_fullscale import _sub, _table_shard

    pq.write_table(pa.Table.from_pylist([{"model_id": f"timm:m{i}", "source": "timm"} for i in range(4)]),
                   tmp_path / "catalog.parquet")
    _two_shard_rates(tmp_path, "conv2d", models=["timm:m0"], params_sha256="p", structure_quota=1)
    untimed = [{**_sub(f"u{i}", f"U{i}"), "anchor": "conv2d"} for i in range(1282)]
    _table_shard(tmp_path, 1, {"subgraphs": untimed}, "census", census=True, models=["timm:m1"])
    got = build_summary(tmp_path, 40)["tasks_target_projection"]["highest_rate_first"]
    assert (got["structures_to_time"], got["core_hours"]) == (641, 17.8)
    bt = got["backtest"]
    assert bt["at_projection"] == {"fraction": 1.0, "structures": 12.0, "predicted": 3.0, "actual": 3.0,
                                   "actual_over_predicted": 1.0, "share": 0.5}
    assert (bt["structures_to_time"], bt["core_hours"]) == (641, 17.8)
    monkeypatch.setattr("fullscale.order.BACKTEST_MIN_STRUCTURES", 1)
    bt = build_summary(tmp_path, 40)["tasks_target_projection"]["highest_rate_first"]["backtest"]
    assert bt["at_projection"] == {"fraction": 0.5, "structures": 6.0, "predicted": 1.7, "actual": 3.0,
                                   "actual_over_predicted": 1.79, "share": 0.5}
    assert (bt["structures_to_time"], bt["core_hours"]) == (359, 10.0)
    assert [t["fraction"] for t in bt["top"]] == [0.05, 0.1, 0.25, 0.5, 1.0]


def test_task_rates_are_kept_by_size_and_by_anchor_within_a_size(tmp_path):
    """A full shard profiled 4 one-op conv2d structures (2 with a task), 4 four-op conv2d ones (none) and 2
    one-op linear ones (1 with a task): overall 3/10. Size classes: one op (3 + 20 x 0.3) / (6 + 20) = 9/26,
    four ops (0 + 6) / (4 + 20) = 1/4, a size never seen the overall 0.3. Kinds, smoothed by 10 toward their
    size: one-op conv2d (2 + 90/26) / 14, one-op linear (1 + 90/26) / 12, four-op conv2d 2.5 / 14, one-op
    softmax (never seen) its size's 9/26; 6 ops and more are one class."""
    from fullscale.order import ops_bucket, task_rates
    from tests.test_fullscale import _table_shard

    kinds = [("conv2d", 1, 4, 2), ("conv2d", 4, 4, 0), ("linear", 1, 2, 1)]
    subs, tasks = [], []
    for anchor, ops, n, k in kinds:
        hs = [f"{anchor}{ops}_{i}" for i in range(n)]
        subs += [{**_anchored(h, h.upper(), ["g"], anchor), "num_ops": ops} for h in hs]
        tasks += [{"subgraph_hashes": [h]} for h in hs[:k]]
    _table_shard(tmp_path, 20, {"subgraphs": subs, "profiles": [_prof(r["subgraph_hash"]) for r in subs], "tasks": tasks})
    r = task_rates(tmp_path)
    assert r.by_kind == {("conv2d", 1): (4, 2), ("conv2d", 4): (4, 0), ("linear", 1): (2, 1)}
    assert r.by_ops == {1: (6, 3), 4: (4, 0)} and r.by_anchor == {"conv2d": (8, 2), "linear": (2, 1)}
    assert (r.ops_rate(1), r.ops_rate(4), r.ops_rate(9)) == pytest.approx((9 / 26, 0.25, 0.3))
    assert (r.rate("conv2d", 1), r.rate("linear", 1), r.rate("conv2d", 4), r.rate("softmax", 1)) == pytest.approx(
        ((2 + 90 / 26) / 14, (1 + 90 / 26) / 12, 2.5 / 14, 9 / 26))
    assert ops_bucket(6) == ops_bucket(40) == 6 and ops_bucket(None) is None
    # size unknown: the anchor over every size, toward the overall rate by 20: conv2d (2 + 6) / (8 + 20)
    assert r.rate("conv2d", None) == pytest.approx(8 / 28)
    assert r.rate("conv2d", 6) == r.rate("conv2d", 11) == pytest.approx(0.3)


def test_the_backtest_ranks_by_size_and_says_what_the_anchor_alone_would_give(tmp_path):
    """Two full shards, each with 2 one-op conv2d structures (both tasks) and 2 four-op ones (none). Left
    out, each shard's one-op conv2d get the other's rate (size (2 + 20 x 0.5) / 22, kind (2 + 10 x 12/22) / 12
    = 0.621) and its four-op ones (10 x 10/22) / 12 = 0.379: the top half is the four one-op structures, all
    tasks. By anchor alone every structure has one rate, and the top half gives half of its 4 tasks pro rata."""
    from fullscale.order import rates_backtest
    from tests.test_fullscale import _table_shard

    for sid in (20, 21):
        subs = [{**_anchored(f"c{sid}_{ops}_{i}", f"C{sid}_{ops}_{i}", [f"g{sid}"], "conv2d"), "num_ops": ops}
                for ops in (1, 4) for i in range(2)]
        _table_shard(tmp_path, sid, {"subgraphs": subs, "profiles": [_prof(r["subgraph_hash"]) for r in subs],
                                     "tasks": [{"subgraph_hashes": [f"c{sid}_1_{i}"]} for i in range(2)]})
    bt = rates_backtest(tmp_path, (0.5, 1.0))
    assert [(t["structures"], t["predicted"], t["actual"]) for t in bt["top"]] == [(4, 2.5, 4.0), (8, 4.0, 4.0)]
    assert bt["anchor_only"] == [{"fraction": 0.5, "actual": 2.0}, {"fraction": 1.0, "actual": 4.0}]


def test_the_shard_walk_counts_a_structure_once_and_cuts_the_cpu_of_a_shard_it_shares(tmp_path):
    """Yield order: shard 2 (0.6 tasks / 3,600 CPU-s), shard 1 (1.0 / 7,200), shard 4 (0.2 / 10,800); shard 3
    cannot be priced. Shard 1 shares structure A with shard 2, walked before it: it adds only B's 0.5 and
    half its CPU. One more task: 2 shards, 1.1 tasks, 2.0 core-hours. Five: never, all 3 walked (1.3 tasks,
    5.0 core-hours)."""
    from fullscale.order import Estimate, shard_walk

    def est(shard, cpu, expected, **kw):
        return Estimate(shard, len(expected), cpu, tasks=sum(t for _, t in expected), expected=tuple(expected), **kw)

    ests = [est(1, 7200.0, [("A", 0.5), ("B", 0.5)]), est(2, 3600.0, [("A", 0.5), ("C", 0.1)]),
            est(3, 100.0, [("E", 9.0)], unpriced_graphs=1), est(4, 10800.0, [("D", 0.2)])]
    assert shard_walk(ests, 1.0) == {"shards": 2, "tasks_expected": 1.1, "core_hours": 2.0, "shards_walked": 2,
                                     "shards_unpriced": 1}
    assert shard_walk(ests, 5.0) == {"shards": None, "tasks_expected": 1.3, "core_hours": 5.0, "shards_walked": 3,
                                     "shards_unpriced": 1}
    assert shard_walk([ests[2]], 1.0) is None
    assert shard_walk(ests, 0.0)["shards"] == 0  # nothing missing: no shard needed
    # a structure twice in one shard counts once; a shard's census phases (pre_cpu_s) are paid in full, its
    # profile CPU cut to its new share: shard 4 again, with 1,800 of its 10,800 CPU-s census, and structure A
    again = est(5, 10800.0, [("D", 0.2), ("A", 0.5), ("A", 0.5)], pre_cpu_s=1800.0)
    assert shard_walk([est(2, 3600.0, [("A", 0.5)]), again], 1.0) == {
        "shards": None, "tasks_expected": 0.7, "core_hours": round((3600 + 1800 + 9000 / 3) / 3600, 1),
        "shards_walked": 2, "shards_unpriced": 0}


def test_the_task_rate_plot_draws_the_summarys_rates_and_backtest(tmp_path):
    """The CSV beside the PNG holds the summary's sizes (share = with a task / profiled) and backtest points,
    with the random order's share (fraction x all structures with a task); no task_rates, no plot."""
    from fullscale.plots import write_task_rate_plot

    summary = {"task_rates": {"by_ops": {"1": [10, 4], "6+": [20, 1]}, "by_anchor": {}},
               "tasks_target_projection": {"highest_rate_first": {"backtest": {
                   "shards": 2, "structures": 30, "with_task": 5,
                   "top": [{"fraction": 0.5, "predicted": 3.1, "actual": 4.0}, {"fraction": 1.0, "predicted": 5.2, "actual": 5.0}],
                   "anchor_only": [{"fraction": 0.5, "actual": 2.5}, {"fraction": 1.0, "actual": 5.0}]}},
                   "yield_order": {"by_rate_floor": [
                       {"rate_floor": None, "shards": 20, "tasks_expected": 75.2, "core_hours": 12.9},
                       {"rate_floor": 0.1, "shards": 50, "tasks_expected": 75.1, "core_hours": 7.1},
                       {"rate_floor": 0.2, "shards": None, "shards_walked": 281, "tasks_expected": 60.9, "core_hours": 13.1},
                       {"rate_floor": 0.9, "shards": None, "tasks_expected": None, "core_hours": None}]}}}
    png = write_task_rate_plot(summary, tmp_path / "p" / "rates.png")
    assert png == tmp_path / "p" / "rates.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "p" / "rates.csv").read_text().splitlines() == [
        "panel,x,profiled,with_task,share,predicted,actual,anchor_only,random,core_hours,shards,reached",
        "by_ops,1,10,4,0.4,,,,,,,", "by_ops,6+,20,1,0.05,,,,,,,",
        "backtest,0.5,,,,3.1,4.0,2.5,2.5,,,", "backtest,1.0,,,,5.2,5.0,5.0,5.0,,,",
        # a floor whose walk has nothing to walk (null figures) is left out; one that falls short says so
        "by_rate_floor,none,,,,,75.2,,,12.9,20,True", "by_rate_floor,0.1,,,,,75.1,,,7.1,50,True",
        "by_rate_floor,0.2,,,,,60.9,,,13.1,281,False"]
    assert write_task_rate_plot({"task_rates": None}, tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()


def test_a_rate_floor_leaves_out_the_subgraphs_of_kinds_below_it(tmp_path):
    """The committed shards of the yield-order case (conv2d 1/3, linear 1/6, an unseen anchor the overall
    0.25, sizes unknown). Floor 0.2: the linear row is flagged, conv2d and softmax rows are not, a row not
    ``ok`` never is; without a floor, or before any structure was profiled, none is. The estimate leaves the
    flagged ones out of what the shard would profile (``below_floor`` counts them) and out of its price and
    tasks, and the chooser records the floor in the estimate it starts a shard with."""
    from fullscale.order import TaskRates, rate_floor_picks, task_rates
    from tests.test_fullscale import _table_shard

    for sid, anchor, tasks in ((20, "conv2d", 5), (21, "linear", 0)):
        hs = [f"{anchor}{i}" for i in range(10)]
        _table_shard(tmp_path, sid, {"unique_graphs": [{"graph_hash": f"g{sid}"}],
                                     "subgraphs": [_anchored(h, h.upper(), [f"g{sid}"], anchor) for h in hs],
                                     "profiles": [_prof(h) for h in hs],
                                     "tasks": [{"subgraph_hashes": [h]} for h in hs[:tasks]]},
                     phases=[{"phase": "profile", "cpu_s": 1000.0, "wall_s": 1000.0, "rc": 0}],
                     counts={"subgraphs_profilable_new": 10, "tasks": tasks}, structure_quota=1)
    _table_shard(tmp_path, 0, {"graphs": _graphs("g0"), "subgraphs": [_anchored("l0", "L0", ["g0"], "linear"),
                                                                     _anchored("k0", "K0", ["g0"], "conv2d")]},
                 CENSUS, census=True, phases=_pre(10.0))
    rates = task_rates(tmp_path)
    rows = [{"status": "ok", "anchor": "linear"}, {"status": "ok", "anchor": "conv2d"},
            {"status": "ok", "anchor": "softmax"}, {"status": "skipped", "anchor": "linear"}]
    assert rate_floor_picks(rows, rates, 0.2) == [True, False, False, False]
    assert rate_floor_picks(rows, rates, None) == rate_floor_picks(rows, TaskRates(), 0.2) == [False] * 4
    assert rate_floor_picks(rows, rates, 0.4) == [True, True, True, False]
    [plain] = estimates(tmp_path, [0], 1)
    [floored] = estimates(tmp_path, [0], 1, floor=0.2)
    assert (plain.subgraphs, plain.cpu_s, round(plain.tasks, 4), plain.below_floor) == (2, 210.0, 0.5, 0)
    assert (floored.subgraphs, floored.cpu_s, round(floored.tasks, 4), floored.below_floor) == (1, 110.0, 0.3333, 1)
    assert [s for s, _ in floored.expected] == ["K0"]
    specs = [{"shard": 0}]
    assert cost_chooser(tmp_path, 1, None, order="yield", floor=0.2)(specs) == 0
    assert (specs[0]["estimate"]["rate_floor"], specs[0]["estimate"]["below_floor"], specs[0]["estimate"]["subgraphs"]) == (0.2, 1, 1)


def test_the_pipeline_marks_rows_below_the_floor_and_a_later_shard_judges_them_again(tmp_path):
    """``_mark_rate_floor`` rewrites the flagged ``ok`` rows of a shard's subgraphs table as skipped /
    ``below_rate_floor`` (schema and other columns kept); such a row is not "seen" (a later shard judges it
    again), and the summary counts it, with its structure, until a shard times a member of the structure:
    the build is not complete while one waits."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fullscale.order import TaskRates
    from fullscale.pipeline import _mark_rate_floor
    from fullscale.shards import FLOOR_REASON, seen_hashes
    from fullscale.summary import build_summary
    from tests.test_fullscale import _table_shard

    rates = TaskRates({("conv2d", 1): (10, 5), ("linear", 4): (30, 0)})  # overall 0.125
    schema = pa.schema([("subgraph_hash", pa.string()), ("structure_hash", pa.string()), ("status", pa.string()),
                        ("skip_reason", pa.string()), ("anchor", pa.string()), ("num_ops", pa.int64())])
    rows = [{"subgraph_hash": "a", "structure_hash": "A", "status": "ok", "skip_reason": None, "anchor": "conv2d", "num_ops": 1},
            {"subgraph_hash": "b", "structure_hash": "B", "status": "ok", "skip_reason": None, "anchor": "linear", "num_ops": 4},
            {"subgraph_hash": "c", "structure_hash": "B", "status": "skipped", "skip_reason": "x", "anchor": "linear", "num_ops": 4}]
    path = tmp_path / "subgraphs.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    assert rates.rate("linear", 4) < 0.1 < rates.rate("conv2d", 1)
    assert _mark_rate_floor(path, rates, 0.1) == 1
    t = pq.read_table(path)
    assert t.schema == schema
    assert [(r["status"], r["skip_reason"]) for r in t.to_pylist()] == [("ok", None), ("skipped", FLOOR_REASON), ("skipped", "x")]

    out = tmp_path / "out"
    _table_shard(out, 0, {"subgraphs": t.to_pylist(), "profiles": [_prof("a")]}, structure_quota=1, rate_floor=0.1)
    assert seen_hashes(out)[1] == {"a", "c"}  # b waits: a later shard that meets it judges it again
    s = build_summary(out, 2)
    assert (s["subgraphs_below_rate_floor"], s["structures_below_rate_floor"]) == (1, 1)
    assert "1 structures left below the rate floor" in s["tasks_shortfall_reason"]
    # a later shard profiles another member of B (judged above the floor then), even one whose variants were
    # all skipped: B waits no more, and both shards done is complete
    _table_shard(out, 1, {"subgraphs": [{**rows[1], "subgraph_hash": "d"}], "profiles": [_prof("d", "skipped")]},
                 structure_quota=1)
    s = build_summary(out, 2)
    assert (s["subgraphs_below_rate_floor"], s["structures_below_rate_floor"], s["complete"]) == (0, 0, True)


def test_members_of_a_waiting_structure_count_once_and_apart_from_the_quotas(tmp_path):
    """In one shard the quota keeps one member of B and the floor leaves that one out: the members the quota
    left out wait with it (``subgraphs_below_rate_floor`` 3, not in ``subgraphs_skipped_structure_quota``); a
    later shard that meets one of them again and leaves it out for the quota does not count it twice. A
    quota skip of a structure that does not wait (A, timed) stays the quota's."""
    from fullscale.shards import FLOOR_REASON, QUOTA_REASON
    from fullscale.summary import build_summary
    from tests.test_fullscale import _sub, _table_shard

    _table_shard(tmp_path, 0, {"subgraphs": [_sub("a1", "A"), _sub("a2", "A", "skipped", QUOTA_REASON),
                                              _sub("b1", "B", "skipped", FLOOR_REASON), _sub("b2", "B", "skipped", QUOTA_REASON),
                                              _sub("b3", "B", "skipped", QUOTA_REASON)],
                               "profiles": [_prof("a1")]}, structure_quota=1, rate_floor=0.1)
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("b2", "B", "skipped", QUOTA_REASON), _sub("b4", "B", "skipped", FLOOR_REASON)]},
                 structure_quota=1, rate_floor=0.1)
    s = build_summary(tmp_path, 2)
    assert (s["structures_below_rate_floor"], s["subgraphs_below_rate_floor"], s["subgraphs_skipped_structure_quota"]) == (1, 4, 1)
    assert s["complete"] is False


def test_by_rate_floor_is_kept_when_the_configured_floor_leaves_every_pending_subgraph_out(tmp_path):
    """The summary is written for a run under floor 0.9, above every kind's rate: that walk has nothing to
    walk (its keys null) but the walks under the other floors are still given. Profiled: 4 conv2d structures (1 task)
    and 20 linear ones (none), sizes unknown: overall 1/24, conv2d (1 + 20/24) / 24 = 0.076, linear
    (20/24) / 40 = 0.021. Two pending shards hold another member of one linear structure S: floors from 0.05
    leave S out, counted once (``structures_below_floor`` 1), and have nothing to walk."""
    from fullscale.summary import build_summary
    from tests.test_fullscale import _table_shard

    hs = [f"c{i}" for i in range(4)]
    ls = [f"l{i}" for i in range(20)]
    _table_shard(tmp_path, 20, {"unique_graphs": [{"graph_hash": "g20"}],
                                "subgraphs": [_anchored(h, h.upper(), ["g20"], "conv2d") for h in hs]
                                + [_anchored(h, h.upper(), ["g20"], "linear") for h in ls],
                                "profiles": [_prof(h) for h in hs + ls], "tasks": [{"subgraph_hashes": ["c0"]}]},
                 phases=[{"phase": "profile", "cpu_s": 2400.0, "wall_s": 2400.0, "rc": 0}],
                 counts={"subgraphs_profilable_new": 24, "tasks": 1}, structure_quota=1, rate_floor=0.9)
    for sid in (0, 1):  # both hold structure S (another member each)
        _table_shard(tmp_path, sid, {"graphs": _graphs(f"g{sid}"), "subgraphs": [_anchored(f"s{sid}", "S", [f"g{sid}"], "linear")]},
                     CENSUS, census=True, phases=_pre(10.0))
    walk = build_summary(tmp_path, 21, rate_floor=0.9)["tasks_target_projection"]["yield_order"]
    assert (walk["rate_floor"], walk["shards"], walk["tasks_expected"]) == (0.9, None, None)
    by = {w["rate_floor"]: (w.get("shards_walked"), w["structures_below_floor"]) for w in walk["by_rate_floor"]}
    assert by == {None: (2, 0), 0.05: (None, 1), 0.1: (None, 1), 0.15: (None, 1), 0.2: (None, 1), 0.9: (None, 1)}


def test_a_rate_floor_outside_zero_to_one_is_refused():
    """``fullscale.rate_floor`` is a rate in (0, 1] or null: 0 would leave nothing out, above 1 everything."""
    from fullscale.config import fullscale_config
    from passnet_common.spec import ParamsError

    assert fullscale_config({"rate_floor": 0.1}).rate_floor == 0.1 and fullscale_config({}).rate_floor is None
    for bad in (0.0, 1.5, "high"):
        with pytest.raises(ParamsError, match="rate_floor"):
            fullscale_config({"rate_floor": bad})


def test_a_new_design_without_a_task_yet_is_projected_at_the_builds_rate(tmp_path):
    """The newest shard ran under a rate floor (a design of its own) and gave no task: the projection then
    takes the whole build's tasks per timed structure (1 of 3 here) instead of vanishing, and says so."""
    from fullscale.summary import build_summary
    from tests.test_fullscale import _table_shard

    _table_shard(tmp_path, 0, {"subgraphs": [_anchored(h, h.upper(), ["g"], "conv2d") for h in ("a", "b")],
                               "profiles": [_prof("a"), _prof("b")], "tasks": [{"subgraph_hashes": ["a"]}]},
                 counts={"tasks": 1}, structure_quota=1, finished_utc="2026-01-01T00:00:00")
    _table_shard(tmp_path, 1, {"subgraphs": [_anchored("c", "C", ["g1"], "conv2d")], "profiles": [_prof("c")]},
                 structure_quota=1, rate_floor=0.1, finished_utc="2026-01-02T00:00:00")
    t = build_summary(tmp_path, 4)["tasks_target_projection"]
    assert t["design"].endswith(":quota=1:floor=0.1") and t["rate_basis"] == "build"
    assert (t["tasks_per_structure_timed"], t["structures_to_time"]) == (round(1 / 3, 4), 597)  # 199 x 3


def test_the_summary_command_counts_the_releases_tasks_only_when_it_holds_the_shards_committed_now(tmp_path):
    """``committed_release_tasks``: the release manifest's count where its shards are the full and drain
    shards committed now; None with no release, a release of other shards, or an unreadable manifest."""
    from fullscale.summary import committed_release_tasks
    from tests.test_fullscale import _table_shard

    assert committed_release_tasks(tmp_path) is None
    for sid in (3, 1):
        _table_shard(tmp_path, sid, {})
    (tmp_path / "release").mkdir()
    man = tmp_path / "release" / "manifest.json"
    man.write_text(json.dumps({"shards": [1, 3], "tasks": 7}))
    assert committed_release_tasks(tmp_path) == 7
    _table_shard(tmp_path, 3, {}, "drain", drain=True)  # a drain shard committed after the release was built
    assert committed_release_tasks(tmp_path) is None
    man.write_text(json.dumps({"shards": [1, 3], "drain_shards": [3], "tasks": 8}))
    assert committed_release_tasks(tmp_path) == 8
    _table_shard(tmp_path, 2, {})  # a shard committed after the release was built
    assert committed_release_tasks(tmp_path) is None
    man.write_text("{not json")
    assert committed_release_tasks(tmp_path) is None


def test_a_drain_shard_profiles_what_the_floor_left_waiting_and_completes_the_build(tmp_path):
    """Full shard 0 timed A and left B (b1; b2 beside it for the quota) below the floor; full shard 1 left C
    below the floor, which shard 0 had profiled (not waiting), and D. Drains pending: 0 (B) and 1 (D). Drain
    shard 0 profiles b1 (its timed member fills B's quota, its subgraph is seen) and gives a task: B waits no
    more, only shard 1's drain is pending; the summary adds the drain's variants, task, timed structure and CPU,
    not its models. Drain shard 1 profiles D: nothing waits and both shards done is complete."""
    from fullscale.runner import pending_drains
    from fullscale.shards import DRAIN, FLOOR_REASON, QUOTA_REASON, profiled_structures, seen_hashes, waiting_structures
    from fullscale.summary import build_summary
    from tests.test_fullscale import _sub, _table_shard

    _table_shard(tmp_path, 0, {"subgraphs": [_sub("a1", "A"), _sub("c0", "C"), _sub("b1", "B", "skipped", FLOOR_REASON),
                                              _sub("b2", "B", "skipped", QUOTA_REASON)],
                               "profiles": [_prof("a1"), _prof("c0")]},
                 structure_quota=1, rate_floor=0.1, models=["m0"], cpu_s=100.0)
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("c1", "C", "skipped", FLOOR_REASON), _sub("d1", "D", "skipped", FLOOR_REASON)]},
                 structure_quota=1, rate_floor=0.1, models=["m1"], cpu_s=50.0)
    assert waiting_structures(tmp_path) == {0: {"B"}, 1: {"D"}}
    assert pending_drains(tmp_path) == [0, 1] and pending_drains(tmp_path, only=[1, 5]) == [1]
    s = build_summary(tmp_path, 2)
    assert (s["structures_below_rate_floor"], s["complete"], s["drain"]["shards_pending"]) == (2, False, 2)
    assert (s["models"], s["variants_screened"], s["tasks"]) == (2, 2, 0)

    _table_shard(tmp_path, 0, {"subgraphs": [_sub("a1", "A", "skipped", "seen_in_earlier_shard"), _sub("b1", "B"),
                                              _sub("b2", "B", "skipped", QUOTA_REASON),
                                              _sub("c0", "C", "skipped", "seen_in_earlier_shard")],
                               "profiles": [_prof("b1")], "tasks": [{"subgraph_hashes": ["b1"]}]},
                 DRAIN, drain=True, structure_quota=1, models=["m0"], cpu_s=3600.0, wall_s=4000.0,
                 counts={"tasks": 1}, finished_utc="u")
    assert profiled_structures(tmp_path)["B"] == 1 and "b1" in seen_hashes(tmp_path)[1]
    assert waiting_structures(tmp_path) == {1: {"D"}} and pending_drains(tmp_path) == [1]
    s = build_summary(tmp_path, 2)
    assert (s["structures_below_rate_floor"], s["subgraphs_below_rate_floor"], s["complete"]) == (1, 1, False)
    assert (s["models"], s["models_profiled"], s["variants_screened"], s["tasks"], s["structures_timed"]) == (2, 2, 3, 1, 3)
    assert s["cpu_s"] == 150.0 and s["phases"] == {}  # the full shards' alone: the drain's CPU is its own block
    assert s["drain"] == {"shards_done": 1, "cpu_s": 3600.0, "wall_s": 4000.0, "tasks": 1, "structures_profiled": 1,
                          "phases": {}, "shards_pending": 1, "structures_left_after_drains": 0,
                          "projected_core_hours_remaining": 1.0}  # 3600 CPU-s per structure x D waiting

    _table_shard(tmp_path, 1, {"subgraphs": [_sub("c1", "C", "skipped", QUOTA_REASON), _sub("d1", "D")],
                               "profiles": [_prof("d1")]}, DRAIN, drain=True, structure_quota=1, models=["m1"])
    s = build_summary(tmp_path, 2)
    assert (s["structures_below_rate_floor"], s["complete"], s["drain"]["shards_done"], s["drain"]["shards_pending"]) == \
        (0, True, 2, 0)
    assert waiting_structures(tmp_path) == {} and pending_drains(tmp_path) == []


def test_the_drain_chooser_reads_what_still_waits_and_keeps_running_drains_apart(tmp_path, capsys):
    """Full shards 0, 1 and 2 all left B waiting; 1 also D, 2 also E. With drain 0 running (started for B),
    drain 1 shares B and drain 2 too: the first queued starts (none is clear). Drain 0 commits B: the
    chooser reads the waiting structures again, 1 is started for D alone and 2, clear of it, for E. A drain
    whose structures another drain profiled is not started; the floor row of B in shard 1 counts as the
    quota's in the summary once B is timed (its structure has its member)."""
    from fullscale.runner import drain_chooser
    from fullscale.shards import DRAIN, FLOOR_REASON, QUOTA_REASON
    from fullscale.summary import build_summary
    from tests.test_fullscale import _sub, _table_shard

    for sid, extra in ((0, []), (1, ["D"]), (2, ["E"])):
        _table_shard(tmp_path, sid, {"subgraphs": [_sub(f"b{sid}", "B", "skipped", FLOOR_REASON),
                                                    *[_sub(f"{k.lower()}{sid}", k, "skipped", FLOOR_REASON) for k in extra]]},
                     structure_quota=1, rate_floor=0.1)
    choose = drain_chooser(tmp_path)
    queue = [{"shard": i, "drain": True} for i in (0, 1, 2)]
    zero = queue.pop(choose(queue, []))
    assert zero["shard"] == 0
    assert choose(queue, [zero]) == 0
    assert "shares 1 with a running drain: every queued drain does" in capsys.readouterr().out
    _table_shard(tmp_path, 0, {"subgraphs": [_sub("b0", "B")], "profiles": [_prof("b0")]}, DRAIN, drain=True, structure_quota=1)
    choose = drain_chooser(tmp_path)
    one = queue.pop(choose(queue, []))
    assert one["shard"] == 1 and "next: drain s0001, 1 structures waiting (1 queued)" in capsys.readouterr().out
    assert choose(queue, [one]) == 0  # drain 2 waits for E only: clear of D
    _table_shard(tmp_path, 2, {"subgraphs": [_sub("b2", "B", "skipped", QUOTA_REASON), _sub("e2", "E")],
                               "profiles": [_prof("e2")]}, DRAIN, drain=True, structure_quota=1)
    assert choose([{"shard": 2, "drain": True}], []) is None  # done since: nothing of it waits
    s = build_summary(tmp_path, 3)
    # b1 (floor row of B, timed since in drain 0) is the quota's now; d1 still waits with its shard's drain pending
    assert (s["subgraphs_skipped_structure_quota"], s["subgraphs_below_rate_floor"], s["structures_below_rate_floor"]) == \
        (2, 1, 1)
    assert (s["drain"]["shards_pending"], s["drain"]["structures_left_after_drains"]) == (1, 0)
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("d1", "D", "skipped", "x")]}, DRAIN, drain=True, structure_quota=1)
    s = build_summary(tmp_path, 3)  # drain 1 could not profile d1: D waits with no drain left to run
    assert (s["complete"], s["drain"]["shards_pending"], s["drain"]["structures_left_after_drains"]) == (False, 0, 1)
