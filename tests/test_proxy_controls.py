"""Negative controls of a proxy: the magnitude fidelity score, Newcombe's interval, and the verdict that a
re-initialised-weights control fails where the real proxy passes (proxy_artifacts/controls.py)."""

from __future__ import annotations

import json

import pytest

from proxy_artifacts import controls, fidelity
from proxy_artifacts.config import ControlsConfig, DetectorConfig
from proxy_artifacts.pipeline import CONTROL_KINDS

DET = DetectorConfig().to_params()
CP = ControlsConfig().to_params()


def _rows(reward, entropy, kl, grad, fault=None, n=12):
    """Step rows of one run; ``fault``: lr_spike (KL 2.0 and grad 3x from step 5) or skip_actor_update (update
    norm 0 from step 5), i.e. what the injection does to any model, trained or not."""
    rows = []
    for s in range(1, n + 1):
        r = {"step": s, "reward": reward, "entropy": entropy, "kl": kl * s, "loss": 0.1, "grad_norm_trl": grad,
             "update_norm": 1e-3, "grad_nan": 0, "grad_inf": 0, "loss_nonfinite": 0,
             "expert_load": [{"max_share": 0.2, "entropy_norm": 0.9, "load": []}]}
        if fault == "lr_spike" and s >= 5:
            r["kl"], r["grad_norm_trl"] = 2.0, 3.0 * grad
        if fault == "skip_actor_update" and s >= 5:
            r["update_norm"] = 0.0
        rows.append(r)
    return rows


def _model(tmp_path, name, reward, entropy, kl, grad, reward_step=0.02):
    """A grpo folder: healthy seeds 0-2 and both faults on seeds 0-2 (seed s: reward + s x reward_step)."""
    d = tmp_path / name
    d.mkdir()
    runs = {}
    for fault in ("none", "lr_spike", "skip_actor_update"):
        for s in range(3):
            rows = _rows(reward + s * reward_step, entropy, kl, grad, None if fault == "none" else fault)
            (d / f"{fault}.s{s}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
            runs[f"{fault}.s{s}"] = {"fault": fault, "params": 100, "state_bytes": 1}
    (d / "summary.json").write_text(json.dumps({"name": name, "runs": runs, "heldout_healthy_seeds": []}))
    return str(d)


def test_control_kinds_agree_with_the_stages():
    """Every kind is built and run by default (the dvc matrices list CONTROL_KINDS) and proxy_fidelity reads
    each one's GRPO runs as a control of the keep-ratio proxy."""
    from pathlib import Path

    import yaml

    from proxy_artifacts.card import CONTROL_KIND_TEXT

    assert controls.CONTROL_KINDS == CONTROL_KINDS == ("random_experts", "random_output_merge", "reinit", "dense")
    assert set(CONTROL_KIND_TEXT) == set(CONTROL_KINDS)  # the card describes every kind
    spec = yaml.safe_load((Path(__file__).parents[1] / "dvc.yaml").read_text())["stages"]
    for stage in ("proxy_control", "proxy_grpo_control"):
        assert tuple(spec[stage]["matrix"]["kind"]) == CONTROL_KINDS, stage
    for kind in CONTROL_KINDS:
        assert f":control_{kind}=data/proxy/grpo/control_{kind}" in spec["proxy_fidelity"]["cmd"], kind
        assert f"data/proxy/grpo/control_{kind}" in spec["proxy_fidelity"]["deps"], kind


def test_newcombe_interval_known_value():
    """Newcombe (1998), Table II: 56/70 vs 48/80, hybrid score interval (method 10) 0.0524 to 0.3339."""
    assert controls.newcombe(56, 70, 48, 80) == [0.0524, 0.3339]
    assert controls.newcombe(1, 0, 1, 2) is None


def test_tolerance_is_the_base_spread_with_floors():
    # linear: sample SD of 0.3, 0.4, 0.35 is 0.05, x 3 = 0.15; a single value: the floor
    assert CP["sd_factor"] == 3.0
    assert controls.tolerance([0.3, 0.4, 0.35], "linear", CP) == pytest.approx(0.15)
    assert controls.tolerance([0.3], "linear", CP) == CP["abs_floor"]
    # log: -3 and -1 decades have SD sqrt(2) -> 4.2426 decades; 0 and 0.176091 (a factor 1.5): SD 0.124515,
    # x 3 = 0.373544, above the factor-2 floor (0.30103)
    assert controls.tolerance([1e-3, 1e-1], "log", CP) == pytest.approx(3 * 2 ** 0.5)
    assert controls.tolerance([1.0, 1.5], "log", CP) == pytest.approx(3 * 0.176091 / 2 ** 0.5, abs=1e-5)
    assert controls.tolerance([1.0, 1.1], "log", CP) == CP["log_floor"]
    # a cell: both NaN (overflowed runs) match; one NaN does not; a value not logged leaves the cell out
    assert controls.cell_matches(float("nan"), float("nan"), "log", 0.3) is True
    assert controls.cell_matches(1.0, float("nan"), "log", 0.3) is False
    assert controls.cell_matches(None, 1.0, "log", 0.3) is None
    assert controls.cell_matches(0.0, 1e-13, "log", 0.3) is True  # both below the floor: a frozen update


def test_tolerance_does_not_widen_with_the_seed_count():
    """The tolerance estimates a fixed multiple of the base's seed-to-seed sigma at any seed count: over
    4,000 seeded normal samples, the mean tolerance at 10 seeds over that at 3 is E[s_10] / E[s_3] = c4(10) /
    c4(3) = 0.97266 / 0.88623 = 1.0975 (a range-based tolerance: E[R_10] / E[R_3] = 3.0775 / 1.6926 = 1.818)."""
    import numpy as np

    rng = np.random.default_rng(0)
    cp = dict(CP, abs_floor=0.0)
    mean_tol = {n: float(np.mean([controls.tolerance(list(rng.normal(0.5, 0.1, n)), "linear", cp)
                                  for _ in range(4000)])) for n in (3, 10)}
    assert mean_tol[10] / mean_tol[3] == pytest.approx(1.0975, abs=0.03)
    assert mean_tol[10] == pytest.approx(3 * 0.1 * 0.97266, rel=0.02)


def test_seed_share_rule_reads_two_thirds_exactly():
    """0.6667 is 2/3: 2 of 3 seeds meet it (2 >= 0.6667 x 3 is false in floats), 1 of 2 does not, 0 of 0 never."""
    from proxy_artifacts.verdicts import at_least_share

    assert at_least_share(2, 3, 0.6667) and at_least_share(3, 3, 0.6667) and at_least_share(4, 6, 0.6667)
    assert not at_least_share(1, 2, 0.6667) and not at_least_share(1, 3, 0.6667) and not at_least_share(0, 0, 0.6667)
    assert at_least_share(1, 2, 0.5) and not at_least_share(2, 5, 0.5)
    row = {"score": {"n": 6, "rate": 1.0}}
    two_of_three = {"k": 2, "n": 3}
    assert controls._passes(two_of_three, row["score"], "lr_spike", CP)  # CP["min_seed_share"] is 0.6667


def test_a_zero_seed_does_not_widen_a_log_tolerance():
    """Update norms 1e-3, 2e-3 and one frozen seed (0): the spread is over the two non-zero seeds (SD 0.30103 /
    sqrt 2 decades, x 3), not 9 decades to the 1e-12 floor; a zero matches only a zero."""
    assert controls.tolerance([0.0, 1e-3, 2e-3], "log", CP) == pytest.approx(3 * 0.30103 / 2 ** 0.5, abs=1e-5)
    assert controls.cell_matches(0.0, 1e-3, "log", 5.0) is False
    assert controls.cell_matches(1e-3, 0.0, "log", 5.0) is False
    assert controls.cell_matches(0.0, 0.0, "log", 0.3) is True


def test_a_quantity_a_dead_model_would_match_is_left_out():
    """Reward 0.02 / 0.03 / 0.06 on the base's seeds: tolerance max(3 x SD 0.020817, 0.05) = 0.0625 >= the
    median 0.03, so a model with reward 0 would match every cell: reward is left out of the score (and listed), and
    a dead control's score rests on the other quantities. A log tolerance over log_max decades likewise."""
    def q(r, k):
        return {"reward_mean": r, "entropy_mean": None, "kl_max": k, "grad_norm_max": None,
                "logprob_mismatch_fresh_max": None, "update_norm_median": None}

    base = {0: q(0.02, 1e-2), 1: q(0.03, 1e-2), 2: q(0.06, 1e-2)}
    dead = {0: q(0.0, 1e-6), 1: q(0.0, 1e-6), 2: q(0.0, 1e-6)}
    sc = controls.magnitude_score(base, dead, CP)
    assert sc["non_discriminating"] == ["reward_mean"]
    assert "reward_mean" not in sc["by_quantity"] and sc["by_quantity"]["kl_max"] == [0, 3] and (sc["k"], sc["n"]) == (0, 3)
    assert controls.discriminates([0.4, 0.5], "linear", 0.2, CP) and not controls.discriminates([0.4], "linear", 0.4, CP)
    assert controls.discriminates([1e-3], "log", CP["log_max"], CP)
    assert not controls.discriminates([1e-3], "log", CP["log_max"] + 0.01, CP)
    # zero or NaN on every base seed (no mismatch in fp32, NaN after an overflow, a frozen update) is what the
    # injection gives any model: not discriminating; a quantity never logged leaves its cells out instead
    assert not controls.discriminates([0.0, 0.0, 0.0], "log", 0.3, CP)
    assert not controls.discriminates([float("nan")] * 3, "log", 0.3, CP)
    assert not controls.discriminates([0.0, float("nan")], "linear", 0.05, CP)
    assert controls.discriminates([None, None], "log", 0.3, CP)


def test_base_self_score_judges_each_seed_by_the_other_seeds_spread():
    """KL 1e-2, 1e-2, 1e-1: with the tolerance of all three seeds (3 x SD 0.577 = 1.73 decades) every pair
    matches -- a ceiling of 1 by construction. Leaving the judged seed out, seed 2 (1e-1) is judged by seeds
    0-1's spread (0: the log floor) and fails against seed 1; seed 1 (by seeds 0 and 2: 3 x 0.707 = 2.12
    decades) and seed 0 (by seeds 1 and 2) match: 2 of 3 pairs."""
    def q(k):
        return {"reward_mean": None, "entropy_mean": None, "kl_max": k, "grad_norm_max": None,
                "logprob_mismatch_fresh_max": None, "update_norm_median": None}

    base = {0: q(1e-2), 1: q(1e-2), 2: q(1e-1)}
    ring = [(0, 1), (1, 2), (2, 0)]
    assert controls.magnitude_score(base, base, dict(CP, log_max=5.0), ring)["rate"] == 1.0
    loo = controls.magnitude_score(base, base, dict(CP, log_max=5.0), ring, leave_out_judged=True)
    assert (loo["k"], loo["n"]) == (2, 3) and loo["by_seed"] == {"1": [1, 1], "2": [0, 1], "0": [1, 1]}


def test_every_fault_has_a_catalog_row_and_an_uncatalogued_one_is_an_error():
    from proxy_artifacts.config import FAULTS
    from proxy_artifacts.verdicts import FAULT_CATALOG

    assert set(FAULTS) - {"none"} <= set(FAULT_CATALOG)
    rates = {"models": {"base": {"made_up": {"detection": {"k": 3, "n": 3}}}}}
    with pytest.raises(ValueError, match="'made_up' has no entry in proxy_artifacts.verdicts.FAULT_CATALOG"):
        fidelity.fault_table(["made_up"], rates, {}, {}, 0.6667)


def test_magnitude_score_counts_cells_per_seed_and_the_seeds_a_proxy_is_ahead_on():
    """Two quantities logged (reward linear, kl log), three seeds. Base: reward 0.5, 0.6, 0.7 (tolerance
    max(3 x SD 0.1, abs_floor) = 0.3), kl 1e-2 on every seed (tolerance: the log floor). Proxy: equal to the
    base on every seed: 2/2 cells per seed. Control: seed 0 equal, seed 1 reward off by 1.0 and kl x 100,
    seed 2 kl x 100: 2/2, 0/2, 1/2. So 3 of 6 cells match the control (rate 0.5), and the proxy is ahead
    on seeds 1 and 2 only: 2 of 3 seeds, though its 6/6 cells against 3/6 look like six more cells."""
    def q(r, k):
        return {"reward_mean": r, "entropy_mean": None, "kl_max": k, "grad_norm_max": None,
                "logprob_mismatch_fresh_max": None, "update_norm_median": None}

    base = {0: q(0.5, 1e-2), 1: q(0.6, 1e-2), 2: q(0.7, 1e-2)}
    ctrl = {0: q(0.5, 1e-2), 1: q(1.6, 1.0), 2: q(0.7, 1.0)}
    p, c = controls.magnitude_score(base, base, CP), controls.magnitude_score(base, ctrl, CP)
    assert p["by_seed"] == {"0": [2, 2], "1": [2, 2], "2": [2, 2]} and (p["k"], p["n"]) == (6, 6)
    assert c["by_seed"] == {"0": [2, 2], "1": [0, 2], "2": [1, 2]} and (c["k"], c["n"]) == (3, 6)
    assert controls.seeds_ahead(p, c) == [2, 3] and controls.seeds_ahead(c, p) == [0, 3]
    assert controls.seeds_ahead(p, {"k": 0, "n": 0}) == [0, 0]


def test_reinit_control_fails_where_the_real_proxy_passes(tmp_path, monkeypatch):
    """The injection gives every model the fault's kinds (KL jump, frozen update), so the re-initialised
    control reproduces the base's signature on 3/3 seeds; its magnitudes (reward 0, entropy of a uniform
    byte distribution, KL and gradients of another scale) do not, so it fails the fidelity test on every
    fault where the proxy passes. A control that is a copy of the proxy passes too, and then the proxy does
    not "reproduce beyond its controls"."""
    monkeypatch.setattr(fidelity, "full_size_counts", lambda: {})
    dirs = {"base": _model(tmp_path, "base", 0.40, 0.8, 1e-3, 1.0),
            "p": _model(tmp_path, "p", 0.41, 0.82, 1.1e-3, 1.1)}
    ctl = {"p": {"control_reinit": _model(tmp_path, "reinit", 0.0, 5.5, 1e-5, 0.3, reward_step=0.0),
                 "control_copy": _model(tmp_path, "copy", 0.41, 0.82, 1.1e-3, 1.1)}}
    params = {"fidelity": {"detector": DET, "step_tolerance": 2, "device_memory_gb": 80, "controls": CP},
              "grpo": {"fault_step": 4}, "compare": {"keep_ratios": [0.5]}}
    m = fidelity.run_fidelity(params, dirs, tmp_path / "r.md", tmp_path / "m.json", tmp_path, control_dirs=ctl)
    blk = m["controls"]["p"]
    assert blk["controls"] == ["control_reinit", "control_copy"]
    faults = ["lr_spike", "none", "skip_actor_update"]
    assert sorted(blk["faults"]) == faults
    for f in faults:
        row = blk["faults"][f]
        assert row["proxy"]["passes"] and row["proxy"]["score"]["rate"] == 1.0, f
        re = row["controls"]["control_reinit"]
        assert not re["passes"] and re["beaten"] and re["diff_ci95"][0] > 0, f
        assert row["controls"]["control_copy"]["passes"] and not row["controls"]["control_copy"]["beaten"], f
        assert row["reproduces"] is False  # not beyond a control that is the proxy itself
    # the kinds alone cannot tell: the reinit control reproduces the base's signature on every seed
    for f in ("lr_spike", "skip_actor_update"):
        assert (blk["faults"][f]["controls"]["control_reinit"]["kinds"]["k"], blk["faults"][f]["controls"]
                ["control_reinit"]["kinds"]["n"]) == (3, 3)
    # lr_spike: the KL max is the injection's (2.0); reward, entropy and the gradient max (0.9 vs 3.0) fail on
    # every seed -> 3/12 cells (the update norm is not scored: Adam gives every model of one shape the same);
    # healthy: nothing matches -> 0/12
    assert (blk["faults"]["lr_spike"]["controls"]["control_reinit"]["score"]["k"],
            blk["faults"]["lr_spike"]["controls"]["control_reinit"]["score"]["n"]) == (3, 12)
    assert blk["faults"]["none"]["controls"]["control_reinit"]["score"]["k"] == 0
    assert blk["controls_passing"] == {"control_reinit": [], "control_copy": faults}
    # controls stay out of the detector's calibration and of the proxies' table
    assert m["calibration"]["runs"] == 6 and set(m["proxies"]) == {"p"}
    assert "## Controls" in (tmp_path / "r.md").read_text()
    # without the copy, the proxy reproduces every fault beyond its (re-initialised) control
    m2 = fidelity.run_fidelity(params, dirs, tmp_path / "r2.md", tmp_path / "m2.json", tmp_path,
                               control_dirs={"p": {"control_reinit": ctl["p"]["control_reinit"]}})
    assert m2["controls"]["p"]["reproduces"] == faults


def test_reinit_control_has_the_proxy_shape_and_fresh_weights(tmp_path):
    """``reinit``: the proxy's config.json with weights drawn under the controls seed; loadable with plain
    from_pretrained; none of the proxy's trained tensors survive (the proxy here is itself re-drawn from
    another seed, so equal tensors would mean a copy)."""
    import torch
    from transformers import AutoModelForCausalLM

    from proxy_artifacts.pipeline import build_control
    from tests.proxy_helpers import save_tiny_base

    save_tiny_base(tmp_path / "proxy", num_experts=4)
    src = AutoModelForCausalLM.from_pretrained(tmp_path / "proxy")
    with torch.no_grad():
        for p in src.parameters():
            p.add_(0.5)  # "trained" weights, far from any fresh init
    src.save_pretrained(tmp_path / "proxy")
    params = {"fidelity": {"controls": CP}}
    out = build_control(params, "reinit", "unused", "unused", tmp_path / "proxy", 0.5, tmp_path / "ctl")
    got = AutoModelForCausalLM.from_pretrained(out / "model")
    assert got.config.num_experts == src.config.num_experts == 4
    assert {n: p.shape for n, p in got.named_parameters()} == {n: p.shape for n, p in src.named_parameters()}
    sd = src.state_dict()
    assert not any(torch.equal(t, sd[n]) for n, t in got.state_dict().items() if "norm" not in n)
    assert json.loads((out / "control.json").read_text()) == {"kind": "reinit", "seed": 0, "keep_ratio": 0.5}
    with pytest.raises(ValueError, match="unknown control"):
        build_control(params, "dense_wide", "unused", "unused", tmp_path / "proxy", 0.5, tmp_path / "x")


def _dense_of_tiny_proxy(tmp_path):
    """A tiny 4-expert top-2 proxy with "trained" weights, its kept_experts (proxy expert j kept from base expert
    kept[j]) and base routing frequencies that rank the proxy's experts 2, 0, 3, 1 in layer 0 and 1, 3, 0, 2 in
    layer 1 (experts 0 and 3 of layer 1 tie: the lower index first)."""
    import types

    import torch
    from transformers import AutoModelForCausalLM

    from proxy_artifacts.adapters import adapter_for, moe_blocks
    from proxy_artifacts.pipeline import dense_control
    from tests.proxy_helpers import save_tiny_base

    save_tiny_base(tmp_path / "proxy", num_experts=4)
    proxy = AutoModelForCausalLM.from_pretrained(tmp_path / "proxy")
    with torch.no_grad():
        for p in proxy.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    blocks = [b.name for b in moe_blocks(proxy, adapter_for(proxy.config))]
    kept = {blocks[0]: [1, 3, 4, 6], blocks[1]: [0, 2, 5, 7]}
    freq = torch.zeros(2, 8, dtype=torch.float64)
    freq[0, [1, 3, 4, 6]] = torch.tensor([0.5, 0.1, 0.9, 0.3], dtype=torch.float64)  # ranks 2, 0, 3, 1
    freq[1, [0, 2, 5, 7]] = torch.tensor([0.4, 0.8, 0.2, 0.4], dtype=torch.float64)  # ranks 1, 0 = 3, 2
    stats = types.SimpleNamespace(blocks=list(reversed(blocks)), frequency=freq.flip(0))  # rows found by name
    dense, chosen = dense_control(proxy, kept, stats)
    return proxy, dense, chosen, blocks


def test_dense_control_is_the_mean_of_the_most_routed_experts_at_the_proxys_active_size(tmp_path):
    """``dense``: every routed block becomes one dense MLP of top_k x moe_intermediate_size whose output is the
    mean of the proxy's top_k most-routed experts of the layer (known indices, known output); attention,
    norms and embeddings are the proxy's; the dense model's parameters are the proxy's active ones (embeddings,
    attention, norms, top_k experts per layer) minus the routers; no router is left."""
    import torch

    from proxy_artifacts.adapters import adapter_for, moe_blocks
    from proxy_artifacts.rl import routed_blocks

    proxy, dense, chosen, blocks = _dense_of_tiny_proxy(tmp_path)
    assert chosen == {blocks[0]: [2, 0], blocks[1]: [1, 0]}
    assert dense.config.mlp_only_layers == [0, 1] and dense.config.intermediate_size == 2 * 32
    assert routed_blocks(dense) == [] and len(routed_blocks(proxy)) == 2
    a = adapter_for(proxy.config)
    pb = {b.name: b for b in moe_blocks(proxy, a)}
    x = torch.randn(5, 32)
    for name in blocks:
        mlp = dense.get_submodule(name)
        want = sum(a.expert_forward(pb[name].experts, j, x) for j in chosen[name]) / 2
        torch.testing.assert_close(mlp(x), want, rtol=1e-5, atol=1e-6)
    sd = proxy.state_dict()
    for n, t in dense.state_dict().items():
        if ".mlp." not in n:
            assert torch.equal(t, sd[n]), n
    E, k, H, inter = 4, 2, 32, 32
    total = sum(p.numel() for p in proxy.parameters())
    active = total - len(blocks) * (E - k) * 3 * H * inter
    routers = len(blocks) * E * H
    assert sum(p.numel() for p in dense.parameters()) == active - routers


def test_dense_control_refuses_a_family_without_a_dense_layer_of_its_config():
    import types

    from proxy_artifacts.pipeline import dense_control
    from tests.proxy_helpers import tiny_model

    m = tiny_model("deepseek_v3")
    with pytest.raises(ValueError, match="dense control"):
        dense_control(m, {}, types.SimpleNamespace(blocks=[], frequency=None))


def test_a_dense_model_runs_grpo_and_the_router_faults_leave_it_as_healthy(tmp_path):
    """The GRPO logger of a model without routers logs no expert load and no router flip rate, trains without
    a load-balancing loss, and ``swapped_operator`` (a router kernel) has nothing to act on: its run is the
    healthy run, step for step."""
    from transformers import AutoTokenizer

    from proxy_artifacts import rl

    _, dense, _, _ = _dense_of_tiny_proxy(tmp_path)
    dense.save_pretrained(tmp_path / "dense")
    AutoTokenizer.from_pretrained(tmp_path / "proxy").save_pretrained(tmp_path / "dense")
    gp = dict(steps=2, prompts_per_step=2, num_generations=2, max_completion_length=3, lr=1e-3, seed=0, threads=1,
              eval_problems=2, eval_samples=2, fault_step=1, drop_zero_variance_groups=False,
              heldout_healthy_seeds=[], eval_after=False)
    runs = {f: rl.run_grpo(str(tmp_path / "dense"), f, dict(gp)) for f in ("none", "swapped_operator")}
    for r in runs.values():
        assert len(r["steps"]) == 2
        assert all(s["expert_load"] == [] and "router_flip_rate" not in s for s in r["steps"])
        assert all(s.get("aux_loss") in (None, 0.0) for s in r["steps"])
    assert runs["swapped_operator"]["steps"] == runs["none"]["steps"]


def test_control_stages_take_the_keep_ratio_from_params():
    """dvc.yaml names the controlled proxy through ``${proxy.fidelity.controls.keep_ratio}`` (the typed
    config's knob, set in params.yaml), never a literal ratio: the proxy_control stages' ``--proxy`` and
    dependency and proxy_fidelity's ``--controls`` render to ``r<params.yaml's keep_ratio>``."""
    from pathlib import Path

    import yaml
    from dvc.repo import Repo

    from passnet_common.params import load_params

    root = Path(__file__).parents[1]
    ratio = float(load_params(root / "params.yaml", "proxy")["fidelity"]["controls"]["keep_ratio"])
    spec = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    raw = " ".join([spec["proxy_control"]["cmd"], spec["proxy_fidelity"]["cmd"],
                    *[d for d in spec["proxy_control"]["deps"] if isinstance(d, str) and "proxies" in d]])
    assert "proxies/r0." not in raw and ":control_" in raw
    assert raw.count("r${proxy.fidelity.controls.keep_ratio}") == 2 + len(CONTROL_KINDS)
    stages = {s.name: s for s in Repo(str(root)).index.stages if s.name.startswith(("proxy_control", "proxy_fidelity"))}
    for kind in CONTROL_KINDS:
        st = stages[f"proxy_control@{kind}"]
        assert f"--proxy data/proxy/proxies/r{ratio}/model " in st.cmd
        assert f"data/proxy/proxies/r{ratio}" in [str(d) for d in st.deps]
    for kind in CONTROL_KINDS:
        assert f" r{ratio}:control_{kind}=" in stages["proxy_fidelity"].cmd, kind


def test_report_captions_the_healthy_rows_with_the_healthy_seeds():
    """The rollout/training table's caption names the seeds of each kind of row: healthy rows pool the healthy
    seeds, fault and +fix rows the fault seeds, the base's being its reference seeds (the committed metrics: 5
    healthy seeds, 3 fault seeds, 6 reference seeds)."""
    from pathlib import Path

    from proxy_artifacts.report import report_markdown

    m = json.loads((Path(__file__).parents[1] / "metrics/fidelity.json").read_text())
    text = report_markdown(m)
    assert (f"`healthy` rows the healthy seeds {m['healthy_seeds']}, `fault` and `+fix` rows the fault seeds "
            f"{m['fault_seeds']} (the base's: {m['reference_fault_seeds']}).") in text
    assert m["fault_seeds"] == [0, 1, 2] and m["reference_fault_seeds"] == [0, 1, 2, 3, 4, 5]
    assert "of the fault seeds / largest per seed" not in text
    fresh = m["base"]["fresh_quantities"]["none"]["logprob_mismatch"]["max_per_seed"]
    assert sorted(int(s) for s in fresh) == m["healthy_seeds"] != m["fault_seeds"]


def _q(reward=None, entropy=None, kl=None, grad=None, mismatch=None):
    return {"reward_mean": reward, "entropy_mean": entropy, "kl_max": kl, "grad_norm_max": grad,
            "logprob_mismatch_fresh_max": mismatch, "update_norm_median": None}


def test_cell_distance_is_the_difference_in_tolerances_capped():
    """|got - ref| / tol on the quantity's scale (decades for log), at most dist_cap; zeros and non-finite
    values match only their own kind."""
    cap = 3.0
    assert controls.cell_distance(0.40, 0.65, "linear", 0.5, cap) == pytest.approx(0.5)
    assert controls.cell_distance(0.40, 9.0, "linear", 0.5, cap) == cap
    assert controls.cell_distance(1e-2, 1e-1, "log", 0.5, cap) == pytest.approx(2.0)  # one decade / 0.5
    assert controls.cell_distance(0.0, 0.0, "log", 0.5, cap) == 0.0
    assert controls.cell_distance(0.0, 1e-2, "log", 0.5, cap) == cap
    assert controls.cell_distance(float("nan"), float("inf"), "log", 0.5, cap) == 0.0
    assert controls.cell_distance(float("nan"), 1.0, "log", 0.5, cap) == cap
    assert controls.cell_distance(None, 1.0, "log", 0.5, cap) is None


def test_an_fp32_round_off_mismatch_is_a_zero():
    """A fp32 run's fresh log-prob mismatch is 0 or float32 round-off (~1e-8 nats): both are zeros
    (LOG_FLOOR), so the cell matches and the round-off does not enter the base's spread."""
    assert controls.LOG_FLOOR >= 1e-6
    assert controls.cell_matches(0.0, 1.12e-8, "log", 0.30103) is True
    assert controls.cell_distance(3.7e-9, 0.0, "log", 0.30103, 3.0) == 0.0
    assert controls.spread_values([0.0, 3.7e-9, 1e-3, 1e-2], "log") == [-3.0, -2.0]
    # a real bf16 mismatch (~4e-3 nats) is not a zero
    assert controls.cell_matches(0.0, 4e-3, "log", 0.30103) is False


def test_paired_difference_is_the_t_interval_of_the_run_differences():
    """Run distances differing by 1, 2, 3 (control - proxy): mean 2, sample SD 1, t(0.975, 2) = 4.3027 ->
    2 -/+ 2.4841. Runs only one side has are left out; fewer than 2 common runs give None; equal runs give
    [0, 0]."""
    proxy = {"0": 0.0, "1": 0.0, "2": 0.0}
    ctl = {"0": 1.0, "1": 2.0, "2": 3.0, "3": 9.0}
    d = controls.paired_difference(proxy, ctl, 0.0)
    assert d == {"mean": 2.0, "ci95": [-0.4841, 4.4841], "n": 3, "beaten": False}
    assert controls.paired_difference({"0": 0.0}, ctl, 0.0) is None
    assert controls.paired_difference(proxy, proxy, 0.0) == {"mean": 0.0, "ci95": [0.0, 0.0], "n": 3, "beaten": False}
    # beaten is decided on the unrounded mean: 0.09996 rounds to 0.1 but stays under min_effect 0.1
    close = {"0": 0.09996, "1": 0.09996, "2": 0.09996}
    d = controls.paired_difference(proxy, close, 0.1)
    assert d["mean"] == 0.1 and d["ci95"][0] > 0 and d["beaten"] is False


def test_magnitude_distance_uses_the_scores_cells_and_tolerances():
    """The distance judges the cells the score does: a non-discriminating quantity (reward 0 on every base
    seed would be matched by a dead model) is left out; each cell is |model - base| / tolerance."""
    base = {s: _q(reward=0.0, kl=10 ** (-2 + 0.1 * s)) for s in range(3)}
    model = {s: _q(reward=0.0, kl=10 ** (-1.5 + 0.1 * s)) for s in range(3)}  # half a decade above, every seed
    sc = controls.magnitude_score(base, model, CP)
    assert "reward_mean" in sc["non_discriminating"] and sc["tolerance"]["kl_max"] == pytest.approx(0.30103)
    d = controls.magnitude_distance(base, model, CP, sc)
    assert d["n"] == 3 and set(d["cells"]) == {"0:kl_max", "1:kl_max", "2:kl_max"}
    assert d["by_seed"] == {s: pytest.approx(0.5 / 0.30103, abs=1e-5) for s in ("0", "1", "2")}
    assert d["distance"] == pytest.approx(0.5 / 0.30103, abs=1e-3)  # 1.66 tolerances, under the cap
    far = controls.magnitude_distance(base, {s: _q(reward=0.0, kl=10.0) for s in range(3)}, CP, sc)
    assert far["distance"] == CP["dist_cap"]  # 3 decades = 10 tolerances, capped


def test_a_fix_row_reproduces_where_the_fix_removed_the_signature_on_both():
    """On a ``+fix`` run the base's signature is absent (the fix removed it): a proxy that shows none there
    reproduces the fixed run; one where the signature survives the fix does not. On the fault's own row an
    absence on both sides is no reproduction."""
    from proxy_artifacts.verdicts import fault_rates

    mis = {"logprob_mismatch": 1}
    sigs = {"base": {"logprob_bf16": {0: mis, 1: mis, 2: {}}, "logprob_bf16+fix": {0: {}, 1: {}, 2: {}}},
            "p": {"logprob_bf16": {0: mis, 1: {}, 2: {}}, "logprob_bf16+fix": {0: {}, 1: {}, 2: mis}}}
    r = fault_rates(sigs, 2, {"logprob_bf16": 1, "logprob_bf16+fix": 1})
    assert r["base_self"]["logprob_bf16+fix"]["rate"] == 1.0
    rep = r["models"]["p"]["logprob_bf16+fix"]["reproduction"]
    assert (rep["k"], rep["n"]) == (2, 3)
    rep = r["models"]["p"]["logprob_bf16"]["reproduction"]
    assert (rep["k"], rep["n"]) == (1, 3)  # seed 0 only: seed 2's shared absence is not the fault reproduced


def _two_rows():
    """Base quantities of the healthy row and a +fix row: reward and entropy 0.5 / 0.6 + 0.02 s on seeds 0-2
    (tolerance 3 x SD 0.02 = 0.06 for both), and a control one tolerance off on every cell of the healthy row."""
    base = {"none": {s: _q(reward=0.5 + 0.02 * s, entropy=0.6 + 0.02 * s) for s in range(3)},
            "logprob_bf16+fix": {s: _q(reward=0.5 + 0.02 * s, entropy=0.6 + 0.02 * s) for s in range(3)}}
    far = {"none": {s: _q(reward=0.5 + 0.02 * s + 0.06, entropy=0.6 + 0.02 * s + 0.06) for s in range(3)}}
    return base, far


def test_a_row_no_control_ran_is_judged_on_the_proxy_alone_and_the_pooled_difference_covers_the_rest():
    """Controls run no fix runs: on a ``+fix`` row the control entry says it did not run, ``reproduces`` is
    None (not False) and the row is listed under ``passed_without_controls`` when the proxy passes it. The
    healthy row, where the proxy equals the base and the control is one tolerance off on every cell, is
    reproduced, and the pooled difference is the healthy row's three runs."""
    from proxy_artifacts.verdicts import rate

    base, far = _two_rows()
    rates = {"models": {"p": {"logprob_bf16+fix": {"reproduction": rate(3, 3)}}}}
    blk = controls.control_verdicts({"base": base, "p": base, "c": far}, rates, {"p": ["c"]}, CP)["p"]
    fix = blk["faults"]["logprob_bf16+fix"]
    assert fix["controls"]["c"]["ran"] is False and fix["controls"]["c"]["beaten"] is False
    assert fix["proxy"]["passes"] and fix["reproduces"] is None
    assert blk["passed_without_controls"] == ["logprob_bf16+fix"]
    none = blk["faults"]["none"]
    assert none["controls"]["c"]["distance"]["distance"] == pytest.approx(1.0)
    assert none["controls"]["c"]["distance"]["by_seed"] == {s: pytest.approx(1.0) for s in ("0", "1", "2")}
    assert none["proxy"]["distance"]["distance"] == 0.0 and none["controls"]["c"]["beaten"] and none["reproduces"]
    assert blk["reproduces"] == ["none"]
    assert blk["overall"]["c"] == {"mean": 1.0, "ci95": [1.0, 1.0], "n": 3, "beaten": True, "faults": ["none"],
                                   "incomplete": []}


def test_a_control_that_differs_by_nothing_measurable_is_not_beaten():
    """A control that is the proxy nudged 0.1% of a tolerance away from the base on every cell: the paired
    interval excludes 0 (the nudge is always in one direction), but the mean difference is under
    ``min_effect``, so the proxy does not beat it; an exact copy is not beaten either."""
    base, _ = _two_rows()
    nudged = {"none": {s: _q(reward=0.5 + 0.02 * s + 6e-5, entropy=0.6 + 0.02 * s + 6e-5) for s in range(3)}}
    blk = controls.control_verdicts({"base": base, "p": base, "nudged": nudged, "copy": {"none": base["none"]}},
                                    {}, {"p": ["nudged", "copy"]}, CP)["p"]
    nd = blk["faults"]["none"]["controls"]["nudged"]
    assert nd["distance_diff"]["ci95"][0] > 0 and nd["distance_diff"]["mean"] < CP["min_effect"]
    assert not nd["beaten"] and not blk["faults"]["none"]["controls"]["copy"]["beaten"]
    assert blk["reproduces"] == [] and not blk["overall"]["nudged"]["beaten"]


def test_a_control_with_a_failed_run_is_incomplete_and_not_beaten():
    """A control whose plan holds the fault but one of whose runs failed (no rows: left out of the
    quantities) cannot let the fault through: it is incomplete, not beaten, and the proxy does not reproduce
    the fault; the pooled figure lists the fault as incomplete."""
    base, far = _two_rows()
    crashed = {"none": {s: q for s, q in far["none"].items() if s != 1}}
    planned = {"crashed": {"none": [0, 1, 2]}}
    blk = controls.control_verdicts({"base": base, "p": base, "crashed": crashed}, {}, {"p": ["crashed"]}, CP,
                                    planned)["p"]
    e = blk["faults"]["none"]["controls"]["crashed"]
    assert e["ran"] and e["incomplete"] and not e["beaten"] and e["distance_diff"] is None
    assert blk["faults"]["none"]["reproduces"] is False and blk["reproduces"] == []
    assert blk["overall"]["crashed"] is None
    # every run of a fault failed: still ran (the plan holds it), still not a pass for the proxy
    blk = controls.control_verdicts({"base": base, "p": base, "crashed": {}}, {}, {"p": ["crashed"]}, CP,
                                    planned)["p"]
    assert blk["faults"]["none"]["controls"]["crashed"]["incomplete"] and blk["faults"]["none"]["reproduces"] is False


def test_a_random_controls_seed_draws_its_experts_not_its_calibration_windows(tmp_path, monkeypatch):
    """``proxy.fidelity.controls.seed`` reaches the expert choice alone (``run_prune``'s ``choice_seed``);
    the merge's calibration windows stay drawn by ``proxy.prune.seed``, as the proxy's, so controls of two
    seeds differ in their experts only."""
    from proxy_artifacts import pipeline
    from proxy_artifacts.config import ProxyConfig

    seen = []
    monkeypatch.setattr(pipeline, "run_prune", lambda params, *a, choice_seed=None, **k: seen.append(
        (params["prune"]["seed"], params["prune"]["method"], params["prune"]["merge"], choice_seed)))
    params = ProxyConfig().to_params()
    params["fidelity"]["controls"]["seed"] = 7
    pipeline.build_control(params, "random_output_merge", "builtin", tmp_path, tmp_path, 0.5, tmp_path / "c")
    assert seen == [(params["prune"]["seed"], "random", "output", 7)]
    assert json.loads((tmp_path / "c" / "control.json").read_text())["seed"] == 7


def test_a_control_whose_plan_drops_a_fault_is_incomplete_not_absent():
    """Controls run every fault but the +fix rows: a control whose summary lacks a fault (dropped, or listed
    under another name) is incomplete there, not "not run", so the fault is not reproduced and does not land
    in ``passed_without_controls``; its pooled figure is not beaten while a fault is incomplete, though the
    runs it did complete are far from the base."""
    base, far = _two_rows()
    base = {**base, "lr_spike": base["none"]}
    ctl = {"none": far["none"]}  # lr_spike missing from the control's plan
    blk = controls.control_verdicts({"base": base, "p": base, "c": ctl}, {}, {"p": ["c"]}, CP)["p"]
    e = blk["faults"]["lr_spike"]["controls"]["c"]
    assert e["ran"] and e["incomplete"] and not e["beaten"]
    assert blk["faults"]["lr_spike"]["reproduces"] is False and "lr_spike" not in blk["passed_without_controls"]
    o = blk["overall"]["c"]
    assert o["faults"] == ["none"] and o["incomplete"] == ["lr_spike"] and o["ci95"][0] > 0 and not o["beaten"]


def test_a_proxy_that_lost_a_planned_run_reproduces_nothing_on_that_row():
    """The proxy's plan holds seeds 0-2 of the healthy row but its seed 2 failed: the row is
    ``proxy_incomplete`` and not reproduced, though the two runs it has beat the control."""
    base, far = _two_rows()
    lost = {"none": {s: q for s, q in base["none"].items() if s != 2}, "logprob_bf16+fix": base["logprob_bf16+fix"]}
    planned = {"p": {"none": [0, 1, 2], "logprob_bf16+fix": [0, 1, 2]}, "c": {"none": [0, 1, 2]}}
    blk = controls.control_verdicts({"base": base, "p": lost, "c": far}, {}, {"p": ["c"]}, CP, planned)["p"]
    row = blk["faults"]["none"]
    assert row["proxy_incomplete"] and row["controls"]["c"]["beaten"] and row["reproduces"] is False
    assert blk["reproduces"] == [] and blk["overall"]["c"] is None
