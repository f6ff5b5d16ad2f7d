"""Router flips, extreme tokens, routing replay (R3) and the per-seed evaluation seed of ``proxy_artifacts.rl``.

Known answers: hand-made expert sets and log-probs for the two measures; on a tiny MoE, the rollout-side and
the training forward of one batch through ``rl._instrument`` (the wrapper every GRPO run uses): fp32 on both
sides flips no route, the swapped operator flips some, and routing replay gives back exactly the rollout's
experts even when the training batch is a shuffled, filtered slice of the rollout batch.
"""

from __future__ import annotations

import math
import types

import pytest
import torch

from proxy_artifacts import rl
from proxy_artifacts.adapters import adapter_for, moe_blocks
from proxy_artifacts.config import grpo_params


def test_router_flip_rate_known_values():
    # 2 layers, 2 sequences of 3 tokens, top-2; the last token of sequence 1 is padding
    a = [torch.tensor([[[0, 1], [2, 3], [1, 2]], [[0, 3], [1, 2], [0, 1]]]) for _ in range(2)]
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    assert rl.router_flip_rate(a, [t.clone() for t in a], mask) == 0.0
    # the same sets in another order are no flip
    assert rl.router_flip_rate(a, [t.flip(-1) for t in a], mask) == 0.0
    b = [t.clone() for t in a]
    b[0][0, 1] = torch.tensor([2, 0])   # layer 0, seq 0, token 1: {2, 3} -> {0, 2}: a flip
    b[1][1, 0] = torch.tensor([3, 1])   # layer 1, seq 1, token 0: {0, 3} -> {1, 3}: a flip
    b[1][1, 2] = torch.tensor([5, 6])   # padding: not counted
    assert rl.router_flip_rate(a, b, mask) == pytest.approx(2 / (5 * 2))
    assert rl.router_flip_rate(a, b, torch.zeros(2, 3)) is None


def test_extreme_token_share_known_values():
    rollout = torch.zeros(1, 6, dtype=torch.float64)
    # ratios e^d: 1, exactly 2 (not outside [1/2, 2]), 2.01, 1/2.01, e^5, and a masked-out e^9
    d = torch.tensor([[0.0, math.log(2.0), math.log(2.01), -math.log(2.01), 5.0, 9.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    assert rl.extreme_token_share(rollout + d, rollout, mask) == pytest.approx(3 / 5)
    assert rl.extreme_token_share(rollout + d, rollout, mask, ratio=100.0) == pytest.approx(1 / 5)  # e^5 ~ 148
    assert rl.extreme_token_share(rollout, rollout, mask) == 0.0
    assert rl.extreme_token_share(rollout, rollout, torch.zeros(1, 6)) is None


@pytest.fixture(scope="module")
def tiny16(tmp_path_factory):
    """A tiny random base with 16 experts, top-2: enough near-tied routes for bf16 rounding to flip some."""
    from tests.proxy_helpers import save_tiny_base

    d = tmp_path_factory.mktemp("tiny16")
    save_tiny_base(d, num_experts=16, moe_intermediate_size=16)
    return d


def _pair(model_dir, fault: str, shuffle: bool = False):
    """One rollout-side pass (no grad) and one training forward of the same batch through ``rl._instrument``.

    Returns (logger, rollout routes per layer [B, L, k], the training forward's routes per layer, the rows of the
    rollout batch the training batch holds)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    gp = grpo_params(dict(fault_step=0))
    logger = rl._callback_class()(model, fault, gp)
    g = torch.Generator().manual_seed(0)
    B, L, C = 24, 24, 4
    ids = torch.randint(3, 60, (B, L), generator=g)
    am = torch.ones(B, L, dtype=torch.long)
    am[:4, :3] = 0  # left padding of a few prompts

    def lp(m, input_ids, attention_mask, logits_to_keep, **kw):
        logits = m(input_ids=input_ids, attention_mask=attention_mask).logits[:, -logits_to_keep - 1:-1]
        return logits.log_softmax(-1).gather(-1, input_ids[:, -logits_to_keep:, None])[..., 0], None, None

    t = types.SimpleNamespace(model=model, _get_per_token_logps_and_entropies=lp)

    def compute_loss_(m, inputs):
        out = t._get_per_token_logps_and_entropies(m, inputs["input_ids"], inputs["attention_mask"], C)
        return out[0].sum()

    t._compute_loss = compute_loss_
    rl._instrument(t, logger, fault, dict(gp, drop_zero_variance_groups=False))
    with rl._fault_context(model, fault):
        with torch.no_grad():
            old = t._get_per_token_logps_and_entropies(model, ids, am, C)[0]
        roll = logger.routes["routes"]
        rows = list(range(B))
        if shuffle:  # TRL shuffles the rollout batch; dropped groups leave it
            rows = [int(i) for i in torch.randperm(B, generator=g)[: B - 5]]
        idx = torch.tensor(rows)
        inputs = {"input_ids": ids[idx], "attention_mask": am[idx], "old_per_token_logps": old[idx],
                  "completion_mask": torch.ones(len(rows), C), "advantages": torch.ones(len(rows))}
        t._compute_loss(model, inputs)
    train = [torch.cat(c, 0).reshape(len(rows), L, -1) for c in logger.route_buf]
    logger.close()
    return logger, roll, train, rows


def test_fp32_on_both_sides_flips_no_route(tiny16):
    logger, roll, train, rows = _pair(tiny16, "none")
    assert logger.flips == {"router_flip_rate": 0.0}
    assert logger.mismatch["logprob_mismatch"] == 0.0 and logger.mismatch["extreme_token_share"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(roll, train))


def test_swapped_operator_flips_routes_and_replay_gives_the_rollouts_experts(tiny16):
    logger, roll, train, _ = _pair(tiny16, "swapped_operator")
    flips = logger.flips["router_flip_rate"]
    assert 0 < flips < 0.5  # bf16 rounding of the router GEMM flips the near-tied tokens only
    assert logger.mismatch["logprob_mismatch"] > 0
    # the fix: the training forward selects exactly the rollout's experts (a shuffled, filtered slice of its batch)
    logger, roll, train, rows = _pair(tiny16, "swapped_operator+fix", shuffle=True)
    assert logger.flips == {"router_flip_rate": 0.0}
    idx = torch.tensor(rows)
    assert all(torch.equal(a[idx], b) for a, b in zip(roll, train))


def test_replay_route_keeps_the_routers_gate_weights(tiny16):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny16, dtype=torch.float32)
    a = adapter_for(model.config)
    router = moe_blocks(model, a)[0].router
    h = torch.randn(7, model.config.hidden_size, generator=torch.Generator().manual_seed(1))
    logits, w, idx = a.route(router, h, None)
    # replaying the router's own choice gives its own output
    lg2, w2, idx2 = rl.replay_route(a, router, h, idx)
    assert torch.equal(idx2, idx) and torch.allclose(w2, w) and torch.equal(lg2, logits)
    # another choice: the router's probabilities at those experts, normalised as the family does (Qwen3-MoE)
    other = (idx + 1) % router.num_experts
    _, w3, idx3 = rl.replay_route(a, router, h, other)
    p = torch.softmax(logits, dim=-1, dtype=torch.float).gather(1, other)
    if router.norm_topk_prob:
        p = p / p.sum(-1, keepdim=True)
    assert torch.equal(idx3, other) and torch.allclose(w3, p)
    with pytest.raises(ValueError, match="recorded tokens"):
        rl.replay_route(a, router, h, other[:3])


def test_router_flip_kind_fires_on_a_fresh_step_with_flips_only():
    from proxy_artifacts import detector
    from proxy_artifacts.config import proxy_params

    det = proxy_params({})["fidelity"]["detector"]

    def rows(flips):
        return [{"step": s, "fresh_rollout": s % 2 == 1, "router_flip_rate": f} for s, f in enumerate(flips, 1)]

    healthy = [rows([0.0, 0.05, 0.0, 0.04]), rows([0.0, 0.06, 0.0, 0.05])]  # stale steps flip: the policy moved
    assert "router_flip" not in detector.signature(rows([0.0, 0.07, 0.0, 0.05]), healthy, det, 4)
    assert detector.signature(rows([0.0, 0.05, 0.002, 0.05]), healthy, det, 4)["router_flip"] == 3


def test_eval_seed_is_the_runs_seed_and_paired_before_after(tiny_base_routing, monkeypatch):
    """Each GRPO seed samples its held-out evaluation with its own seed; before and after of one run share it,
    and the cached before figure is keyed by it."""
    assert rl.eval_seed(0) != rl.eval_seed(1)
    calls = []
    real = rl.sampled_reward

    def spy(*a, seed, **kw):
        calls.append(seed)
        return real(*a, seed=seed, **kw)

    monkeypatch.setattr(rl, "sampled_reward", spy)
    monkeypatch.setattr(rl, "_ACC_BEFORE", {})
    gp = dict(steps=1, prompts_per_step=2, num_generations=2, max_completion_length=3, lr=1e-3, seed=0, threads=1,
              eval_problems=2, eval_samples=2, fault_step=1, drop_zero_variance_groups=False,
              heldout_healthy_seeds=[])
    got = {}
    for s in (0, 1):
        calls.clear()
        got[s] = rl.run_grpo(tiny_base_routing, "none", dict(gp, seed=s))
        assert calls == [rl.eval_seed(s)] * 2  # before and after: one seed
        assert got[s]["eval_seed"] == rl.eval_seed(s)
    assert {k[-1] for k in rl._ACC_BEFORE} == {rl.eval_seed(0), rl.eval_seed(1)}
    # a run measured without an after figure measures no before either
    calls.clear()
    r = rl.run_grpo(tiny_base_routing, "none", dict(gp, seed=2, eval_after=False))
    assert calls == [] and r["edge_reward_before"] is None and r["eval_seed"] is None


@pytest.fixture(scope="module")
def tiny_base_routing(tmp_path_factory):
    from tests.proxy_helpers import save_tiny_base

    d = tmp_path_factory.mktemp("tinybase_routing")
    save_tiny_base(d, num_experts=4, moe_intermediate_size=32)
    return d
