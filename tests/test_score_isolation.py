"""Isolation of the untrusted candidate sandbox: what it can no longer reach, and the cheats that
reached it (each beside an honest twin of the same code): the references' output slots, the
references' request channels, a daemon that stops the references, killing the references.

Every cheat is invalid with a named violation and scores the floor b at every t, its twin valid.
Under ``uid`` isolation (this machine and CI run as root) the kernel refuses the reach
(``sandbox_denied``) or the daemon is found (``processes_started``); the signal routes are also
run under ``dumpable`` isolation (what a non-root parent gets: the same uid, so signals reach),
where the daemon is found as an orphan of the zygote and a killed reference is charged to the
candidate (``reference_disturbed``). No assertion depends on timing."""

import math
import os
import time
from pathlib import Path

import pytest

from curate.score.boundary import parent
from curate.score.defenses.integrity import check_source
from curate.score.evaluate import evaluate_subgraph, run_candidate
from curate.score.reward import score_candidate
from curate.score.synthetic_tasks import builtin_task_set
from tests.score_fixtures import HERE, cand, floored, kinds

FAST = {"timing": False, "share_sandbox": True}
ROOT = os.geteuid() == 0

pytestmark = pytest.mark.skipif(not ROOT, reason="uid isolation needs a root parent (this project's machines and CI)")


@pytest.fixture(scope="module")
def subs():
    return {s.subgraph_id: s for s in builtin_task_set()}


@pytest.fixture(autouse=True)
def fresh_sandboxes():
    """Each test starts and ends with no sandbox of this process (a cheat may have killed one)."""
    parent.close_sandboxes()
    yield
    parent.close_sandboxes()


def test_candidate_sandbox_runs_as_its_own_uid_with_nothing_named(subs):
    """The untrusted sandbox runs as ``UID_BASE + pid`` in a private folder it owns; every trusted
    process is not dumpable; its slots are ``memfd`` files with no name in ``/dev/shm``; the row records the level."""
    r = evaluate_subgraph(subs["softmax:0"], cand("honest_slot_twin"), FAST)
    assert r["status"] == "ok" and r["violations"] == [] and r["isolation"] == "uid"
    box = parent.candidate_sandbox(FAST, "shared")
    with open(f"/proc/{box.pid}/status") as f:
        uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
    assert uids == [str(parent.UID_BASE + box.pid)] * 4
    assert os.stat(box._dir).st_uid == parent.UID_BASE + box.pid
    with open(f"/proc/{box.pid}/maps") as f:
        maps = f.read()
    assert "memfd:passnet_slots" in maps and "/dev/shm/" not in maps  # its slots: anonymous files, no name
    ref = parent.reference_sandbox(FAST)
    for pid in (ref.pid, parent.zygote(FAST).proc.pid):
        assert os.stat(f"/proc/{pid}/fd").st_uid == 0  # a non-dumpable process's /proc files are root's
        with open(f"/proc/{pid}/status") as f:
            assert next(line for line in f if line.startswith("Uid:")).split()[1] == "0"


@pytest.mark.parametrize("cheat,twin,sid", [("cheat_slot_read", "honest_slot_twin", "softmax:0"),
                                            ("cheat_request_inject", "honest_inject_twin", "gelu_tanh:0"),
                                            ("cheat_kill_reference", "honest_kill_twin", "gelu_tanh:0")])
def test_reaching_a_trusted_process_is_refused_and_floored(subs, cheat, twin, sid):
    twin_row = evaluate_subgraph(subs[sid], cand(twin), FAST)
    assert twin_row["status"] == "ok" and twin_row["violations"] == [] and twin_row["min_pass_t"] == -10
    r = evaluate_subgraph(subs[sid], cand(cheat), FAST)
    assert r["status"] == "violation" and "sandbox_denied" in kinds(r) and floored(r), r["violations"]
    assert parent.reference_sandbox(FAST).alive  # nothing of the harness was touched


def test_daemon_left_behind_is_found_and_killed(subs):
    twin = evaluate_subgraph(subs["gelu_tanh:0"], cand("honest_daemon_twin"), FAST)
    assert twin["status"] == "ok" and twin["violations"] == []
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("cheat_sigstop_daemon"), FAST)
    assert r["status"] == "violation" and "processes_started" in kinds(r) and floored(r), r["violations"]
    held = parent._CANDIDATES[parent._key(FAST)][1]  # the cheat's sandbox (tainted: not handed out again)
    assert held.strays(full=True)  # the daemon: another process of its uid, adopted by the zygote
    held.close()
    for _ in range(500):  # SIGKILL was sent; a process leaves /proc's live list once it has exited
        if not parent.pids_of_uid(held.uid) and not parent.zygote(FAST).orphans():
            break
        time.sleep(0.01)
    assert parent.pids_of_uid(held.uid) == set() and parent.zygote(FAST).orphans() == set()


def test_signal_routes_under_dumpable_isolation(subs, monkeypatch):
    """A non-root parent's level: the candidate keeps the parent's uid, so a signal reaches the
    references. The daemon is an orphan of the zygote (``processes_started``); a killed reference
    is charged to the candidate once it runs again without it (``reference_disturbed``); the
    twins stay valid."""
    monkeypatch.setattr(parent, "isolation_level", lambda: "dumpable")
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("cheat_sigstop_daemon"), FAST)
    assert r["isolation"] == "dumpable" and r["status"] == "violation" and "processes_started" in kinds(r) and floored(r)
    parent.close_sandboxes()
    cfg = {"timing": False, "static_check": False, "max_subgraphs": 2, "timeout_s": 120}
    twin_rows, _ = run_candidate(cand("honest_kill_twin"), "builtin", cfg, log=lambda *_: None)
    assert [r["status"] for r in twin_rows] == ["ok", "ok"]
    rows, _ = run_candidate(cand("cheat_kill_reference"), "builtin", cfg, log=lambda *_: None)
    hit = [r for r in rows if r["status"] == "violation"]
    assert hit and all("reference_disturbed" in kinds(r) and floored(r) for r in hit), rows
    assert not [r for r in rows if r["status"] == "reference_failed"]


def test_reward_pays_the_floor_to_the_cheats_and_not_to_their_twins():
    for cheat, twin in (("cheat_slot_read", "honest_slot_twin"), ("cheat_sigstop_daemon", "honest_daemon_twin")):
        c = score_candidate((HERE / f"{cheat}.py").read_text(), max_subgraphs=1, cfg={"timing": False, "static_check": False})
        t = score_candidate((HERE / f"{twin}.py").read_text(), max_subgraphs=1, cfg={"timing": False, "static_check": False})
        assert c["valid"] is False and c["reward"] == pytest.approx(math.log10(0.1)), c
        assert t["valid"] is True and t["reward"] > math.log10(0.1)


TWINS = {"cheat_slot_read": "honest_slot_twin", "cheat_request_inject": "honest_inject_twin",
         "cheat_sigstop_daemon": "honest_daemon_twin", "cheat_kill_reference": "honest_kill_twin"}


@pytest.mark.parametrize("cheat", sorted(TWINS))
def test_the_static_check_refuses_them_too(cheat):
    assert {v.rule for v in check_source((HERE / f"{cheat}.py").read_text())} >= {"import"}
    assert check_source((HERE / f"{TWINS[cheat]}.py").read_text()) == []


@pytest.mark.parametrize("src,rule", [
    ("import torch\nx = torch.os.system\n", "attribute: torch...os"), ("import torch\nx = torch.sys\n", "attribute: torch...sys"),
    ("import torch\nx = torch.nn.Module.subprocess\n", "attribute: torch...subprocess"),
    ("import numpy\nx = numpy.ctypes\n", "attribute: numpy...ctypes"), ("import torch\nx = torch._C.gc\n", "attribute: torch...gc"),
    ("def f(m):\n    return m.inspect\n", "attribute: m...inspect"), ("def f(m):\n    return m.importlib\n", "attribute: m...importlib"),
    ("def f(m):\n    return m.threading\n", "attribute: m...threading"), ("def f(m):\n    return m.signal\n", "attribute: m...signal"),
    ("def f(m):\n    return m.multiprocessing\n", "attribute: m...multiprocessing"),
    ("def f(m):\n    return m.builtins\n", "attribute: m...builtins"),
    ("import torch\nx = getattr(torch, 'os')\n", "name: getattr"),
    ("import operator\nf = operator.attrgetter('os.system')\n", "attribute: operator...attrgetter"),
    ("import operator\nf = operator.attrgetter(name)\n", "attribute: operator...attrgetter"),
    ("import operator\nf = operator.attrgetter('a', '__globals__')\n", "attribute: operator...attrgetter"),
    ("import operator\nf = operator.methodcaller(name)\n", "attribute: operator...methodcaller"),
    ("import operator\nf = operator.methodcaller('__reduce__')\n", "attribute: operator...methodcaller"),
    ("import operator\ng = operator.attrgetter\n", "attribute: operator...attrgetter"),
    ("from operator import attrgetter\n", "name: from operator import attrgetter"),
    ("import string\nv = string.Formatter().get_field('0.os', (1,), {})\n", "attribute: ?...get_field"),
    ("import torch\nm = torch._utils._import_dotted_name('os')\n", "attribute: torch..._import_dotted_name"),
    ("import pydoc\n", "import: pydoc"),
    ("import psutil\n", "import: psutil"), ("import select\n", "import: select"),
    ("import torch.multiprocessing as mp\n", "import: torch.multiprocessing"),
    ("from torch.multiprocessing import Process\n", "import: torch.multiprocessing"),
    ("from torch import multiprocessing\n", "import: from torch import multiprocessing"),
    ("from torch.serialization import os\n", "import: from torch.serialization import os"),
    ("from numpy.ctypeslib import ctypes\n", "import: from numpy.ctypeslib import ctypes"),
])
def test_static_check_refuses_forbidden_modules_as_attributes_and_string_getters(src, rule):
    found = [str(v) for v in check_source(src)]
    assert any(rule in f for f in found), found


def test_static_check_allows_literal_getters_of_allowed_names():
    assert check_source("import operator\nf = operator.attrgetter('weight.shape')\ng = operator.methodcaller('sum', 0)\n") == []
    assert check_source("import torch.nn.functional as F\nfrom torch import fx\n\ndef f(x):\n    return F.silu(x.select(0, 1))\n") == []


ATTACKS = {"attack_burners": ("honest_burners_twin", "import: torch.multiprocessing"),
           "attack_renice_refs": ("honest_kill_twin", "import: psutil")}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_static_check_refuses_the_process_attacks(attack):
    twin, rule = ATTACKS[attack]
    assert any(rule in str(v) for v in check_source((HERE / f"{attack}.py").read_text()))
    assert check_source((HERE / f"{twin}.py").read_text()) == []


TIMED15 = {"warmup": 3, "trials": 15, "retries": 0, "min_trial_ms": 2.0, "share_sandbox": True}
"""The default number of trials (the burners count them to be gone before the checkpoint after timing)."""


@pytest.mark.slow  # timed trials: two candidates on one subgraph
def test_processes_that_run_only_while_the_references_are_timed_are_stopped_and_named(subs):
    """``attack_burners.py`` forks processes after its checked calls that spin only while another side
    is timed, and kills and reaps them at the last call of its 15th trial: no checkpoint and no orphan
    check sees them, and their CPU is not the sandbox's. The parent stops every process of an
    untrusted candidate while another side is timed (``Sandbox.freeze``), so they slow nothing, and
    names what it found (``processes_started``); the twin (the same code, no burner) stays valid."""
    twin = evaluate_subgraph(subs["gelu_tanh:1"], cand("honest_burners_twin"), TIMED15)
    assert twin["status"] == "ok" and twin["violations"] == [], twin["violations"]
    r = evaluate_subgraph(subs["gelu_tanh:1"], cand("attack_burners"), TIMED15)
    assert r["status"] == "violation" and floored(r), r["violations"]
    assert any(v.startswith("processes_started") and "side was timed" in v for v in r["violations"]), r["violations"]


@pytest.mark.slow  # timed trials under both isolation levels
def test_renicing_the_references_is_refused_or_charged(subs, monkeypatch):
    """``attack_renice_refs.py`` lowers the trusted sandboxes' priority and pins them to one core. Under
    ``uid`` isolation the kernel refuses (the attack catches it and runs honestly: valid); under
    ``dumpable`` isolation it succeeds silently, and the parent, which compares each trusted side's
    nice and CPU affinity with those its zygote started with before timing it, charges it
    (``reference_disturbed``); the twin stays valid."""
    small = {**TIMED15, "trials": 3}
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("attack_renice_refs"), small)
    assert r["isolation"] == "uid" and r["status"] == "ok" and r["violations"] == [], r["violations"]
    parent.close_sandboxes()
    monkeypatch.setattr(parent, "isolation_level", lambda: "dumpable")
    twin = evaluate_subgraph(subs["gelu_tanh:0"], cand("honest_kill_twin"), small)
    assert twin["status"] == "ok" and twin["violations"] == [], twin["violations"]
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("attack_renice_refs"), small)
    assert r["isolation"] == "dumpable" and r["status"] == "violation" and "reference_disturbed" in kinds(r) and floored(r)


@pytest.mark.parametrize("cls,state,left,alone,charged", [
    ("timeout", "S", set(), True, False),  # the load's: a slow reference, nothing of the candidate outside it
    ("oom", "R", set(), True, False),  # the graph's: the reference above the memory cap
    ("timeout", "T", set(), True, True),  # found stopped: only a signal does that
    ("timeout", "S", {12345}, True, True),  # the candidate had a process outside its sandbox
    ("crash", None, set(), True, True),  # the reference died between or during requests
    ("crash", None, set(), False, False),  # ... and dies again with no candidate alive: the harness's
])
def test_which_harness_failures_are_charged_to_the_candidate(monkeypatch, cls, state, left, alone, charged):
    """The rule of :mod:`curate.score.boundary.child` on a failure of the reference sandbox while an
    untrusted candidate's sandbox is started (no process started: the sandboxes are stand-ins)."""
    from curate.score.boundary import child
    from curate.score.boundary.parent import SandboxFailure

    def fail(*_a, **_k):
        raise SandboxFailure("the reference failed", cls, "reference", state)

    monkeypatch.setattr(child, "evaluate_subgraph", fail)
    monkeypatch.setattr(child, "candidate_started", lambda cfg, who: True)
    monkeypatch.setattr(child, "candidate_leftovers", lambda cfg: set(left))
    monkeypatch.setattr(child, "close_candidate", lambda cfg: None)
    monkeypatch.setattr(child, "reference_runs_alone", lambda sub, cfg: alone)
    res = child.run_children(cand("honest_kill_twin"), "builtin", False, ["softmax:0"], {"timing": False}, "eval",
                             log=lambda *_: None)["softmax:0"]
    if charged:
        assert res["status"] == "violation" and "reference_disturbed" in kinds(res) and floored(res)
    else:
        assert isinstance(res, tuple) and res[2] == f"reference_failed:{cls}"


@pytest.mark.slow  # a cold Inductor compile in the sandbox's own cache (20-40 s on 2 busy cores)
def test_honest_inductor_module_compiles_in_the_untrusted_sandbox(subs):
    """An honest ``module:`` candidate that wraps Inductor works under ``uid`` isolation: it imports
    what it needs, runs the C++ compiler as its own uid and writes only its own cache."""
    r = evaluate_subgraph(subs["softmax:0"], cand("honest_inductor_module"), FAST)
    assert r["status"] == "ok" and r["violations"] == [] and r["isolation"] == "uid" and r["min_pass_t"] <= -5, r
    box = parent.candidate_sandbox(FAST, "shared")
    made = [p for p in Path(box._dir, "inductor").rglob("*.so")]
    assert made and all(p.stat().st_uid == box.uid for p in made)


def test_metrics_record_the_isolation_level(tmp_path):
    """``metrics/score.json`` names the level the untrusted sandboxes ran at (here every candidate
    is refused statically: nothing runs, the level is still recorded)."""
    import argparse
    import json

    from curate.score.evaluate import add_score_args, score_main

    (tmp_path / "params.yaml").write_text("score:\n  tasks: builtin\n  max_subgraphs: 1\n")
    ap = argparse.ArgumentParser()
    add_score_args(ap)
    args = ap.parse_args(["--params", str(tmp_path / "params.yaml"), "--candidate", f"cheat=module:{HERE / 'cheat_slot_read.py'}",
                          "--out", str(tmp_path / "out"), "--plots", str(tmp_path / "plots"),
                          "--metrics", str(tmp_path / "score.json"), "--no-resume"])
    assert score_main(args) == 0
    assert json.loads((tmp_path / "score.json").read_text())["isolation"] == "uid"


def test_a_disturbed_reference_while_re_timing_is_the_candidates_violation(monkeypatch):
    """``run_candidate`` re-times a suspicious speedup; a reference killed then is the candidate's
    ``reference_disturbed`` on that row (stand-ins: no process started)."""
    from curate.score.boundary import child
    from curate.score.boundary.parent import SandboxFailure

    ok = {"candidate": "c", "task_id": "softmax", "subgraph_id": "softmax:0", "status": "ok", "error_code": None, "min_pass_t": -10,
          "speedup": 50.0, "violations": [], "flags": [], "scored": True, "retimed": False}

    def fake(sub, cand_, cfg, tick=None, phase=None):
        return dict(ok, subgraph_id=sub.subgraph_id, task_id=sub.task_id)

    def killed(*_a, **_k):
        raise SandboxFailure("the reference died", "crash", "reference", None)

    monkeypatch.setattr(child, "evaluate_subgraph", fake)
    monkeypatch.setattr(child, "retime_subgraph", killed)
    monkeypatch.setattr(child, "candidate_started", lambda cfg, who: True)
    monkeypatch.setattr(child, "close_candidate", lambda cfg: None)
    monkeypatch.setattr(child, "reference_runs_alone", lambda sub, cfg: True)
    rows, _ = run_candidate(cand("honest_kill_twin"), "builtin", {"timing": False, "max_subgraphs": 1, "retime_above": 10.0},
                            log=lambda *_: None)
    (r,) = rows
    assert r["retimed"] and r["status"] == "violation" and any(v.startswith("re-timing: reference_disturbed") for v in r["violations"])
    assert floored(r)


def test_the_trusted_inductor_cache_is_never_a_folder_a_candidate_made(tmp_path, monkeypatch):
    """With ``inductor_cache: null`` the trusted processes use Inductor's default folder only when it is
    the parent's own and no one else may write it (the parent makes it before any sandbox starts);
    a folder of that name another uid made first in the shared tmp (``attack_cache_plant.py``) is
    never used: a fresh private folder instead. A configured cache is used as given."""
    import stat
    import tempfile

    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    parent.trusted_inductor_cache.cache_clear()
    try:
        made = parent.trusted_inductor_cache(None)
        st = os.stat(made)
        assert made == default_cache_dir() and st.st_uid == os.geteuid() and not st.st_mode & 0o022
        assert parent.sandbox_env(1, None)["TORCHINDUCTOR_CACHE_DIR"] == made
        os.rmdir(made)
        os.mkdir(made)
        os.chown(made, parent.UID_BASE + 1, parent.UID_BASE + 1)  # a candidate's uid made it first
        parent.trusted_inductor_cache.cache_clear()
        other = parent.trusted_inductor_cache(None)
        assert other != made and os.stat(other).st_uid == os.geteuid() and stat.S_IMODE(os.stat(other).st_mode) == 0o700
        assert parent.trusted_inductor_cache(str(tmp_path / "c")) == str((tmp_path / "c").resolve())
    finally:
        parent.trusted_inductor_cache.cache_clear()


def test_an_untrusted_sandbox_lives_in_its_own_cgroup_and_every_side_is_stopped_alike(subs):
    """Where cgroup v1 ``cpuacct`` is writable (root), an untrusted sandbox joins its own group before
    its set-up: every process it starts is in it (:meth:`CandidateGroup.pids`) and its CPU time is
    the group's; the group goes with the sandbox. ``freeze`` stops a sandbox, trusted or not, and
    ``thaw`` continues it (``measure_boundary`` stops every side but the timed one)."""
    r = evaluate_subgraph(subs["softmax:0"], cand("honest_slot_twin"), FAST)
    assert r["status"] == "ok" and r["violations"] == []
    box, ref = parent.candidate_sandbox(FAST, "shared"), parent.reference_sandbox(FAST)
    for b in (box, ref):
        assert b.freeze() == set() and parent._state(b.pid) in ("T", "t")
        b.thaw()
        assert parent._state(b.pid) not in ("T", "t")
    if not parent.CandidateGroup.available():
        pytest.skip("no writable cgroup v1 cpuacct here")
    assert box.cgroup is not None and box.cgroup.pids() == {box.pid} and box.cgroup.cpu_ms() > 0
    with open(f"/proc/{box.pid}/cgroup") as f:
        assert f"passnet_{os.getpid()}_{box.pid}" in f.read()
    group = box.cgroup.dir
    box.close()
    assert not group.exists()
