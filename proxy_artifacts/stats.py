"""Streamed expert-activation statistics (routing, EAN, REAP, co-activation, activations).

Per MoE block (layer) l and routed expert j, over the calibration tokens x of one category:

- ``count[l,j]``: number of tokens whose top-k contains j; ``frequency = count / tokens``.
- ``prob_mass[l,j]``: mean router probability of j over all tokens (softmax of the logits,
  or sigmoid for DeepSeek's scores: the adapter row's ``score_fn``).
- ``ean[l,j]``: mean ||f_j(x)||_2 over the tokens routed to j (Expert Activation Norm, REAP §3).
- ``reap[l,j]``: REAP saliency = mean over routed tokens of g_j(x) * ||f_j(x)||_2, g_j the
  gate weight the model applies (Lasby et al. 2025, "REAP: Router-weighted Expert
  Activation Pruning", Eq. 4).
- ``coact[l,i,j]``: tokens that routed to both i and j (diagonal = count).
- ``act_routed[l,j,:]``: mean f_j(x) over the tokens routed to j; ``act_all[l,j,:]``: mean
  f_j(x) over a seeded sample of *all* tokens (HC-SMoE's characteristic output, Chen et al.
  2024 §3.2), ``char_tokens_per_batch`` tokens per forward pass (0: not collected).
- ``logit_gram[l,i,j]`` = sum_x z_i(x) z_j(x) and ``logit_sum``: the router-logit similarity
  (cosine of logit columns, MC-SMoE's router-logit view, Li et al. 2024) is derived from them.

Streaming: only sums are kept (shapes [L,E], [L,E,E], [L,E,H]); nothing grows with the
number of tokens (no E x T x H buffer). Routing is observed with forward hooks on the routers;
the fused experts module does not expose per-expert outputs, so during collection its forward
is replaced by the adapter's per-expert loop, which computes each routed expert once and
returns the same output as the eager transformers loop (tested), i.e. no recomputation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from .adapters import MoEAdapter, adapter_for, expert_count, moe_blocks

STATS_VERSION = 1
SUM_KEYS = ("tokens", "count", "prob_sum", "norm_sum", "gated_norm_sum", "coact", "logit_gram", "logit_sum",
            "act_routed_sum", "act_all_sum", "act_all_tokens")


@dataclass
class ExpertStats:
    """Sums of one category (float64 CPU tensors; L blocks, E experts, H hidden).

    tokens [L], count/prob_sum/norm_sum/gated_norm_sum/logit_sum [L,E], coact/logit_gram [L,E,E],
    act_routed_sum/act_all_sum [L,E,H], act_all_tokens [L]. ``blocks``: module paths, ``layers``:
    decoder layer indices.
    """

    blocks: list[str]
    layers: list[int]
    sums: dict[str, torch.Tensor]
    meta: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, blocks, layers, E: int, H: int) -> "ExpertStats":
        L = len(blocks)
        z = lambda *s: torch.zeros(*s, dtype=torch.float64)  # noqa: E731
        sums = {"tokens": z(L), "count": z(L, E), "prob_sum": z(L, E), "norm_sum": z(L, E),
                "gated_norm_sum": z(L, E), "coact": z(L, E, E), "logit_gram": z(L, E, E), "logit_sum": z(L, E),
                "act_routed_sum": z(L, E, H), "act_all_sum": z(L, E, H), "act_all_tokens": z(L)}
        return cls(list(blocks), list(layers), sums)

    # ----- derived quantities (all [L,E] float64 unless noted)
    def _safe_div(self, a, b):
        return torch.where(b > 0, a / b.clamp_min(1e-300), torch.zeros_like(a))

    @property
    def frequency(self):
        return self._safe_div(self.sums["count"], self.sums["tokens"][:, None])

    @property
    def prob_mass(self):
        return self._safe_div(self.sums["prob_sum"], self.sums["tokens"][:, None])

    @property
    def ean(self):
        return self._safe_div(self.sums["norm_sum"], self.sums["count"])

    @property
    def reap(self):
        return self._safe_div(self.sums["gated_norm_sum"], self.sums["count"])

    @property
    def act_routed(self):
        """[L,E,H] mean output on routed tokens (zeros for never-routed experts)."""
        return self._safe_div(self.sums["act_routed_sum"], self.sums["count"][..., None])

    @property
    def act_all(self):
        """[L,E,H] mean output on the sampled tokens (zeros when not collected)."""
        return self._safe_div(self.sums["act_all_sum"], self.sums["act_all_tokens"][:, None, None])

    @property
    def logit_similarity(self):
        """[L,E,E] cosine similarity of router-logit columns over the tokens."""
        g = self.sums["logit_gram"]
        d = torch.diagonal(g, dim1=1, dim2=2).clamp_min(1e-300).sqrt()
        return g / (d[:, :, None] * d[:, None, :])

    def __add__(self, other: "ExpertStats") -> "ExpertStats":
        """Pool two categories (exact: sums add). Raises ValueError on different blocks."""
        if self.blocks != other.blocks:
            raise ValueError("cannot pool statistics of different models / blocks")
        return ExpertStats(self.blocks, self.layers, {k: self.sums[k] + other.sums[k] for k in SUM_KEYS},
                           {"pooled": True})

    # ----- persistence (safetensors + JSON metadata in the header)
    def save(self, path: str | Path) -> None:
        """Write sums to ``path`` (safetensors, atomic rename); metadata as JSON strings."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        # One metadata key: safetensors writes the header map in hash order, so several
        # keys would make the bytes differ between runs.
        meta = {"passnet": json.dumps({"blocks": self.blocks, "layers": self.layers, "meta": self.meta,
                                       "stats_version": STATS_VERSION}, sort_keys=True)}
        save_file({k: v.contiguous() for k, v in self.sums.items()}, str(tmp), metadata=meta)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "ExpertStats":
        """Read a file written by :meth:`save`. Raises FileNotFoundError / ValueError (version)."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"statistics file not found: {path}")
        with safe_open(str(path), "pt") as f:
            md = json.loads((f.metadata() or {}).get("passnet", "{}"))
        if int(md.get("stats_version", -1)) != STATS_VERSION:
            raise ValueError(f"{path}: stats_version {md.get('stats_version')} != {STATS_VERSION}")
        return cls(md["blocks"], md["layers"], load_file(str(path)), md["meta"])


class ExpertStatsCollector:
    """Accumulates :class:`ExpertStats` while the model runs forward passes.

    Usage::

        with ExpertStatsCollector(model, char_tokens_per_batch=64, seed=0) as col:
            for batch in batches:
                model(batch)
        stats = col.stats

    Args:
        model: a transformers MoE ``*ForCausalLM`` of a family in the adapter table.
        char_tokens_per_batch: tokens per forward pass on which *every* expert is run for the
            characteristic activation ``act_all`` (0 disables; cost E * n expert evaluations).
        seed: seed of that token sample.
    """

    def __init__(self, model, char_tokens_per_batch: int, seed: int):
        self.model = model
        self.adapter: MoEAdapter = adapter_for(model.config)
        self.blocks = moe_blocks(model, self.adapter)
        E = expert_count(model.config, self.adapter)
        H = model.config.hidden_size
        self.stats = ExpertStats.empty([b.name for b in self.blocks], [b.layer for b in self.blocks], E, H)
        self.char_tokens = int(char_tokens_per_batch)
        self.gen = torch.Generator().manual_seed(seed)
        self._handles, self._patched = [], []

    def __enter__(self):
        for li, b in enumerate(self.blocks):
            self._handles.append(b.router.register_forward_hook(self._router_hook(li)))
            self._patched.append((b.experts, b.experts.__dict__.get("forward")))
            b.experts.forward = self._experts_forward(li, b.experts)
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        for mod, old in self._patched:
            if old is None:
                del mod.forward
            else:
                mod.forward = old
        self._handles, self._patched = [], []
        return False

    def _router_hook(self, li: int):
        s = self.stats.sums
        score_fn = self.adapter.score_fn

        def hook(module, inputs, output):
            logits = output[0].detach().reshape(-1, output[0].shape[-1]).double()
            probs = torch.sigmoid(logits) if score_fn == "sigmoid" else torch.softmax(logits, dim=-1)
            s["tokens"][li] += logits.shape[0]
            s["prob_sum"][li] += probs.sum(0)
            s["logit_sum"][li] += logits.sum(0)
            s["logit_gram"][li] += logits.T @ logits

        return hook

    def _experts_forward(self, li: int, experts):
        s = self.stats.sums
        fwd = self.adapter.expert_forward

        @torch.no_grad()
        def forward(hidden_states, top_k_index=None, top_k_weights=None, *args, **kwargs):
            E = s["count"].shape[1]
            out = torch.zeros_like(hidden_states)
            onehot = torch.zeros(hidden_states.shape[0], E, dtype=torch.float64)
            onehot.scatter_(1, top_k_index.cpu(), 1.0)
            s["count"][li] += onehot.sum(0)
            s["coact"][li] += onehot.T @ onehot
            for j in torch.unique(top_k_index).tolist():
                tok, pos = torch.where(top_k_index == j)
                y = fwd(experts, j, hidden_states[tok])
                w = top_k_weights[tok, pos]
                norms = y.double().norm(dim=-1)
                s["norm_sum"][li, j] += norms.sum()
                s["gated_norm_sum"][li, j] += (w.double() * norms).sum()
                s["act_routed_sum"][li, j] += y.double().sum(0)
                out.index_add_(0, tok, (y * w[:, None]).to(out.dtype))
            if self.char_tokens > 0:
                T = hidden_states.shape[0]
                n = min(self.char_tokens, T)
                sample = torch.randperm(T, generator=self.gen)[:n].to(hidden_states.device)
                xs = hidden_states[sample]
                for j in range(E):
                    s["act_all_sum"][li, j] += fwd(experts, j, xs).double().sum(0)
                s["act_all_tokens"][li] += n
            return out

        return forward


@torch.no_grad()
def collect(model, batches: torch.Tensor, batch_size: int, char_tokens_per_batch: int, seed: int,
            desc: str = "expert stats") -> ExpertStats:
    """Run ``model`` over ``batches`` (int64 [N, S] token windows) and return the statistics."""
    model.eval()
    with ExpertStatsCollector(model, char_tokens_per_batch, seed) as col:
        for i in tqdm(range(0, len(batches), batch_size), desc=desc, mininterval=2.0):
            model(input_ids=batches[i: i + batch_size], use_cache=False)
    return col.stats


def stats_rows(stats: ExpertStats, category: str, model_id: str) -> list[dict]:
    """Rows of the ``expert_stats`` table for one category (one per block x expert)."""
    rows = []
    f, pm, ean, reap = stats.frequency, stats.prob_mass, stats.ean, stats.reap
    for li, (blk, layer) in enumerate(zip(stats.blocks, stats.layers)):
        for j in range(f.shape[1]):
            rows.append({"model_id": model_id, "category": category, "block": blk, "layer": layer, "expert": j,
                         "tokens": int(stats.sums["tokens"][li]), "count": int(stats.sums["count"][li, j]),
                         "frequency": float(f[li, j]), "prob_mass": float(pm[li, j]), "ean": float(ean[li, j]),
                         "reap": float(reap[li, j]), "stats_version": STATS_VERSION})
    return rows


def plot_load_heatmap(stats_by_cat: dict[str, ExpertStats], path: str | Path) -> None:
    """PNG heatmap of expert load (share of a layer's routed slots per expert) per layer, one
    panel per category, on one shared colour scale (so panels compare) with integer expert ticks."""
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

    cats = list(stats_by_cat)
    loads = {c: (st.sums["count"] / st.sums["count"].sum(1, keepdim=True).clamp_min(1)).numpy()
             for c, st in stats_by_cat.items()}
    vmax = max(float(x.max()) for x in loads.values()) if loads else 1.0
    fig, axes = plt.subplots(1, len(cats), figsize=(4 * len(cats) + 1.5, 3.2), squeeze=False,
                             constrained_layout=True)
    im = None
    for ax, c in zip(axes[0], cats):
        st, load = stats_by_cat[c], loads[c]
        im = ax.imshow(load, aspect="auto", cmap="viridis", vmin=0, vmax=vmax, interpolation="nearest")
        ax.set_title(f"expert load: {c}")
        ax.set_xlabel("expert")
        ax.set_ylabel("layer")
        n_exp = load.shape[1]
        step = max(1, n_exp // 8)
        ax.set_xticks(range(0, n_exp, step), [str(e) for e in range(0, n_exp, step)])
        ax.set_yticks(range(len(st.layers)), [str(x) for x in st.layers])
    if im is not None:
        fig.colorbar(im, ax=list(axes[0]), label="share of routed slots")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    tmp.replace(path)
