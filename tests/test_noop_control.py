"""benchmarks.noop_control: the no-op control's counts, by the compiler-interval rule alone, on
synthetic profile rows whose right answers are worked out by hand."""

from __future__ import annotations

from benchmarks.noop_control import control_figures, holds_one


def _row(h: str, run: int, status: str, compiler: tuple | None, overhead_bound: bool = False, correct: bool = True) -> dict:
    r = {"subgraph_hash": h, "size": "catalog", "dtype": "float32", "run": run, "stress": run == 2, "status": status,
         "min_effect": 0.05, "min_pass_t": -10 if correct else None, "deterministic": True, "overhead_bound": overhead_bound}
    if compiler is not None:
        c, lo, hi = compiler
        r.update(speedup_compiler=c, speedup_compiler_ci_low=lo, speedup_compiler_ci_high=hi,
                 speedup_e2e=0.5, speedup_e2e_ci_low=0.45, speedup_e2e_ci_high=0.55)  # Dynamo's guards: e2e slower
    return r


ROWS = [
    _row("v1", 0, "ok", (1.0, 0.97, 1.03), overhead_bound=True),     # A: holds 1
    _row("v2", 0, "ok", (0.90, 0.85, 0.93)),                          # C: compiler slower -> long tail
    _row("v3", 0, "skipped", None),                                   # E: not timed
    _row("v4", 0, "ok", (0.96, 0.93, 0.99)),                          # G: misses 1, not slower
    _row("v1", 2, "ok", (0.847, 0.749, 0.931), overhead_bound=True),  # B: the hog's "slower than itself"
    _row("v2", 2, "unstable", (0.8, 0.6, 1.1)),                       # D: holds 1, unlabelled
    _row("v4", 2, "accuracy_error", (0.8, 0.7, 0.9), correct=False),  # H: slower but incorrect
]


def test_control_counts_by_the_compiler_interval_alone():
    f = control_figures(ROWS, -5, build_spread=0.0)
    assert (f["control_rows"], f["timed"], f["labelled"]) == (7, 6, 5)
    assert (f["compiler_holds_1"], f["compiler_slower"], f["overhead_bound"]) == (2, 3, 2)
    # B counts although overhead_bound is True: nothing but the compiler interval decides
    assert f["long_tail"] == 2 and f["long_tail_stage_rule"] == 2
    q, s = f["by_run"]["0"], f["by_run"]["2"]
    assert (q["stress"], q["control_rows"], q["timed"], q["compiler_holds_1"], q["long_tail"]) == (False, 4, 3, 1, 1)
    assert (s["stress"], s["control_rows"], s["labelled"], s["compiler_slower"], s["long_tail"]) == (True, 3, 2, 2, 1)
    # run 0 decides membership: v1's 1.03 (not slower; run 2's 0.931 does not vote), v2's 0.93 (member), v4's 0.99
    assert f["long_tail_variants"] == ["v2:catalog:float32"]


def test_the_between_build_spread_keeps_the_hogs_slower_than_itself_out():
    """Widened by exp(ln 1.07), B's 0.931 (0.996), C's 0.93 (0.995) and H's 0.9 (0.963) all reach
    0.95: no row is slower, so the control has no long tail, with or without overhead_bound."""
    import math

    f = control_figures(ROWS, -5, build_spread=math.log(1.07))
    assert (f["labelled"], f["compiler_slower"], f["long_tail"], f["long_tail_stage_rule"]) == (5, 0, 0, 0)
    assert f["long_tail_variants"] == []


def test_a_control_that_holds_one_everywhere_has_no_long_tail():
    rows = [_row(f"v{i}", run, "ok", (1.0, 0.9, 1.1), overhead_bound=bool(i % 2)) for i in range(4) for run in (0, 2)]
    f = control_figures(rows, -5)
    assert (f["compiler_holds_1"], f["long_tail"], f["long_tail_stage_rule"], f["long_tail_variants"]) == (8, 0, 0, [])


def test_holds_one_is_inclusive_and_needs_both_ends():
    assert holds_one({"speedup_compiler_ci_low": 1.0, "speedup_compiler_ci_high": 1.2})
    assert not holds_one({"speedup_compiler_ci_low": 1.01, "speedup_compiler_ci_high": 1.2})
    assert not holds_one({"speedup_compiler_ci_low": None, "speedup_compiler_ci_high": 1.2})
