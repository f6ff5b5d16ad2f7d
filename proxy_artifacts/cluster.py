"""Which experts to keep: clustering-based selection (and the frequency / REAP / random baselines).

Per MoE block, the routed experts are grouped into k clusters (k from
:func:`prune.keep_count`) and one representative per cluster is kept (HC-SMoE, Chen et al.
2024: hierarchical clustering of expert outputs, average linkage; MC-SMoE, Li et al. 2024:
router-logit similarity, the dominant = most frequent expert represents its group). Distances
come from one view or a weighted multi-view combination:

- ``act``: cosine distance of characteristic activations (mean output on sampled tokens when
  collected, else on routed tokens) [E,H]
- ``router``: 1 - cosine similarity of router-logit columns over the calibration tokens
- ``weights``: cosine distance of the flattened expert weights
- ``frequency``: |freq_i - freq_j|

Each view's distance matrix is scaled to max 1 before the weighted average.

``usage_cluster`` (the usage-aware variant) keeps the cluster-then-represent
shape but lets routing usage decide where the kept slots go: (1) experts routed to fewer than
``dead_share`` of the layer's routed slots are dropped before clustering (dead experts take no
slot); (2) the live experts are clustered into ``round(k * cluster_share)`` clusters; (3) the k
slots are allocated to clusters in proportion to their routing mass (``frequency``) or REAP
saliency mass (``reap_mass`` = frequency x REAP saliency, the expert's share of the layer's
gated output norm), largest remainder, capped at the cluster size; (4) inside a cluster the
members with the highest ``representative`` score are kept: ``reap`` (the default: REAP
saliency) or ``frequency`` (the most-routed members, MC-SMoE's dominant expert). REAP saliency is
a mean over the tokens routed to the expert, so it does not grow with how often the expert is
routed: the highest-REAP members of a cluster are seldom its most-routed ones, which is why the
default keeps little of a layer's routing at small keep ratios (23% at keep 0.125 on the 64-expert
base, frequency top-k 41%). ``frequency`` keeps the routing (42% vs 25% at keep 0.125 over three
reduced-scale base seeds) but not a lower held-out loss (``docs/proxies.md``). With
group-limited routing (DeepSeek-V3 ``n_group``), each group is clustered on its own into
k / n_group clusters so the kept set stays divisible by groups and group membership holds.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch
from sklearn.cluster import AgglomerativeClustering

from .config import METHODS, VIEWS, UsageConfig
from .stats import ExpertStats

#: ``proxy.prune.usage`` at its defaults (:class:`proxy_artifacts.config.UsageConfig`, their one home)
USAGE_DEFAULTS = UsageConfig().to_params()


def _cosine_distance(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    ok = (n[:, 0] > 0)
    xn = np.where(n > 0, x / np.maximum(n, 1e-300), 0.0)
    d = 1.0 - xn @ xn.T
    d[~ok, :] = 1.0
    d[:, ~ok] = 1.0
    np.fill_diagonal(d, 0.0)
    return np.clip(d, 0.0, 2.0)


def view_distance(view: str, stats: ExpertStats, li: int, weights: torch.Tensor | None = None) -> np.ndarray:
    """Distance matrix [E,E] (float64, symmetric, zero diagonal) of one view for block ``li``.

    Raises:
        ValueError: unknown view, or ``weights`` missing for the ``weights`` view.
    """
    if view == "act":
        use_all = float(stats.sums["act_all_tokens"][li]) > 0
        feats = (stats.act_all if use_all else stats.act_routed)[li].numpy()
        d = _cosine_distance(feats)
    elif view == "router":
        d = 1.0 - stats.logit_similarity[li].numpy()
        np.fill_diagonal(d, 0.0)
        d = np.clip(d, 0.0, 2.0)
    elif view == "weights":
        if weights is None:
            raise ValueError("the 'weights' view needs the expert weights of the block")
        d = _cosine_distance(weights.double().numpy())
    elif view == "frequency":
        f = stats.frequency[li].numpy()
        d = np.abs(f[:, None] - f[None, :])
    else:
        raise ValueError(f"unknown clustering view {view!r}; known: {VIEWS}")
    return (d + d.T) / 2


def combined_distance(views: Mapping[str, float], stats: ExpertStats, li: int,
                      weights: torch.Tensor | None = None) -> np.ndarray:
    """Weighted average of the views' distance matrices, each scaled to max 1: [E,E].

    Raises:
        ValueError: no view with a positive weight.
    """
    total, acc = 0.0, None
    for v, w in views.items():
        if w <= 0:
            continue
        d = view_distance(v, stats, li, weights)
        m = d.max()
        d = d / m if m > 0 else d
        acc = w * d if acc is None else acc + w * d
        total += w
    if acc is None:
        raise ValueError(f"no clustering view with positive weight in {dict(views)}")
    return acc / total


def cluster_labels(dist: np.ndarray, k: int, linkage: str = "average") -> np.ndarray:
    """Agglomerative clustering (scikit-learn, precomputed distance) into exactly ``k`` clusters: [E] int."""
    E = dist.shape[0]
    if not 1 <= k <= E:
        raise ValueError(f"cannot form {k} clusters of {E} experts")
    if k == E:
        return np.arange(E)
    if k == 1:
        return np.zeros(E, dtype=int)
    return AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage=linkage).fit_predict(dist)


def representatives(labels: np.ndarray, dist: np.ndarray, freq: np.ndarray, rule: str = "frequency"):
    """One kept expert per cluster.

    rule ``frequency``: the most frequently routed member (MC-SMoE's dominant expert);
    ``medoid``: the member with the least summed distance to its cluster.
    Returns (kept sorted list, {kept: [(member, frequency weight), ...]}). Ties break to the
    lower index.
    """
    if rule not in ("frequency", "medoid"):
        raise ValueError(f"unknown representative rule {rule!r}; known: frequency, medoid")
    kept, members = [], {}
    for c in np.unique(labels):
        mem = np.flatnonzero(labels == c)
        if rule == "frequency":
            rep = int(mem[np.argmax(freq[mem])])  # argmax: first max = lower index
        else:
            rep = int(mem[np.argmin(dist[np.ix_(mem, mem)].sum(1))])
        kept.append(rep)
        members[rep] = [(int(m), float(freq[m])) for m in mem]
    return sorted(kept), members


def allocate_slots(mass: np.ndarray, sizes: np.ndarray, k: int) -> np.ndarray:
    """Split ``k`` slots over clusters in proportion to ``mass`` [C] (largest remainder, Hamilton),
    each cluster capped at its size ``sizes`` [C]; slots a capped cluster cannot take are
    re-allocated to the others. Returns int [C] summing to ``min(k, sizes.sum())``.

    Raises:
        ValueError: negative mass or k < 0.
    """
    mass = np.asarray(mass, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    if k < 0 or (mass < 0).any():
        raise ValueError(f"bad slot allocation input: k={k}, mass={mass}")
    out = np.zeros(len(mass), dtype=np.int64)
    k = int(min(k, sizes.sum()))
    while out.sum() < k:
        open_ = out < sizes
        left = k - out.sum()
        m = np.where(open_, mass, 0.0)
        if m.sum() <= 0:
            m = open_.astype(np.float64)
        quota = m / m.sum() * left
        out += np.minimum(np.floor(quota).astype(np.int64), sizes - out)
        rem = np.where(out < sizes, quota - np.floor(quota), -1.0)
        for i in np.lexsort((np.arange(len(rem)), -rem)):  # largest remainder first, ties to lower index
            if out.sum() >= k or rem[i] < 0:
                break
            out[i] += 1
    return out


def usage_cluster(idx: np.ndarray, kg: int, dist: np.ndarray, freq: np.ndarray, reap: np.ndarray,
                  usage: Mapping | None = None) -> tuple[list[int], dict, np.ndarray]:
    """Usage-aware clustering selection of ``kg`` experts among ``idx`` (see module docstring).

    Args:
        idx: candidate expert indices [n] (a layer, or one group of it).
        dist: distance matrix [n, n] over ``idx``; freq, reap: routing frequency and REAP
            saliency [n] of the candidates.
        usage: {dead_share, cluster_share, slots_by (frequency | reap_mass), representative
            (reap | frequency)} (defaults: :data:`USAGE_DEFAULTS`).

    Returns (kept sorted original indices, {kept: [(member, frequency)]} with unkept cluster
    members attached to their cluster's top representative, labels [n]: cluster id, -1 dead).

    Raises:
        ValueError: unknown ``slots_by`` / ``representative``.
    """
    u = {**USAGE_DEFAULTS, **(usage or {})}
    if u["slots_by"] not in ("frequency", "reap_mass") or u["representative"] not in ("reap", "frequency"):
        raise ValueError(f"bad usage_cluster settings {dict(u)}; slots_by in frequency|reap_mass, "
                         "representative in reap|frequency")
    n = len(idx)
    share = freq / max(freq.sum(), 1e-300)
    order_f = np.lexsort((np.arange(n), -freq))
    live = share >= float(u["dead_share"])
    if live.sum() < kg:  # never keep a dead expert while a live one is dropped, but fill up to kg
        live[order_f[:kg]] = True
    live_i = np.flatnonzero(live)
    c = int(max(1, min(len(live_i), round(kg * float(u["cluster_share"])))))
    lab = cluster_labels(dist[np.ix_(live_i, live_i)], c)
    w = freq * reap if u["slots_by"] == "reap_mass" else freq
    score = reap if u["representative"] == "reap" else freq
    clusters = np.unique(lab)
    mass = np.array([w[live_i[lab == cl]].sum() for cl in clusters])
    sizes = np.array([(lab == cl).sum() for cl in clusters])
    slots = allocate_slots(mass, sizes, kg)
    kept, members = [], {}
    labels = np.full(n, -1)
    labels[live_i] = lab
    for cl, m in zip(clusters, slots):
        mem = live_i[lab == cl]
        ranked = mem[np.lexsort((mem, -score[mem]))]
        chosen = ranked[:m]
        for r in chosen:
            kept.append(int(idx[r]))
            members[int(idx[r])] = [(int(idx[r]), float(freq[r]))]
        if len(chosen):
            members[int(idx[chosen[0]])] += [(int(idx[x]), float(freq[x])) for x in ranked[m:]]
    return sorted(kept), members, labels


def select_block(method: str, k: int, stats: ExpertStats, li: int, *, views: Mapping[str, float] | None,
                 rep_rule: str, seed: int, usage: Mapping | None, n_group: int = 1,
                 weights: torch.Tensor | None = None) -> tuple[list[int], dict, np.ndarray]:
    """Kept experts of block ``li``: (kept sorted, members {kept: [(member, weight)]}, labels [E]).

    Methods: ``cluster`` (this module), ``usage_cluster`` (usage-aware, :func:`usage_cluster`
    with ``usage`` settings), ``frequency`` (top-k routing frequency), ``reap``
    (top-k REAP saliency), ``random`` (seeded). Group-limited routing: selection happens per
    group with k / n_group each.

    ``views``, ``rep_rule``, ``seed``, ``usage``: ``proxy.prune``'s (``views`` may be None for the
    methods that do not cluster).

    Raises:
        ValueError: unknown method; k not divisible by n_group; no ``views`` for a clustering method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown selection method {method!r}; known: {METHODS}")
    E = stats.sums["count"].shape[1]
    if k % n_group:
        raise ValueError(f"kept count {k} is not divisible by n_group={n_group}")
    freq = stats.frequency[li].numpy()
    size, kg = E // n_group, k // n_group
    if method in ("cluster", "usage_cluster") and not views:
        raise ValueError(f"method {method!r} needs views (proxy.prune.views)")
    dist = combined_distance(views, stats, li, weights) if method in ("cluster", "usage_cluster") else None
    rng = np.random.default_rng(seed * 1000 + li)
    kept, members, labels = [], {}, np.full(E, -1)
    for g in range(n_group):
        idx = np.arange(g * size, (g + 1) * size)
        if method == "cluster":
            sub = dist[np.ix_(idx, idx)]
            lab = cluster_labels(sub, kg)
            kk, mm = representatives(lab, sub, freq[idx], rep_rule)
            kept += [int(idx[i]) for i in kk]
            members.update({int(idx[r]): [(int(idx[m]), w) for m, w in ms] for r, ms in mm.items()})
            labels[idx] = lab + g * size
        elif method == "usage_cluster":
            kk, mm, lab = usage_cluster(idx, kg, dist[np.ix_(idx, idx)], freq[idx], stats.reap[li].numpy()[idx], usage)
            kept += kk
            members.update(mm)
            labels[idx] = np.where(lab >= 0, lab + g * size, -1)
        else:
            score = {"frequency": freq[idx], "reap": stats.reap[li].numpy()[idx],
                     "random": rng.random(size)}[method]
            order = np.lexsort((idx, -score))[:kg]  # highest score, ties to lower index
            chosen = sorted(int(idx[i]) for i in order)
            kept += chosen
            members.update({c: [(c, float(freq[c]))] for c in chosen})
            labels[idx] = -1
            for c in chosen:
                labels[c] = c
    return sorted(kept), members, labels


def cluster_rows(block: str, layer: int, labels: np.ndarray, kept: list[int], method: str, ratio: float,
                 freq: np.ndarray) -> list[dict]:
    """Rows of the ``expert_clusters`` table for one block."""
    new = {e: i for i, e in enumerate(kept)}
    return [{"block": block, "layer": layer, "expert": j, "cluster": int(labels[j]), "kept": j in new,
             "new_index": new.get(j), "method": method, "keep_ratio": float(ratio), "frequency": float(freq[j])}
            for j in range(len(labels))]
