"""Re-validation of top candidates on held-out shapes and seeds, and the compute roof of the
roofline: a candidate fitted to the public shapes fails re-validation (floor reward) while its
honest twin passes; the judging rule on rows with known outcomes; FLOPs counted on the reference
graph and a rate above the host's peak refused (a test double for the time, no timed assertion)."""

import math
import random
from pathlib import Path

import pytest
import torch
import torch.fx as fx

from curate.score.defenses.checks import flop_violations, graph_flops
from curate.score.defenses.revalidate import held_out_set, revalidation_failures
from curate.score.reward import score_candidate
from curate.score.synthetic_tasks import HELD_OUT_SHAPES, builtin_task_set

HERE = Path(__file__).parent / "score_candidates"
QUICK = {"timing": False, "revalidate": {"top": 1, "tasks": None, "max_subgraphs": 2}}


def _row(sid, task, status="ok", mp=-10, violations=()):
    return {"subgraph_id": sid, "task_id": task, "status": status, "min_pass_t": mp, "violations": list(violations),
            "scored": True}


def test_revalidation_rule_on_known_rows():
    public = [_row("a:0", "a"), _row("a:1", "a", mp=-5), _row("b:0", "b", "runtime_crash", None)]
    assert revalidation_failures(public, [_row("a:h0", "a", mp=-3)]) == []  # within FRESH_MARGIN of -5
    assert revalidation_failures([_row("e:0", "e")], [_row("e:h0", "e", mp=-3)]) == []  # exact in public: -5 + margin
    assert revalidation_failures(public, [_row("b:h0", "b", "runtime_crash", None)]) == []  # failed in public too
    assert revalidation_failures(public, [_row("x:h0", "x", "reference_failed", None)]) == []
    held = [_row("a:h0", "a", mp=None), _row("a:h1", "a", mp=-1), _row("a:h2", "a", "compile_failure", None),
            _row("b:h1", "b", "violation", None, ["zero_output: x"])]
    bad = revalidation_failures(public, held)
    assert [f.split(":")[1].strip() for f in bad] == ["a", "a", "a", "b"] and all(f.startswith("revalidation:") for f in bad)
    assert "zero_output" in bad[3]
    # a task failed on purpose on one public variant is still judged by its correct ones
    shield = [_row("c:0", "c", "runtime_crash", None), _row("c:1", "c", mp=-10)]
    assert len(revalidation_failures(shield, [_row("c:h0", "c", mp=None)])) == 1


def test_held_out_set_never_holds_a_public_subgraph():
    spec, ids, shapes = held_out_set("builtin", None, ["rmsnorm:0"], 100, random.Random(0))
    assert spec == "builtin-heldout" and shapes and len(ids) == 4 * len(HELD_OUT_SHAPES)
    public_shapes = {tuple(s.make_inputs(0)[0].shape) for s in builtin_task_set()}
    held = {tuple(s.make_inputs(0)[0].shape) for s in builtin_task_set(held_out=True)}
    assert not public_shapes & held
    for seed in range(5):  # 4 of 8: one per task, whichever the draw
        four = held_out_set("builtin", None, [], 4, random.Random(seed))[1]
        assert sorted(i.split(":")[0] for i in four) == ["gelu_tanh", "rmsnorm", "softmax", "swiglu"]
    _, rest, _ = held_out_set("builtin", "builtin", ["rmsnorm:0"], 100, random.Random(0))
    assert "rmsnorm:0" not in rest and len(rest) == 11  # the same task set: the subgraphs outside the sample


@pytest.mark.parametrize("cheat", ["cheat_public_shapes", pytest.param("cheat_public_seeds", marks=pytest.mark.slow)])
def test_a_candidate_fitted_to_the_public_inputs_fails_revalidation(cheat):
    """Untimed (only the checked calls on the public seeds 0 and 1 in the scored run), the cheat is
    exact on everything it was shown; re-validation on held-out shapes and a held-out seed fails it.
    The static check is off: it refuses ``manual_seed`` (the seed table's route), but it is a speed
    bump and re-validation must hold without it."""
    r = score_candidate((HERE / f"{cheat}.py").read_text(), max_subgraphs=1, cfg={**QUICK, "static_check": False})
    assert r["rows"] and all(x["status"] == "ok" and not x["violations"] and x["min_pass_t"] == -10 for x in r["rows"])
    assert r["valid"] is False and r["reward"] == pytest.approx(math.log10(0.1))
    assert r["revalidation"]["held_out_subgraphs"] and r["revalidation"]["failures"]
    assert all(f.startswith("revalidation:") for f in r["revalidation"]["failures"])
    assert r["revalidation"]["input_seed"] != 0


@pytest.mark.slow  # two more sandboxes
def test_held_out_seeds_alone_catch_a_table_of_the_public_inputs():
    """Re-validated on the public task set's other subgraphs (no new shape): the secret seed alone
    fails the candidate that knows the public inputs."""
    cfg = {**QUICK, "static_check": False, "revalidate": {"top": 1, "tasks": "builtin", "max_subgraphs": 2}}
    r = score_candidate((HERE / "cheat_public_seeds.py").read_text(), max_subgraphs=1, cfg=cfg)
    assert r["revalidation"]["task_set"] == "builtin" and r["revalidation"]["failures"] and r["valid"] is False


def test_the_honest_twin_passes_revalidation():
    twin = score_candidate((HERE / "honest_shapes_twin.py").read_text(), max_subgraphs=1, cfg=QUICK)
    assert twin["valid"] is True and twin["revalidation"]["passed"] and twin["reward"] > math.log10(0.1)


def _matmul(a, b):
    return torch.relu(a @ b)


def test_graph_flops_counts_the_reference_matmul():
    gm = fx.symbolic_trace(_matmul)
    m, k, n = 64, 96, 32
    assert graph_flops(gm, [torch.randn(m, k), torch.randn(k, n)]) == 2 * m * k * n
    assert graph_flops(fx.symbolic_trace(lambda x: x * 2), [torch.randn(8)]) == 0


def test_flop_rate_above_the_host_peak_is_a_violation():
    flops, peak = 2 * 512**3, 50e9  # a test double for the host's peak (FLOP/s) and for the candidate's time
    at_4x = flops / (4 * peak) * 1e3  # ms per call at 4x the peak: no CPU does that work that fast
    assert [v.split(":")[0] for v in flop_violations(flops, at_4x, 2.0, 1, peak=peak)] == ["roofline_flops"]
    assert flop_violations(flops, at_4x * 8, 2.0, 1, peak=peak) == []  # half the peak
    assert flop_violations(flops, at_4x, 2.0, 4, peak=peak) == []  # 4 threads may do 4x
    assert flop_violations(0, at_4x, 2.0, 1, peak=peak) == [] and flop_violations(None, at_4x, 2.0, 1, peak=peak) == []
