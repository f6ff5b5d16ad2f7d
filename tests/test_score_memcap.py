"""The scorer's memory cap is on resident memory (RSS), not on address space, and an eager
reference that cannot run under the harness's limits is not charged to any candidate.

Fast slice: the chunked output checks equal the full ones (known right value: ``compare_outputs``
of :mod:`curate.tolerance`), the cross-candidate exclusion, the in-process reference failure, the
RSS reader. Slow (spawned children importing torch): an RSS hog is ``oom``, a large untouched
address-space reservation and torch itself run under a 0.75 GiB cap, and a cap the reference
cannot fit in makes ``reference_failed`` rows for the eager and a module candidate alike."""

import os

import psutil
import pytest
import torch

from curate.score.defenses.compare import chunked_comparisons, fast_min_pass_t
from curate.score.evaluate import evaluate_subgraph, exclude_reference_failures, parse_candidate, run_candidate, summarize
from curate.score.synthetic_tasks import TaskSubgraph
from curate.tolerance import LEVELS, compare_outputs, sample_min_pass_t
from passnet_common import worker
from tests.score_fixtures import cand


def _cases():
    g = torch.Generator().manual_seed(0)
    e = torch.randn(3, 1000, generator=g)
    far = e.clone()
    far[1, 777] += 0.5  # one element off: only a large level passes
    early = e + 1e-5 * torch.randn(3, 1000, generator=g)
    early[0, 0] += 0.5  # the first chunk needs the largest level, later ones smaller ones
    nan_e, nan_a = e.clone(), e.clone()
    nan_e[2, 5] = nan_a[2, 5] = float("nan")  # NaN in both: matches
    nan_only = e.clone()
    nan_only[0, 999] = float("nan")  # NaN in the candidate only: fails everywhere
    inf_e = e.clone()
    inf_e[0, 3] = float("inf")
    ints = torch.arange(3000).reshape(3, 1000)
    ints_off = ints.clone()
    ints_off[2, 900] += 1
    return [
        (e, e.clone()),
        (e * (1 + 1e-6), e),
        (e + 1e-3 * torch.randn(3, 1000, generator=g), e),
        (far, e),
        (early, e),
        (nan_a, nan_e),
        (nan_only, e),
        (inf_e.clone(), inf_e),
        (ints, ints.clone()),
        (ints_off, ints),
        (e.half(), e),  # dtype mismatch
        ((e, e[:1] * 2), (e.clone(), e[:1] * 2 + 1e-4)),  # pytree of two outputs
        ((e,), (e, e)),  # structure mismatch
        (e.t(), e.t().contiguous()),  # non-contiguous actual
        (torch.tensor(2.0), torch.tensor(2.0 + 1e-5)),
    ]


@pytest.mark.parametrize("k", range(len(_cases())))
def test_chunked_checks_equal_the_full_comparison(k):
    actual, expected = _cases()[k]
    full = compare_outputs(actual, expected)
    want = sample_min_pass_t(c.min_pass_t for c in full)
    assert fast_min_pass_t(actual, expected, chunk=64) == want
    chunked = chunked_comparisons(actual, expected, chunk=64)
    assert [c.min_pass_t for c in chunked] == [c.min_pass_t for c in full]
    assert [c.dtype for c in chunked] == [c.dtype for c in full]
    assert [c.passes for c in chunked] == [c.passes for c in full]
    for c, f in zip(chunked, full):
        assert c.max_abs_diff == f.max_abs_diff or (c.max_abs_diff != c.max_abs_diff and f.max_abs_diff != f.max_abs_diff)


def test_the_known_cases_have_their_levels():
    cases = _cases()
    assert fast_min_pass_t(*cases[0], chunk=64) == LEVELS[0]  # identical
    assert fast_min_pass_t(*cases[6], chunk=64) is None  # a NaN the reference does not have
    assert fast_min_pass_t(*cases[9], chunk=64) is None  # an integer off by one
    assert fast_min_pass_t(*cases[3], chunk=64) > fast_min_pass_t(*cases[1], chunk=64)
    assert fast_min_pass_t(*cases[4], chunk=64) == fast_min_pass_t(*cases[3], chunk=64)  # same 0.5 error, other chunk


def _row(cand, sid, status="ok", speedup=1.0, min_pass_t=-10, error_code=None):
    return {"candidate": cand, "task_id": sid.split(":")[0], "subgraph_id": sid, "status": status, "speedup": speedup,
            "min_pass_t": min_pass_t, "error_code": error_code, "scored": status != "reference_failed",
            "violations": [], "flags": []}


def test_a_failed_reference_is_out_of_every_candidates_score_alike():
    rows = {"eager": [_row("eager", "a:0"), _row("eager", "b:0"), _row("eager", "c:0", "reference_failed", None, None)],
            "fast": [_row("fast", "a:0", speedup=2.0, min_pass_t=-6), _row("fast", "b:0", speedup=0.5, min_pass_t=-8),
                     _row("fast", "c:0", "runtime_crash", None, None, error_code=2)]}
    without = {n: [dict(r) for r in rs if r["subgraph_id"] != "c:0"] for n, rs in rows.items()}
    assert exclude_reference_failures(rows, trusted=["eager"]) == ["c:0"]
    (c_fast,) = [r for r in rows["fast"] if r["subgraph_id"] == "c:0"]
    assert c_fast["status"] == "reference_failed" and not c_fast["scored"] and "was:runtime_crash" in c_fast["flags"]
    _, with_s = summarize(rows, {}, 0.1, 0.1, ["paper", "graphnet"], "paper")
    _, without_s = summarize(without, {}, 0.1, 0.1, ["paper", "graphnet"], "paper")
    for name in rows:
        for conv in ("paper", "graphnet"):
            assert with_s["candidates"][name][conv]["ES_t"] == without_s["candidates"][name][conv]["ES_t"]
        assert with_s["candidates"][name]["n_scored"] == 2
    # the crash was the harness's: charged, it would have lowered the candidate's ES_t
    charged = {n: [dict(r) for r in rs] for n, rs in rows.items()}
    charged["fast"][2].update(status="runtime_crash", error_code=2, scored=True)
    _, charged_s = summarize(charged, {}, 0.1, 0.1, ["paper"], "paper")
    assert charged_s["candidates"]["fast"]["paper"]["ES_t"]["-5"] < with_s["candidates"]["fast"]["paper"]["ES_t"]["-5"]


def test_a_candidate_cannot_strike_a_subgraph_whose_trusted_reference_ran():
    # "sly" kills its own child before the reference of b:0 is computed (e.g. a thread left behind by
    # its code on a:0 that exhausts memory): with the eager candidate's reference fine on b:0, that is
    # sly's runtime crash, not an exclusion from every candidate's set
    rows = {"eager": [_row("eager", "a:0"), _row("eager", "b:0")],
            "fast": [_row("fast", "a:0", speedup=2.0), _row("fast", "b:0", speedup=0.5)],
            "sly": [_row("sly", "a:0", speedup=3.0), _row("sly", "b:0", "reference_failed", None, None)]}
    assert exclude_reference_failures(rows, trusted=["eager"]) == []
    (b_sly,) = [r for r in rows["sly"] if r["subgraph_id"] == "b:0"]
    assert b_sly["status"] == "runtime_crash" and b_sly["scored"] and b_sly["error_code"] == 2
    assert "reference_ok_in_eager" in b_sly["flags"]
    assert all(r["status"] == "ok" for n in ("eager", "fast") for r in rows[n])
    _, s = summarize(rows, {}, 0.1, 0.1, ["paper"], "paper")
    assert s["candidates"]["sly"]["n_scored"] == 2  # b:0 still counts, against sly
    # without a trusted run the candidate's word is all there is: the subgraph is out for everyone
    untrusted = {n: [dict(r) for r in rs] for n, rs in rows.items() if n != "eager"}
    untrusted["sly"][1].update(status="reference_failed", scored=False, error_code=None, flags=[])
    assert exclude_reference_failures(untrusted) == ["b:0"]
    assert all(r["status"] == "reference_failed" for rs in untrusted.values() for r in rs if r["subgraph_id"] == "b:0")


def _bad_reference():
    def build():
        class Boom(torch.nn.Module):
            def forward(self, x):
                raise MemoryError("reference needs more than the cap")

        return torch.fx.symbolic_trace(Boom())

    return TaskSubgraph("boom", "boom:0", build, lambda s: [torch.randn(4)])


def test_a_reference_that_raises_is_reference_failed_not_a_candidate_failure():
    for c in (parse_candidate("eager=eager"), cand("honest_backend")):
        r = evaluate_subgraph(_bad_reference(), c, {"timing": False})
        assert r["status"] == "reference_failed" and r["scored"] is False and r["error_code"] is None
        assert r["error_class"] == "oom" and "reference_failed" in r["flags"]


def test_rss_reader_matches_psutil_and_falls_back_to_proc(monkeypatch):
    x = torch.ones(1 << 24)  # 64 MiB resident
    want = psutil.Process().memory_info().rss
    assert abs(worker.rss_bytes(os.getpid()) - want) < 32 << 20

    class Gone:
        def __init__(self, pid):
            raise psutil.NoSuchProcess(pid)

    monkeypatch.setattr(worker.psutil, "Process", Gone)
    assert abs(worker.rss_bytes(os.getpid()) - want) < 32 << 20  # /proc/<pid>/status VmRSS
    assert worker.rss_bytes(2**22 + 12345) is None  # no such process
    del x


CAP = {"timing": False, "max_subgraphs": 1, "sample_seed": 0, "timeout_s": 200, "static_check": False,
       "mem_cap_gb": 0.75, "dynamo_reference": False}


@pytest.mark.slow  # spawned children importing torch
def test_resident_memory_above_the_cap_is_oom_and_address_space_is_not_memory():
    quiet = lambda *_: None  # noqa: E731
    (hog,), _ = run_candidate(cand("rss_hog_backend"), "builtin", CAP, log=quiet)
    assert hog["status"] == "runtime_crash" and hog["error_class"] == "oom" and hog["error_code"] == 2
    assert "above the cap mem_cap_gb = 0.75 GiB" in hog["error_message"]
    (va,), _ = run_candidate(cand("va_reserve_backend"), "builtin", CAP, log=quiet)
    assert va["status"] == "ok" and va["peak_rss_bytes"] < 0.75 * 2**30
    (eager,), _ = run_candidate(parse_candidate("eager=eager"), "builtin", CAP, log=quiet)
    assert eager["status"] == "ok"  # torch's own address space (GiB) under a 0.75 GiB cap


@pytest.mark.slow  # spawned children importing torch
def test_a_cap_the_reference_cannot_fit_fails_the_reference_for_every_candidate():
    cfg = {**CAP, "mem_cap_gb": 0.05}  # below torch's own resident memory: the harness cannot start
    rows = {}
    for c in (parse_candidate("eager=eager"), cand("honest_backend")):
        rows[c.name], _ = run_candidate(c, "builtin", cfg, log=lambda *_: None)
    for (r,) in rows.values():
        assert r["status"] == "reference_failed" and r["scored"] is False and r["error_class"] == "oom"


def test_chunked_checks_on_half_precision_empty_and_zero_dim_outputs():
    g = torch.Generator().manual_seed(1)
    e = torch.randn(300, generator=g).to(torch.bfloat16)
    for actual, expected in ((e + 0.01, e), (e, e.clone()), (torch.empty(0), torch.empty(0)),
                             (torch.tensor(float("inf")), torch.tensor(float("inf"))),
                             (torch.tensor(float("-inf")), torch.tensor(float("inf")))):
        want = sample_min_pass_t(c.min_pass_t for c in compare_outputs(actual, expected))
        assert fast_min_pass_t(actual, expected, chunk=64) == want


def test_error_classes_from_messages():
    from curate.score.defenses.checks import error_class_of

    assert error_class_of("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: "
                          "can't allocate memory: you tried to allocate 57802752 bytes") == "oom"
    assert error_class_of("RunError: RuntimeError: broken backend: crash at run time") == "exception:RunError"
    assert error_class_of("child died (exit code None)") == "crash"
