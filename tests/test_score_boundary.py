"""The trust boundary and the cheat corpus: each cheat of ``tests/score_candidates/cheat_*.py`` is
caught with a named violation and scores the floor b at every t (both conventions), beside an
honest twin of the same code that stays valid; the candidate's process holds no evaluator module.

Sandboxes are shared within this module (:mod:`curate.score.boundary.parent` keeps one reference
sandbox per configuration and one candidate sandbox per candidate), so each distinct candidate
costs one fork of the zygote."""

import math
from pathlib import Path

import pytest

from curate.score.defenses.integrity import check_source
from curate.score.evaluate import evaluate_subgraph
from curate.score.reward import score_candidate
from curate.score.scoring import LEVELS, score_curve
from curate.score.synthetic_tasks import builtin_task_set
from tests.score_fixtures import HERE, cand, floored, kinds

FAST = {"timing": False, "share_sandbox": True}
TIMED = {"warmup": 1, "trials": 3, "min_trial_ms": 2.0, "retries": 0, "share_sandbox": True}

STATIC = {  # cheat -> (its honest twin, a rule that must name it)
    "cheat_gc_walk": ("honest_gc_twin", "import: gc"),
    "cheat_frame_walk": ("honest_frame_twin", "name: getattr"),
    "cheat_reference_hooks": ("honest_hooks_twin", "attribute: torch...sys"),
    "cheat_checker_patch": ("honest_checker_twin", "name: __import__"),
    "cheat_fake_clock": ("honest_clock_twin", "name: __import__"),
    "cheat_thread_between": ("honest_thread_twin", "import: threading"),
    "attack_lookahead_base": ("honest_lookahead_twin", "attribute: x...untyped_storage"),
    "cheat_pickle_exec": ("honest_pickle_twin", "attribute: torch...serialization (a denied module)"),
}


@pytest.fixture(scope="module")
def subs():
    return {s.subgraph_id: s for s in builtin_task_set(include_rng=True)}


@pytest.mark.parametrize("cheat", sorted(STATIC))
def test_static_cheats_are_refused_by_name_and_score_the_floor(cheat):
    twin, rule = STATIC[cheat]
    found = [str(v) for v in check_source((HERE / f"{cheat}.py").read_text())]
    assert any(rule in f for f in found), found
    assert check_source((HERE / f"{twin}.py").read_text()) == []
    r = score_candidate((HERE / f"{cheat}.py").read_text(), max_subgraphs=1)  # refused: nothing runs
    assert r["valid"] is False and r["rejected"] and r["reward"] == pytest.approx(math.log10(0.1))


@pytest.mark.parametrize("src,rule", [
    ("_e = exec\n", "name: exec"), ("f = eval\n", "name: eval"), ("c = compile\n", "name: compile"),
    ("i = __import__\n", "name: __import__"), ("g = globals()\n", "name: globals"), ("v = vars\n", "name: vars"),
    ("_ga = getattr\n", "name: getattr"), ("x = getattr(object, name)\n", "name: getattr"),
    ("setattr(o, 'a', 1)\nsetattr(o, n, 1)\n", "line 2: name: setattr"), ("delattr(o, n)\n", "name: delattr"),
    ("getattr(o, '__dict__')\n", "name: getattr"), ("import torch\nsetattr(torch, 'isnan', abs)\n", "patch: setattr on torch"),
    ("def f(e):\n    return e.__traceback__.tb_frame\n", "attribute: e...__traceback__"),
    ("def f(g):\n    return g.gi_frame.f_back.f_locals\n", "attribute: g...f_locals"),
    ("import gc\n", "import: gc"), ("import inspect\n", "import: inspect"), ("import traceback\n", "import: traceback"),
    ("import sys\n", "import: sys"), ("import os\n", "import: os"), ("import ctypes\n", "import: ctypes"),
    ("import threading\n", "import: threading"), ("import multiprocessing\n", "import: multiprocessing"),
    ("import signal\n", "import: signal"), ("from importlib import import_module\n", "import: importlib"),
    ("import curate.score.defenses.clock\n", "import: curate"), ("from passnet_common import io\n", "import: passnet_common"),
    ("import __main__\n", "import: __main__"), ("from . import checks\n", "relative import"),
    ("from builtins import exec as e\n", "import: builtins"), ("import torch\nn = torch.sys.modules\n", "attribute: torch...sys"),
    ("import torch\ntorch.set_num_threads(8)\n", "attribute: torch...set_num_threads"),
])
def test_static_check_refuses_references_not_only_calls(src, rule):
    found = [str(v) for v in check_source(src)]
    assert any(rule in f for f in found), found


def test_static_check_allows_literal_getattr_and_honest_code():
    assert check_source("x = getattr(mod, 'PATTERNS', None)\nok = hasattr(mod, 'pattern')\n") == []
    assert check_source((Path(__file__).parents[1] / "curate/score/candidates/fusion_pass.py").read_text()) == []


def test_candidate_process_holds_no_evaluator_module(subs):
    """After a candidate was imported, compiled and run, its process lists no module of the
    evaluator: no ``curate`` / ``passnet_common`` module (the checks, clock, tolerance code,
    references' holders), and no torch module appears under an evaluator name."""
    import time

    from curate.score.boundary.parent import candidate_sandbox

    r = evaluate_subgraph(subs["softmax:0"], cand("honest_lazy_twin"), FAST)
    assert r["status"] == "ok" and r["violations"] == []
    box = candidate_sandbox(FAST, "shared")  # the same process
    mods = box.modules(time.monotonic() + 60)
    assert "torch" in mods and "torch._dynamo" in mods  # it did compile and run the candidate
    evaluator = [m for m in mods if m.split(".")[0] in ("curate", "passnet_common", "checks", "clock", "boundary",
                                                        "integrity", "tolerance", "timing", "evaluate", "scoring")]
    assert evaluator == []


def test_sandboxes_are_forked_from_the_zygote_and_spawned_when_it_cannot_fork(monkeypatch):
    """Sandboxes fork from the zygote (:class:`curate.score.boundary.parent.Zygote`) and keep no
    descriptor but their two pipe ends (besides stdin / stdout / stderr), so a candidate cannot
    ask the zygote for anything; a killed zygote is replaced; when the zygote cannot fork, the
    sandbox is spawned, the same script in the same role."""
    import os
    import time

    from curate.score.boundary import parent

    cfg = {"threads": 1, "mem_cap_gb": 4, "inductor_cache": None}
    box = parent.Sandbox("candidate", 4 << 30, 1, zygote=parent.zygote(cfg))
    try:
        assert box.forked and box.baseline_tasks
        fds = {int(f) for f in os.listdir(f"/proc/{box.pid}/fd")}
        assert len(fds - {0, 1, 2}) == 2
        assert not [m for m in box.modules(time.monotonic() + 60) if m.split(".")[0] in ("curate", "passnet_common")]
    finally:
        box.close()
    assert box.proc.poll() is not None  # gone at once
    os.kill(parent.zygote(cfg).proc.pid, 9)
    parent.zygote(cfg).proc.wait(10)
    again = parent.Sandbox("candidate", 4 << 30, 1, zygote=parent.zygote(cfg))  # a new zygote
    again.close()
    assert again.forked
    monkeypatch.setattr(parent.Zygote, "fork", lambda *a, **k: None)
    spawned = parent.Sandbox("candidate", 4 << 30, 1, zygote=parent.zygote(cfg))
    try:
        assert not spawned.forked and spawned.modules(time.monotonic() + 60)
    finally:
        spawned.close()


def test_a_stale_sandbox_handle_touches_no_newer_process_and_the_clock_does_not_kill_one(monkeypatch):
    """A sandbox killed once (a failure) and closed again later does nothing the second time, even
    when its pid now names a newer sandbox of the same zygote (pids are reused within minutes on a
    busy machine); and a forked sandbox stays alive to the parent when the wall clock steps (its
    identity is its start ticks, not psutil's boot-time-based start time)."""
    import time

    from psutil import _pslinux

    from curate.score.boundary import parent

    cfg = {"threads": 1, "mem_cap_gb": 4, "inductor_cache": None}
    old = parent.Sandbox("candidate", 4 << 30, 1, zygote=parent.zygote(cfg), untrusted=True)
    old.kill()
    assert old.proc.poll() is not None
    new = parent.Sandbox("candidate", 4 << 30, 1, zygote=parent.zygote(cfg), untrusted=True)
    try:
        real = _pslinux.boot_time()
        monkeypatch.setattr(_pslinux, "boot_time", lambda: real + 1.0)
        assert new.alive
        old.pid, old.proc, old.uid = new.pid, parent.Forked(new.pid), new.uid  # what pid reuse makes of it
        old.close()
        assert new.alive and new.pid in parent.zygote(cfg).known
        assert new.modules(time.monotonic() + 60)  # still answers
    finally:
        new.close()
    assert not new.alive


def test_lazy_subclass_is_refused_and_its_twin_is_valid(subs):
    twin = evaluate_subgraph(subs["softmax:0"], cand("honest_lazy_twin"), FAST)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10
    r = evaluate_subgraph(subs["softmax:0"], cand("cheat_lazy_subclass"), FAST)
    assert r["status"] == "violation" and "output_type" in kinds(r)
    assert any("Deferred" in v for v in r["violations"]) and floored(r)


@pytest.mark.parametrize("sid", ["gelu_tanh:0", "softmax:1", "rmsnorm:1"])
def test_value_keyed_memo_is_caught_by_the_near_repeat_and_its_twin_is_valid(subs, sid):
    """``attack_memo_values.py`` replays the output of an earlier call whose inputs had the same
    slot and the same first and last elements: the third checked call (the seed-0 inputs with half
    their inner elements changed, in the same slot) gets the first call's output back. Its twin
    computes the same key and never looks it up."""
    twin = evaluate_subgraph(subs[sid], cand("honest_memo_twin"), FAST)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10
    r = evaluate_subgraph(subs[sid], cand("attack_memo_values"), FAST)
    assert r["status"] == "violation" and "near_repeat_mismatch" in kinds(r) and floored(r), r["violations"]


@pytest.mark.parametrize("sid", ["gelu_tanh:0", "rmsnorm:1"])
def test_work_put_off_past_the_done_byte_is_caught_and_its_twin_is_valid(subs, sid):
    """``attack_defer_after_done.py`` returns stale buffers at once and writes the true outputs into
    the slots before its reply, after the last done byte: the parent copies each checked call's slots
    at that call's done byte (the calls drawn before the trial), so the copies hold the stale buffers.
    The twin (the same hook, every call computed) is valid."""
    twin = evaluate_subgraph(subs[sid], cand("honest_defer_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10, twin["violations"]
    r = evaluate_subgraph(subs[sid], cand("attack_defer_after_done"), TIMED)
    assert r["status"] == "violation" and "timed_output_mismatch" in kinds(r) and floored(r), r["violations"]


def test_near_repeat_keeps_the_ends_and_changes_about_half_of_the_rest():
    import random

    import torch

    from curate.score.defenses.checks import near_repeat

    a = [torch.arange(1000.0), torch.zeros(2), 3, torch.ones(5), torch.arange(3.0)]
    b = [torch.arange(1000.0) + 0.5, torch.ones(2), 4, torch.ones(5), torch.tensor([0.0, 7.0, 2.0])]
    near, changed = near_repeat(a, b, random.Random(0))
    assert changed == [0, 4] and near[1] is a[1] and near[2] == 3 and near[3] is a[3]  # too small / equal inside: kept
    took = near[0] != a[0]
    assert not took[0] and not took[-1] and 400 < int(took.sum()) < 600 and torch.equal(near[0][took], b[0][took])
    assert near[4].tolist() == [0.0, 7.0, 2.0]  # one inner element that differs: taken
    assert torch.equal(a[0], torch.arange(1000.0))  # the set it came from is untouched


def test_each_input_is_its_own_storage_in_the_sandbox():
    """The tensors a sandbox hands the candidate view their own bytes of the slot file only: its
    storage (``attack_lookahead_base.py``'s route to the other sets) and ``as_strided`` reach
    nothing beside them."""
    import torch

    from curate.score.boundary.parent import SharedSlots
    from curate.score.boundary.sandbox import Slots

    sl = SharedSlots([("tensor", "float32", [4, 8]), ("tensor", "int64", [3])], 5)
    try:
        mine = Slots(torch, sl.fd, *sl.message())
        for row in mine.sets:
            for t in row:
                assert t.untyped_storage().nbytes() == t.numel() * t.element_size()
        with pytest.raises(RuntimeError):
            mine.sets[2][0].as_strided((5 * 32,), (1,), 0)
        assert len(mine.ptrs) == 10
    finally:
        sl.close()


def test_a_trials_inputs_do_not_exist_before_their_call_and_never_repeat():
    """Every side's timed trial gets one input set per call, written into that call's slot only
    when the call starts (after the previous call returned): at call ``i`` no later slot holds
    anything of this trial's later sets, and no two calls of a trial see the same inputs."""
    import random

    from curate.score.defenses.clock import AccountableConfig, measure_boundary
    from tests.test_score_reference import FakeBox, double, make_inputs

    boxes = [FakeBox({"eager": double}, {"eager": 0.25}), FakeBox({"candidate": double}, {"candidate": 0.25}),
             FakeBox({"candidate": double}, {"candidate": 0.125})]
    for b in boxes:
        b.calls = []
    pt = measure_boundary(boxes[0], boxes[2], make_inputs, [("tensor", "float32", [4])], None,
                          AccountableConfig(warmup=1, trials=4, min_trial_ms=2.0, retries=0), dyn=boxes[1], rng=random.Random(0))
    assert pt.inner == pt.n_sets == 8 and pt.violations == [] and pt.speedup == 2.0
    for b in boxes:
        trials: dict[int, list] = {}
        for n, i, xs, slots in b.calls:
            trials.setdefault(n, []).append((i, tuple(xs[0].tolist()), [tuple(x.tolist()) for x in slots]))
        timed = [calls for calls in trials.values() if len(calls) == pt.inner and len(set(c[1] for c in calls)) > 1]
        assert len(timed) == 4
        for calls in timed:
            assert [c[0] for c in calls] == list(range(pt.inner))
            vals = [c[1] for c in calls]
            assert len(set(vals)) == len(vals)  # no repeat within the trial
            for i, _, slots in calls:  # at call i, no later slot holds its call's values yet
                assert all(slots[j] != vals[j] for j in range(i + 1, pt.inner)) and slots[i] == vals[i]
    # the same values for every side, call by call
    def seen(b):
        return [tuple(c[2][0].tolist()) for c in b.calls if c[0] >= 1]

    assert seen(boxes[1]) == seen(boxes[2])


def test_every_call_of_an_rng_graph_has_its_own_seed_the_same_for_every_side():
    """With ``seed_each_call`` (RNG graphs) every call, warm-up and calibration included, is re-seeded
    with its own seed, drawn by the parent and written with the call's inputs (the set's seed word):
    no two calls share one, and eager, Dynamo-only and the candidate get the same seed call by call."""
    import random

    from curate.score.defenses.clock import AccountableConfig, measure_boundary
    from tests.test_score_reference import FakeBox, double, make_inputs

    boxes = [FakeBox({"eager": double}, {"eager": 0.25}), FakeBox({"candidate": double}, {"candidate": 0.25}),
             FakeBox({"candidate": double}, {"candidate": 0.125})]
    pt = measure_boundary(boxes[0], boxes[2], make_inputs, [("tensor", "float32", [4])], None,
                          AccountableConfig(warmup=1, trials=4, min_trial_ms=2.0, retries=0, seed_each_call=True),
                          dyn=boxes[1], rng=random.Random(0))
    assert pt.violations == []
    per_side = [[sd for n, _, sd in b.seeds if not (b is boxes[0] and n == 1)] for b in boxes]  # eager's 2nd request: calibration
    assert per_side[0] == per_side[1] == per_side[2] and len(per_side[0]) == 1 + 4 * pt.inner
    eager_all = [sd for _, _, sd in boxes[0].seeds]
    assert len(set(eager_all)) == len(eager_all) and 0 not in eager_all


@pytest.mark.parametrize("cheat, kind", [("cheat_rng_hoist", "seed_ignored"), ("cheat_rng_hoist_late", "timed_output_mismatch")])
def test_a_reused_dropout_mask_is_caught_and_its_twin_is_valid(subs, cheat, kind):
    """``cheat_rng_hoist.py`` (a reviewer's) draws its dropout mask once and reuses it: with one seed
    for every call it was bit-exact and ~5x its twin. Every call now has its own seed: the third
    checked call repeats the first call's inputs with another seed and the cheat repeats its output
    (``seed_ignored``); ``cheat_rng_hoist_late.py`` draws with each call's seed until timing starts
    and is then compared element by element (``timed_output_mismatch``). The twin draws every call."""
    twin = evaluate_subgraph(subs["rng:dropout"], cand("honest_rng_hoist_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10, twin["violations"]
    r = evaluate_subgraph(subs["rng:dropout"], cand(cheat), TIMED)
    assert r["status"] == "violation" and kind in kinds(r) and floored(r), r["violations"]


def test_pointer_keyed_replay_is_caught(subs):
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("cheat_ptr_replay"), FAST)
    assert r["status"] == "violation" and {"input_independent", "fresh_input_mismatch"} & kinds(r) and floored(r)


def test_violations_score_the_floor_at_every_level_in_both_conventions():
    row = {"status": "violation", "error_code": 1, "min_pass_t": None, "speedup": 2.0, "violations": ["x: y"]}
    ok = {"status": "ok", "error_code": None, "min_pass_t": -10, "speedup": 1.0}
    for conv in ("paper", "graphnet"):
        curve = score_curve([row, ok], 0.1, 0.1, conv)
        assert [d["ES_t"] for d in curve] == pytest.approx([math.sqrt(0.1)] * len(LEVELS))  # never forgiven
        acc = {**row, "status": "ok", "violations": []}  # a plain accuracy failure is forgiven from t = 1
        assert score_curve([acc, ok], 0.1, 0.1, conv)[LEVELS.index(1)]["ES_t"] == pytest.approx(1.0)


def test_roofline_refuses_rates_above_the_host_peak():
    import torch

    from curate.score.boundary.parent import host_copy_bandwidth
    from curate.score.defenses.checks import roofline_violations

    peak = host_copy_bandwidth()
    x = torch.zeros(1 << 20)  # 4 MiB in, 4 MiB out per call
    nbytes = 2 * x.numel() * 4
    assert peak > 0
    too_fast = nbytes / (4 * peak) * 1e3  # ms per call at 4x the peak
    assert [v.split(":")[0] for v in roofline_violations([x], [x], too_fast, 2.0)] == ["roofline"]
    assert roofline_violations([x], [x], too_fast * 8, 2.0) == []  # half the peak


@pytest.mark.slow  # timed trials with a thread and an RNG graph: three more sandboxes
def test_runtime_cheats_are_caught_in_timed_trials_and_twins_stay_valid(subs):
    twin = evaluate_subgraph(subs["gelu_tanh:1"], cand("honest_thread_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [], twin["violations"]
    r = evaluate_subgraph(subs["gelu_tanh:1"], cand("cheat_thread_between"), TIMED)
    assert r["status"] == "violation" and floored(r)
    assert kinds(r) & {"threads_started", "cpu_over_wall", "fresh_input_mismatch", "timed_output_mismatch"}, r["violations"]
    honest = evaluate_subgraph(subs["rng:dropout"], cand("honest_backend"), TIMED)
    assert honest["status"] == "ok" and honest["violations"] == []
    rng = evaluate_subgraph(subs["rng:dropout"], cand("cheat_rng_empty"), TIMED)
    assert rng["status"] == "violation" and "timed_output_mismatch" in kinds(rng) and floored(rng)


@pytest.mark.slow  # the reward function end to end (sandboxes, timing) for a runtime cheat and its twin
def test_reward_pays_the_floor_to_a_runtime_cheat_and_not_to_its_twin():
    cheat = score_candidate((HERE / "cheat_lazy_subclass.py").read_text(), max_subgraphs=1, cfg={"timing": False})
    twin = score_candidate((HERE / "honest_lazy_twin.py").read_text(), max_subgraphs=1, cfg={"timing": False})
    assert cheat["valid"] is False and cheat["reward"] == pytest.approx(-1.0)
    assert twin["valid"] is True and twin["reward"] > -1.0


def test_score_writes_metrics_with_valid_false_when_every_candidate_is_rejected(tmp_path):
    import argparse
    import json

    from curate.score.evaluate import add_score_args, score_main

    (tmp_path / "params.yaml").write_text("score:\n  tasks: builtin\n  max_subgraphs: 1\n")
    ap = argparse.ArgumentParser()
    add_score_args(ap)
    args = ap.parse_args(["--params", str(tmp_path / "params.yaml"), "--candidate", f"cheat=module:{HERE / 'cheat_gc_walk.py'}",
                          "--out", str(tmp_path / "out"), "--plots", str(tmp_path / "plots"),
                          "--metrics", str(tmp_path / "score.json"), "--no-resume"])
    assert score_main(args) == 0
    m = json.loads((tmp_path / "score.json").read_text())
    assert m["valid"] is False and m["candidates"]["cheat"]["valid"] is False and m["candidates"]["cheat"]["rejected"]


def _stand_in_sandbox(tmp_path, serve):
    """A :class:`curate.score.boundary.parent.Sandbox` whose far side is ``serve(request_fd, reply_fd)``
    on a thread of this process (no process started): the parent's side of the stream exactly."""
    import os
    import socket
    import threading

    from curate.score.boundary import parent

    class Proc:
        pid = os.getpid()

        def poll(self):
            return None

        def kill(self):
            pass

        def wait(self, timeout=None):
            return 0

    box = object.__new__(parent.Sandbox)
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    box.label, box.mem_cap, box.peak_rss, box.untrusted, box.cgroup = "candidate", 1 << 40, 0, False, None
    box._frozen, box._zygote, box._buf, box._dir, box.proc, box.pid = set(), None, b"", str(tmp_path), Proc(), os.getpid()
    box._r, box._w = rep_r, req_w
    box._sock = socket.socket()
    threading.Thread(target=serve, args=(req_r, rep_w), daemon=True).start()
    return box


def _read_request(fd):
    import os
    import pickle
    import struct

    (n,) = struct.unpack("<I", os.read(fd, 4))
    data = b""
    while len(data) < n:
        data += os.read(fd, n - len(data))
    return pickle.loads(data)


def _honest_stream(req_r, rep_w):
    """A stand-in sandbox's side of a streamed trial: a done byte after each call's go byte, then the reply."""
    import os

    msg = _read_request(req_r)
    for _ in msg["sets"]:
        assert os.read(req_r, 1) == b"g"
        os.write(rep_w, b".")
    os.write(rep_w, b'{"ok": true}\n')


def test_stream_times_each_call_and_refuses_a_reply_before_the_last_call(tmp_path):
    """The parent's side of a timed trial: one delivery, go byte and done byte per call, the error
    reply of a call that raised ends the trial; a reply line that is not an error before the last
    call (what a candidate could write on its reply pipe to stop the clock) fails the sandbox."""
    import os
    import time

    from curate.score.boundary.parent import SandboxFailure

    def raises(req_r, rep_w):
        _read_request(req_r)
        assert os.read(req_r, 1) == b"g"
        os.write(rep_w, b'{"error": "ValueError: x", "code": 2}\n')

    def forged(req_r, rep_w):
        _read_request(req_r)
        assert os.read(req_r, 1) == b"g"
        os.write(rep_w, b'{"ok": true}\n')  # before the call's work, instead of its done byte

    seen = []
    dl = time.monotonic() + 30
    rep, per, busy = _stand_in_sandbox(tmp_path, _honest_stream).stream({"op": "run", "sets": [0, 1, 2], "stream": True}, seen.append, dl)
    assert rep == {"ok": True} and len(per) == 3 and seen == [0, 1, 2] and busy >= 0
    rep, per, _ = _stand_in_sandbox(tmp_path, raises).stream({"op": "run", "sets": [0, 1, 2], "stream": True}, seen.append, dl)
    assert "error" in rep and per == []
    with pytest.raises(SandboxFailure, match="malformed stream"):
        _stand_in_sandbox(tmp_path, forged).stream({"op": "run", "sets": [0, 1, 2], "stream": True}, seen.append, dl)


def test_every_call_is_stopped_and_copied_alike_checked_or_not(tmp_path, monkeypatch):
    """A candidate can count the parent's ``SIGSTOP`` / ``SIGCONT`` pairs (a ``SIGCONT`` handler); if
    only checked calls were stopped, it could return stale outputs once a trial's checked calls had
    been seen. Every call is stopped, copied and continued the same way
    (:meth:`curate.score.boundary.parent.Sandbox.stream`), the copy kept only for the checked ones:
    the sequence of holds and copies is the same whichever calls are checked."""
    import time

    from curate.score.boundary import parent

    def trace(checked):
        events = []
        monkeypatch.setattr(parent.Sandbox, "hold", lambda self, deadline: events.append("stop"))
        monkeypatch.setattr(parent.Sandbox, "release", lambda self: events.append("cont"))
        kept = []

        def collect(i, keep):
            events.append("copy")
            if keep:
                kept.append(i)

        box = _stand_in_sandbox(tmp_path, _honest_stream)
        rep, per, _ = box.stream({"op": "run", "sets": [0, 1, 2, 3], "stream": True}, lambda i: None,
                                 time.monotonic() + 30, collect, checked)
        assert rep == {"ok": True} and len(per) == 4
        return events, kept

    a, kept_a = trace({1})
    b, kept_b = trace({0, 3})
    assert a == b == ["stop", "copy", "cont"] * 4
    assert kept_a == [1] and kept_b == [0, 3]


_LATE_WRITER = """
import mmap, os, pickle, struct, sys
req_r, rep_w, out_fd, nbytes, side_r, ack_w = map(int, sys.argv[1:7])
offs = [int(x) for x in sys.argv[7:]]
m = mmap.mmap(out_fd, nbytes)
def read(fd, n):
    b = b""
    while len(b) < n:
        c = os.read(fd, n - len(b))
        if not c:
            sys.exit(1)
        b += c
    return b
msg = pickle.loads(read(req_r, struct.unpack("<I", read(req_r, 4))[0]))
for k in range(len(msg["sets"])):
    assert os.read(req_r, 1) == b"g"
    os.write(rep_w, b".")  # the done byte first ...
    os.read(side_r, 1)  # ... (once the parent has begun to copy) ...
    m[offs[k]:offs[k] + 4] = struct.pack("<f", 1.0 + k)  # ... then the output
    os.write(ack_w, b"a")
os.write(rep_w, b'{"ok": true}\\n')
"""


@pytest.mark.parametrize("stop", [True, False])
def test_a_checked_calls_slots_are_copied_with_the_sandbox_stopped(tmp_path, monkeypatch, stop):
    """The parent copies a checked call's slots with the sandbox stopped (``SIGSTOP``, the kernel
    reporting every thread stopped: :meth:`curate.score.boundary.parent.Sandbox.hold`), so an
    output written after the done byte is never in the copy, however long the copy takes. The far
    side here is a real process that writes its done byte first and its output only once the
    parent has begun its copy (it waits for a byte the copy sends, as a race it would win against a
    descheduled parent; every call is checked here, so that it never waits for a copy that does not
    come): with the stop the copy holds the stale slot; with :meth:`hold` made a no-op
    (``stop=False``, what the parent did before) it holds the late output."""
    import os
    import select
    import socket
    import subprocess
    import sys
    import time

    from curate.score.boundary import parent
    from curate.score.boundary.parent import SharedSlots

    if not stop:
        monkeypatch.setattr(parent.Sandbox, "hold", lambda self, deadline: None)
        monkeypatch.setattr(parent.Sandbox, "release", lambda self: None)
    out = SharedSlots([("tensor", "float32", [4])], 3)
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    side_r, side_w = os.pipe()
    ack_r, ack_w = os.pipe()
    offs = [str(row[0][1]) for row in out.layout]
    proc = subprocess.Popen([sys.executable, "-c", _LATE_WRITER, str(req_r), str(rep_w), str(out.fd), str(out.nbytes),
                             str(side_r), str(ack_w), *offs], pass_fds=(req_r, rep_w, out.fd, side_r, ack_w))
    for fd in (req_r, rep_w, side_r, ack_w):
        os.close(fd)
    box = object.__new__(parent.Sandbox)
    box.label, box.mem_cap, box.peak_rss, box.untrusted, box.cgroup = "candidate", 1 << 40, 0, False, None
    box._frozen, box._held, box._zygote, box._buf, box._dir, box.proc, box.pid = set(), set(), None, b"", str(tmp_path), proc, proc.pid
    box._r, box._w, box._sock = rep_r, req_w, socket.socket()
    copies, stopped = {}, []

    def collect(i, keep):
        assert keep  # every call is checked here
        while select.select([ack_r], [], [], 0)[0]:  # an earlier call's acknowledgement
            os.read(ack_r, 1)
        stopped.append(parent._all_stopped(proc.pid))
        os.write(side_w, b"x")  # the far side may now write its output (if it runs)
        select.select([ack_r], [], [], 1.0 if stop else 60.0)  # a stopped far side cannot answer
        copies[i] = float(out.views[i][0][0])

    try:
        rep, per, _ = box.stream({"op": "run", "sets": [0, 1, 2], "stream": True}, lambda i: None,
                                 time.monotonic() + 120, collect, {0, 1, 2})
        assert rep == {"ok": True} and len(per) == 3
        assert proc.wait(30) == 0
        assert sorted(copies) == [0, 1, 2]
        final = [float(out.views[k][0][0]) for k in range(3)]
        assert final == [1.0, 2.0, 3.0]  # the far side wrote every output in the end
        if stop:
            assert stopped == [True] * 3 and copies == {0: 0.0, 1: 0.0, 2: 0.0}  # the copies: the slots at the done byte
        else:
            assert copies == {0: 1.0, 1: 2.0, 2: 3.0}  # without the stop, the late outputs are what the parent checks
    finally:
        if proc.poll() is None:
            proc.kill()
        for fd in (req_w, rep_r, side_w, ack_r):
            os.close(fd)
        out.close()
