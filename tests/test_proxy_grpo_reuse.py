"""The per-process reuse of ``proxy_artifacts.rl`` (cached model loads copied per run, the settled garbage
collector, activation checkpointing off, the one-pass gradient sums) changes no byte of a run's files."""

from __future__ import annotations

import math

import pytest
import torch

from proxy_artifacts import rl, rl_reuse

GP = dict(steps=2, prompts_per_step=2, num_generations=2, max_completion_length=3, lr=1e-3, beta=0.04, seed=0,
          threads=1, eval_problems=4, eval_samples=2, fault_step=1,
          drop_zero_variance_groups=True, aux_loss_coef=0.01, fp16_grad_scale=1e-5, fp16_overflow_scale=1e6, router_lr_factor=10.0)
# a healthy run, two faults that change the model, its router lr / config and its forward, then the healthy run again
PLAN = [("none", 0), ("no_load_balancing", 0), ("fp16_no_loss_scaling", 1), ("none", 0)]


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    from tests.proxy_helpers import save_tiny_base

    d = tmp_path_factory.mktemp("tinybase")
    save_tiny_base(d, num_experts=4, moe_intermediate_size=32)
    return d


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_runs_reusing_one_process_match_fresh_loads(tiny_base, tmp_path, monkeypatch):
    rl_reuse._LOADED.clear()
    reused = tmp_path / "reused"
    for i, (fault, seed) in enumerate(PLAN):  # the cache is filled by the first run, copied by the others
        rl.run_grpo(tiny_base, fault, dict(GP, seed=seed), reused, stem=f"{i}.{fault}.s{seed}")
    assert len(rl_reuse._LOADED) == 2  # the policy's load and TRL's reference load, each once
    got = _files(reused)
    assert got["0.none.s0.jsonl"] == got["3.none.s0.jsonl"] and got["0.none.s0.json"] == got["3.none.s0.json"]
    monkeypatch.setattr(rl_reuse, "REUSE", False)  # every model straight from disk, as before the reuse
    fresh = tmp_path / "fresh"
    for i, (fault, seed) in enumerate(PLAN[:3]):
        rl.run_grpo(tiny_base, fault, dict(GP, seed=seed), fresh, stem=f"{i}.{fault}.s{seed}")
    want = _files(fresh)
    assert len(want) == 6
    for name, data in want.items():
        assert got[name] == data, name
    monkeypatch.setattr(rl, "GRADIENT_CHECKPOINTING", True)  # TRL's default: recomputed activations
    ckpt = tmp_path / "ckpt"
    rl.run_grpo(tiny_base, "fp16_no_loss_scaling", dict(GP, seed=1), ckpt, stem="2.fp16_no_loss_scaling.s1")
    for name, data in _files(ckpt).items():
        assert want[name] == data, name


def test_fresh_load_is_a_copy_and_follows_the_files(tiny_base, tmp_path):
    from transformers import AutoModelForCausalLM

    rl_reuse._LOADED.clear()
    a = rl_reuse.fresh_load(AutoModelForCausalLM.from_pretrained, tiny_base, dtype=torch.float32)
    with torch.no_grad():
        next(a.parameters()).add_(1.0)  # a run trains its copy: the next copy starts from the disk weights
    b = rl_reuse.fresh_load(AutoModelForCausalLM.from_pretrained, tiny_base, dtype=torch.float32)
    disk = AutoModelForCausalLM.from_pretrained(tiny_base, dtype=torch.float32)
    assert b.lm_head.weight is b.model.embed_tokens.weight  # tied weights stay tied in the copy
    sd, want = b.state_dict(), disk.state_dict()
    assert sd.keys() == want.keys() and all(torch.equal(sd[k], want[k]) for k in want)
    assert not torch.equal(next(a.parameters()), next(b.parameters()))
    assert b.config.to_dict() == disk.config.to_dict()
    # another model written to another folder is loaded from its own files
    from tests.proxy_helpers import save_tiny_base

    other = tmp_path / "other"
    save_tiny_base(other, num_experts=2, moe_intermediate_size=32)
    c = rl_reuse.fresh_load(AutoModelForCausalLM.from_pretrained, other, dtype=torch.float32)
    assert c.config.num_experts == 2 and len(rl_reuse._LOADED) == 2


def test_grad_sq_nonfinite_matches_the_four_pass_rule():
    g = torch.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert rl_reuse.grad_sq_nonfinite(g) == (float((g * g).sum()), 0, 0)
    bad = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0])
    assert rl_reuse.grad_sq_nonfinite(bad) == (5.0, 1, 2)
    big = torch.tensor([3e38, 1.0])  # finite, but its square overflows float32: Inf sum, no NaN / Inf entry
    s, n, i = rl_reuse.grad_sq_nonfinite(big)
    assert (n, i) == (0, 0) and math.isinf(s)


def test_settle_gc_freezes_only_a_marked_worker(monkeypatch):
    """A caller running run_grpo in its own process keeps an unfrozen heap; a pool worker
    (mark_worker, the pool's initializer) freezes its own."""
    import gc

    assert gc.get_freeze_count() == 0
    rl_reuse.settle_gc()
    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(rl_reuse, "_IN_WORKER", False)
    rl_reuse.mark_worker()
    try:
        rl_reuse.settle_gc()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
