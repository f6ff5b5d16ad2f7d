"""The side-by-side cost measurement (``proxy_artifacts.cost.measure_side_by_side``) on tiny checkpoints.

Each (round, model) runs in its own forked child: its peak memory is its own model's (a larger
model gives a larger peak by at least its extra weights, reference and optimizer state; a peak the
parent reached before forking does not count), and a child that fails raises naming its model.
"""

from __future__ import annotations

import json

import pytest

from proxy_artifacts import cost

KW = dict(batch=2, seq_len=8, steps=1, rounds=2, threads=1)


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory):
    """{"base": a 16-expert tiny MoE with wide experts, "small": a 4-expert narrow one} (folders), and
    the difference of their parameter counts."""
    from safetensors import safe_open

    from tests.proxy_helpers import save_tiny_base

    root = tmp_path_factory.mktemp("cost")
    save_tiny_base(root / "big", num_experts=16, moe_intermediate_size=512)
    save_tiny_base(root / "small", num_experts=4, moe_intermediate_size=32)

    def n_params(d):
        with safe_open(str(d / "model.safetensors"), "pt") as f:
            return sum(_prod(f.get_slice(k).get_shape()) for k in f.keys())

    return {"base": str(root / "big"), "small": str(root / "small")}, n_params(root / "big") - n_params(root / "small")


def _fresh_parent(models: dict, kw: dict, hog_mb: int = 0) -> dict:
    """``measure_side_by_side(models, **kw)`` in a fresh interpreter, as the ``proxy_cost`` stage runs it:
    torch refuses autograd in a child forked from a process whose autograd engine has started (this
    test process has run backward passes in other tests). ``hog_mb``: the parent first makes that many MiB
    resident and frees them (a peak before the forks). Returns the result, or ``{"error": message}``."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom proxy_artifacts import cost\n"
            f"hog = bytearray({hog_mb} << 20)\nfor i in range(0, len(hog), 4096):\n    hog[i] = 1\ndel hog\n"
            "try:\n    r = cost.measure_side_by_side(json.loads(sys.argv[1]), **json.loads(sys.argv[2]))\n"
            "except RuntimeError as e:\n    r = {'error': str(e)}\nprint(json.dumps(r))")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(models), json.dumps(kw)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def test_each_child_measures_its_own_model(tiny_pair):
    models, d_params = tiny_pair
    r = _fresh_parent(models, KW, hog_mb=256)  # a parent peak before the forks: must not reach any child's figure
    assert r["memory_kind"] == "cpu_peak_rss_delta" and r["device"] == "cpu"
    assert set(r["step_ms_median"]) == {"base", "small"} and all(v > 0 for v in r["step_ms_median"].values())
    big, small = r["peak_memory_bytes"]["base"], r["peak_memory_bytes"]["small"]
    # policy weights + reference weights + gradients + two AdamW moments, float32, all resident at the step
    assert big - small >= 5 * 4 * d_params
    assert 0 < small < 256 << 20
    assert r["peak_memory_ratio"]["small"] == round(small / big, 4) < 1
    assert r["step_time_ratio"]["small"] == round(r["step_ms_median"]["small"] / r["step_ms_median"]["base"], 4)
    assert r["rounds"] == 2 and r["steps"] == 1
    # both experts forwards timed in the same run; the headline is from_pretrained's choice
    by = r["by_experts_implementation"]
    assert set(by) == {r["experts_implementation"], "eager"} and r["experts_implementation"] != "eager"
    for v in by.values():
        hit = v["experts_hit_per_layer"]
        assert 1 <= hit["small"] <= 4 and 1 <= hit["base"] <= 16
    assert set(r["flops_per_token"]) == {"base", "small"}
    # the optimizer step is timed inside each step: less than the step, and it scales with the parameters
    for v in by.values():
        assert all(0 < v["optimizer_ms_median"][n] < v["step_ms_median"][n] for n in ("base", "small"))
        assert v["step_without_optimizer_ratio"]["small"] > 0
    assert r["params"]["base"] > r["params"]["small"] and 0 < r["params_ratio"]["small"] < 1


def test_flops_per_token_equal_at_equal_top_k(tmp_path):
    """A proxy keeps top-k: its forward FLOPs per token differ from the base's only by the dropped
    experts' router rows, 2 x H x (E - k) per MoE layer (exact), while its parameters shrink."""
    import copy

    from proxy_artifacts.adapters import adapter_for, moe_blocks
    from proxy_artifacts.prune import prune_model
    from tests.proxy_helpers import tiny_model

    for family in ("qwen3_moe", "gpt_oss", "deepseek_v3"):
        base = tiny_model(family)
        a = adapter_for(base.config)
        blocks = moe_blocks(base, a)
        E = base.config.n_routed_experts if family == "deepseek_v3" else 8
        kept = {b.name: list(range(0, E, 2)) for b in blocks}
        if family == "deepseek_v3":  # 4 groups of 4: two per group
            kept = {b.name: [0, 1, 4, 5, 8, 9, 12, 13] for b in blocks}
        base.save_pretrained(tmp_path / f"{family}_b")
        prune_model(copy.deepcopy(base), kept).save_pretrained(tmp_path / f"{family}_p")
        fb = cost.flops_per_token(tmp_path / f"{family}_b", 16)
        fp = cost.flops_per_token(tmp_path / f"{family}_p", 16)
        router_bias = 2 if "bias" in a.router_params else 0  # gpt-oss: the router bias counted as a multiply-add
        want = 2 * len(blocks) * (base.config.hidden_size + router_bias // 2) * (E - E // 2)
        assert fb["forward"] - fp["forward"] == want, family
        assert fb["routed_active_params"] == fp["routed_active_params"]
        assert fp["forward"] / fb["forward"] > 0.95


def test_cost_report_lists_flops_cause_and_every_projection_assumption(tmp_path):
    from proxy_artifacts.projection import assumptions

    side = {"step_ms_median": {"base": 10.0, "r0.5": 4.0}, "peak_memory_bytes": {"base": 100, "r0.5": 60},
            "step_time_ratio": {"r0.5": 0.9}, "peak_memory_ratio": {"r0.5": 0.6}, "experts_implementation": "grouped_mm",
            "by_experts_implementation": {
                "grouped_mm": {"step_ms_median": {"base": 10.0, "r0.5": 9.0}, "step_time_ratio": {"r0.5": 0.9},
                               "step_ms_rel_iqr": {"base": 0.05, "r0.5": 0.05},
                               "experts_hit_per_layer": {"base": 64.0, "r0.5": 32.0}},
                "eager": {"step_ms_median": {"base": 20.0, "r0.5": 8.0}, "step_time_ratio": {"r0.5": 0.4},
                          "step_ms_rel_iqr": {"base": 0.05, "r0.5": 0.05},
                          "experts_hit_per_layer": {"base": 64.0, "r0.5": 32.0}}},
            "flops_per_token": {"base": {"forward": 1000, "top_k": 4}, "r0.5": {"forward": 990, "top_k": 4}},
            "batch": 16, "seq_len": 32, "steps": 4, "rounds": 2, "device": "cpu", "memory_kind": "cpu_peak_rss_delta"}
    m = cost.write_cost(side, {}, tmp_path / "c.json", tmp_path / "c.md", command="x",
                        fidelity_params={"device_memory_gb": 141, "usable_share": 0.9})
    assert m["flops_ratio"] == {"r0.5": 0.99} and m["accelerator_step_measured"] is False
    assert m["step_time_ratio_by_experts_implementation"]["eager"] == {"r0.5": 0.4}
    assert any("the loop over experts accounts for that difference" in x for x in m["cpu_step_time_cause"])
    assert not any("not the FLOPs" in x for x in m["cpu_step_time_cause"])
    assert m["projection_assumptions"] == assumptions(141, 0.9)
    md = (tmp_path / "c.md").read_text()
    assert "141 GB" in md and all(a in md for a in m["projection_assumptions"])
    side["by_experts_implementation"]["eager"]["step_time_ratio"] = {"r0.5": 0.95}  # no separation: says so
    m = cost.write_cost(side, {}, tmp_path / "c.json", None)
    assert any("does not single out" in x for x in m["cpu_step_time_cause"])


def test_failing_child_raises_naming_the_model(tiny_pair, tmp_path):
    models, _ = tiny_pair
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"model_type": "no_such_family"}))
    import re

    err = _fresh_parent({"base": models["small"], "broken": str(bad)}, KW)["error"]
    assert re.search(r"cost child for broken \(.*broken\) failed: exception:", err), err
    err = _fresh_parent({"base": models["small"], "gone": str(tmp_path / "absent")}, KW)["error"]
    assert re.search(r"cost child for gone .* model folder .* not found", err), err


def test_bad_arguments():
    with pytest.raises(ValueError, match="lack the base 'base'"):
        cost.measure_side_by_side({"r0.5": "x"}, **KW)
    with pytest.raises(ValueError, match="isolation 'spawn'"):
        cost.measure_side_by_side({"base": "x"}, isolation="spawn", **KW)


def test_peak_rss_reset_drops_an_earlier_peak():
    if not cost._reset_peak_rss():
        pytest.skip("/proc/self/clear_refs not writable here")
    hog = bytearray(128 << 20)
    for i in range(0, len(hog), 4096):  # make it resident
        hog[i] = 1
    del hog
    assert cost._reset_peak_rss()
    assert cost._peak_rss_bytes(True) - cost._rss_bytes() < 64 << 20


@pytest.mark.slow
def test_exec_path_entry_point(tiny_pair):
    """``isolation="exec"``: a fresh ``python -m proxy_artifacts.cost MODEL ...`` per child."""
    models, d_params = tiny_pair
    r = cost.measure_side_by_side(models, isolation="exec", **{**KW, "rounds": 1})
    assert r["peak_memory_bytes"]["base"] - r["peak_memory_bytes"]["small"] >= 5 * 4 * d_params


def test_forked_child_maps_back_the_parents_library_pages():
    """Linux leaves a forked child's file-backed page-table entries empty; :func:`cost.populate`
    restores the parent's resident library pages, so the child's baseline matches a fresh process's."""
    import os

    def rss_file():
        for line in open("/proc/self/status"):
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024

    runs = cost.resident_file_runs()
    if not runs:
        pytest.skip("/proc/self/pagemap not readable here")
    parent = rss_file()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        before = rss_file()
        ok = cost.populate(runs)
        os.write(w, f"{before} {rss_file()} {int(ok)}".encode())
        os._exit(0)
    os.close(w)
    before, after, ok = (int(x) for x in os.read(r, 200).split())
    os.waitpid(pid, 0)
    if not ok:
        pytest.skip("MADV_POPULATE_READ refused (Linux < 5.14)")
    assert before < 0.5 * parent  # the fork dropped them (why the child would over-count)
    assert after >= 0.95 * parent


def _side(eager, grouped, flops, top_k=(8, 8), iqr=0.05):
    by = {i: {"step_time_ratio": {"r0.5": r}, "experts_hit_per_layer": {"base": 60, "r0.5": 30}}
          for i, r in (("grouped_mm", grouped), ("eager", eager))}
    if iqr is not None:
        for v in by.values():
            v["step_ms_rel_iqr"] = {"base": iqr, "r0.5": iqr}
    return {"flops_per_token": {"base": {"forward": 1000, "top_k": top_k[0]},
                                "r0.5": {"forward": int(1000 * flops), "top_k": top_k[1]}},
            "by_experts_implementation": by}


def test_cpu_cause_says_top_k_changed_when_it_did():
    head = cost.cpu_cause(_side(0.45, 0.55, 0.5, top_k=(8, 4)))[0]
    assert "top-k changes from the base's 8 to {'r0.5': 4}" in head and "only the router rows" not in head
    head = cost.cpu_cause(_side(0.45, 0.55, 0.99))[0]
    assert "top-k 8 is the base's, so only the router rows" in head


def test_cpu_cause_names_the_loop_only_beyond_the_runs_noise_margin():
    loop = "the loop over experts accounts for that difference"
    # margin 0.1 per ratio: 0.45 x 1.1 = 0.495 is not below 0.55 / 1.1 = 0.5 -> within noise
    assert not any(loop in x for x in cost.cpu_cause(_side(0.46, 0.55, 0.99)))
    assert any("within this run's noise" in x for x in cost.cpu_cause(_side(0.46, 0.55, 0.99)))
    # a clear gap: 0.3 x 1.1 = 0.33 < 0.9 / 1.1 and < 0.99; the loop is named for the eager-vs-grouped_mm
    # difference only, never for grouped_mm's own gap to the FLOPs ratio (it has no per-expert loop)
    out = cost.cpu_cause(_side(0.3, 0.9, 0.99))
    assert any(loop in x and "It does not account for the gap between {'grouped_mm': 0.9} and the FLOPs ratio 0.99"
               in x for x in out)
    assert not any("not the FLOPs" in x for x in out)
    # a record without the spread states no cause at all
    out = cost.cpu_cause(_side(0.3, 0.9, 0.99, iqr=None))
    assert not any(loop in x for x in out) and any("no spread" in x for x in out)


def test_cpu_cause_states_the_optimizer_share_of_the_step_time_difference():
    """With the optimizer timed: base step 100 ms of which AdamW + zero_grad 40 ms, proxy 60 ms of which
    10 ms: the optimizer's difference 30 ms is 75% of the 40 ms step difference, the step without it is
    50 / 60 = 0.8333 of the base's while the whole step is 0.6."""
    side = _side(0.5, 0.6, 0.99)
    side["params_ratio"] = {"r0.5": 0.4}
    side["by_experts_implementation"]["grouped_mm"].update(
        step_ms_median={"base": 100.0, "r0.5": 60.0}, optimizer_ms_median={"base": 40.0, "r0.5": 10.0},
        optimizer_time_ratio={"r0.5": 0.25}, step_without_optimizer_ratio={"r0.5": 0.8333})
    line = next(x for x in cost.cpu_cause(side) if x.startswith("r0.5, `grouped_mm`"))
    assert "takes 10.0 ms of the proxy's 60.0 ms step and 40.0 ms of the base's 100.0 ms" in line
    assert "its difference is 75% of the step-time difference" in line
    assert "the step without it has ratio 0.8333 (whole step 0.6, FLOPs 0.99)" in line
    assert "parameters proxy / base 0.4" in line


def test_rel_iqr_and_margin():
    assert cost.rel_iqr([10.0, 10.0, 10.0, 10.0]) == 0.0
    assert cost.rel_iqr([8.0, 10.0, 12.0]) == 0.2  # inclusive quartiles 9 and 11, median 10: 2 / 10
    assert cost.rel_iqr([5.0]) is None
    assert cost.ratio_margin({"step_ms_rel_iqr": {"base": 0.1, "p": 0.2}}, "p") == 0.3


def test_flops_counts_sliding_window_layers_by_their_window(tmp_path):
    """gpt-oss tiny: window 16 on layer 0, full attention on layer 1; at seq_len 32 the windowed layer's
    mean context is mean(min(i, 16), i = 1..32) = (136 + 16 x 16) / 32 = 12.25, not 16.5."""
    from types import SimpleNamespace

    cfg = SimpleNamespace(sliding_window=16, layer_types=["sliding_attention", "full_attention"])
    assert cost.layer_windows(cfg, 2) == [16, None]
    assert cost.mean_context(32, 16) == (136 + 16 * 16) / 32 and cost.mean_context(32, None) == 16.5
    assert cost.layer_windows(SimpleNamespace(sliding_window=8, use_sliding_window=False), 2) == [None, None]
    assert cost.layer_windows(SimpleNamespace(sliding_window=0, layer_types=["full_attention"]), 1) == [None]
    from tests.proxy_helpers import tiny_model

    m = tiny_model("gpt_oss", num_hidden_layers=2, sliding_window=16,
                   layer_types=["sliding_attention", "full_attention"])
    m.save_pretrained(tmp_path / "g")
    heads = int(m.config.num_attention_heads)
    hd = int(getattr(m.config, "head_dim", None) or m.config.hidden_size // heads)
    got = cost.flops_per_token(tmp_path / "g", 32)["forward"] - cost.flops_per_token(tmp_path / "g", 8)["forward"]
    # layer 0 windowed (12.25 at 32 tokens, 4.5 at 8), layer 1 full (16.5, 4.5)
    assert got == round(2 * heads * 2 * hd * ((12.25 + 16.5) - (4.5 + 4.5)))


def test_proxy_cost_stage_declares_every_params_key_its_record_reads():
    """``write_cost`` writes ``proxy.fidelity.device_memory_gb`` / ``usable_share`` into
    ``projection_assumptions``: the stage must declare them, or a change of either leaves
    ``metrics/proxy_cost.json`` stale while ``dvc status`` says clean."""
    from pathlib import Path

    import yaml

    stage = yaml.safe_load((Path(__file__).resolve().parents[1] / "dvc.yaml").read_text())["stages"]["proxy_cost"]
    declared = set(stage["params"])
    for key in ("proxy.grpo", "proxy.fidelity.cost", "proxy.fidelity.device_memory_gb", "proxy.fidelity.usable_share"):
        assert key in declared or any(key.startswith(d + ".") for d in declared), key
