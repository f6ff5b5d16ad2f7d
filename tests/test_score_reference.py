"""The scorer's two references: vs eager (PassNet's) and vs Dynamo-only
(``torch.compile(backend="eager")``). The control is a candidate that is Dynamo-only itself: it must
score speedup exactly 1 (protocol tests on in-process stand-ins of the sandboxes with simulated
costs) against Dynamo-only (ES_t = 1 at every t, AS = 0) while its vs-eager figure shows only the
harness."""

import math
import random

import pytest
import torch

from curate.score.defenses.clock import AccountableConfig, measure_boundary, median_ratio_ci
from curate.score.evaluate import REFERENCES, reference_rows, summarize
from curate.tolerance import LEVELS


class FakeBox:
    """A sandbox stand-in for :func:`curate.score.defenses.clock.measure_boundary`: the same slot mapping
    (:class:`curate.score.boundary.sandbox.Slots`) and requests, run in-process, with the parent's clock
    replaced by a cost per call in ms (``costs[side]``; ``load(trial_index)`` an optional factor:
    a neighbour process competing in bursts). Deterministic, no process started."""

    def __init__(self, fns: dict, costs: dict, load=None):
        self.fns, self.costs, self.load = fns, costs, load
        self.baseline_tasks, self.n = set(), 0
        self.ins = self.outs = None
        self.log: list = []  # every message received (:func:`_plain`)
        self.calls: list | None = None
        self.seeds: list = []  # (trial, call, seed) of every call re-seeded from its seed word

    def tasks(self):
        return set()

    def cpu_ms(self):
        return 0.0

    def strays(self, full=False):
        return set()

    def request(self, msg, deadline, fds=()):
        from curate.score.boundary.sandbox import Slots

        self.log.append(_plain(msg))
        it = iter(fds)  # the slots' memfd descriptors, inputs first (boundary.parent.bind)
        if "inputs" in msg:
            self.ins = Slots(torch, next(it), *msg["inputs"])
        if "outputs" in msg:
            self.outs = Slots(torch, next(it), *msg["outputs"])
        return {"ok": True}

    def stream(self, msg, deliver, deadline, collect=None, checked=()):
        """A timed trial as :meth:`curate.score.boundary.parent.Sandbox.stream` runs it: call ``i``'s
        input set delivered (``deliver(i)``) just before call ``i``, ``collect(i, i in checked)`` just
        after every call; ``(reply, per-call ms, busy ms)``.
        ``calls`` (when a list) records each call's input values and every slot of the trial as the
        call saw them."""
        self.log.append(_plain(msg))
        per = []
        for i, k in enumerate(msg["sets"]):
            deliver(i)
            if self.calls is not None:  # (trial, call, its inputs, the first input of every slot of the trial now)
                self.calls.append((self.n, i, [x.clone() for x in self.ins.sets[k]],
                                   [self.ins.sets[j][0].clone() for j in msg["sets"]]))
            if msg.get("seed") == "slot":  # the call's own seed, delivered with its inputs (as the sandbox re-seeds)
                self.seeds.append((self.n, i, self.ins.seed(k)))
                torch.manual_seed(self.ins.seed(k))
            out = self.fns[msg["side"]](*self.ins.sets[k])
            self.outs.sets[k + msg.get("out_base", 0)][0].copy_(out)
            per.append(self.costs[msg["side"]] * (self.load(self.n) if self.load else 1))
            if collect is not None:  # every call, kept for the checked ones (Sandbox.stream)
                collect(i, i in checked)
        self.n += 1
        return {"ok": True}, per, sum(per)


def _plain(msg: dict) -> dict:
    """``msg`` as logged (slot sizes and layouts; the descriptors travel beside it)."""
    return {k: (tuple(v) if k in ("inputs", "outputs") else v) for k, v in msg.items()}


def make_inputs(seed: int) -> list:
    return [torch.randn(4, generator=torch.Generator().manual_seed(seed))]


def double(x):
    return x * 2.0


CFG = AccountableConfig(warmup=1, trials=15, min_trial_ms=10.0, retries=0, check_per_trial=2)
EAGER, HARNESS = 0.02, 0.05  # ms per call: eager's kernel, Dynamo's guard + wrapper on top
SPECS = [("tensor", "float32", [4])]


def _measure(cand_cost, load=None, candidate=True, seed=0):
    ref = FakeBox({"eager": double}, {"eager": EAGER}, load)
    dyn = FakeBox({"candidate": double}, {"candidate": EAGER + HARNESS}, load)  # a candidate sandbox running backend:eager
    cand = FakeBox({"candidate": double}, {"candidate": cand_cost}, load) if candidate else None
    return measure_boundary(ref, cand, make_inputs, SPECS, None, CFG, dyn=dyn, rng=random.Random(seed))


def _control(load=None):
    return _measure(EAGER + HARNESS, load)  # compiles nothing: exactly Dynamo-only's cost


def test_control_is_exactly_one_against_dynamo_and_shows_only_the_harness_against_eager():
    pt = _control()
    assert pt.speedup_vs_dynamo == 1.0 and pt.speedup_vs_dynamo_ci == (1.0, 1.0)
    assert pt.speedup == pytest.approx(EAGER / (EAGER + HARNESS), rel=1e-12)  # the e2e "slowdown" is the harness
    assert pt.speedup_ci[1] < 1.0 and pt.violations == [] and len(pt.dynamo_ms) == CFG.trials


def test_dynamo_reference_and_a_dynamo_candidate_get_the_same_protocol():
    """The symmetric harness, structurally: the Dynamo-only side and the candidate each have their
    own sandbox and receive the same messages in the same number (binds of slots of the same sizes
    and layouts, the same timed trial requests), so a candidate that is Dynamo-only itself is timed
    exactly as the reference is (its ratio is 1 up to noise by construction, not by calibration)."""
    from curate.score.defenses.clock import SIDE_FN, trial_request

    ref = FakeBox({"eager": double}, {"eager": EAGER})
    dyn = FakeBox({"candidate": double}, {"candidate": 1.0})
    cand = FakeBox({"candidate": double}, {"candidate": 1.0})
    measure_boundary(ref, cand, make_inputs, SPECS, None, CFG, dyn=dyn, rng=random.Random(0))
    assert dyn.log == cand.log and dyn.n == cand.n == CFG.warmup + CFG.trials
    assert [m["op"] for m in cand.log] == ["bind"] + ["run"] * (CFG.warmup + CFG.trials)
    assert SIDE_FN["dynamo"] == SIDE_FN["candidate"] and trial_request("dynamo", [0], None, ()) == trial_request("candidate", [0], None, ())
    assert ref.log != cand.log  # eager is a different side (its own callable, the calibration runs)


def test_control_under_bursty_load_holds_one_in_its_interval():
    rng = random.Random(0)
    windows: dict[int, float] = {}
    pt = _control(lambda n: windows.setdefault(n // 2, rng.choice([1, 1, 2, 4])))
    lo, hi = pt.speedup_vs_dynamo_ci
    assert lo <= 1.0 <= hi
    assert pt.speedup_ci[1] < 1.0  # vs eager the harness still shows


def _rows(pt, name, n=3):
    """``score_samples``-like rows of one candidate: ``n`` correct subgraphs with ``pt``'s figures."""
    return [{"candidate": name, "task_id": f"t{i % 2}", "subgraph_id": f"s{i}", "status": "ok", "error_code": None,
             "min_pass_t": -10, "speedup": pt.speedup, "speedup_vs_dynamo": pt.speedup_vs_dynamo, "scored": True,
             "violations": []} for i in range(n)]


def test_control_scores_es_t_one_at_every_level_against_dynamo_and_ranks_by_reference():
    control = _rows(_control(), "control")
    faster = _measure(EAGER / 2 + HARNESS, seed=1)
    codegen = _rows(faster, "codegen")  # halves the kernel, keeps the harness: slower than eager, faster than Dynamo-only
    rows, summary = summarize({"control": control, "codegen": codegen}, {}, 0.1, 0.1, ["paper", "graphnet"], "paper")
    vs_d = summary["candidates"]["control"]["vs_dynamo"]
    for conv in ("paper", "graphnet"):
        assert all(vs_d[conv]["ES_t"][str(t)] == 1.0 for t in LEVELS) and vs_d[conv]["AS"] == 0.0
    assert summary["candidates"]["control"]["paper"]["ES_t"]["-5"] < 1.0
    assert summary["candidates"]["codegen"]["vs_dynamo"]["paper"]["ES_t"]["-5"] > 1.0
    assert summary["candidates"]["codegen"]["paper"]["ES_t"]["-5"] < 1.0
    assert summary["ranking"] == summary["ranking_vs_eager"] and summary["ranking_vs_dynamo"] == ["codegen", "control"]
    assert {r["reference"] for r in rows} == set(REFERENCES)
    _, by_dynamo = summarize({"control": control, "codegen": codegen}, {}, 0.1, 0.1, ["paper"], "paper", "dynamo")
    assert by_dynamo["ranking"] == ["codegen", "control"]
    with pytest.raises(ValueError, match="rank_reference"):
        summarize({"control": control}, {}, 0.1, 0.1, ["paper"], "paper", "inductor")


def test_reference_rows_keep_failures_and_leave_out_rows_without_a_dynamo_figure():
    rows = [{"status": "ok", "error_code": None, "min_pass_t": -10, "speedup": 0.5, "speedup_vs_dynamo": 2.0},
            {"status": "runtime_crash", "error_code": 2, "speedup": None},
            {"status": "ok", "error_code": None, "min_pass_t": -10, "speedup": 0.9, "flags": ["dynamo_reference_failed"]},
            {"status": "excluded", "scored": False, "speedup": None}]
    assert reference_rows(rows, "eager") == rows[:3]
    d = reference_rows(rows, "dynamo")
    assert [r["speedup"] for r in d] == [2.0, None] and d[1]["error_code"] == 2
    with pytest.raises(ValueError):
        reference_rows(rows, "inductor")


def test_eager_as_candidate_times_only_the_two_references():
    pt = _measure(None, candidate=False)
    assert pt.speedup == 1.0 and pt.speedup_ci == (1.0, 1.0) and pt.n_checked == 0
    assert pt.speedup_vs_dynamo == pytest.approx((EAGER + HARNESS) / EAGER, rel=1e-12)


def test_median_ratio_interval():
    assert median_ratio_ci([2.0] * 9, [1.0] * 9) == (2.0, 2.0)
    lo, hi = median_ratio_ci([1.0, 1.1, 0.9, 1.05, 0.95] * 4, [1.0] * 20)
    assert lo < 1.0 < hi
    with pytest.raises(ValueError):
        median_ratio_ci([1.0], [1.0, 2.0])


@pytest.fixture(scope="module")
def subs():
    from curate.score.synthetic_tasks import builtin_task_set

    return {s.subgraph_id: s for s in builtin_task_set()}


TIMED = {"warmup": 1, "trials": 3, "min_trial_ms": 0.5, "retries": 0, "share_sandbox": True}


def test_real_rows_carry_both_references(subs):
    """Real sandboxes: every row gets both speedups with ordered intervals; the eager
    candidate stays exactly 1 vs eager; a pass that matches nothing too. The vs-Dynamo values
    themselves depend on the machine's load (benchmarks/bench_score_reference.py records them)."""
    from curate.score.evaluate import evaluate_subgraph, parse_candidate

    ctl = evaluate_subgraph(subs["gelu_tanh:0"], parse_candidate("control=backend:eager"), TIMED)
    assert ctl["status"] == "ok" and ctl["violations"] == [] and ctl["dynamo_ms"] > 0 and ctl["speedup_vs_dynamo"] > 0
    assert ctl["speedup_vs_dynamo_ci_low"] <= ctl["speedup_vs_dynamo"] <= ctl["speedup_vs_dynamo_ci_high"]
    eager = evaluate_subgraph(subs["softmax:0"], parse_candidate("eager=eager"), TIMED)
    assert eager["speedup"] == 1.0 and eager["speedup_vs_dynamo"] > 0 and "reference_timing" in eager["flags"]
    assert eager["speedup_vs_dynamo_ci_low"] <= eager["speedup_vs_dynamo"] <= eager["speedup_vs_dynamo_ci_high"]
    off = evaluate_subgraph(subs["softmax:0"], parse_candidate("eager=eager"), {**TIMED, "dynamo_reference": False})
    assert off["speedup"] == 1.0 and off.get("speedup_vs_dynamo") is None
    untimed = evaluate_subgraph(subs["softmax:0"], parse_candidate("control=backend:eager"), {"timing": False})
    assert untimed["speedup"] == untimed["speedup_vs_dynamo"] == 1.0
    assert not math.isnan(ctl["speedup"])


def test_control_and_the_dynamo_sandbox_receive_the_same_messages(subs, monkeypatch):
    """Real sandboxes: everything the parent sends the Dynamo-only sandbox for a subgraph (slot
    binds, the graph loaded as ``backend:eager``, the two checked calls, warm-up and timed trials)
    is what it sends a candidate that is ``backend:eager``, message for message; both run the
    sandbox script in role ``candidate``. The timing itself is not asserted (it depends on load)."""
    from curate.score.boundary import parent
    from curate.score.evaluate import evaluate_subgraph, parse_candidate

    sent: dict[str, list] = {"candidate": [], "dynamo": []}
    roles: dict[str, set] = {"candidate": set(), "dynamo": set()}
    send = parent.Sandbox._send

    def spy(self, msg, fds=()):
        if self.label in sent and msg["op"] not in ("setup", "exit", "modules"):
            sent[self.label].append(_plain(msg))
            roles[self.label].add(self.role)
        return send(self, msg, fds)

    monkeypatch.setattr(parent.Sandbox, "_send", spy)
    r = evaluate_subgraph(subs["gelu_tanh:0"], parse_candidate("control=backend:eager"), TIMED)
    assert r["status"] == "ok" and r["violations"] == [] and r["speedup_vs_dynamo"] > 0
    assert [m["op"] for m in sent["candidate"][:4]] == ["bind", "load", "run", "run"]
    assert sent["dynamo"] == sent["candidate"] and roles == {"candidate": {"candidate"}, "dynamo": {"candidate"}}


@pytest.mark.slow  # fresh sandboxes per candidate
def test_control_and_eager_in_the_stage_path_under_the_parent_clock():
    """The stage's path (a fresh candidate sandbox, the parent's clock, three sides, each in its
    own process): both references on every row."""
    from curate.score.evaluate import parse_candidate, run_candidate, vs_dynamo_metrics

    cfg = {**TIMED, "min_trial_ms": 20.0, "max_subgraphs": 2, "sample_seed": 1, "timeout_s": 200, "retime_above": 1e9}
    for spec in ("control=backend:eager", "eager=eager"):
        rows, _ = run_candidate(parse_candidate(spec), "builtin", cfg)
        assert len(rows) == 2
        for r in rows:
            assert r["status"] == "ok" and r["violations"] == [] and r["speedup_vs_dynamo"] > 0, r
            if spec.startswith("control"):  # timed against the candidate on the parent's clock
                assert "clock_parent" in r["flags"]
            else:  # eager is the candidate: timed against the Dynamo-only sandbox only
                assert "reference_timing" in r["flags"] and r["speedup"] == 1.0
        assert vs_dynamo_metrics(rows)["n_vs_dynamo_timed"] == 2
