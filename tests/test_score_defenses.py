"""Cheats, each next to an honest candidate of the same shape (same subgraph, same run settings),
scored across the trust boundary: honest-while-watched, output replay, constant / zero outputs,
threads and processes started at import or compile time, the evaluator's own clock, RNG
subgraphs, the dispatch guard, one replacement per task, resumable scoring and the reward
function. The cheat corpus of the boundary itself is in ``tests/test_score_boundary.py``."""

import random

import pytest

from curate.score.defenses.clock import AccountableConfig, measure_boundary
from curate.score.defenses.integrity import check_source
from curate.score.evaluate import evaluate_subgraph, one_replacement_per_task, run_candidate
from curate.score.synthetic_tasks import builtin_task_set
from tests.score_fixtures import HERE, cand, kinds

FAST = {"timing": False, "share_sandbox": True}
TIMED = {"warmup": 1, "trials": 3, "min_trial_ms": 0.5, "retries": 0, "share_sandbox": True}


@pytest.fixture(scope="module")
def subs():
    return {s.subgraph_id: s for s in builtin_task_set(include_rng=True)}


def test_honest_while_watched_is_caught_in_timed_calls(subs):
    honest = evaluate_subgraph(subs["gelu_tanh:0"], cand("honest_backend"), TIMED)
    assert honest["status"] == "ok" and honest["violations"] == [] and honest["n_checked"] == 3 * 2
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("watched_backend"), TIMED)
    assert r["status"] == "violation" and "timed_output_mismatch" in kinds(r) and r["error_code"] == 1
    # the checks before timing alone do not see it: the cheat is correct on its first calls
    assert evaluate_subgraph(subs["gelu_tanh:0"], cand("watched_backend"), FAST)["status"] == "ok"


def test_timed_mismatch_counts_levels_from_the_judging_level_at_the_finest():
    """FRESH_CHECK_LEVEL -5, FRESH_MARGIN 2: exact before timing (-10), the timed calls may pass from
    up to -3; from -7 before, up to -3 too; from -4 before, up to -2; failing everywhere is a mismatch."""
    from curate.score.defenses.checks import timed_mismatch

    assert not timed_mismatch(-10, -6) and not timed_mismatch(-10, -3) and timed_mismatch(-10, -2)
    assert not timed_mismatch(-7, -3) and timed_mismatch(-7, -2)
    assert not timed_mismatch(-4, -2) and timed_mismatch(-4, -1)
    assert timed_mismatch(-10, None) and not timed_mismatch(None, None)


def test_replay_of_a_cloned_output_is_caught(subs):
    r = evaluate_subgraph(subs["softmax:0"], cand("replay_backend"), TIMED)
    assert r["status"] == "violation" and {"input_independent", "fresh_input_mismatch"} <= kinds(r)
    assert any("of a timed trial" in v for v in r["violations"])  # caught again inside the timed calls
    assert "cached_output" not in kinds(r)  # a clone shares no storage: the alias check alone misses it


@pytest.mark.parametrize("name", ["skip_backend", "constant_backend"])
def test_constant_or_zero_outputs_are_violations_at_every_level(subs, name):
    r = evaluate_subgraph(subs["softmax:0"], cand(name), FAST)
    assert r["status"] == "violation" and "input_independent" in kinds(r) and r["min_pass_t"] is None
    from curate.score.scoring import score_curve

    assert all(d["n_correct"] == 0 for d in score_curve([r]))  # correct at no t (accuracy code 1)
    assert evaluate_subgraph(subs["softmax:0"], cand("honest_backend"), FAST)["violations"] == []


@pytest.mark.parametrize("name,kind", [("pool_backend", "threads_started"), ("native_thread_backend", "threads_started"),
                                       ("process_backend", "processes_started")])
def test_threads_and_processes_started_at_import_or_compile_are_caught(subs, name, kind):
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand(name), FAST)
    assert r["status"] == "violation" and kind in kinds(r)
    assert any("after import and compile" in v for v in r["violations"])
    assert check_source((HERE / f"{name}.py").read_text())  # the static layer rejects all three too
    assert evaluate_subgraph(subs["gelu_tanh:0"], cand("honest_backend"), FAST)["violations"] == []


def test_clock_rewrite_through_torch_sys_modules_is_caught_statically():
    v = check_source((HERE / "clock_backend.py").read_text())
    assert {x.detail.split("...")[-1] for x in v if x.rule == "attribute"} >= {"sys", "__setattr__", "_ORIGINAL_TIMERS"}


def test_rng_subgraph_other_random_numbers_are_not_failed_skipped_dropout_is(subs):
    honest = evaluate_subgraph(subs["rng:dropout"], cand("honest_backend"), TIMED)
    other = evaluate_subgraph(subs["rng:dropout"], cand("rng_stream_backend"), TIMED)
    skip = evaluate_subgraph(subs["rng:dropout"], cand("rng_skip_backend"), TIMED)
    assert "rng" in honest["flags"] and honest["min_pass_t"] == -10  # same stream: equal element-wise
    assert other["status"] == "ok" and other["min_pass_t"] == -10 and "rng_stats_match:0" in other["flags"]
    assert skip["min_pass_t"] is None and "rng_stats_differ:0" in skip["flags"]
    assert "rng" not in evaluate_subgraph(subs["softmax:0"], cand("honest_backend"), FAST)["flags"]


def test_rng_statistics_do_not_fail_honest_draws_when_the_two_references_happen_to_agree():
    """Two reference draws whose statistics happen to coincide (here: one draw and a permutation of
    it, gap 0) left only 2% of the magnitude as tolerance, and an honest 256-element dropout's zero
    share differs from eager's by more than 0.02 in about half of its draws (standard deviation of
    the difference sqrt(2 * 0.09 / 256) = 0.027). The sampling-error term passes every honest draw
    of 300 seeds; the gap-only rule (z = 0) fails many. Cheats move a statistic far beyond it: a
    skipped dropout, another rate, a rescaled or shifted output."""
    import torch

    from curate.score.defenses.compare import rng_stats_agree

    def drop(x, p, seed):  # training-mode dropout with its own seeded mask
        return x * (torch.rand(x.shape, generator=torch.Generator().manual_seed(seed)) >= p) / (1 - p)

    g = torch.Generator().manual_seed(0)
    x = 3 * torch.randn(256, generator=g)
    ref = drop(x, 0.1, 1)
    twin = ref[torch.randperm(256, generator=g)]  # the same mean, std and zero share: gap 0
    honest = [drop(x, 0.1, 100 + s) for s in range(300)]
    assert all(rng_stats_agree(h, ref, twin) for h in honest)
    assert sum(not rng_stats_agree(h, ref, twin, z=0.0) for h in honest) > 30
    big = 3 * torch.randn(16, 256, generator=g)
    ref_b, other_b = drop(big, 0.1, 1), drop(big, 0.1, 2)
    assert rng_stats_agree(drop(big, 0.1, 3), ref_b, other_b)
    for cheat in (big, drop(big, 0.3, 3), 1.5 * drop(big, 0.1, 3), drop(big, 0.1, 3) + 0.5 * float(big.std())):
        assert not rng_stats_agree(cheat, ref_b, other_b)


def test_dispatch_guard_requires_the_pass_to_bring_its_own_kernel(subs):
    g = {**FAST, "dispatch_guard": True}
    honest = evaluate_subgraph(subs["gelu_tanh:0"], cand("guard_honest_pass", "pass"), g)
    cheat = evaluate_subgraph(subs["gelu_tanh:0"], cand("guard_cheat_pass", "pass"), g)
    assert honest["status"] == "ok" and honest["matches"] == 1 and honest["min_pass_t"] <= -5
    assert cheat["status"] == "violation" and "dispatch_guard" in kinds(cheat) and "aten.gelu" in cheat["violations"][0]
    assert evaluate_subgraph(subs["gelu_tanh:0"], cand("guard_cheat_pass", "pass"), FAST)["status"] == "ok"  # option off


def test_no_match_floor_option(subs):
    one = evaluate_subgraph(subs["softmax:0"], cand("nomatch_pass", "pass"), FAST)
    floor = evaluate_subgraph(subs["softmax:0"], cand("nomatch_pass", "pass"), {**FAST, "no_match": "floor"})
    from curate.score.scoring import score_curve

    assert all(d["ES_t"] == 1.0 for d in score_curve([one]))
    import math

    assert floor["flags"] == ["no_match", "no_match_floor"] and floor["floor"] is True
    del floor["floor"]  # as read back from score_samples.parquet (no such column): the flag carries it
    assert all(math.isclose(d["ES_t"], 0.1, rel_tol=1e-12) and math.isclose(d["S_t"], 0.1, rel_tol=1e-12)
               for d in score_curve([floor], b=0.1))


def test_one_replacement_per_task():
    rows = [{"task_id": "a", "subgraph_id": "a:0", "replacements_used": [0], "violations": []},
            {"task_id": "a", "subgraph_id": "a:1", "replacements_used": [1], "violations": []},
            {"task_id": "b", "subgraph_id": "b:0", "replacements_used": [1], "violations": []},
            {"task_id": "b", "subgraph_id": "b:1", "replacements_used": [1], "violations": []}]
    one_replacement_per_task(rows)
    assert [r.get("status") for r in rows] == ["violation", "violation", None, None]
    assert rows[0]["violations"][0].startswith("multi_replacement: task a")


def test_fresh_inputs_per_call_and_unpredictable_checks():
    """Every call sees new input values; the checked calls differ between two runs."""
    seen = []

    def make(seed):
        import torch

        seen.append(seed)
        return [torch.randn(8, generator=torch.Generator().manual_seed(seed))]

    from tests.test_score_reference import FakeBox

    def f(x):
        return x * 2

    ref = FakeBox({"eager": f}, {"eager": 1.0})
    pt = measure_boundary(ref, FakeBox({"candidate": f}, {"candidate": 1.0}), make, [("tensor", "float32", [8])], None,
                          AccountableConfig(warmup=1, trials=3, min_trial_ms=0.0, max_inner=4, retries=0),
                          rng=random.Random(0))
    assert pt.violations == [] and pt.checked_min_pass_t == -10 and pt.inner == 1
    assert len(seen) == len(set(seen))  # no seed (no input) used twice


@pytest.mark.slow  # spawned children
def test_scoring_resumes_from_the_journal(tmp_path):
    cfg = {**FAST, "max_subgraphs": 2, "timeout_s": 200}
    rows1, _ = run_candidate(cand("honest_backend"), "builtin", cfg, journal_dir=tmp_path, log=lambda *_: None)
    (journal,) = tmp_path.glob("*.eval.jsonl")
    lines = journal.read_text().splitlines()
    journal.write_text(lines[0] + "\n" + lines[1][:10])  # killed while writing the second row
    msgs = []
    rows2, _ = run_candidate(cand("honest_backend"), "builtin", cfg, journal_dir=tmp_path, log=msgs.append)
    assert any("resumed 1 of 2" in m for m in msgs) and [r["subgraph_id"] for r in rows2] == [r["subgraph_id"] for r in rows1]


@pytest.mark.slow  # spawned children
def test_score_candidate_is_a_reward_with_the_same_isolation():
    from curate.score.reward import score_candidate
    from curate.score.trajectories import trajectories_table

    honest = score_candidate((HERE / "honest_backend.py").read_text(), "builtin", max_subgraphs=2, cfg=FAST)
    cheat = score_candidate((HERE / "skip_backend.py").read_text(), "builtin", max_subgraphs=2, cfg=FAST)
    static = score_candidate((HERE / "static_cheat.py").read_text(), "builtin", max_subgraphs=2, cfg=FAST)
    assert honest["valid"] and honest["aggregate_score"] == 0.0 and honest["reward"] == 0.0  # timing off: speedup 1
    assert honest["aggregate_score_vs_dynamo"] == 0.0 and all(v == 1.0 for v in honest["ES_t_vs_dynamo"].values())
    assert not cheat["valid"] and cheat["reward"] == -1.0 and not static["valid"] and static["rows"] == []
    t = trajectories_table(honest["trajectories"] + static["trajectories"])
    assert t.num_rows >= 2 and t.column("task_id").null_count == 1
