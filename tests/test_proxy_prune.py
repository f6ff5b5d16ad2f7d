"""Pruning: exact equivalence with the router-restricted base, for all six families."""

from __future__ import annotations

import copy

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from proxy_artifacts.adapters import adapter_for, expert_count, moe_blocks
from proxy_artifacts.prune import keep_count, param_count, prune_model, restricted_routing, slice_state_dict
from tests.proxy_helpers import FAMILIES, random_ids, tiny_model


def _random_kept(model, k, seed):
    """k kept experts per block; with group-limited routing an equal share per group."""
    a = adapter_for(model.config)
    E = expert_count(model.config, a)
    G = getattr(model.config, "n_group", 1) if a.group_keys else 1
    g = torch.Generator().manual_seed(seed)
    kept = {}
    for b in moe_blocks(model, a):
        if G > 1:
            size = E // G
            idx = [grp * size + int(i) for grp in range(G) for i in torch.randperm(size, generator=g)[: k // G]]
        else:
            idx = [int(i) for i in torch.randperm(E, generator=g)[:k]]
        kept[b.name] = sorted(idx)
    return kept


@pytest.mark.parametrize("family", FAMILIES)
def test_restricted_router_with_all_experts_equals_plain_model(family):
    """The adapter's routing re-implementation is the family's router (else the check below is void)."""
    model = tiny_model(family)
    ids = random_ids()
    a = adapter_for(model.config)
    E = expert_count(model.config, a)
    with torch.no_grad():
        plain = model(ids).logits
        with restricted_routing(model, {b.name: range(E) for b in moe_blocks(model, a)}):
            restricted = model(ids).logits
        restricted_half = None
        with restricted_routing(model, {b.name: range(0, E, 2) for b in moe_blocks(model, a)} if not a.group_keys
                                else _random_kept(model, E // 2, 3)):
            restricted_half = model(ids).logits
    torch.testing.assert_close(restricted, plain)
    assert not torch.allclose(restricted_half, plain), "restriction must change the outputs"


@pytest.mark.parametrize("family", FAMILIES)
def test_pruned_model_equals_router_restricted_base(family, tmp_path):
    base = tiny_model(family)
    a = adapter_for(base.config)
    E = expert_count(base.config, a)
    k = E // 2
    kept = _random_kept(base, k, seed=7)
    ids = random_ids()
    with torch.no_grad(), restricted_routing(base, kept):
        want = base(ids).logits

    pruned = prune_model(copy.deepcopy(base), kept)
    pruned.save_pretrained(tmp_path)
    reloaded, info = AutoModelForCausalLM.from_pretrained(tmp_path, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"], info
    reloaded.config._attn_implementation = "eager"
    reloaded.eval()
    assert expert_count(reloaded.config, a) == k
    with torch.no_grad():
        got = reloaded(ids).logits
    torch.testing.assert_close(got, want)

    # true parameter count: base minus exactly the removed experts' tensors and router rows
    n_blocks = len(moe_blocks(base, a))
    per_expert = sum(getattr(moe_blocks(base, a)[0].experts, p)[0].numel() for p in a.expert_params)
    per_expert += sum(getattr(moe_blocks(base, a)[0].router, p)[0].numel() for p in a.router_params
                      if isinstance(getattr(moe_blocks(base, a)[0].router, p), torch.nn.Parameter))
    assert param_count(reloaded) == param_count(base) - n_blocks * (E - k) * per_expert
    assert reloaded.num_parameters() == param_count(reloaded)
    for b in moe_blocks(reloaded, a):
        for p in a.router_params:
            assert getattr(b.router, p).shape[0] == k, (b.name, p)
        for p in a.expert_params:
            assert getattr(b.experts, p).shape[0] == k, (b.name, p)


@pytest.mark.parametrize("family", FAMILIES)
def test_slice_state_dict_matches_pruned_checkpoint(family, tmp_path):
    """Slicing the on-disk (per-module or fused) base checkpoint gives the pruned model's file."""
    base = tiny_model(family)
    a = adapter_for(base.config)
    kept = _random_kept(base, expert_count(base.config, a) // 2, seed=11)
    base.save_pretrained(tmp_path / "base")
    prune_model(copy.deepcopy(base), kept).save_pretrained(tmp_path / "pruned")
    disk_base = load_file(tmp_path / "base" / "model.safetensors")
    disk_pruned = load_file(tmp_path / "pruned" / "model.safetensors")
    # block names on disk may differ from module paths (Mixtral: block_sparse_moe)
    disk_kept = {}
    for name, ks in kept.items():
        for alias in a.disk_block_names:
            disk_kept[name.rsplit(".", 1)[0] + "." + alias] = ks
    sliced = slice_state_dict(disk_base, a, disk_kept)
    assert sorted(sliced) == sorted(disk_pruned)
    for key in sliced:
        torch.testing.assert_close(sliced[key], disk_pruned[key], rtol=0, atol=0, msg=key)


def test_prune_reduces_top_k_explicitly_and_keeps_equivalence():
    base = tiny_model("qwen3_moe")
    a = adapter_for(base.config)
    kept = {b.name: [0] for b in moe_blocks(base, a)}
    with pytest.raises(ValueError, match="below num_experts_per_tok"):
        prune_model(copy.deepcopy(base), kept)
    pruned = prune_model(copy.deepcopy(base), kept, new_top_k=1)
    assert pruned.config.num_experts_per_tok == 1 and expert_count(pruned.config, a) == 1


def test_prune_rejects_broken_group_partition():
    base = tiny_model("deepseek_v3")
    a = adapter_for(base.config)
    kept = {b.name: list(range(8)) for b in moe_blocks(base, a)}  # groups 0,1 full, groups 2,3 empty
    with pytest.raises(ValueError, match="group-limited"):
        prune_model(copy.deepcopy(base), kept)


def test_prune_rejects_unequal_or_missing_blocks():
    base = tiny_model("olmoe")
    blocks = moe_blocks(base, adapter_for(base.config))
    with pytest.raises(ValueError, match="missing"):
        prune_model(copy.deepcopy(base), {blocks[0].name: [0, 1]})
    kept = {b.name: [0, 1] for b in blocks}
    kept[blocks[-1].name] = [0, 1, 2]
    with pytest.raises(ValueError, match="differ"):
        prune_model(copy.deepcopy(base), kept)


@pytest.mark.parametrize(
    "E,ratio,top_k,groups,new_top_k,want",
    [
        (16, 0.5, 2, 1, None, 8),
        (16, 0.125, 2, 1, None, 2),
        (8, 0.1, 2, 1, None, 2),  # floor(0.8) = 0 -> top-k
        (4, 0.125, 1, 1, None, 1),  # floor(0.5) = 0 -> never zero
        (8, 0.1, 2, 1, 1, 1),  # explicit top-k reduction lowers the floor
        (16, 0.125, 2, 4, None, 8),  # 2 -> at least 2 per group
        (64, 0.3, 4, 8, None, 24),  # 19 -> multiple of 8
        (60, 0.25, 4, 1, None, 15),
    ],
)
def test_keep_count(E, ratio, top_k, groups, new_top_k, want):
    assert keep_count(E, ratio, top_k, groups, new_top_k) == want


@pytest.mark.parametrize("ratio", [0, -0.5, 1.5, float("nan"), "0.5"])
def test_keep_count_rejects_bad_ratio(ratio):
    with pytest.raises(ValueError, match="keep ratio"):
        keep_count(16, ratio, 2)


def test_unknown_family_is_named():
    with pytest.raises(ValueError, match="llama"):
        adapter_for("llama")


def test_frequency_weighted_merge():
    """merge: the kept slot becomes the weight-normalised average of its members' tensors; a slot
    whose members routed no calibration token (weights 0) keeps its own expert, not 0/0 = NaN."""
    base = tiny_model("mixtral")
    a = adapter_for(base.config)
    blocks = moe_blocks(base, a)
    kept = {b.name: [1, 4, 6, 7] for b in blocks}
    merge = {b.name: [[(1, 3.0), (0, 1.0)], [(4, 1.0)], [(6, 1.0), (2, 1.0), (3, 2.0)], [(7, 0.0), (5, 0.0)]] for b in blocks}
    merged = prune_model(copy.deepcopy(base), kept, merge=merge)
    for b_old, b_new in zip(blocks, moe_blocks(merged, a)):
        for p in a.expert_params:
            old, new = getattr(b_old.experts, p), getattr(b_new.experts, p)
            torch.testing.assert_close(new[0], 0.75 * old[1] + 0.25 * old[0])
            torch.testing.assert_close(new[1], old[4])
            torch.testing.assert_close(new[2], (old[6] + old[2] + 2 * old[3]) / 4)
            torch.testing.assert_close(new[3], old[7])
        torch.testing.assert_close(b_new.router.weight, b_old.router.weight[[1, 4, 6, 7]])


def _block_error(base, proxy, ids):
    """Relative squared error of each pruned block's routed output vs the base block's, on the
    proxy's own block inputs: [per block]."""
    from proxy_artifacts.prune import _block_inputs, routed_output

    a = adapter_for(base.config)
    out = []
    for bb, pb in zip(moe_blocks(base, a), moe_blocks(proxy, a)):
        x = _block_inputs(proxy, pb.block, ids, 8)
        y = routed_output(a, bb.router, bb.experts, x)
        out.append(float(((routed_output(a, pb.router, pb.experts, x) - y) ** 2).sum() / (y ** 2).sum()))
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_output_merge_reduces_block_error_and_keeps_structure(family):
    """Output merge: each pruned block's routed output moves towards the base block's (on held-out
    tokens too), only down projections change, and keeping every expert changes nothing."""
    from proxy_artifacts.prune import output_merge

    base = tiny_model(family)
    a = adapter_for(base.config)
    E = expert_count(base.config, a)
    cal, held = random_ids(batch=48, seq=16, seed=3), random_ids(batch=16, seq=16, seed=4)
    kept = _random_kept(base, E // 2, seed=0)
    plain = prune_model(copy.deepcopy(base), kept)
    merged = prune_model(copy.deepcopy(base), kept)
    rep = output_merge(base, merged, cal, ridge=1e-3)
    assert all(r["rel_err_after"] < r["rel_err_before"] for r in rep.values())
    err_plain, err_merged = _block_error(base, plain, held), _block_error(base, merged, held)
    assert err_merged[0] < err_plain[0]  # first block: same inputs, so a like-for-like held-out comparison
    for (n1, p1), (n2, p2) in zip(plain.named_parameters(), merged.named_parameters()):
        assert n1 == n2 and p1.shape == p2.shape
        # routed experts' down projections only (gpt-oss: and their biases)
        assert torch.equal(p1, p2) == (not n1.endswith((".experts.down_proj", ".experts.down_proj_bias"))), n1
    full = prune_model(copy.deepcopy(base), {b.name: list(range(E)) for b in moe_blocks(base, a)})
    rep_full = output_merge(base, full, cal, ridge=1e-3)
    assert all(r["rel_err_before"] < 1e-10 and r["rel_err_after"] < 1e-6 for r in rep_full.values())
    with torch.no_grad():
        assert torch.allclose(full(input_ids=held).logits, base(input_ids=held).logits, atol=1e-4)


def test_output_merge_refuses_bad_ridge():
    from proxy_artifacts.prune import output_merge

    q = tiny_model("qwen3_moe")
    with pytest.raises(ValueError, match="ridge"):
        output_merge(q, prune_model(copy.deepcopy(q), _random_kept(q, 4, 0)), random_ids(), ridge=0.0)


def test_merge_mode_values():
    from proxy_artifacts.pipeline import merge_mode

    assert [merge_mode({"merge": v}) for v in (False, True, None, "output", "frequency", "none")] == \
        ["none", "frequency", "none", "output", "frequency", "none"]
    # the prune block's default merge (PruneConfig, params.yaml) is the output merge
    from proxy_artifacts.config import PruneConfig

    assert merge_mode(PruneConfig().to_params()) == "output"
    with pytest.raises(ValueError, match="merge"):
        merge_mode({"merge": "average"})
