"""Per-variant time cap, re-measurement of unstable rows within a run (and the no-op control
under it), and the shared paired bootstrap. Every clock here is a fake one the timed
functions advance: nothing depends on the machine's load or speed."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from curate.profile.run import _read, pass_dir, read_passes, time_passes
from curate.profile.variant import merge_passes, needs_remeasure, timing_row
from curate.score.defenses.clock import median_ratio_ci
from curate.select.longtail import label_row
from curate.timing import TimingConfig, bootstrap_ratio_ci, measure_sides, paired_bootstrap
from tests.test_profile import Clock

DECIDE = (("eager", "inductor"), ("dynamo", "inductor"), ("eager", "dynamo"))


# ----------------------------------------------------------------------------- bootstrap


def _old_bootstrap_ratio_ci(num_ms, den_ms, n_boot=1000, level=0.95, seed=0):
    """curate/timing.py::bootstrap_ratio_ci before the shared paired_bootstrap (verbatim)."""
    a, b = np.asarray(num_ms, dtype=float), np.asarray(den_ms, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(n_boot, len(a)))
    with np.errstate(divide="ignore"):
        r = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)
    ratios = np.median(r[idx], axis=1)
    q = (1 - level) / 2
    return float(np.quantile(ratios, q)), float(np.quantile(ratios, 1 - q))


def _old_median_ratio_ci(num_ms, den_ms, n_boot=1000, level=0.95, seed=0):
    """curate/score/defenses/clock.py::median_ratio_ci before the shared paired_bootstrap (verbatim)."""
    a, b = np.asarray(num_ms, dtype=float), np.asarray(den_ms, dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_boot, len(a)))
    den = np.median(b[idx], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, np.median(a[idx], axis=1) / np.where(den > 0, den, 1.0), np.inf)
    q = (1 - level) / 2
    return float(np.quantile(r, q)), float(np.quantile(r, 1 - q))


A = [1.0, 1.094, 0.921, 0.766, 0.872, 0.743, 1.018, 1.495, 0.863, 0.83, 1.158, 1.113, 1.032, 0.756, 0.991, 1.232, 0.668]
B = [0.963, 0.625, 0.751, 0.636, 1.03, 0.756, 1.199, 1.158, 1.045, 0.519, 0.94, 1.089, 1.143, 0.698, 0.958, 0.824, 0.867]


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_both_intervals_equal_the_values_of_the_code_before_the_shared_bootstrap():
    # printed by the old implementations (same trials, same seeds) before paired_bootstrap existed
    assert bootstrap_ratio_ci(A, B, 500, 0.9, 0) == (0.9828042328042328, 1.226364846870839)
    assert median_ratio_ci(A, B, 500, 0.9, 0) == (0.9102296450939458, 1.226364846870839)
    assert median_ratio_ci(A, B, 500, 0.9, 3) == (0.9055036344755971, 1.226364846870839)
    assert bootstrap_ratio_ci(A, B) == (0.9028871391076115, 1.2319148936170212)
    assert median_ratio_ci(A, B) == (0.8941747572815534, 1.2524271844660195)
    rng = np.random.default_rng(1)
    for n, seed, level, n_boot in [(5, 0, 0.95, 200), (23, 4, 0.9, 1000), (40, 9, 0.99, 333)]:
        a, b = rng.lognormal(0, 0.4, n).tolist(), rng.lognormal(0, 0.4, n).tolist()
        b[0] = 0.0  # a zero denominator: inf ratios (the quantile of infs is nan, before as now)
        with np.errstate(invalid="ignore"):  # exact equality, nan equal to nan
            np.testing.assert_array_equal(bootstrap_ratio_ci(a, b, n_boot, level, seed),
                                          _old_bootstrap_ratio_ci(a, b, n_boot, level, seed))
            np.testing.assert_array_equal(median_ratio_ci(a, b, n_boot, level, seed),
                                          _old_median_ratio_ci(a, b, n_boot, level, seed))


def test_paired_bootstrap_resamples_both_sides_with_the_same_indices_and_rejects_unpaired():
    # b_k = 2 a_k with a varying wildly: unpaired resampling would give a wide interval, paired gives 0.5
    a = [1.0, 7.0, 2.0, 30.0, 4.0, 0.5] * 3
    assert paired_bootstrap(a, [2 * x for x in a], lambda x, y: np.median(x / y, axis=1)) == (0.5, 0.5)
    with pytest.raises(ValueError, match="paired trials"):
        paired_bootstrap([1.0], [1.0, 2.0], lambda x, y: x[:, 0])
    with pytest.raises(ValueError, match="paired trials"):
        paired_bootstrap([], [], lambda x, y: x[:, 0])


# ----------------------------------------------------------------------------- time cap


def _slow_sides(clock, inductor_cost=200.0):
    return {"eager": clock.fn(100.0), "dynamo": clock.fn(100.0), "inductor": clock.fn(inductor_cost)}


def test_time_cap_stops_trials_records_it_and_a_short_capped_row_is_unstable():
    """Calls of 100 / 100 / 200 ms (inner 1): first + 1 warm-up + calibration call per side =
    1.2 s (not counted), then 0.4 s of measured time per interleaved trial. With a 3.1 s cap the
    timing stops after the trial that crosses it (0.4 * 8 = 3.2 s): 8 trials per side, fewer
    than cap_min_trials = 10, so the row is unstable although its intervals are exact, and no
    retry is made."""
    clock = Clock()
    cfg = TimingConfig(warmup=1, trials=40, min_trials=20, min_trial_ms=10.0, gate="ci", retries=2,
                       max_variant_s=3.1, cap_min_trials=10)
    t = measure_sides(_slow_sides(clock), lambda: [], cfg, timer=clock, decide=DECIDE)
    assert t.time_capped and t.attempts == 1 and not t.stable
    assert [len(v) for v in t.trials_ms.values()] == [8, 8, 8]
    assert sum(h["trial_ms"] for h in t.history) == pytest.approx(3200.0)
    assert t.elapsed_s == pytest.approx(4.4) and clock.t == pytest.approx(4.4)
    assert all(h["trial_ms"] >= 10.0 for h in t.history if not h["short"])  # inner still re-derived
    row = timing_row(t, cfg)
    assert row["capped"] is True and row["trials"] == 8 and row["stable"] is False
    lab = label_row({**row, "subgraph_hash": "h", "size": "workload", "run": 0, "status": "unstable", "min_pass_t": -10}, -5)
    assert lab["long_tail"] is None  # never labelled


def test_capped_row_with_enough_decided_trials_is_stable_and_an_undecided_one_is_not():
    clock = Clock()
    cfg = TimingConfig(warmup=1, trials=40, min_trials=20, min_trial_ms=10.0, gate="ci", retries=2,
                       max_variant_s=5.9, cap_min_trials=10)
    t = measure_sides(_slow_sides(clock), lambda: [], cfg, timer=clock, decide=DECIDE)
    # 0.4 k > 5.9 first at k = 15, before the first adaptive check at 20
    assert t.time_capped and len(t.trials_ms["eager"]) == 15 and t.stable
    assert t.ratio("eager", "inductor") == pytest.approx(0.5)
    rng = random.Random(0)
    clock = Clock()  # inductor as fast as Dynamo-only on average but +-30 % per call: undecided, wide
    sides = _slow_sides(clock, inductor_cost=lambda: 100.0 * rng.uniform(0.7, 1.3))
    t = measure_sides(sides, lambda: [], cfg, timer=clock, decide=DECIDE)
    lo, hi = t.ratio_ci("dynamo", "inductor")
    assert t.time_capped and t.attempts == 1 and len(t.trials_ms["eager"]) >= 10
    assert lo < 1 < hi and hi / lo - 1 > cfg.max_ci_width and not t.stable


def test_no_cap_by_default_and_an_uncapped_run_takes_its_trials():
    clock = Clock()
    cfg = TimingConfig(warmup=1, trials=30, min_trials=30, min_trial_ms=10.0, gate="ci")
    t = measure_sides(_slow_sides(clock), lambda: [], cfg, timer=clock)
    assert cfg.max_variant_s is None and not t.time_capped and len(t.trials_ms["eager"]) == 30


# ----------------------------------------------------------------------------- re-measurement


def _result(stable: bool, trials: int = 20, tag: str = "") -> dict:
    return {"stable": stable, "trials": trials, "trial_history": json.dumps([{"trial": 0, "side": "eager", "tag": tag}])}


def _recording_batch(outcome: dict, calls: list):
    """A ``run_batch`` for :func:`time_passes` that records each call's task keys in ``calls`` and
    writes pass p of variant ``name`` with ``stable = outcome[name][p]`` (20 + p trials)."""

    def batch(tasks):
        calls.append([k for k, _, _ in tasks])
        for key, name, out in tasks:
            p = 0 if out.name == name else int(out.name[4:])
            out.mkdir(parents=True, exist_ok=True)
            (out / "result.json").write_text(json.dumps(_result(outcome[name][p], 20 + p, f"{name}{p}")))

    return batch


def test_time_passes_re_times_only_unstable_rows_in_fresh_folders_and_resumes(tmp_path):
    outcome = {"a": [True], "b": [False, True], "c": [False, False]}  # per variant: stable of pass 0, 1, ...
    calls: list[list[str]] = []

    batch = _recording_batch(outcome, calls)

    keyed = [(n, n, tmp_path / n) for n in "abc"]
    assert time_passes(keyed, batch, passes=1) == [3, 2]
    assert calls == [["a", "b", "c"], ["b-pass1", "c-pass1"]]
    assert [len(read_passes(tmp_path / n)) for n in "abc"] == [1, 2, 2]
    row = merge_passes(read_passes(tmp_path / "b"))
    assert row["stable"] is True and row["remeasure_pass"] == 1 and row["pass_stable"] == [False, True]
    assert row["trials"] == 21 and row["pass_trials"] == [20, 21]  # final pass's trials, not pooled
    assert [(h["pass"], h["tag"]) for h in json.loads(row["trial_history"])] == [(0, "b0"), (1, "b1")]
    assert not merge_passes(read_passes(tmp_path / "c"))["stable"]
    # a resumed build: a, b are done; c used every pass and is still unstable, so it is measured afresh
    calls.clear()
    outcome["c"] = [True]
    assert time_passes(keyed, batch, passes=1) == [1]
    assert calls == [["c"]] and not pass_dir(tmp_path / "c", 1).exists()
    assert merge_passes(read_passes(tmp_path / "c"))["pass_stable"] == [True]
    # an interrupted build (pass 0 unstable, pass 1 never ran) continues with pass 1
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "result.json").write_text(json.dumps(_result(False)))
    outcome["d"] = [False, True]
    calls.clear()
    assert time_passes(keyed + [("d", "d", tmp_path / "d")], batch, passes=1) == [0, 1]
    assert calls == [[], ["d-pass1"]]
    # a child that died (error.json, no result) is run again by the next build, as before
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "error.json").write_text(json.dumps({"error_class": "Timeout"}))
    assert read_passes(tmp_path / "e")[0]["status"] == "isolation_failed"
    outcome["e"] = [True]
    calls.clear()
    assert time_passes(keyed + [("e", "e", tmp_path / "e")], batch, passes=1) == [1]
    assert calls == [["e"]] and merge_passes(read_passes(tmp_path / "e"))["stable"] is True


def test_a_lower_remeasure_passes_does_not_resume_a_label_from_a_pass_it_never_runs(tmp_path):
    """A folder timed with remeasure_passes 2 (unstable, unstable, stable) resumed with 1: a fresh run with 1
    would stop after pass 1, still unstable, so the folder is cleared and timed afresh instead of giving the
    pass-2 label; a folder within the new count (unstable, stable) is resumed as it is."""
    calls: list[list[str]] = []
    batch = _recording_batch({"a": [False, False, True], "b": [False, True]}, calls)
    keyed = [(n, n, tmp_path / n) for n in "ab"]
    assert time_passes(keyed, batch, passes=2) == [2, 2, 1]
    assert [len(read_passes(tmp_path / n)) for n in "ab"] == [3, 2]
    calls.clear()
    batch = _recording_batch({"a": [False, False], "b": [False, True]}, calls)
    assert time_passes(keyed, batch, passes=1) == [1, 1]
    assert calls == [["a"], ["a-pass1"]]
    assert merge_passes(read_passes(tmp_path / "a"))["pass_stable"] == [False, False]
    assert merge_passes(read_passes(tmp_path / "b"))["pass_stable"] == [False, True]


def test_a_pass_that_ran_out_of_memory_is_timed_again_by_the_next_run(tmp_path):
    """A kept pass recorded as a crash out of memory (MemoryError under the child's address-space cap, or the
    allocator's message) depends on the run's cap, not on the variant: the next run removes it before it
    starts (so a retry killed later is not hidden behind it) and times it again; a crash of another kind is a
    result and stays. Within one run nothing is removed, so an out-of-memory pass is not retried there."""
    from curate.profile.run import drop_unresumable_results, memory_failure
    from curate.profile.variant import fingerprint

    for name, row in (("m", {"status": "runtime_crash", "error_class": "MemoryError", "error_message": ""}),
                      ("r", {"status": "runtime_crash", "error_class": "RuntimeError",
                             "error_message": "[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate memory"}),
                      ("x", {"status": "runtime_crash", "error_class": "RuntimeError", "error_message": "shape mismatch"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(row))
    assert [memory_failure(read_passes(tmp_path / n)[0]) for n in "mrx"] == [True, True, False]
    calls: list[list[str]] = []
    batch = _recording_batch({"m": [True], "r": [True], "x": [True]}, calls)
    keyed = [(n, n, tmp_path / n) for n in "mrx"]
    assert time_passes(keyed, batch, passes=1) == [0]  # the same run: kept as they are
    assert drop_unresumable_results(tmp_path, fingerprint("cpu")) == {"out_of_memory": 2}
    assert not (tmp_path / "m" / "result.json").exists()
    assert time_passes(keyed, batch, passes=1) == [2]
    assert calls == [[], ["m", "r"]]
    assert read_passes(tmp_path / "x")[0]["error_message"] == "shape mismatch"
    assert all(merge_passes(read_passes(tmp_path / n))["stable"] is True for n in "mr")


def test_cpu_and_cuda_runs_on_one_folder_keep_each_others_timings(tmp_path):
    """The profile stage runs on the CPU and then on the GPU into one attempts folder: a CUDA run removes only
    CUDA timings of another GPU, a CPU run only CPU timings of another CPU model (a crash row, which names no
    device, counts as a CPU one)."""
    from curate.profile.run import drop_unresumable_results

    rows = {"cpu_here": {"device_name": "CPU A", "stable": True}, "cpu_other": {"device_name": "CPU B", "stable": True},
            "gpu_here": {"device_name": "GPU A", "cuda_version": "12.8", "stable": True},
            "gpu_other": {"device_name": "GPU B", "cuda_version": "12.8", "stable": True},
            "gpu_oom": {"status": "runtime_crash", "error_class": "RuntimeError", "cuda_version": "12.8",
                        "device_name": "GPU A", "error_message": "CUDA out of memory. Tried to allocate 2.00 GiB"}}

    def lay():
        for name, row in rows.items():
            (tmp_path / name).mkdir(exist_ok=True)
            (tmp_path / name / "result.json").write_text(json.dumps(row))

    def left():
        return sorted(n for n in rows if (tmp_path / n / "result.json").exists())

    lay()
    assert drop_unresumable_results(tmp_path, {"device_name": "GPU A", "cuda_version": "12.8"}) == \
        {"GPU B": 1, "out_of_memory": 1}
    assert left() == ["cpu_here", "cpu_other", "gpu_here"]
    lay()
    assert drop_unresumable_results(tmp_path, {"device_name": "CPU A", "cpu_model": "CPU A"}) == {"CPU B": 1}
    assert left() == ["cpu_here", "gpu_here", "gpu_oom", "gpu_other"]


def test_a_check_that_ran_out_of_memory_is_checked_again_by_the_next_run(tmp_path, monkeypatch):
    """A kept check that recorded MemoryError (the eager run under the child's address-space cap reads as a
    size-inconsistent skip) is checked again by the next run, which may have a higher cap; the other kept
    checks are not."""
    _fake_profile(tmp_path, monkeypatch, overlap=False)
    att = tmp_path / "outFalse" / "attempts"
    checks = sorted(att.rglob("check.json"))
    oom = checks[0]
    oom.write_text(json.dumps({"status": "skipped", "skip_reason": "size_inconsistent", "error_class": "MemoryError",
                               "error_message": "", "check_seconds": 1.0}))
    kept = {p: p.read_bytes() for p in checks[1:]}
    rows, _, _ = _fake_profile(tmp_path, monkeypatch, overlap=False)
    assert json.loads(oom.read_text())["status"] == "ok"
    assert {p: p.read_bytes() for p in checks[1:]} == kept
    assert not [r for r in rows if r.get("skip_reason") == "size_inconsistent"]


def test_timings_of_another_device_are_timed_again_and_checks_and_this_machines_stay(tmp_path, monkeypatch):
    """A kept attempts folder holding results another machine timed (a pulled or copied data/profile): every
    timing folder whose result names another device_name is timed again here (its passes with it); results
    of this machine and results that name no device are resumed, no compile check runs again."""
    from curate.profile.run import drop_unresumable_results
    from curate.profile.variant import fingerprint

    rows0, _, calls0 = _fake_profile(tmp_path, monkeypatch, overlap=False)
    here = fingerprint("cpu")["device_name"]
    att = tmp_path / "outFalse" / "attempts"
    results = sorted(att.rglob("result.json"))
    assert len(results) == len(calls0) == 21
    checks = {p: p.read_bytes() for p in att.rglob("check.json")}
    foreign, mine = results[:4], results[4:8]
    for p in foreign:
        p.write_text(json.dumps({**json.loads(p.read_text()), "device_name": "Other CPU"}))
    for p in mine:
        p.write_text(json.dumps({**json.loads(p.read_text()), "device_name": here}))
    (foreign[0].parent / "pass1").mkdir()
    (foreign[0].parent / "pass1" / "result.json").write_text(json.dumps({"device_name": "Other CPU", "stable": True}))
    rows1, stats1, calls1 = _fake_profile(tmp_path, monkeypatch, overlap=False)
    assert sorted(c[0] for c in calls1) == sorted(p.parent for p in foreign)
    assert not (foreign[0].parent / "pass1" / "result.json").exists()
    assert all(json.loads(p.read_text()).get("device_name") == here for p in mine)
    assert {p: p.read_bytes() for p in att.rglob("check.json")} == checks
    assert len(rows1) == len(rows0)
    env = fingerprint("cpu")
    assert drop_unresumable_results(att, env) == {} and drop_unresumable_results(tmp_path / "none", env) == {}


def test_a_timing_child_that_leaves_nothing_is_not_re_measured_and_stops_nothing(tmp_path):
    """A pass-0 child killed before it wrote anything (no ``result.json``, no ``error.json``: a batch without
    :func:`record_killed`) leaves its variant with no pass: the re-measurement pass skips it and the other
    variants' passes go on (the stage crashed with IndexError on such a variant); its row reads as
    ``isolation_failed``, and the next build times it again."""
    outcome = {"a": [False, True], "b": [True]}
    calls: list[list[str]] = []
    inner = _recording_batch(outcome, calls)

    def batch(tasks):  # "k" is killed in every pass 0 before it writes
        inner([t for t in tasks if t[1] != "k"])
        calls[-1] += [t[0] for t in tasks if t[1] == "k"]

    keyed = [(n, n, tmp_path / n) for n in "akb"]
    assert time_passes(keyed, batch, passes=1) == [3, 1]
    assert calls == [["a", "b", "k"], ["a-pass1"]] and read_passes(tmp_path / "k") == []
    assert _read(tmp_path / "k" / "result.json", tmp_path / "k")["status"] == "isolation_failed"
    calls.clear()
    assert time_passes(keyed, batch, passes=1) == [1] and calls == [["k"]]


def test_record_killed_leaves_the_error_class_of_a_timing_child_killed_at_its_timeout(tmp_path):
    """The timing batch's ``on_done``: a child of :func:`passnet_common.worker.run_isolated` killed at its
    timeout gets ``error.json`` with the error class, so its pass reads as ``isolation_failed`` with that
    class (and a finished one is left as it wrote it)."""
    from curate.profile.run import record_killed
    from passnet_common.worker import run_isolated

    tasks = [("slow", 5.0, tmp_path / "slow"), ("quick", 0.0, tmp_path / "quick")]
    run_isolated(tasks, _sleep_then_write, workers=1, timeout_s=1.0, mem_cap_bytes=None,
                 on_done=record_killed({k: d for k, _, d in tasks}))
    ps = read_passes(tmp_path / "slow")
    assert len(ps) == 1 and ps[0]["status"] == "isolation_failed" and ps[0]["error_class"]
    assert read_passes(tmp_path / "quick") == [{"stable": True}]


def _sleep_then_write(seconds: float, out: Path) -> None:
    import time

    time.sleep(seconds)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps({"stable": True}))


def test_first_only_times_pass_0_and_a_later_call_re_measures_what_came_out_unstable(tmp_path):
    """The overlapped run 0: pass 0 of each group as its compiles finish (first_only), then one
    call over the whole run for its re-measurement passes; the same passes as one call."""
    outcome = {"a": [True], "b": [False, True], "c": [False, False]}
    calls: list[list[str]] = []

    batch = _recording_batch(outcome, calls)

    keyed = [(n, n, tmp_path / n) for n in "abc"]
    assert time_passes(keyed[:1], batch, passes=1, first_only=True) == [1]
    assert time_passes(keyed[1:], batch, passes=1, first_only=True) == [2]
    assert [len(read_passes(tmp_path / n)) for n in "abc"] == [1, 1, 1]
    assert time_passes(keyed, batch, passes=1) == [0, 2]
    assert calls == [["a"], ["b", "c"], [], ["b-pass1", "c-pass1"]]
    assert [merge_passes(read_passes(tmp_path / n))["pass_stable"] for n in "abc"] == [[True], [False, True], [False, False]]


def test_crashes_and_short_capped_rows_are_not_re_measured():
    assert needs_remeasure({"stable": False}) and not needs_remeasure({"stable": True})
    # capped with fewer trials than the gate needs: unstable by construction, not re-timed;
    # capped with enough trials but undecided: re-timed like any unstable row
    assert not needs_remeasure({"stable": False, "capped": True, "trials": TimingConfig.cap_min_trials - 1})
    assert needs_remeasure({"stable": False, "capped": True, "trials": TimingConfig.cap_min_trials})
    assert not needs_remeasure({"status": "runtime_crash", "stable": False}) and not needs_remeasure({})
    with pytest.raises(ValueError, match="at least one"):
        merge_passes([])


@pytest.mark.parametrize("stop", ["decided", "label"])
def test_noop_control_with_re_measurement_holds_compiler_speedup_one_and_enters_no_long_tail(tmp_path, stop):
    """Optional stopping check. The Dynamo-only backend profiled in Inductor's place (same cost
    per call as the Dynamo-only side) on 24 variants under a simulated load that multiplies
    the cost of everything inside random 20-ms windows by 1, 1, 2 or 4; each pass of a variant
    has its own load draw (fresh trials). Unstable variants get one re-measurement pass (labels from the final
    pass). Every row's speedup_compiler interval must still hold 1 and no row may enter the
    long tail; some rows must really have been re-measured (else nothing was checked). Both stop
    rules: ``label`` (the profile's) stops a row as soon as every interval is on one side of 1 - m."""
    cfg = TimingConfig(warmup=1, trials=40, min_trials=20, min_trial_ms=10.0, gate="ci", retries=1,
                       max_variant_s=15.0, cap_min_trials=10, stop=stop)
    bases = {f"v{i}": ((0.02, 0.07) if i % 2 else (1.0, 1.0)) for i in range(24)}  # overhead-bound / not

    def batch(tasks):
        for key, name, out in tasks:
            rng, clock, windows = random.Random(key), Clock(), {}

            def loaded(b):
                return clock.fn(lambda: b * windows.setdefault(int(clock.t * 1e3 // 20), rng.choice([1.0, 1.0, 2.0, 4.0])))

            eager_ms, dyn_ms = bases[name]
            sides = {"eager": loaded(eager_ms), "dynamo": loaded(dyn_ms), "inductor": loaded(dyn_ms)}  # the control
            t = measure_sides(sides, lambda: [torch.ones(1)], cfg, timer=clock, decide=DECIDE)
            out.mkdir(parents=True, exist_ok=True)
            (out / "result.json").write_text(json.dumps(timing_row(t, cfg)))

    keyed = [(n, n, tmp_path / n) for n in bases]
    counts = time_passes(keyed, batch, passes=1)
    assert counts[0] == 24 and counts[1] >= 3
    relabelled = [n for n in bases if merge_passes(read_passes(tmp_path / n))["pass_stable"] == [False, True]]
    assert relabelled  # the case optional stopping could spoil: labelled from a second chance
    for n in bases:
        row = merge_passes(read_passes(tmp_path / n))
        assert row["speedup_compiler_ci_low"] <= 1.0 <= row["speedup_compiler_ci_high"], n
        status = "ok" if row["stable"] else "unstable"
        lab = label_row({**row, "subgraph_hash": n, "size": "catalog", "run": 0, "status": status, "min_pass_t": -10,
                         "deterministic": True}, -5)
        assert lab["long_tail"] is not True and lab["slower_compiler"] is False, n
        # without help from overhead_bound: the rule reads the compiler interval alone
        assert label_row({**row, "subgraph_hash": n, "size": "catalog", "run": 0, "status": status, "min_pass_t": -10,
                          "deterministic": True, "overhead_bound": False}, -5)["long_tail"] is not True, n


@pytest.mark.slow
def test_profile_all_keeps_a_capped_row_too_short_for_the_gate_unstable_without_re_measuring(tmp_path):
    """End to end on one tiny subgraph, two sizes (compile phase, timing phase in isolated
    children). A cap of 1 ns stops every variant after its first trial, fewer than
    cap_min_trials: unstable by construction, so a re-measurement pass would be stopped by the same
    cap again (curate.profile.variant.needs_remeasure); no pass1/ is written and no row is labelled."""
    from curate.profile.run import profile_all
    from tests.test_curate import _store_fn
    from tests.test_profile import SIZES

    folder = _store_fn(tmp_path, lambda x: (x * 2).sin().sum(-1), [torch.randn(1, 32, 8)])
    h = folder.name
    cfg = {"device": "cpu", "dtype": "float32", "seed": 0, "threads": 1, "cache_dir": str(tmp_path / "cache"),
           "timing": {"warmup": 1, "trials": 5, "min_trials": 5, "min_trial_ms": 0.1, "retries": 0, "gate": "ci",
                      "max_variant_s": 1e-9, "cap_min_trials": 2}}
    plan = [{"run": 0, "hashes": [h], "stress": False}]
    rows, stats = profile_all([{"subgraph_hash": h}], tmp_path / "store", cfg, tmp_path / "out", plan, SIZES,
                              compile_workers=1, timeout_s=300.0, mem_cap_bytes=4 << 30, log=lambda *_: None,
                              remeasure_passes=1, overlap_compile=False, skip_over_cap=False, screen=None, stress_confirm=False,
                              replicates=1, extra_replicates=0)
    timed = [r for r in rows if r.get("trials") is not None]
    assert len(timed) == 3 and stats["timing"][0]["remeasured"] == []  # catalog, mid, workload
    for r in timed:
        assert r["status"] == "unstable" and r["capped"] and r["trials"] == 1
        assert {h["pass"] for h in json.loads(r["trial_history"])} == {0}
        att = tmp_path / "out" / "attempts" / r["attempt_key"][:2] / r["attempt_key"]
        assert (att / "result.json").exists() and not (att / "pass1").exists()
        assert r["allocator"].startswith("glibc mmap_threshold=33554432") or r["allocator"].startswith("default")
        assert label_row(r, -5)["long_tail"] is None


def test_over_time_cap_skips_only_a_call_the_cap_cannot_hold_twice_over():
    """3 sides x cap_min_trials calls must fit in 2 x max_variant_s: with a 15-s cap and 10
    trials the bound is 1,000 ms per call."""
    from curate.profile.variant import over_time_cap

    timing = {"max_variant_s": 15.0}
    assert over_time_cap({"eager_check_ms": 1001.0}, timing) is True
    assert over_time_cap({"eager_check_ms": 999.0}, timing) is False
    assert over_time_cap({"eager_check_ms": 501.0}, {"max_variant_s": 15.0, "cap_min_trials": 20}) is True
    assert over_time_cap({"eager_check_ms": 1e6}, {"max_variant_s": None}) is False  # no cap: everything is timed
    assert over_time_cap({}, timing) is False  # no measurement: timed


def _two_subgraphs(tmp_path):
    from tests.test_curate import _store_fn

    a = _store_fn(tmp_path, lambda x: (x * 2).sin().sum(-1), [torch.randn(1, 32, 8)])
    b = _store_fn(tmp_path, lambda x: (x + 1).cos().amax(-1), [torch.randn(1, 32, 8)])
    return [{"subgraph_hash": f.name} for f in (a, b)]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
def test_overlapped_compile_runs_on_other_cores_and_gives_the_rows_of_the_sequential_phases(tmp_path):
    """overlap_compile: the compile process runs pinned to every core but the timing core,
    beside timing run 0 (each subgraph timed once compiled); the rows are those of the sequential
    protocol (same variants, statuses and checks), every compile ran off the timing core, and
    the skip rule turns a variant into skipped/over_time_cap only when asked."""
    from curate.profile.run import _timing_core, profile_all
    from tests.test_profile import SIZES

    subs = _two_subgraphs(tmp_path)
    hashes = [s["subgraph_hash"] for s in subs]
    cfg = {"device": "cpu", "dtype": "float32", "seed": 0, "threads": 1, "cache_dir": str(tmp_path / "cache"),
           "timing": {"warmup": 1, "trials": 5, "min_trials": 5, "min_trial_ms": 0.1, "retries": 0, "gate": "ci"}}
    plan = [{"run": 0, "hashes": hashes, "stress": False}, {"run": 1, "hashes": hashes[:1], "stress": False}]
    got = {}
    for mode in (False, True):
        rows, stats = profile_all(subs, tmp_path / "store", cfg, tmp_path / f"out{mode}", plan, SIZES, compile_workers=1,
                                  timeout_s=300.0, mem_cap_bytes=4 << 30, log=lambda *_: None, remeasure_passes=0,
                                  overlap_compile=mode, skip_over_cap=False, screen=None, stress_confirm=False,
                                  replicates=1, extra_replicates=0)
        assert stats["compile_overlap"] is mode and stats["compile_attempts"] == stats["variants"] > 0
        # ok vs unstable is the timing's verdict (load-dependent); which variants were timed is not
        got[mode] = sorted((r["subgraph_hash"], r["size"], r["run"], "timed" if r["status"] in ("ok", "unstable") else r["status"],
                            r.get("min_pass_t"), r.get("trials") is not None) for r in rows)
        if mode:
            assert stats["compile_rc"] == 0 and stats["compile_workers"] == len(os.sched_getaffinity(0)) - 1
            checks = list((tmp_path / f"out{mode}" / "attempts").rglob("check.json"))
            assert len(checks) == stats["variants"]
            for c in checks:
                assert _timing_core() not in json.loads(c.read_text())["compile_cores"]
    assert got[True] == got[False]
    assert {r[2] for r in got[True]} == {0, 1} and any(r[3] == "timed" and r[5] for r in got[True])
    rows, _ = profile_all(subs, tmp_path / "store", {**cfg, "timing": {**cfg["timing"], "max_variant_s": 1e-9}},
                          tmp_path / "outcap", plan[:1], SIZES, compile_workers=1, timeout_s=300.0, mem_cap_bytes=4 << 30,
                          log=lambda *_: None, remeasure_passes=0, overlap_compile=False, skip_over_cap=True, screen=None,
                          stress_confirm=False, replicates=1, extra_replicates=0)
    ran = [r for r in rows if r.get("eager_check_ms") is not None]
    assert ran and all(r["status"] == "skipped" and r["skip_reason"] == "over_time_cap" and r.get("trials") is None for r in ran)


def test_compile_cores_leave_the_timing_core_out_and_a_one_core_machine_gets_none(tmp_path, monkeypatch):
    from curate.profile import run as profile_run

    monkeypatch.setattr(profile_run.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert profile_run.compile_cores(3) == [0, 1, 2]
    assert profile_run.compile_cores(None) == []
    monkeypatch.setattr(profile_run.os, "sched_getaffinity", lambda pid: {0})
    assert profile_run.compile_cores(0) == []
    with pytest.raises(ValueError, match="at least one core"):
        profile_run.start_compile_process([], [], 1.0, None, 1, tmp_path)


def test_wait_checks_returns_when_every_folder_is_done_or_the_compile_process_ended(tmp_path):
    import subprocess
    import sys

    from curate.profile.run import wait_checks

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "check.json").write_text("{}")
    (b / "error.json").write_text("{}")
    wait_checks([a, b], None)  # both done: returns without a process
    c = tmp_path / "c"
    c.mkdir()
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    wait_checks([a, c], p)  # c never gets a file, but the process has ended: returns
    assert not (c / "check.json").exists()


def _killed_child(arg, out_dir):
    import signal

    if arg == "ok":
        (out_dir / "check.json").write_text("{}")
        return
    os.kill(os.getpid(), signal.SIGKILL)  # what the memory watchdog or the kernel's OOM killer does


def test_a_killed_compile_child_leaves_error_json_so_timing_does_not_wait_for_the_phase(tmp_path):
    """A compile child killed before it could write anything (the watchdog at the memory cap: a
    workload variant with 512 MiB inputs) must leave ``error.json`` with its error class; an empty
    folder made timing run 0 wait for the whole compile phase, and read as an unclassified
    ``isolation_failed``. A child that wrote its check keeps it alone."""
    from curate.profile.run import _read, record_killed, wait_checks
    from passnet_common.worker import run_isolated

    tasks = [("k1", "ok", tmp_path / "a"), ("k2", "die", tmp_path / "b")]
    run_isolated(tasks, _killed_child, workers=1, timeout_s=60, mem_cap_bytes=None, freeze_gc=False,
                 on_done=record_killed({k: d for k, _, d in tasks}))
    assert (tmp_path / "a" / "check.json").exists() and not (tmp_path / "a" / "error.json").exists()
    err = json.loads((tmp_path / "b" / "error.json").read_text())
    assert err["error_class"] == "oom" and "SIGKILL" in err["error_message"]
    wait_checks([tmp_path / "a", tmp_path / "b"], proc=None)  # returns: both folders are done
    row = _read(tmp_path / "b" / "check.json", tmp_path / "b")
    assert row["status"] == "isolation_failed" and row["error_class"] == "oom"


def test_the_stress_process_dies_with_a_killed_profile_stage(tmp_path):
    """A profile stage killed by a signal runs no ``finally``: the stress processes must still end
    (PR_SET_PDEATHSIG), or they keep cores busy for every later measurement."""
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "pid"
    code = ("import os, signal, sys; from curate.profile.run import stress\n"
            f"with stress(True, max(os.sched_getaffinity(0))) as pids:\n"
            f"    open({str(pidfile)!r}, 'w').write(' '.join(map(str, pids)))\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(os.path.dirname(__file__)), timeout=60)
    for pid in map(int, pidfile.read_text().split()):
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, 9)
            raise AssertionError("a stress process outlived its parent")


def test_the_stress_pins_one_hog_to_the_timing_core_and_one_to_the_others():
    from curate.profile.run import stress
    from curate.profile.variant import stress_plan

    assert stress_plan(3, [0, 1, 2, 3]) == [{"cmd": stress_plan(3, [3])[0]["cmd"], "cores": [3]},
                                           {"cmd": stress_plan(3, [3])[0]["cmd"], "cores": [0, 1, 2]}]
    assert [h["cores"] for h in stress_plan(0, [0])] == [[0]]  # one core: the hog shares it with the timing
    usable = sorted(os.sched_getaffinity(0))
    with stress(True, usable[-1]) as pids:
        assert os.sched_getaffinity(pids[0]) == {usable[-1]}
        if len(usable) > 1:
            assert os.sched_getaffinity(pids[1]) == set(usable[:-1])
    with stress(False, usable[-1]) as pids:
        assert pids == []


class _FakeCompile:
    """The compile process of an overlapped profile, driven by the test: every second ``poll``
    (the profile asks before each timing) finishes one more variant's compile."""

    def __init__(self, tasks):
        self.todo = list(tasks)
        self.polls = 0

    def _one(self):
        _key, _arg, d = self.todo.pop(0)
        d.mkdir(parents=True, exist_ok=True)
        (d / "check.json").write_text(json.dumps({"status": "ok", "eager_check_ms": 1.0}))

    def poll(self):
        self.polls += 1
        if self.todo and self.polls % 2 == 0:
            self._one()
        return None if self.todo else 0

    def wait(self):
        while self.todo:
            self._one()
        return 0

    def kill(self):
        pass


def _fake_profile(tmp_path, monkeypatch, overlap: bool, confirm: bool = False, slow_protocol: int | None = None,
                  agreement: slice = slice(None), replicates: int = 1, straddle: int | None = None,
                  extra_replicates: int = 0, screen_trials: int = 6):
    """profile_all on two stored subgraphs with fake compile / timing children: the screen calls
    every variant of the first subgraph a candidate (interval below 1 - min_effect), the others settled.
    ``slow_protocol``: index of a subgraph whose non-screen timings say slower (interval [0.5, 0.52]);
    ``agreement``: the subgraphs runs 1 and 2 re-time; ``confirm``: profile_all's stress_confirm;
    ``replicates``: profile_all's (a replicate child r >= 1 of a protocol variant reports its interval
    shifted by 0.01 x r, every ratio alike); ``straddle``: index of a subgraph whose non-screen children
    report [0.90, 0.97] (ratio 0.93) shifted the same way, an interval that holds the edge 0.95;
    ``extra_replicates``: profile_all's; ``screen_trials``: the screen's ``trials`` knob.
    Returns (rows, stats, timing calls as (attempt folder, compile finished then, stressed run))."""
    import contextlib

    from curate.profile import run as pr
    from tests.test_profile import SIZES

    subs = _two_subgraphs(tmp_path)
    calls, state = [], {"proc": None, "stress": False}

    def fake_start(tasks, cores, *a, **k):
        state["proc"] = _FakeCompile(tasks)
        return state["proc"]

    def fake_run_isolated(tasks, fn, **kw):
        for key, (folder, cfg), d in tasks:
            d.mkdir(parents=True, exist_ok=True)
            if fn is pr.check_task:
                (d / "check.json").write_text(json.dumps({"status": "ok", "eager_check_ms": 1.0}))
                continue
            screen = cfg.get("decide") == ["speedup_compiler"]
            lo = 0.5 if (screen and subs[0]["subgraph_hash"] in str(folder)) else 0.99
            if not screen and slow_protocol is not None and subs[slow_protocol]["subgraph_hash"] in str(folder):
                lo = 0.5
            offsets = (("", 0.01), ("_ci_low", 0.0), ("_ci_high", 0.02))
            if not screen and straddle is not None and subs[straddle]["subgraph_hash"] in str(folder):
                lo, offsets = 0.90, (("", 0.03), ("_ci_low", 0.0), ("_ci_high", 0.07))
            rep = int(key.split("-rep")[1].split("-")[0]) if "-rep" in key else 0
            lo += 0.01 * rep
            (d / "result.json").write_text(json.dumps({
                "stable": True, "trials": 6, "trial_history": "[]",
                **{f"{c}{s}": lo + v for c in ("speedup_compiler", "speedup_e2e", "speedup_dynamo")
                   for s, v in offsets}}))
            done = state["proc"] is None or not state["proc"].todo
            calls.append((d, done, state["stress"]))

    @contextlib.contextmanager
    def fake_stress(active, core=None):
        state["stress"] = active
        yield []
        state["stress"] = False

    monkeypatch.setattr(pr, "start_compile_process", fake_start)
    monkeypatch.setattr(pr, "run_isolated", fake_run_isolated)
    monkeypatch.setattr(pr, "stress", fake_stress)
    monkeypatch.setattr(pr, "preimport", lambda warm=True: None)
    monkeypatch.setattr(pr, "compile_cores", lambda core: [0] if overlap else [])
    monkeypatch.setattr(pr, "_timing_core", lambda: 1)
    hashes = [s["subgraph_hash"] for s in subs]
    plan = [{"run": 0, "hashes": hashes, "stress": False}, {"run": 1, "hashes": hashes[agreement], "stress": False},
            {"run": 2, "hashes": hashes[agreement], "stress": True}]
    cfg = {"device": "cpu", "dtype": "float32", "seed": 0, "threads": 1, "timing": {"min_effect": 0.05}}
    screen = {"timing": {"trials": screen_trials, "min_effect": 0.05}, "audit_share": 0.0, "seed": 0, "build_spread": 0.0}
    rows, stats = pr.profile_all(subs, tmp_path / "store", cfg, tmp_path / f"out{overlap}", plan, SIZES,
                                 compile_workers=1, timeout_s=60.0, mem_cap_bytes=None, log=lambda *_: None,
                                 remeasure_passes=1, overlap_compile=overlap, skip_over_cap=False, screen=screen,
                                 stress_confirm=confirm, replicates=replicates, extra_replicates=extra_replicates)
    return rows, stats, calls


def test_an_error_file_an_earlier_check_left_does_not_fail_the_variant_its_new_check_passes(tmp_path, monkeypatch):
    """A check folder holding only ``error.json`` (a check killed in an earlier run, or written by a resumed
    shard's pack) is checked again; the error file goes first, so the overlapped timing side does not take it
    for the end of the new check and read the variant as ``isolation_failed``."""
    import shutil

    rows0, _, _ = _fake_profile(tmp_path, monkeypatch, overlap=True)
    assert {r["status"] for r in rows0} <= {"ok", "unstable", "skipped"}
    att = tmp_path / "outTrue" / "attempts"
    checks = sorted(p.parent.relative_to(att) for p in att.rglob("check.json"))
    shutil.rmtree(tmp_path / "outTrue")
    for rel in checks[-3:]:
        (att / rel).mkdir(parents=True)
        (att / rel / "error.json").write_text(json.dumps({"error_class": "timeout", "error_message": "killed at 60 s"}))
    rows, _, _ = _fake_profile(tmp_path, monkeypatch, overlap=True)
    assert [r for r in rows if r["status"] == "isolation_failed"] == []
    assert len(rows) == len(rows0)
    assert all((att / rel / "check.json").is_file() and not (att / rel / "error.json").exists() for rel in checks[-3:])


def test_a_changed_screen_knob_times_the_screen_again_and_resumes_the_rest(tmp_path, monkeypatch):
    """The screen's knobs are in its attempts' resume keys (``key_phase``): run again on the kept output
    folder with the same knobs, nothing is timed; with another ``screen_timing.trials``, every screened
    variant (2 subgraphs x 3 sizes) is timed again under a new key, while the protocol and agreement-run
    attempts (their knobs unchanged, the same candidates) are resumed."""
    rows0, _, calls0 = _fake_profile(tmp_path, monkeypatch, overlap=False)
    timed0 = {c[0].name for c in calls0}  # screen 6, protocol of the candidates 3, runs 1 and 2: 12
    assert len(timed0) == len(calls0) == 21
    rows1, _, calls1 = _fake_profile(tmp_path, monkeypatch, overlap=False)
    assert calls1 == [] and sorted(r["attempt_key"] for r in rows1) == sorted(r["attempt_key"] for r in rows0)
    rows2, _, calls2 = _fake_profile(tmp_path, monkeypatch, overlap=False, screen_trials=8)
    timed2 = {c[0].name for c in calls2}
    assert len(timed2) == len(calls2) == 6 and not timed2 & timed0  # the screen alone, under new keys
    screen0 = {r["attempt_key"] for r in rows0 if r.get("phase") == "screen"}
    screen2 = {r["attempt_key"] for r in rows2 if r.get("phase") == "screen"}
    assert len(screen2) == len(screen0) == 3 and screen2 <= timed2  # the settled subgraph's 3 sizes
    assert sorted(r["attempt_key"] for r in rows2 if r.get("phase") != "screen") == \
        sorted(r["attempt_key"] for r in rows0 if r.get("phase") != "screen")


def test_overlapped_run_0_times_protocol_and_quiet_run_fillers_while_compiling_each_once(tmp_path, monkeypatch):
    """While the overlapped run 0 waits for a compile, the timing core takes on the full protocol of
    screen candidates and pass 0 of the quiet agreement run: every attempt is still timed exactly
    once (its own phase resumes it), the rows are those of the sequential phases, the stressed run
    never starts before the compile phase has ended, and the stats count the fillers."""
    rows_seq, stats_seq, calls_seq = _fake_profile(tmp_path, monkeypatch, overlap=False)
    rows, stats, calls = _fake_profile(tmp_path, monkeypatch, overlap=True)

    def key(r):
        return (r["subgraph_hash"], r["size"], r["run"], r.get("phase"), r.get("screen_candidate"), r["status"])
    assert sorted(map(key, rows)) == sorted(map(key, rows_seq))
    assert len(rows) == 2 * 3 * 3  # 2 subgraphs x 3 sizes x 3 runs
    folders = [c[0] for c in calls]
    assert len(folders) == len(set(folders)) == len(calls_seq)  # each attempt timed once, none skipped
    filled_p = stats["screen"]["protocol_filled_while_compiling"]
    filled_r = next(t for t in stats["timing"] if t["run"] == 1)["filled_while_compiling"]
    assert filled_p > 0 and filled_r > 0
    early = [c for c in calls if not c[1]]  # timed while compiles were still pending
    assert len(early) >= filled_p + filled_r
    assert all(done for _, done, stressed in calls if stressed)  # the stressed run waits for the compile phase
    # the protocol counts include the fillers: the first subgraph's 3 sizes are the candidates
    assert stats["screen"]["protocol_variants"] == stats_seq["screen"]["protocol_variants"] == 3
    assert [t["attempts"] for t in stats["timing"]] == [t["attempts"] for t in stats_seq["timing"]]


@pytest.mark.parametrize("confirm", [False, True])
def test_stress_confirm_re_times_run_0s_possibly_slower_subgraphs_under_the_stressed_run(tmp_path, monkeypatch, confirm):
    """Runs 1 and 2 re-time the second subgraph only; the first is slower in run 0's full protocol
    (interval [0.5, 0.52] < 0.95). With stress_confirm the stressed run 2 also times every variant
    of the first subgraph, under the stress (the fake stress context is active for those calls), and
    the quiet run 1 does not; without it run 2 holds the agreement subset alone."""
    rows, stats, calls = _fake_profile(tmp_path, monkeypatch, overlap=False, confirm=confirm, slow_protocol=0,
                                       agreement=slice(1, 2))
    slow = {r["subgraph_hash"] for r in rows if r["run"] == 0 and (r.get("speedup_compiler_ci_high") or 1.0) < 0.95}
    assert len(slow) == 1  # the first subgraph (the fake's slow_protocol)
    (first,), (second,) = slow, {r["subgraph_hash"] for r in rows} - slow
    run2 = {r["subgraph_hash"] for r in rows if r["run"] == 2}
    run1 = {r["subgraph_hash"] for r in rows if r["run"] == 1}
    assert run1 == {second}
    assert run2 == ({first, second} if confirm else {second})
    assert (stats.get("stress_confirm") == {"run": 2, "subgraphs": 1}) is confirm
    stressed = [d for d, _, s in calls if s]
    assert len(stressed) == 3 * len(run2)  # 3 sizes per subgraph, every one timed under the stress


def test_confirm_hashes_takes_run_0_rows_below_one_minus_min_effect_once_each():
    from curate.profile.run import confirm_hashes

    rows = [{"subgraph_hash": "a", "run": 0, "speedup_compiler_ci_high": 0.94},
            {"subgraph_hash": "a", "run": 0, "speedup_compiler_ci_high": 0.90},
            {"subgraph_hash": "b", "run": 0, "speedup_compiler_ci_high": 0.95},   # not below 1 - 0.05
            {"subgraph_hash": "c", "run": 1, "speedup_compiler_ci_high": 0.50},   # run 1 does not count
            {"subgraph_hash": "d", "run": 0, "speedup_compiler_ci_high": None},   # untimed
            {"subgraph_hash": "e", "run": 0, "speedup_compiler_ci_high": 0.10},
            {"subgraph_hash": "f", "run": 0, "speedup_compiler_ci_high": 0.20}]
    assert confirm_hashes(rows, 0.05, ["f"]) == ["a", "e"]
    assert confirm_hashes(rows, 0.5, []) == ["e", "f"]
