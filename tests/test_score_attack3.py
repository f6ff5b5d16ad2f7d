"""Third attack round on the scorer: each cheat beside an honest twin of the same code, scored
across the trust boundary.

* random numbers of its own, drawn once and reused in the timed calls (``attack_rng_own_reuse.py``),
  the same reuse keyed to redraw on a repeated input set (``attack_rng_key_reuse.py``), and an earlier
  output replayed scaled by ``1 + 1e-7`` on a repeated input set (``attack_rng_replay_scaled.py``):
  ``seed_ignored``, inside the timed trials and (the scaled replay) before them;
* a second thread per call, started and joined inside the call, its module brought in through
  torch.fx's code generator (``attack_fx_thread_split.py``) or a string annotation evaluated by
  ``torch.library.infer_schema`` (``attack_annotations_schema.py``): ``transient_threads``, and
  refused statically;
* an output written straight into the harness's output slot, reached through torch.fx's code
  generator running a module's repr (``attack_fx_slot_direct.py``): ``output_slot``, and refused
  statically;
* frames reached through ``match`` class patterns (``case object(__traceback__=tb)``) to the sandbox
  loop, whose ``output_slot`` report it shadows (``attack_match_frames.py``): refused statically (past
  the static check the loop is the candidate's: a residual risk);
* ``__import__`` from TorchScript's annotation resolver (``torch.jit.annotations.EvalEnv(None)``),
  the same slot writes (``attack_jit_evalenv.py``): refused statically;
* code run through ``functools.singledispatch`` from a string in a module-level generic alias
  (``attack_dispatch_alias.py``) and ``os`` reached through ``(random,)[0]._os``
  (``attack_module_alias.py``): caught at run time (``sandbox_denied`` / ``processes_started``)
  and refused statically;
* the subgraph's time limit spent so that it runs out in a trusted sandbox
  (``attack_deadline_strike.py``): the candidate's ``runtime_crash`` (flag ``deadline_spent``),
  scored as a crash in its own request is, never a ``reference_failed`` row out of its scores.

No assertion depends on a measured time."""


import pytest

from curate.score.boundary import child, parent
from curate.score.boundary.parent import CandidateGroup, SandboxFailure
from curate.score.defenses.clock import coincident_rng_outputs, repeated_rng_outputs
from curate.score.defenses.integrity import check_source
from curate.score.evaluate import evaluate_subgraph
from curate.score.scoring import score_curve
from curate.score.synthetic_tasks import builtin_task_set
from tests.score_fixtures import HERE, cand, floored, kinds

FAST = {"timing": False, "share_sandbox": True}
TIMED = {"warmup": 1, "trials": 5, "min_trial_ms": 2.0, "retries": 0, "check_per_trial": 3, "share_sandbox": True}


def charged_as_crash(row):
    """Scored as the candidate's own crash: its curve is that of a plain ``runtime_crash`` row."""
    crash = {"status": "runtime_crash", "error_code": 2, "min_pass_t": None, "speedup": None, "scored": True}
    return row["scored"] and row["error_code"] == 2 and all(
        score_curve([row], 0.1, 0.1, conv) == score_curve([crash], 0.1, 0.1, conv) for conv in ("paper", "graphnet"))


def static_rules(name):
    return {v.rule for v in check_source((HERE / f"{name}.py").read_text())}


@pytest.fixture(scope="module")
def subs():
    return {s.subgraph_id: s for s in builtin_task_set(include_rng=True)}


@pytest.fixture(autouse=True)
def fresh_sandboxes():
    parent.close_sandboxes()
    yield
    parent.close_sandboxes()


# --- random numbers reused across timed calls -------------------------------------------------


@pytest.mark.parametrize("name", ["attack_rng_own_reuse", "attack_rng_key_reuse", "attack_rng_replay_scaled"])
def test_rng_reused_in_timed_calls_is_seed_ignored(subs, name):
    """Both cheats pass every check before timing (a fresh mask on each checked call) and draw their
    own random numbers (judged by statistics); in the timed trials they reuse a mask. The repeated
    input set of a timed trial (two seeds) or two kept calls on different inputs (dropout's zeros
    in the same places) show it."""
    twin = evaluate_subgraph(subs["rng:dropout"], cand("honest_rng_own_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [] and "rng_stats_match:0" in twin["flags"], twin["violations"]
    r = evaluate_subgraph(subs["rng:dropout"], cand(name), TIMED)
    assert r["status"] == "violation" and "seed_ignored" in kinds(r) and floored(r), r["violations"]
    assert any("timed" in v for v in r["violations"])
    if name != "attack_rng_replay_scaled":  # the checks before timing alone do not see these two
        assert evaluate_subgraph(subs["rng:dropout"], cand(name), FAST)["violations"] == []
    assert not static_rules(name)  # nothing for the static check: plain torch


def test_rng_reuse_statistics_on_known_tensors():
    """The two statistics on tensors with known structure: a mask shared by two calls is caught on
    repeated and on different inputs; independent masks (eager's rate) are not."""
    import torch

    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(4096, generator=g), torch.randn(4096, generator=g)
    m1, m2, m3 = ((torch.rand(4096, generator=g) > 0.1).float() for _ in range(3))
    assert repeated_rng_outputs([x1 * m1], [x1 * m1], [x1 * m2], [x1 * m3], {0}) == [0]
    assert repeated_rng_outputs([x1 * m1], [x1 * m1 * (1 + 1e-7)], [x1 * m2], [x1 * m3], {0}) == [0]  # a scaled replay
    assert repeated_rng_outputs([x1 * m1], [x1 * m2], [x1 * m2], [x1 * m3], {0}) == []
    noise = [torch.randn(4096, generator=g) for _ in range(3)]  # additive noise: eager's two seeds share no value
    assert repeated_rng_outputs([x1 + noise[0]], [x1 + noise[0] + 1e-7], [x1 + noise[1]], [x1 + noise[2]], {0}) == [0]
    assert repeated_rng_outputs([x1 + noise[0]], [x1 + noise[1]], [x1 + noise[1]], [x1 + noise[2]], {0}) == []
    assert coincident_rng_outputs([x1 * m1], [x2 * m1], [x1 * m2], [x2 * m3], {0}) == [0]  # zeros in the same places
    assert coincident_rng_outputs([x1 * m2], [x2 * m3], [x1 * m1], [x2 * m2], {0}) == []


# --- threads started and joined inside a call --------------------------------------------------


@pytest.mark.skipif(not CandidateGroup.available(), reason="the candidate's CPU in ns needs its own cgroup (a root parent)")
@pytest.mark.parametrize("name", ["attack_fx_thread_split", "attack_annotations_schema"])
def test_per_call_threads_are_transient_threads(subs, name):
    """A second thread per call, joined before the call returns: no look at the thread list sees
    it; the CPU of the candidate's process beyond its own threads' over the timed trials does."""
    twin = evaluate_subgraph(subs["gelu_tanh:2"], cand("honest_split_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10, twin["violations"]
    r = evaluate_subgraph(subs["gelu_tanh:2"], cand(name), TIMED)
    assert r["status"] == "violation" and "transient_threads" in kinds(r) and floored(r), r["violations"]


def test_output_written_into_the_harness_slot_is_output_slot(subs):
    """The cheat reaches the sandbox loop (torch.fx's code generator runs the repr of a module class
    named ``tuple``) and writes its output straight into its call's output slot, so the loop's copy
    is of the slot onto itself. The loop reports an output on an output slot's storage; the twin's
    same arithmetic into a fresh tensor is valid."""
    twin = evaluate_subgraph(subs["gelu_tanh:2"], cand("honest_slot_direct_twin"), TIMED)
    assert twin["status"] == "ok" and twin["violations"] == [] and twin["min_pass_t"] == -10, twin["violations"]
    r = evaluate_subgraph(subs["gelu_tanh:2"], cand("attack_fx_slot_direct"), TIMED)
    assert r["status"] == "violation" and "output_slot" in kinds(r) and floored(r), r["violations"]
    rules = {str(v) for v in check_source((HERE / "attack_fx_slot_direct.py").read_text())}
    assert any("class tuple" in v for v in rules) and any("extra_repr" in v for v in rules)
    assert check_source((HERE / "honest_slot_direct_twin.py").read_text()) == []


def test_match_class_patterns_are_judged_as_attribute_reads():
    """``case object(__traceback__=tb)`` reads ``tb = e.__traceback__``: attack_match_frames.py walks
    from its call's frame to the sandbox loop's and writes its outputs into the output slots with
    the loop's ``output_slot`` report shadowed on its instance (valid across the boundary: past the
    static check, the loop in the candidate's process is the candidate's). Every keyword of a class
    pattern is now judged as the attribute it reads, and ``__match_args__`` / ``__instancecheck__``
    / ``__subclasshook__`` (what makes a positional pattern read any attribute of any object) are
    refused; a match on values, sequences, mappings and allowed attributes stays allowed."""
    found = {str(v) for v in check_source((HERE / "attack_match_frames.py").read_text())}
    assert {"__traceback__", "tb_frame", "f_back", "f_locals"} <= {v.split("(")[1].split("=")[0] for v in found
                                                                  if "class pattern" in v}, found
    honest = ("def f(p):\n    match p:\n        case {'a': 1}:\n            return 1\n        case [x, y]:\n"
              "            return x\n        case int(real=r):\n            return r\n    return 0\n")
    assert check_source(honest) == []
    for src in ("import abc\nclass A(abc.ABC):\n    __match_args__ = ('f_back',)\n",
                "import abc\nclass A(abc.ABC):\n    @classmethod\n    def __subclasshook__(cls, c):\n        return True\n"):
        assert check_source(src), src


def test_torchscript_name_resolvers_are_refused_statically():
    """``torch.jit.annotations.EvalEnv(None)["__import__"]`` is the builtin (attack_jit_evalenv.py
    writes its outputs into the slots through ``gc`` with it, valid across the boundary);
    ``_eval_no_call`` evals a string with the real builtins. The module and the resolvers by name
    are refused; ``torch.jit.is_scripting`` stays allowed."""
    found = {str(v) for v in check_source((HERE / "attack_jit_evalenv.py").read_text())}
    assert any("torch.jit.annotations" in v for v in found) and any("EvalEnv" in v for v in found), found
    assert check_source("import torch\ndef f(x):\n    return (torch,)[0].jit.annotations._eval_no_call('exec', {}, None)\n")
    assert check_source("import torch\ndef f(x):\n    return torch.jit.is_scripting()\n") == []


@pytest.mark.slow  # spawned children
@pytest.mark.parametrize("name,rule", [("attack_match_frames", "class pattern"), ("attack_jit_evalenv", "EvalEnv")])
def test_static_route_cheats_get_the_floor_reward(name, rule):
    from curate.score.reward import score_candidate

    res = score_candidate((HERE / f"{name}.py").read_text(), "builtin", max_subgraphs=1, cfg={"revalidate": {"top": 0}})
    assert not res["valid"] and res["rows"] == [] and res["reward"] == -1.0
    assert any(rule in r for r in res["rejected"])
    twin = score_candidate((HERE / "honest_slot_direct_twin.py").read_text(), "builtin", max_subgraphs=1,
                           cfg={"revalidate": {"top": 0}, "timing": False})
    assert twin["rejected"] == []


def test_code_generation_and_type_hint_routes_are_refused_statically():
    """The four routes to code the static check let through before: fx's code generator (a
    ``call_method`` target written into ``getattr(x, "...")``), a run-time ``__annotations__``,
    a string in a generic alias read by ``singledispatch``, another module's private alias of
    ``os`` on an expression the resolver cannot follow. Their twins pass."""
    found = {n: {str(v) for v in check_source((HERE / f"{n}.py").read_text())}
             for n in ("attack_fx_thread_split", "attack_annotations_schema", "attack_dispatch_alias", "attack_module_alias")}
    assert any("call_method" in v and "dotted identifiers" in v for v in found["attack_fx_thread_split"])
    assert any("__annotations__" in v for v in found["attack_annotations_schema"])
    assert any("annotation T" in v for v in found["attack_dispatch_alias"])
    assert any("singledispatch" in v for v in found["attack_dispatch_alias"])
    assert any("_os (a forbidden module's private alias)" in v for v in found["attack_module_alias"])
    for twin in ("honest_split_twin", "honest_dispatch_twin", "honest_alias_twin", "honest_rng_own_twin", "honest_deadline_twin",
                 "guard_honest_pass"):
        assert check_source((HERE / f"{twin}.py").read_text()) == [], twin


@pytest.mark.parametrize("src,rule", [
    ("import torch\nclass P:\n    def __repr__(self):\n        return 'x'\n", "name"),
    ("import torch.fx as fx\ng = fx.Graph()\nt = 'a'\nx = g.placeholder(t)\n", "call"),
    ("import torch.fx as fx\ng = fx.Graph()\nx = g.placeholder('x')\ny = g.create_node('call_method', 'a\")', (x,))\n", "call"),
    ("import torch\ndef f(n):\n    n.target = 'add\") or x'\n", "patch"),
    ("import torch\ndef outer(y):\n    def g(x: y) -> torch.Tensor:\n        return x\n    return g\n", "annotation"),
    ("import torch\nT = 'x'\ndef g(x: T) -> torch.Tensor:\n    return x\n", "annotation"),
    ("import random\no = [random][0]._sys\n", "attribute"),
    ("P = type('P', (), {'__repr__': len})\n", "name"),
    ("import torch\nclass M(torch.nn.Module):\n    def extra_repr(self):\n        return ''\n", "name"),
    ("import torch\nclass list(torch.nn.Module):\n    pass\n", "name"),
    ("import torch\nP = type('x); (', (torch.nn.Module,), {})\n", "call"),
    ("import torch\nclass M(torch.nn.Module):\n    pass\nM.__name__ = 'x); ('\n", "patch"),
    ("import torch.fx as fx\ndef f(gm):\n    return fx.Interpreter(gm).fetch_attr('forward.x')\n", "attribute"),
])
def test_static_rules_of_this_round(src, rule):
    assert rule in {v.rule for v in check_source(src)}, check_source(src)


@pytest.mark.parametrize("src", [
    "import torch.fx as fx\ng = fx.Graph()\nxs = [g.placeholder(n) for n in ('x', 'w')]\n",
    "import torch\nimport torch.fx as fx\ng = fx.Graph()\nx = g.placeholder('x')\ng.output(g.call_method('add', (x, 1)))\n",
    "import torch\ndef f(n):\n    n.target = torch.ops.aten.gelu.default\n",
    "import torch\nfrom typing import Optional\nT = Optional[torch.Tensor]\ndef g(x: T, n: int | None = None) -> list[torch.Tensor]:\n"
    "    return [x]\n",
])
def test_static_rules_of_this_round_pass_honest_code(src):
    assert check_source(src) == []


@pytest.mark.parametrize("cheat,twin,kind", [("attack_dispatch_alias", "honest_dispatch_twin", "sandbox_denied"),
                                             ("attack_module_alias", "honest_alias_twin", "processes_started")])
def test_payloads_of_the_static_routes_are_caught_at_run_time(subs, cheat, twin, kind):
    """Past the static check (``static_check`` off: ``evaluate_subgraph`` runs no static check),
    the payloads are caught by the boundary: raising its own priority is refused by the kernel, a
    burner process beside the sandbox is found."""
    t = evaluate_subgraph(subs["gelu_tanh:1"], cand(twin), FAST)
    assert t["status"] == "ok" and t["violations"] == []
    r = evaluate_subgraph(subs["gelu_tanh:1"], cand(cheat), FAST)
    assert r["status"] == "violation" and kind in kinds(r) and floored(r), r["violations"]


# --- the time limit spent into a trusted sandbox ---------------------------------------------


def _fake_run(monkeypatch, role, after_reference):
    """``child._run`` on one subgraph whose evaluation raises a ``timeout`` of ``role``'s sandbox,
    after (or before) the eager reference outputs exist, with an untrusted candidate started."""
    sub = builtin_task_set()[0]

    def evaluate(s, c, cfg, phase=None):
        if after_reference:
            phase("reference")
        raise SandboxFailure("the sandbox did not answer before the subgraph's deadline", "timeout", role)

    monkeypatch.setattr(child, "evaluate_subgraph", evaluate)
    monkeypatch.setattr(child, "candidate_started", lambda cfg, who: True)
    monkeypatch.setattr(child, "candidate_leftovers", lambda cfg: set())
    monkeypatch.setattr(child, "close_candidate", lambda cfg: None)
    monkeypatch.setattr(child, "reference_runs_alone", lambda s, cfg: True)
    out: dict = {}
    child._run(cand("honest_deadline_twin"), {sub.subgraph_id: sub}, [sub.subgraph_id], {"timing": True}, "eval",
               lambda *_: None, None, out)
    return out[sub.subgraph_id]


@pytest.mark.parametrize("role", ["dynamo", "reference"])
def test_a_trusted_timeout_after_the_candidate_ran_is_the_candidates(monkeypatch, role):
    r = _fake_run(monkeypatch, role, after_reference=True)
    assert isinstance(r, dict) and r["status"] == "runtime_crash" and r["scored"] and r["error_class"] == "timeout"
    assert r["flags"] == ["deadline_spent"] and charged_as_crash(r)


def test_a_trusted_timeout_before_the_candidate_ran_stays_the_harness(monkeypatch):
    r = _fake_run(monkeypatch, "reference", after_reference=False)
    assert isinstance(r, tuple) and r[2] == "reference_failed:timeout"


@pytest.mark.slow  # spawned children, a subgraph run to its time limit
def test_deadline_strike_no_longer_strikes_a_subgraph_from_the_reward():
    """The cheat spends the time limit on the softmax subgraph (``max_subgraphs=2``: softmax:0 and
    swiglu:2). Wherever the limit runs out (its own request, the Dynamo-only load, a reference's
    trial), the row is the candidate's scored ``runtime_crash``, never a ``reference_failed`` row out
    of its scores (when the rest of the subgraph fits in what the wait left, it is an ``ok`` row); its
    twin is valid on both. The rule itself, on a trusted timeout, is the test above."""
    from curate.score.reward import score_candidate

    cfg = {"timeout_s": 25, "revalidate": {"top": 0}}
    twin = score_candidate((HERE / "honest_deadline_twin.py").read_text(), "builtin", max_subgraphs=2, cfg=cfg)
    assert twin["valid"] and [r["status"] for r in twin["rows"]] == ["ok", "ok"]
    res = score_candidate((HERE / "attack_deadline_strike.py").read_text(), "builtin", max_subgraphs=2, cfg=cfg)
    struck = next(r for r in res["rows"] if r["subgraph_id"] == "softmax:0")
    assert not [r for r in res["rows"] if r["status"] == "reference_failed"] and struck["scored"]
    if struck["status"] != "ok":  # the limit ran out (where depends on the machine's load): charged to the candidate
        assert struck["status"] == "runtime_crash" and struck["error_class"] == "timeout" and charged_as_crash(struck)


@pytest.mark.slow  # spawned children
@pytest.mark.skipif(not CandidateGroup.available(), reason="the candidate's CPU in ns needs its own cgroup (a root parent)")
def test_reward_of_this_round_cheats_is_the_floor():
    """``score_candidate``: the thread-split cheat is refused statically (no rows) and, with the
    static check off, invalid at run time (``transient_threads``); either way the floor reward. Its
    twin is valid."""
    from curate.score.reward import score_candidate

    cfg = {"warmup": 1, "trials": 5, "min_trial_ms": 2.0, "check_per_trial": 3, "revalidate": {"top": 0}}
    src = (HERE / "attack_fx_thread_split.py").read_text()
    static = score_candidate(src, "builtin", max_subgraphs=1, cfg=cfg)
    assert not static["valid"] and static["rows"] == [] and static["reward"] == -1.0
    run = score_candidate(src, "builtin", max_subgraphs=1, cfg={**cfg, "static_check": False})
    assert not run["valid"] and run["reward"] == -1.0
    assert all("transient_threads" in kinds(r) and floored(r) for r in run["rows"]), [r["violations"] for r in run["rows"]]
    twin = score_candidate((HERE / "honest_split_twin.py").read_text(), "builtin", max_subgraphs=1, cfg=cfg)
    assert twin["valid"] and twin["reward"] > -1.0
