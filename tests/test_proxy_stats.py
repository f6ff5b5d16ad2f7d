"""Streamed expert statistics equal a brute-force computation on a small batch."""

from __future__ import annotations

import pytest
import torch

from proxy_artifacts.adapters import adapter_for, moe_blocks
from proxy_artifacts.stats import ExpertStats, ExpertStatsCollector, collect, stats_rows
from tests.proxy_helpers import FAMILIES, random_ids, tiny_model


def _brute_force(model, ids):
    """Capture each block's experts inputs, then run every expert on every token with the
    experts module's own forward (one-hot routing with weight 1): a dense [E, T, H] tensor."""
    a = adapter_for(model.config)
    blocks = moe_blocks(model, a)
    captured = {}
    hooks = []
    for b in blocks:
        def pre(mod, args, kwargs, name=b.name):
            captured.setdefault(name, {})["x"] = args[0].detach().clone()
            captured[name]["idx"] = args[1].detach().clone()
            captured[name]["w"] = args[2].detach().clone()
        def post(mod, args, out, name=b.name):
            captured.setdefault(name, {})["logits"] = out[0].detach().clone()
        hooks.append(b.experts.register_forward_pre_hook(pre, with_kwargs=True))
        hooks.append(b.router.register_forward_hook(post))
    with torch.no_grad():
        logits_out = model(ids).logits
    for h in hooks:
        h.remove()
    res = {}
    for b in blocks:
        c = captured[b.name]
        x, idx, w, z = c["x"], c["idx"], c["w"], c["logits"].reshape(-1, c["logits"].shape[-1])
        T, E = x.shape[0], z.shape[1]
        with torch.no_grad():
            f = torch.stack([b.experts(x, torch.full((T, 1), j), torch.ones(T, 1)) for j in range(E)]).double()
        routed = torch.zeros(T, E, dtype=torch.bool)
        gate = torch.zeros(T, E, dtype=torch.float64)
        for t in range(T):
            for p in range(idx.shape[1]):
                routed[t, idx[t, p]] = True
                gate[t, idx[t, p]] = w[t, p].double()
        norms = f.norm(dim=-1).T  # [T, E]
        cnt = routed.sum(0).double()
        probs = torch.sigmoid(z.double()) if a.score_fn == "sigmoid" else torch.softmax(z.double(), -1)
        zc = z.double()
        gram = zc.T @ zc
        res[b.name] = dict(
            frequency=cnt / T, prob_mass=probs.mean(0),
            ean=torch.where(cnt > 0, (norms * routed).sum(0) / cnt.clamp_min(1), 0.0),
            reap=torch.where(cnt > 0, (gate * norms * routed).sum(0) / cnt.clamp_min(1), 0.0),
            coact=routed.double().T @ routed.double(),
            act_routed=torch.stack([f[j][routed[:, j]].mean(0) if cnt[j] > 0 else torch.zeros(f.shape[-1],
                                    dtype=torch.float64) for j in range(E)]),
            act_all=f.mean(1),
            logit_sim=gram / torch.outer(gram.diagonal().sqrt(), gram.diagonal().sqrt()),
        )
    return res, logits_out


@pytest.mark.parametrize("family", FAMILIES)
def test_stats_equal_brute_force_and_model_output_unchanged(family):
    model = tiny_model(family)
    ids = random_ids(batch=2, seq=10)
    want, plain_logits = _brute_force(model, ids)
    T = ids.numel()
    with ExpertStatsCollector(model, char_tokens_per_batch=T, seed=0) as col, torch.no_grad():
        instrumented = model(ids).logits
    torch.testing.assert_close(instrumented, plain_logits)
    st = col.stats
    for li, name in enumerate(st.blocks):
        w = want[name]
        opts = dict(rtol=1e-5, atol=1e-5)  # float32 expert kernels differ (grouped_mm vs loop)
        assert st.sums["tokens"][li] == T
        torch.testing.assert_close(st.frequency[li], w["frequency"], rtol=0, atol=0)
        torch.testing.assert_close(st.sums["coact"][li], w["coact"], rtol=0, atol=0)
        torch.testing.assert_close(st.prob_mass[li], w["prob_mass"], **opts)
        torch.testing.assert_close(st.ean[li], w["ean"], **opts)
        torch.testing.assert_close(st.reap[li], w["reap"], **opts)
        torch.testing.assert_close(st.act_routed[li], w["act_routed"], **opts)
        torch.testing.assert_close(st.act_all[li], w["act_all"], **opts)
        torch.testing.assert_close(st.logit_similarity[li], w["logit_sim"], **opts)
    # the experts module is restored
    for b in moe_blocks(model, adapter_for(model.config)):
        assert "forward" not in b.experts.__dict__


def test_streaming_over_batches_equals_one_pass():
    """Accumulating batch by batch gives the statistics of the concatenated data; the state
    has fixed size (no per-token buffers)."""
    model = tiny_model("qwen3_moe")
    ids = random_ids(batch=6, seq=8, seed=5)
    one = collect(model, ids, batch_size=6, char_tokens_per_batch=0, seed=0)
    many = collect(model, ids, batch_size=1, char_tokens_per_batch=0, seed=0)
    for k in ("count", "coact", "tokens"):
        torch.testing.assert_close(one.sums[k], many.sums[k], rtol=0, atol=0)
    for k in ("prob_sum", "norm_sum", "gated_norm_sum", "logit_gram", "act_routed_sum"):
        torch.testing.assert_close(one.sums[k], many.sums[k], rtol=1e-5, atol=1e-5)  # float32 forward, batch shapes differ
    assert {k: v.shape for k, v in one.sums.items()} == {k: v.shape for k, v in many.sums.items()}


def test_several_categories_are_all_kept_and_pool_exactly(tmp_path):
    model = tiny_model("olmoe")
    a_ids, b_ids = random_ids(seed=1), random_ids(seed=2)
    sa, sb = collect(model, a_ids, 2, 0, 0), collect(model, b_ids, 2, 0, 0)
    sa.save(tmp_path / "a.safetensors")
    sb.save(tmp_path / "b.safetensors")
    la, lb = ExpertStats.load(tmp_path / "a.safetensors"), ExpertStats.load(tmp_path / "b.safetensors")
    torch.testing.assert_close(la.sums["count"], sa.sums["count"])
    assert not torch.equal(la.sums["count"], lb.sums["count"])
    pooled = la + lb
    both = collect(model, torch.cat([a_ids, b_ids]), 4, 0, 0)
    torch.testing.assert_close(pooled.sums["count"], both.sums["count"], rtol=0, atol=0)
    torch.testing.assert_close(pooled.frequency, both.frequency)
    rows = stats_rows(la, "a", "m") + stats_rows(lb, "b", "m")
    assert {r["category"] for r in rows} == {"a", "b"}
    assert len(rows) == 2 * len(la.blocks) * la.sums["count"].shape[1]


def test_load_missing_stats_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        ExpertStats.load(tmp_path / "nope.safetensors")


def test_cluster_selection_properties():
    """Clustering keeps exactly k experts, one per cluster, each the most frequent member;
    group-limited selection keeps k / n_group per group; baselines rank by their score."""
    import numpy as np

    from proxy_artifacts.cluster import select_block

    model = tiny_model("deepseek_v3")
    st = collect(model, random_ids(batch=4, seq=16), 4, char_tokens_per_batch=16, seed=0)
    freq = st.frequency[0].numpy()
    for views in ({"act": 1.0}, {"act": 1.0, "router": 1.0}, {"router": 1.0, "frequency": 0.5}):
        kept, members, labels = select_block("cluster", 8, st, 0, n_group=4, views=views, rep_rule="frequency", seed=0, usage=None)
        assert len(kept) == 8 and sorted(set(kept)) == kept
        assert [sum(1 for k in kept if k // 4 == g) for g in range(4)] == [2, 2, 2, 2]
        for k in kept:
            mem = [m for m, _ in members[k]]
            assert k in mem and freq[k] == max(freq[m] for m in mem)
            assert len(set(labels[mem])) == 1
        assert sorted(m for k in kept for m, _ in members[k]) == list(range(16))
    kept, _, _ = select_block("frequency", 4, st, 0, views=None, rep_rule="frequency", seed=0, usage=None)
    assert min(freq[kept]) >= max(np.delete(freq, kept))
    r1, _, _ = select_block("random", 4, st, 0, views=None, rep_rule="frequency", seed=1, usage=None)
    assert r1 == select_block("random", 4, st, 0, views=None, rep_rule="frequency", seed=1, usage=None)[0]
    with pytest.raises(ValueError, match="unknown selection method"):
        select_block("magic", 4, st, 0, views=None, rep_rule="frequency", seed=0, usage=None)
    with pytest.raises(ValueError, match="divisible"):
        select_block("cluster", 6, st, 0, n_group=4, views={"act": 1.0}, rep_rule="frequency", seed=0, usage=None)
