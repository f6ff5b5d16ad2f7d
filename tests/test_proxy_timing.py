"""Measured wall time and memory stay out of the deterministic proxy outputs.

The GRPO run logs (``data/proxy/grpo/<name>``) and the fidelity outputs (``metrics/fidelity.json``,
``plots/fidelity_report.md``, ``plots/fidelity_runs.png``) must rebuild byte for byte; the GRPO
timing files and ``metrics/proxy_cost.json`` are measurements and differ on every run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_proxy_fidelity import DET, GP, tiny_base  # noqa: F401  (module fixture: a 4-expert tiny MoE)

MEASURED_KEYS = ("step_time_ms", "peak_memory_bytes", "setup_s", "wall_s", "step_time_ratio_measured",
                 "peak_memory_ratio_measured", "cost_measured", "step_time_ms_median_grpo",
                 "step_time_ratio_grpo_separate_runs", "load_average")


class FakeClock:
    """A clock (seconds) that advances ``tick`` seconds per call: every measured step lasts 2 calls."""

    def __init__(self, tick: float):
        self.t, self.tick = 0.0, tick
        self.__qualname__ = f"FakeClock({tick})"

    def __call__(self) -> float:
        self.t += self.tick
        return self.t


def _digests(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _build(tiny_base, root: Path, clock) -> Path:  # noqa: F811
    """The proxy_grpo -> proxy_fidelity chain on the tiny base (as base and as a 'proxy')."""
    from proxy_artifacts.fidelity import run_fidelity
    from proxy_artifacts.rl import run_grpo_all

    gp = dict(GP, steps=2, healthy_seeds=[0], fault_seeds=[0], faults=["skip_actor_update"])
    run_grpo_all(tiny_base, "base", gp, root / "grpo" / "base", progress=False,
                 timing_path=root / "grpo_timing" / "base.json", clock=clock)
    params = {"fidelity": {"detector": DET, "step_tolerance": 2, "device_memory_gb": 80},
              "grpo": {"fault_step": GP["fault_step"]}, "compare": {"keep_ratios": [0.5]}}
    run_fidelity(params, {"base": root / "grpo" / "base", "p": root / "grpo" / "base"}, root / "out" / "fidelity_report.md",
                 root / "out" / "fidelity.json", root / "out")
    return root


def test_deterministic_outputs_are_byte_identical_under_another_clock(tiny_base, tmp_path, monkeypatch):  # noqa: F811
    """Two builds, one timed by time.perf_counter and one by a fake clock (7 s per call): the GRPO
    logs and every fidelity output are byte-identical, the timing files are not, and they hold
    the fake clock's exact step time (2 calls per step = 7000 ms)."""
    from proxy_artifacts import fidelity

    monkeypatch.setattr(fidelity, "full_size_counts", lambda: {})  # the full-size projection: not this test's
    a = _build(tiny_base, tmp_path / "a", __import__("time").perf_counter)
    b = _build(tiny_base, tmp_path / "b", FakeClock(7.0))
    det_a = {**_digests(a / "grpo"), **_digests(a / "out")}
    det_b = {**_digests(b / "grpo"), **_digests(b / "out")}
    assert {"base/none.s0.jsonl", "base/summary.json", "fidelity.json", "fidelity_report.md",
            "fidelity_runs.png"} <= set(det_a)
    assert det_a == det_b
    for p in [*(a / "grpo").rglob("*.json*"), a / "out" / "fidelity.json", a / "out" / "fidelity_report.md"]:
        text = p.read_text()
        assert not [k for k in MEASURED_KEYS if k in text], p
    ta, tb = (json.loads((r / "grpo_timing" / "base.json").read_bytes()) for r in (a, b))
    assert ta != tb and ta["measured"] is True
    assert sorted(ta["runs"]) == ["none.s0", "skip_actor_update.s0"]
    assert [s["step_time_ms"] for s in tb["runs"]["none.s0"]["steps"]] == [7000.0, 7000.0]
    assert tb["runs"]["none.s0"]["setup_s"] == 7.0
    assert all(0 < s["step_time_ms"] < 7000.0 for s in ta["runs"]["none.s0"]["steps"])
    assert "cpu_model" in ta["machine"] and "load_average_start" in ta


def _timing_file(path: Path, ms_by_run: dict) -> str:
    runs = {k: {"setup_s": 1.0, "wall_s": 2.0, "steps": [{"step": i + 1, "step_time_ms": v, "peak_memory_bytes": 1}
                                                           for i, v in enumerate(ms)]} for k, ms in ms_by_run.items()}
    path.write_text(json.dumps({"name": path.stem, "measured": True, "load_average_start": [3.0, 2.0, 1.0],
                                "load_average_end": [4.0, 2.0, 1.0], "runs": runs}))
    return str(path)


def test_write_cost_holds_the_measured_block(tmp_path):
    """metrics/proxy_cost.json: the side-by-side ratios as flat keys, and the GRPO step medians of
    the healthy runs without their first (warm-up) step, fault runs left out."""
    from proxy_artifacts.cost import write_cost

    side = {"step_ms_median": {"base": 20.0, "r0.5": 15.0}, "peak_memory_bytes": {"base": 4_000_000, "r0.5": 2_000_000},
            "step_time_ratio": {"r0.5": 0.75}, "peak_memory_ratio": {"r0.5": 0.5}, "batch": 16, "seq_len": 32,
            "steps": 4, "rounds": 2, "device": "cpu", "memory_kind": "cpu_peak_rss_delta",
            "load_average_start": [5.0, 4.0, 3.0], "load_average_end": [6.0, 4.0, 3.0],
            "machine": {"cpu_model": "X", "cpu_usable_cores": 2, "torch_version": "t"}}
    timing = {"base": _timing_file(tmp_path / "base.json", {"none.s0": [900.0, 10.0, 12.0], "none.s1": [800.0, 14.0],
                                                           "lr_spike.s0": [1.0, 1.0, 1.0]}),
              "r0.5": _timing_file(tmp_path / "r0.5.json", {"none.s0": [500.0, 6.0, 6.0, 9.0]})}
    m = write_cost(side, timing, tmp_path / "proxy_cost.json", tmp_path / "cost.md", command="python -m x")
    assert m["step_time_ratio_measured"] == {"r0.5": 0.75} and m["peak_memory_ratio_measured"] == {"r0.5": 0.5}
    assert m["load_average_start"] == [5.0, 4.0, 3.0] and m["machine"]["cpu_model"] == "X"
    g = m["grpo_separate_runs"]
    assert g["base"]["step_time_ms_median"] == 12.0 and g["base"]["steps"] == 3
    assert g["r0.5"]["step_time_ms_median"] == 6.0 and g["r0.5"]["step_time_ratio_to_base"] == 0.5
    assert g["base"]["workers"] == 1  # a timing file without the key: one run at a time
    assert json.loads((tmp_path / "proxy_cost.json").read_text()) == m
    md = (tmp_path / "cost.md").read_text()
    assert "| r0.5 | - | - | 15.0 | 0.75 | - | 2.0 | 0.5 |" in md and "[5.0, 4.0, 3.0] -> [6.0, 4.0, 3.0]" in md


def test_write_cost_without_side_by_side_says_so(tmp_path):
    from proxy_artifacts.cost import write_cost

    m = write_cost(None, {}, tmp_path / "c.json", tmp_path / "c.md")
    assert m["step_time_ratio_measured"] == {} and m["side_by_side"] is None
    assert "not measured in this run" in (tmp_path / "c.md").read_text()


def test_cost_cli_rejects_a_bad_pair(tmp_path):
    from proxy_artifacts.__main__ import main

    with pytest.raises(ValueError, match="--grpo-timing item 'base' is not name=path"):
        main(["cost", "--params", str(Path(__file__).parents[1] / "params.yaml"), "--grpo-timing", "base",
              "--metrics", str(tmp_path / "c.json")])
