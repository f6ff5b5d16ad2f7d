"""Which pending shard runs next (fullscale/order.py): the profile each shard owes, priced from the census
shards and the committed full shards, and the local executor's pick of the cheapest shard that fits the
time before the deadline."""

from __future__ import annotations

import json
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
    return [{"phase": "capture", "cpu_s": capture, "rc": 0}, {"phase": "dedupe", "cpu_s": dedupe, "rc": 0},
            {"phase": "decompose", "cpu_s": decompose, "rc": 0}]


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
    assert best.shard == 1 and sorted(e.shard for e in too_long) == [0, 2]
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
    """With 300 s before the deadline the chooser starts shard 1, then the cheap shard 3 and the unknown
    shard 4, and starts neither 0 nor 2 (too long for what is left); they stay pending."""
    ran = []

    def entry(spec):
        ran.append(spec["shard"])
        man = {"shard": spec["shard"], "models": [], "counts": {}, "phases": [], "machine": {}, "code": {}}
        return {"shard": spec["shard"], "ok": True, "manifest": man, "files": {"manifest.json": json.dumps(man).encode()}}

    specs = [{"shard": i} for i in range(5)]
    run_local(specs, build, entry=entry, choose=cost_chooser(build, 1, time.time() + 300.0))
    assert ran == [1, 3, 4]
    assert sorted(read_manifest(d)["shard"] for d in done_shards(build)) == [1, 3, 4, 5]
    out = capsys.readouterr().out
    assert "next: s0001 (~1 subgraphs to profile, ~250 CPU-s" in out and "no pending shard fits" in out


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
    choose = cost_chooser(build, 1, None)
    assert choose(specs) == 0 and specs[0]["estimate"] == {"subgraphs": 1, "cpu_s": 250.0}
    assert "estimate" not in specs[1]
    from fullscale.order import estimate_accuracy

    assert estimate_accuracy(build) is None  # shard 5 ran before any estimate
    _table_shard(build, 1, {}, counts={"subgraphs_profilable_new": 2}, cpu_s=500.0,
                 estimate={"subgraphs": 1, "cpu_s": 250.0})
    _table_shard(build, 2, {}, counts={"subgraphs_profilable_new": 2}, cpu_s=210.0,
                 estimate={"subgraphs": 2, "cpu_s": 420.0})
    assert estimate_accuracy(build) == {"shards": 2, "subgraphs_estimated": 3, "subgraphs_profiled": 4,
                                        "cpu_s_estimated": 670.0, "cpu_s": 710.0,
                                        "cpu_ratio": {"min": 0.5, "median": 2.0, "max": 2.0}}
