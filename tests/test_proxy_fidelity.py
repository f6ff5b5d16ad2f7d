"""Usage-aware selection, the fault detector, cost accounting and a short GRPO run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proxy_artifacts import detector, fidelity, projection
from proxy_artifacts.cluster import allocate_slots, usage_cluster
from proxy_artifacts.config import DetectorConfig

DET = DetectorConfig(grad_collapse_steps=1).to_params()  # every threshold at params.yaml's, one-step grad collapse


# ----------------------------------------------------------------- usage-aware clustering


def test_allocate_slots_proportional_capped_and_exact():
    assert allocate_slots(np.array([6.0, 3.0, 1.0]), np.array([10, 10, 10]), 10).tolist() == [6, 3, 1]
    # cluster 0 capped at 2 slots: the rest goes to the others in proportion
    assert allocate_slots(np.array([8.0, 1.0, 1.0]), np.array([2, 5, 5]), 6).tolist() == [2, 2, 2]
    got = allocate_slots(np.array([0.5, 0.3, 0.2]), np.array([4, 4, 4]), 5)
    assert got.sum() == 5 and got.tolist() == [3, 1, 1]  # quotas 2.5, 1.5, 1.0: largest remainder, lower index
    assert allocate_slots(np.array([0.0, 0.0]), np.array([1, 3]), 3).sum() == 3  # no mass: still fills
    with pytest.raises(ValueError):
        allocate_slots(np.array([-1.0]), np.array([1]), 1)


def test_usage_cluster_drops_dead_experts_and_follows_mass():
    """8 experts: 0-3 one tight cluster carrying most of the routing, 4-5 a second, 6-7 dead."""
    pts = np.array([[1, 0], [1, 0.01], [1, 0.02], [1, 0.03], [0, 1], [0, 1.01], [-1, 0], [-1, 0.01]], float)
    n = np.linalg.norm(pts, axis=1, keepdims=True)
    x = pts / n
    dist = np.clip(1 - x @ x.T, 0, 2)
    np.fill_diagonal(dist, 0)
    freq = np.array([0.30, 0.25, 0.20, 0.15, 0.05, 0.04, 0.0005, 0.0002])
    reap = np.array([1.0, 3.0, 2.0, 0.5, 1.0, 2.0, 9.0, 9.0])
    kept, members, labels = usage_cluster(np.arange(8), 4, dist, freq, reap,
                                          {"dead_share": 0.01, "cluster_share": 0.5, "slots_by": "frequency",
                                           "representative": "reap"})
    assert labels[6] == -1 and labels[7] == -1  # dead experts are never clustered or kept
    assert labels[0] == labels[1] == labels[2] == labels[3] != labels[4] == labels[5]
    # slots by mass 0.90 vs 0.09: quotas 3.64 / 0.36 -> [4, 0]: the whole heavy cluster is kept
    assert kept == [0, 1, 2, 3]
    # more mass on the second cluster (0.24 of 1.14): quotas 3.16 / 0.84 -> [3, 1]; inside each
    # cluster the highest REAP saliency wins (1: 3.0, 2: 2.0, 0: 1.0 > 3: 0.5; 5: 2.0 > 4: 1.0)
    freq[4] = 0.2
    kept, members, _ = usage_cluster(np.arange(8), 4, dist, freq, reap,
                                     {"dead_share": 0.01, "cluster_share": 0.5, "slots_by": "frequency",
                                      "representative": "reap"})
    assert kept == [0, 1, 2, 5]
    assert sorted(m for v in members.values() for m, _ in v) == [0, 1, 2, 3, 4, 5]  # live experts attached


# ----------------------------------------------------------------- detector


def _rows(n=12, **over):
    rows = []
    for s in range(1, n + 1):
        r = {"step": s, "reward": 0.5, "kl": 1e-3 * s, "loss": 0.1, "grad_norm_total": 1.0, "entropy": 2.0,
             "update_norm": 1e-3,
             "grad_nan": 0, "grad_inf": 0, "loss_nonfinite": 0,
             "expert_load": [{"max_share": 0.2, "entropy_norm": 0.9, "load": []}]}
        for k, fn in over.items():
            r[k] = fn(s, r.get(k))
        rows.append(r)
    return rows


def test_detector_uses_the_healthy_ensemble():
    h1, h2 = _rows(), _rows(grad_norm_total=lambda s, v: 4.0)
    loud = _rows(grad_norm_total=lambda s, v: 5.5 if s in (6, 7) else v)
    assert detector.signature(loud, h1, DET, 4) == {"grad_spike": 6, "divergence": 6}
    # a second healthy seed with larger norms widens the healthy envelope: 5.5 < 5 x 4 and < 3 x 4
    assert detector.signature(loud, [h1, h2], DET, 4) == {}
    # a single low step (a zero-reward batch) is no collapse when three consecutive steps are required
    dip = _rows(grad_norm_total=lambda s, v: 0.0 if s == 6 else v)
    assert "grad_collapse" not in detector.signature(dip, h1, dict(DET, grad_collapse_steps=3), 4)
    assert detector.signature(dip, h1, DET, 4)["grad_collapse"] == 6


def test_detector_kinds_and_steps():
    healthy = _rows()
    assert detector.signature(healthy, healthy, DET, 4) == {}
    spike = _rows(grad_norm_total=lambda s, v: 50.0 if s >= 6 else v)
    assert detector.signature(spike, healthy, DET, 4) == {"grad_spike": 6, "divergence": 6}
    nan = _rows(grad_nan=lambda s, v: 3 if s >= 7 else 0)
    assert detector.signature(nan, healthy, DET, 4) == {"nan_inf": 7}
    frozen = _rows(update_norm=lambda s, v: 0.0 if s > 4 else v)
    assert detector.signature(frozen, healthy, DET, 4) == {"frozen_policy": 5}
    collapse = _rows(reward=lambda s, v: 0.0 if s >= 8 else v)
    # mean over 2 rollout steps: steps 7-8 give (0.5 + 0) / 2 = 0.25, not below 0.25 x 0.5; steps 8-9 give 0
    assert detector.signature(collapse, healthy, DET, 4) == {"reward_collapse": 9}
    experts = _rows(expert_load=lambda s, v: [{"max_share": 0.9 if s >= 5 else 0.2}])
    assert detector.signature(experts, healthy, DET, 4) == {"expert_collapse": 5}
    kl = _rows(kl=lambda s, v: 1.0 if s >= 9 else v)
    assert detector.signature(kl, healthy, DET, 4) == {"kl_blowup": 9, "divergence": 9}


def test_detector_grad_collapse_and_logprob_mismatch():
    healthy = _rows(fresh_rollout=lambda s, v: s % 2 == 1, logprob_mismatch=lambda s, v: 0.0 if s % 2 else 0.02)
    assert detector.signature(healthy, healthy, DET, 4) == {}
    # gradients flushed to zero from row 5 (fault_step 4): collapse, and the norm departs from healthy
    under = _rows(grad_norm_total=lambda s, v: 0.0 if s >= 5 else v)
    assert detector.signature(under, _rows(), DET, 4) == {"grad_collapse": 5, "divergence": 5}
    # a collapse before the fault step is not the fault's
    early = _rows(grad_norm_total=lambda s, v: 0.0 if s == 2 else v)
    assert "grad_collapse" not in detector.signature(early, _rows(), DET, 4)
    # mismatch only counts on fresh rollouts; the non-fresh steps' 0.02 of the healthy run is the update
    mism = _rows(fresh_rollout=lambda s, v: s % 2 == 1,
                 logprob_mismatch=lambda s, v: (5e-3 if s >= 3 else 5e-5) if s % 2 else 0.02)
    assert detector.signature(mism, healthy, DET, 4) == {"logprob_mismatch": 3}
    assert detector.signature(mism, healthy, dict(DET, logprob_mismatch_min=1e-2), 4) == {}


def _write_model(tmp_path, name, runs_by_key, params=100, heldout=()):
    import json

    d = tmp_path / name
    d.mkdir()
    runs = {}
    for key, rows in runs_by_key.items():
        (d / f"{key}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs[key] = {"fault": key.split(".s")[0], "params": params, "state_bytes": 1, "task_acc_before": 0.5,
                     "task_acc_after": 0.5}
    (d / "summary.json").write_text(json.dumps({"name": name, "runs": runs, "heldout_healthy_seeds": list(heldout)}))
    return str(d)


def test_fidelity_rates_over_seeds_and_no_signature(tmp_path, monkeypatch):
    """Three healthy seeds (one noisy), fp16 collapse on every base seed and on 2 of 3 proxy seeds,
    no_load_balancing without any expert collapse: rates, ceiling and "no signature" follow."""
    from proxy_artifacts.fidelity import run_fidelity

    ms = {"step_time_ms": lambda s, v: 10.0}
    healthy = [_rows(**ms), _rows(grad_norm_total=lambda s, v: 1.2, **ms), _rows(grad_norm_total=lambda s, v: 0.9, **ms)]
    under = _rows(grad_norm_total=lambda s, v: 0.0 if s >= 5 else v, **ms)
    base = {f"none.s{i}": h for i, h in enumerate(healthy)}
    base |= {f"fp16_no_loss_scaling.s{i}": under for i in range(3)} | {f"no_load_balancing.s{i}": _rows(**ms)
                                                                        for i in range(3)}
    prox = dict(base, **{"fp16_no_loss_scaling.s2": _rows(**ms)})
    # held-out healthy seeds 3 (quiet) and 4 (norm 50 on two steps): never part of the ensemble
    held = {"none.s3": _rows(**ms), "none.s4": _rows(grad_norm_total=lambda s, v: 50.0 if s in (6, 7) else v, **ms)}
    dirs = {"base": _write_model(tmp_path, "base", base | held, heldout=[3, 4]),
            "p": _write_model(tmp_path, "p", prox | held, 50, heldout=[3, 4])}
    params = {"fidelity": {"detector": dict(DET, grad_collapse_steps=3), "step_tolerance": 2, "device_memory_gb": 80},
              "grpo": {"fault_step": 4}, "compare": {"keep_ratios": [0.5]}}
    monkeypatch.setattr(fidelity, "full_size_counts", lambda: {})
    m = run_fidelity(params, dirs, tmp_path / "r.md", tmp_path / "m.json", tmp_path)
    assert m["healthy_seeds"] == [0, 1, 2] and m["fault_seeds"] == [0, 1, 2]
    # healthy grad norms 0.9-1.2 are one healthy range: no seed is flagged against the others
    assert m["calibration"]["runs"] == 6 and all(v == 0.0 for v in m["false_positive_rate"].values())
    # the held-out seeds: judged against the 3-seed ensemble; seed 4 of both models is flagged
    assert m["heldout_healthy_seeds"] == [3, 4] and m["calibration_heldout"]["runs"] == 4
    assert m["false_positive_rate_heldout"]["grad_spike"] == 0.5 and m["false_positive_rate_heldout"]["divergence"] == 0.5
    assert m["calibration_heldout"]["flagged"]["base"] == {3: {}, 4: {"grad_spike": 6, "divergence": 6}}
    assert "| grad_spike | 0/6 = 0.00 [0.00, 0.39] | 2/4 = 0.50 [0.15, 0.85] |" in (tmp_path / "r.md").read_text()
    # the headline is the held-out rate; grad_spike / divergence are generic kinds: no verdict kind fired
    assert (m["false_positive_max_specific"], m["false_positive_max_specific_calibration"],
            m["false_positive_max_generic_heldout"]) == (0.0, 0.0, 0.5)
    assert "largest held-out rate of a specific kind 0.0" in (tmp_path / "r.md").read_text()
    # the generic kinds still see the fault: the flushed norms leave the envelope on 5 of the 6 fp16 runs
    gd = m["generic_detection"]["divergence"]
    assert (gd["fp16_no_loss_scaling"]["k"], gd["fp16_no_loss_scaling"]["n"]) == (5, 6)
    assert gd["no_load_balancing"]["k"] == 0 and m["generic_detection"]["reward_collapse"]["fp16_no_loss_scaling"]["k"] == 0
    assert m["base_self_reproduction_rate"]["fp16_no_loss_scaling"] == 1.0
    rep = m["proxies"]["p"]["reproduction"]["fp16_no_loss_scaling"]
    assert (rep["k"], rep["n"]) == (2, 3) and rep["ci95"][0] < 2 / 3 < rep["ci95"][1]
    assert m["reproduction_rate"]["fp16_no_loss_scaling/p"] == round(2 / 3, 4)
    assert m["no_signature_on_base"] == ["no_load_balancing"]
    assert m["reproduction_rate"]["no_load_balancing/p"] == 0.0 and m["base_reliable"]["no_load_balancing"] is False
    assert "no_load_balancing | expert_collapse | 0/3 = 0.00 [0.00, 0.56] (no signature)" in (tmp_path / "r.md").read_text()
    # the catalog: the base shows grad_collapse on 3/3 seeds, no held-out healthy seed does (the fix of a fault
    # without a +fix run is not injecting it); expert collapse never shows, so there is nothing to remove
    fp16 = m["faults"]["fp16_no_loss_scaling"]
    assert (fp16["base_rate"]["k"], fp16["base_rate"]["n"]) == (3, 3) and fp16["fix_run"].startswith("none")
    assert (fp16["fix_rate"]["k"], fp16["fix_rate"]["n"]) == (0, 2) and fp16["fix_removes"] is True
    assert fp16["source"] and fp16["trigger"] and fp16["fix"]
    assert m["faults"]["no_load_balancing"]["fix_removes"] is None


def test_calibration_counts_false_positives_per_kind():
    from proxy_artifacts import verdicts

    det = dict(DET, grad_collapse_steps=3)
    quiet = {s: _rows() for s in range(4)}
    assert all(v["k"] == 0 for v in verdicts.calibrate({"m": quiet}, det, 0)["false_positive_rate"].values())
    noisy = {**quiet, 4: _rows(grad_norm_total=lambda s, v: 50.0 if s in (3, 4) else v)}
    fp = verdicts.calibrate({"m": noisy}, det, 0)["false_positive_rate"]
    assert (fp["grad_spike"]["k"], fp["grad_spike"]["n"]) == (1, 5)  # only the spiking seed, against the other four
    # the spike enters the others' ensemble too: it widens their range, it never flags them
    assert fp["divergence"]["k"] == 1


def test_heldout_calibration_judges_against_the_whole_ensemble():
    """Held-out healthy seeds are judged against every ensemble seed (as a fault run is)."""
    from proxy_artifacts import verdicts

    ens = {s: _rows() for s in range(3)}
    wide = {**ens, 3: _rows(grad_norm_total=lambda s, v: 4.0)}  # one ensemble seed with larger norms
    held = {7: _rows(), 8: _rows(grad_norm_total=lambda s, v: 3.5 if s in (6, 7) else v)}
    got = verdicts.calibrate_heldout({"m": ens, "other": ens}, {"m": held, "lonely": {1: _rows()}}, DET, 4)
    # "lonely" has no ensemble: skipped; seed 8's 3.5 is above 3 x 1.0 on two steps: divergence
    assert got["runs"] == 2 and got["flagged"]["m"] == {7: {}, 8: {"divergence": 6}}
    assert got["false_positive_rate"]["divergence"]["k"] == 1 and got["false_positive_rate"]["grad_spike"]["k"] == 0
    # with the wide seed in the ensemble, 3.5 is inside the envelope: nothing is flagged
    assert verdicts.calibrate_heldout({"m": wide}, {"m": held}, DET, 4)["flagged"]["m"] == {7: {}, 8: {}}


def test_divergence_needs_consecutive_steps_out_of_the_envelope():
    healthy = [_rows(), _rows(loss=lambda s, v: 0.2)]  # loss envelope [0.1, 0.2], width 0.1 -> [0.0, 0.3]
    one = _rows(loss=lambda s, v: 0.35 if s == 5 else v)
    assert "divergence" not in detector.signature(one, healthy, DET, 4)  # a one-step excursion
    two = _rows(loss=lambda s, v: 0.35 if s in (5, 6) else v)
    assert detector.signature(two, healthy, DET, 4)["divergence"] == 5
    low = _rows(loss=lambda s, v: -0.05 if s >= 8 else v)  # below lo - rel x width
    assert detector.signature(low, healthy, DET, 4)["divergence"] == 8
    inside = _rows(loss=lambda s, v: 0.29)  # inside the widened envelope on every step
    assert "divergence" not in detector.signature(inside, healthy, DET, 4)
    # a step without the signal neither confirms nor breaks the departure
    gap = _rows(loss=lambda s, v: 0.35 if s in (5, 7) else v)
    del gap[5]["loss"]  # step 6
    assert detector.signature(gap, healthy, DET, 4)["divergence"] == 5
    inf = _rows(kl=lambda s, v: math.inf if s == 9 else v)
    assert detector.signature(inf, healthy, DET, 4)["divergence"] == 9  # non-finite: departs at once


def test_reward_collapse_judges_a_window_of_rollout_steps():
    """Reward is logged on fresh-rollout rows (odd steps here); the window counts those rows."""
    def fresh_rows(reward):
        rows = _rows()
        for r in rows:
            if r["step"] % 2 == 0:
                del r["reward"]
            else:
                r["reward"] = reward(r["step"])
        return rows

    healthy = [fresh_rows(lambda s: 0.5), fresh_rows(lambda s: 0.7)]  # ensemble mean 0.6
    one = fresh_rows(lambda s: 0.0 if s == 7 else 0.5)  # one bad batch: step 9's 0.5 is not below 0.25 x 0.6
    assert "reward_collapse" not in detector.signature(one, healthy, DET, 4)
    # a window whose mean is low ((0.2 + 0) / 2 = 0.1 < 0.15) because one batch drew no success is not a
    # collapse: step 7's 0.2 is not below 0.15 (a rule on the window's mean flagged it, as it did healthy runs)
    draw = fresh_rows(lambda s: 0.0 if s == 9 else 0.2 if s == 7 else 0.5)
    assert "reward_collapse" not in detector.signature(draw, healthy, DET, 4)
    two = fresh_rows(lambda s: 0.0 if s >= 7 else 0.5)  # rollout steps 7 and 9: mean 0 < 0.25 x 0.6
    assert detector.signature(two, healthy, DET, 4)["reward_collapse"] == 9
    # a window that starts at or before the fault step is not judged: steps 1-3 are never a collapse
    early = fresh_rows(lambda s: 0.0 if s <= 3 else 0.5)
    assert "reward_collapse" not in detector.signature(early, healthy, DET, 4)
    assert detector.signature(early, healthy, DET, 0)["reward_collapse"] == 3
    # a healthy mean under reward_min says nothing: no collapse from a task the model cannot do
    assert "reward_collapse" not in detector.signature(two, [fresh_rows(lambda s: 0.05)], DET, 4)


def test_steps_without_a_due_gradient_are_no_collapse_and_no_freeze():
    """A batch whose groups all have equal rewards (nonzero_advantage_share 0) has no policy gradient by
    construction: its ~0 grad norm is no grad_collapse and its ~0 update no frozen_policy. The share is logged
    on the batch's fresh step and carried to the step that reuses the batch."""
    det = dict(DET, grad_collapse_steps=3)

    def run(share, **over):  # share on odd (fresh) steps; even steps reuse the previous batch
        return _rows(nonzero_advantage_share=lambda s, v: share(s) if s % 2 else None, **over)

    assert detector.batch_share(run(lambda s: 0.0 if s == 9 else 0.5))[8:10] == [0.0, 0.0]
    assert detector.batch_share(_rows()) == [None] * 12  # logs without the field: every step counts
    healthy = [run(lambda s: 0.5), run(lambda s: 0.5, grad_norm_total=lambda s, v: 2.0)]
    # healthy held-out run whose last batches (steps 9-12) had no advantage: norm 0 there, nothing flagged
    idle = run(lambda s: 0.0 if s >= 9 else 0.5, grad_norm_total=lambda s, v: 0.0 if s >= 9 else v)
    assert not {"grad_collapse", "frozen_policy"} & set(detector.signature(idle, healthy, det, 4))
    assert detector.signature([{k: v for k, v in r.items() if k != "nonzero_advantage_share"} for r in idle],
                              healthy, det, 4)["grad_collapse"] == 9  # without the share: the old false positive
    # a real flush (the batches carry advantage) is still a collapse, and zero-share steps inside it do not
    # break it: steps 5-6, (7-8 no gradient due), 9-12 all low -> first step 5
    flushed = run(lambda s: 0.0 if s == 7 else 0.5, grad_norm_total=lambda s, v: 0.0 if s >= 5 else v)
    assert detector.signature(flushed, healthy, det, 4)["grad_collapse"] == 5
    # the healthy median at a step leaves out the healthy runs whose batch there had no advantage
    zero_h = run(lambda s: 0.0 if s == 5 else 0.5, grad_norm_total=lambda s, v: 0.0 if s in (5, 6) else v)
    low5 = run(lambda s: 0.5, grad_norm_total=lambda s, v: 0.05 if s in (5, 6) else v)
    assert detector.signature(low5, [zero_h, zero_h, healthy[0]], dict(DET), 4)["grad_collapse"] == 5
    # frozen policy: judged on steps that carry a gradient; none after the fault -> not judged
    never = run(lambda s: 0.0, update_norm=lambda s, v: 0.0)
    assert "frozen_policy" not in detector.signature(never, healthy, DET, 4)
    skipped = run(lambda s: 0.0 if s == 5 else 0.5, update_norm=lambda s, v: 0.0 if s > 4 else v)
    assert detector.signature(skipped, healthy, DET, 4) == {"frozen_policy": 5}


def _fake_trainer(lp_of, grad_of=None):
    """A stand-in for TRL's trainer with the methods rl._instrument wraps: ``_compute_loss`` asks the
    (wrapped) log-prob method for the training log-probs of the batch it gets; ``training_step`` puts
    ``grad_of()`` into the model's one parameter's gradient, as a backward at the loss's scale would."""
    import types

    import torch

    model = torch.nn.Linear(3, 1, bias=False)
    model._fault_on = True
    t = types.SimpleNamespace(model=model)

    def compute_loss_(m, inputs):
        lp = t._get_per_token_logps_and_entropies(inputs)[0]
        return lp.sum() * 0.0

    def training_step(m, inputs, *a, **kw):
        model.weight.grad = grad_of().reshape(model.weight.shape).clone()
        return torch.tensor(1.0)

    t._get_per_token_logps_and_entropies = lambda inputs: (lp_of(inputs), None)
    t._compute_loss = compute_loss_
    t.compute_loss = lambda m, inputs, *a, **kw: torch.tensor(1.0)
    t.training_step = training_step
    return t


def test_fresh_rollout_flag_survives_dropped_groups(tiny_base):
    """TRL reuses a rollout batch for num_iterations = 2 optimizer steps: the first is fresh, the second not.
    Dropping a zero-advantage group slices the batch into new tensors on every step; freshness is keyed on
    TRL's own tensor, so the reused step is still seen as reused (it was flagged fresh, and its mismatch,
    which is the policy's one-step move, then counted as a precision mismatch)."""
    import torch
    from transformers import AutoModelForCausalLM

    from proxy_artifacts.rl import _callback_class, _instrument

    model = AutoModelForCausalLM.from_pretrained(tiny_base, dtype=torch.float32)
    logger = _callback_class()(model, "none", dict(GP, fault_step=1))
    t = _fake_trainer(lambda inputs: inputs["old_per_token_logps"] + 0.01)
    _instrument(t, logger, "none", dict(GP, drop_zero_variance_groups=True))

    def batch():  # two groups of two; the second has zero advantage and leaves the loss
        return {"advantages": torch.tensor([1.0, -1.0, 0.0, 0.0]), "old_per_token_logps": torch.zeros(4, 3),
                "completion_mask": torch.ones(4, 3)}

    seen = []
    for inputs in (b1 := batch(), b1, b2 := batch(), b2):
        t._compute_loss(t.model, inputs)
        seen.append(logger.mismatch["fresh_rollout"])
        assert logger.mismatch["logprob_mismatch"] == pytest.approx(0.01)
    assert seen == [True, False, True, False]


def test_fp16_no_loss_scaling_holds_gradients_in_fp16_at_the_full_size_magnitude():
    """The backward's gradients are at fp16_grad_scale x ours: held in fp16 there, entries under half of fp16's
    smallest subnormal (2^-25 ~ 3e-8) flush to 0 before they are divided back; normal-range entries keep fp16's
    precision. With the fix (static loss scaling back to our magnitude) nothing flushes."""
    import torch

    from proxy_artifacts.rl import _instrument

    ours = torch.tensor([1e-3, 1e-2, 100.0])
    scale = 1e-5  # held in fp16 at 1e-8 (flushed), 1e-7 (a subnormal: 2 quanta of 2^-24) and 1e-3 (normal)
    got = {}
    for fault in ("fp16_no_loss_scaling", "fp16_no_loss_scaling+fix"):
        const = 1.0 if fault.endswith("+fix") else scale
        t = _fake_trainer(lambda inputs: None, lambda: ours * const)
        _instrument(t, None, fault, dict(GP, fp16_grad_scale=scale, drop_zero_variance_groups=False))
        t.training_step(t.model, {})
        got[fault] = t.model.weight.grad.reshape(-1)
    bad, fixed = got["fp16_no_loss_scaling"], got["fp16_no_loss_scaling+fix"]
    assert bad[0] == 0.0  # 1e-8 < 2^-25: flushed
    assert float(bad[1]) == pytest.approx(2 * 2.0 ** -24 / scale, rel=1e-4)  # 0.0119: the subnormal's rounding
    assert float(bad[2]) == pytest.approx(100.0, rel=1e-3)  # normal range: fp16's 11-bit precision
    assert torch.allclose(fixed, ours, rtol=1e-3)


def test_wilson_interval_known_values():
    from proxy_artifacts.verdicts import rate, wilson

    z2 = 1.959963984540054 ** 2
    assert wilson(0, 5) == [0.0, round(z2 / (5 + z2), 4)]  # upper bound z^2 / (n + z^2) at k = 0
    lo, hi = wilson(5, 5)
    assert hi == 1.0 and lo == round(5 / (5 + z2), 4)
    assert wilson(0, 0) is None and rate(0, 0)["rate"] is None


def test_reproduction_is_judged_on_specific_kinds_from_onset():
    from proxy_artifacts.verdicts import fault_rates

    sigs = {"base": {"lr_spike": {0: {"kl_blowup": 6, "grad_spike": 5}, 1: {"kl_blowup": 5}}},
            "p": {"lr_spike": {0: {"kl_blowup": 7, "divergence": 2}, 1: {"kl_blowup": 2}}}}
    r = fault_rates(sigs, 2, {"lr_spike": 5})
    # base seeds agree on kl_blowup (6 vs 5); generic kinds are ignored
    assert r["base_self"]["lr_spike"]["rate"] == 1.0 and r["base_reliable"]["lr_spike"]
    p = r["models"]["p"]["lr_spike"]
    # seed 0 reproduces (7 vs 6); seed 1's kl_blowup at step 2 precedes the onset: not the fault's
    assert p["reproduction"]["k"] == 1 and p["detection"]["k"] == 1 and p["specific"][1] == {}


def test_reproduces_and_similarity():
    assert detector.reproduces({"grad_spike": 5}, {"grad_spike": 7}, 2)
    assert not detector.reproduces({"grad_spike": 5}, {"grad_spike": 8}, 2)
    assert not detector.reproduces({"grad_spike": 5}, {"grad_spike": 5, "nan_inf": 6}, 2)
    assert detector.reproduces({}, {}, 2)
    a = _rows()
    sim = detector.curve_similarity(a, a)
    assert sim["kl"] == {"pearson": 1.0, "norm_dist": 0.0}
    assert sim["reward"]["pearson"] is None  # constant curve: correlation undefined, not faked
    b = _rows(kl=lambda s, v: 2 * v)
    assert detector.curve_similarity(a, b)["kl"] == {"pearson": 1.0, "norm_dist": 1.0}


def test_accelerators_and_projection():
    assert projection.accelerators(10**9, 80, 0.8) == 1
    assert projection.accelerators(100 * 10**9, 80, 0.8) == math.ceil(100e9 * 18 / 64e9)
    counts = {"M": {"total": 1000, "expert": 10, "moe_layers": 2, "experts": 16, "top_k": 2}}
    p = projection.projection(counts, [0.5], 1e-6, 1.0)
    assert p["M"]["r0.5"]["experts_kept"] == 8 and p["M"]["r0.5"]["params"] == 1000 - 2 * 8 * 10


# ----------------------------------------------------------------- GRPO (TRL) smoke run


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    from tests.proxy_helpers import save_tiny_base

    d = tmp_path_factory.mktemp("tinybase")
    save_tiny_base(d, num_experts=4, moe_intermediate_size=32)
    return d


GP = dict(steps=3, prompts_per_step=2, num_generations=2, max_completion_length=3, lr=1e-3, beta=0.04, seed=0,
          threads=1, eval_problems=4, eval_samples=2, fault_step=1,
          drop_zero_variance_groups=False, aux_loss_coef=0.01, fp16_grad_scale=1e-5, fp16_overflow_scale=1e6,
          router_lr_factor=10.0, heldout_healthy_seeds=[])  # the tiny random base never earns a reward: no group would stay


def test_grpo_logs_every_signal_and_skip_actor_update_freezes_policy(tiny_base):
    from proxy_artifacts.rl import run_grpo

    healthy = run_grpo(tiny_base, "none", GP)
    rows = healthy["steps"]
    assert [r["step"] for r in rows] == [1, 2, 3]
    for key in ("kl", "loss", "grad_norm_total", "grad_norm/experts", "grad_norm/router", "grad_norm/attn",
                "grad_nan", "grad_inf", "expert_load", "entropy"):
        assert key in rows[-1], key
    # measured figures are kept out of the deterministic rows, in the run's timing record
    assert not {"step_time_ms", "peak_memory_bytes"} & set().union(*rows)
    assert [t["step"] for t in healthy["timing"]["steps"]] == [1, 2, 3]
    assert all(t["step_time_ms"] > 0 and t["peak_memory_bytes"] > 0 for t in healthy["timing"]["steps"])
    assert any("reward" in r for r in rows)
    load = rows[-1]["expert_load"]
    assert len(load) == 2 and all(abs(sum(x["load"]) - 1) < 1e-3 for x in load)
    assert rows[-1]["kl"] > 0  # the policy moved
    frozen = run_grpo(tiny_base, "skip_actor_update", GP)
    # fault_step 1 = the second optimizer step (row 2): from there on the weights do not move
    assert frozen["steps"][0]["update_norm"] > 0 and all(r["update_norm"] == 0 for r in frozen["steps"][1:])
    assert all(r["update_norm"] > 0 for r in rows)
    assert rows[0]["grad_norm_total"] == pytest.approx(frozen["steps"][0]["grad_norm_total"])  # same before fault


def test_nonzero_advantage_share_counts_groups_that_disagree():
    from proxy_artifacts.rl import nonzero_advantage_share

    prompts = ["a", "a", "b", "b", "c", "c"]
    assert nonzero_advantage_share(prompts, [1, 0, 1, 1, 0, 0]) == pytest.approx(1 / 3)
    assert nonzero_advantage_share(prompts, [1, 0, 0, 1, 1, 0]) == 1.0
    assert nonzero_advantage_share([], []) is None


def test_zero_variance_groups_leave_the_loss(tiny_base):
    """The tiny random base gets reward 0 on every sample: every group has zero advantage. Dropped, no
    gradient reaches the weights (update norm 0 on every step, the share logged 0); kept, the KL pull
    to the reference and the normaliser still move them once the policy has moved (not on step 1)."""
    from proxy_artifacts.rl import run_grpo

    kept = run_grpo(tiny_base, "none", dict(GP, eval_after=False))["steps"]
    dropped = run_grpo(tiny_base, "none", dict(GP, eval_after=False, drop_zero_variance_groups=True))["steps"]
    assert all(r.get("reward", 0.0) == 0.0 for r in kept + dropped)
    assert [r["nonzero_advantage_share"] for r in dropped if "nonzero_advantage_share" in r] == [0.0, 0.0]
    assert all(r["update_norm"] == 0.0 for r in dropped)
    assert any(r["update_norm"] > 0 for r in kept)


def test_grpo_all_runs_every_seed(tiny_base, tmp_path):
    import json

    from proxy_artifacts.rl import run_grpo_all

    gp = dict(GP, steps=2, healthy_seeds=[0, 1], fault_seeds=[1], faults=["skip_actor_update"],
              heldout_healthy_seeds=[1, 2])  # seed 1 is in the ensemble already: not run twice
    s = run_grpo_all(tiny_base, "t", gp, tmp_path, progress=False)
    assert sorted(s["runs"]) == ["none.s0", "none.s1", "none.s2", "skip_actor_update.s1"] and s["complete"]
    assert s["heldout_healthy_seeds"] == [2] and list(s["runs"])[-1] == "none.s2"  # run last
    for k in ("heldout_acc_after", "edge_reward_after"):  # capability after RL: healthy ensemble runs only
        assert s["runs"]["skip_actor_update.s1"][k] is None and s["runs"]["none.s2"][k] is None
        assert s["runs"]["none.s0"][k] is not None
    h0, h1 = ([json.loads(x) for x in (tmp_path / f"none.s{i}.jsonl").read_text().splitlines()] for i in (0, 1))
    assert h0[0]["grad_norm_total"] != h1[0]["grad_norm_total"]  # another seed: other prompts and samples
    f1 = [json.loads(x) for x in (tmp_path / "skip_actor_update.s1.jsonl").read_text().splitlines()]
    assert f1[0]["grad_norm_total"] == pytest.approx(h1[0]["grad_norm_total"])  # same seed: same up to the fault
    # two worker processes, each run in whichever process is free: the same bytes as one process
    par = tmp_path / "par"
    s2 = run_grpo_all(tiny_base, "t", dict(gp, workers=2), par, progress=False, timing_path=par / "timing.json")
    assert list(s2["runs"]) == list(s["runs"])  # plan order, not completion order
    # the workers' fork server is stopped and reaped with the plan: nothing of it outlives the call, and
    # the caller's RUSAGE_CHILDREN (what `time` and benchmarks/repro_budget_run.py read) holds the workers' CPU
    import psutil

    assert not [p for p in psutil.Process().children(recursive=True) if "forkserver" in " ".join(p.cmdline())]
    for p in sorted(tmp_path.glob("*.json*")):
        assert (par / p.name).read_bytes() == p.read_bytes(), p.name
    assert json.loads((par / "timing.json").read_text())["workers"] == 2


@pytest.mark.slow
def test_grpo_faults_leave_their_signals(tiny_base):
    """Healthy: fresh rollouts have no log-prob mismatch. bf16 rollouts and the swapped router GEMM
    (training side only) do; fp16 without loss scaling flushes the gradients at fault_step."""
    from proxy_artifacts.rl import run_grpo

    gp = dict(GP, steps=4, fp16_grad_scale=1e-5)

    def fresh(res):
        return [r["logprob_mismatch"] for r in res["steps"] if r.get("fresh_rollout")]

    healthy = run_grpo(tiny_base, "none", gp)
    assert len(fresh(healthy)) == 2 and max(fresh(healthy)) < 1e-9  # same float32 kernels on both sides
    bf16 = run_grpo(tiny_base, "logprob_bf16", gp)
    assert min(fresh(bf16)) > 1e-4
    # its fix, fp16 on both sides (arXiv 2510.26788): the two passes round alike, the mismatch is gone
    assert max(fresh(run_grpo(tiny_base, "logprob_bf16+fix", gp))) < 1e-9
    swap = run_grpo(tiny_base, "swapped_operator", gp)
    assert min(fresh(swap)) > 1e-7  # tiny random model: no routing flips, only the rounding of the router GEMM
    fp16 = run_grpo(tiny_base, "fp16_no_loss_scaling", gp)
    h, f = healthy["steps"], fp16["steps"]
    assert f[0]["grad_norm_total"] == pytest.approx(h[0]["grad_norm_total"])  # before the fault step
    assert all(b["grad_norm_total"] < 0.1 * a["grad_norm_total"] for a, b in zip(h[1:], f[1:]))
    # the fix, static loss scaling back to our magnitude: no collapse
    fixed = run_grpo(tiny_base, "fp16_no_loss_scaling+fix", gp)["steps"]
    assert all(b["grad_norm_total"] > 0.1 * a["grad_norm_total"] for a, b in zip(h[1:], fixed[1:]))


@pytest.mark.slow
def test_fp16_overflow_poisons_the_weights_and_dynamic_scaling_prevents_it(tiny_base):
    """A sum-reduced full-size loss (x 1e6) in fp16: Inf gradients at fault_step, NaN weights after the
    step, the run stops at the next rollout. With dynamic loss scaling the overflowed steps are skipped
    (scale halved each time) and the weights stay finite."""
    from proxy_artifacts.rl import run_grpo

    # the tiny random base earns no reward: its gradient is the KL pull's, ~1e-4 per element, so the scale is
    # raised above the params' 1e6 to put it over fp16's 65504 (the mechanism, not the params' magnitude)
    gp = dict(GP, steps=4, fp16_overflow_scale=1e10)
    bad = run_grpo(tiny_base, "fp16_overflow", gp)
    rows = bad["steps"]
    assert rows[0]["grad_inf"] == 0 and rows[0]["weights_nonfinite"] == 0  # before the fault step
    assert rows[1]["grad_inf"] + rows[1]["grad_nan"] > 0 and rows[1]["weights_nonfinite"] == 1
    assert not bad["weights_finite_after"] and bad["stopped"]
    fixed = run_grpo(tiny_base, "fp16_overflow+fix", gp)
    assert fixed["weights_finite_after"] and fixed["stopped"] is None and len(fixed["steps"]) == 4
    assert all(r["weights_nonfinite"] == 0 for r in fixed["steps"]) and fixed["steps"][1].get("step_skipped") == 1


def test_rl_gain_interval_is_a_t_interval_over_seeds():
    from proxy_artifacts.fidelity import mean_ci95, rl_capability

    m = mean_ci95([10.0, 20.0, 30.0])  # sd 10, t(0.975, 2) = 4.3027: half-width 24.84
    assert m["mean"] == 20.0 and m["ci95"] == pytest.approx([-4.841, 44.841], abs=1e-3) and m["n"] == 3
    assert mean_ci95([5.0])["ci95"] is None and mean_ci95([])["mean"] is None
    runs = {s: {"summary": {"edge_reward_before": 0.3, "edge_reward_after": a, "heldout_acc_before": 0.9,
                            "heldout_acc_after": 0.9},
                "rows": [{"nonzero_advantage_share": 0.5}, {}, {"nonzero_advantage_share": 1.0}]}
            for s, a in ((0, 0.4), (1, 0.45), (2, 0.5))}
    c = rl_capability(runs)
    assert c["rl_gain_edge"]["values"] == pytest.approx([10.0, 15.0, 20.0]) and c["rl_gain_edge"]["ci95"][0] > 0
    assert c["nonzero_advantage_share"]["mean"] == 0.75 and c["edge_reward_after"] == [0.4, 0.45, 0.5]


def test_step_logger_records_a_none_trl_figure_as_null(tiny_base):
    """TRL logs None for figures it cannot compute once fp16 gradients overflowed (the fp16_overflow fault
    on the default base: kl / entropy / aux_loss None on the step after the weights went NaN); the run's
    logger records null and goes on (it raised TypeError and lost every fp16_overflow run)."""
    import torch
    from transformers import AutoModelForCausalLM

    from proxy_artifacts.rl import _callback_class

    model = AutoModelForCausalLM.from_pretrained(tiny_base, dtype=torch.float32)
    cb = _callback_class()(model, "fp16_overflow", dict(GP, fault_step=1))
    cb.rows.append({"step": 1})
    cb.on_log(None, None, None, logs={"kl": None, "entropy": None, "loss": 0.25, "grad_norm": float("nan")})
    row = cb.rows[-1]
    assert row["kl"] is None and row["entropy"] is None and row["loss"] == 0.25
    assert math.isnan(row["grad_norm_trl"]) and row["loss_nonfinite"] == 0
    cb.rows.append({"step": 2})
    cb.on_log(None, None, None, logs={"loss": None})
    assert cb.rows[-1]["loss"] is None and cb.rows[-1]["loss_nonfinite"] == 1
    assert detector.series(cb.rows, "kl")[0] != detector.series(cb.rows, "kl")[0]  # None reads as NaN downstream
