"""Fidelity metrics of a proxy against its base on held-out data.

Per proxy: parameters and bytes before/after; held-out cross-entropy (nats/token) and greedy
next-token accuracy of base and proxy (overall and per category); KL(p_base || p_proxy) of the
next-token distributions (nats/token, mean over tokens); routing entropy (entropy of the expert
load distribution per MoE layer, mean over layers, nats; maximum log E); and, when an
tokenizer is present, exact-match accuracy of greedy answers on held-out problems of the
verifiable task (:data:`corpus.TASK`).
"""

from __future__ import annotations

import math
import random

import torch
import torch.nn.functional as F

from . import corpus
from .adapters import adapter_for, moe_blocks
from .prune import param_bytes, param_count


@torch.no_grad()
def _routing_counts(model, ids: torch.Tensor, batch_size: int):
    blocks = moe_blocks(model, adapter_for(model.config))
    counts = [torch.zeros(b.router.num_experts, dtype=torch.float64) for b in blocks]
    hooks = []
    for i, b in enumerate(blocks):
        def hook(mod, inp, out, i=i):
            counts[i] += torch.bincount(out[2].reshape(-1), minlength=mod.num_experts).double()
        hooks.append(b.router.register_forward_hook(hook))
    logits = []
    try:
        for s in range(0, len(ids), batch_size):
            logits.append(model(input_ids=ids[s: s + batch_size], use_cache=False).logits.float())
    finally:
        for h in hooks:
            h.remove()
    return torch.cat(logits), counts


def routing_entropy(counts: list[torch.Tensor]) -> float:
    """Mean over layers of the entropy (nats) of the normalised expert-load distribution."""
    hs = []
    for c in counts:
        p = c / c.sum().clamp_min(1)
        p = p[p > 0]
        hs.append(float(-(p * p.log()).sum()))
    return sum(hs) / len(hs)


def lm_scores(logits: torch.Tensor, ids: torch.Tensor) -> tuple[float, float]:
    """(mean next-token cross-entropy in nats, greedy next-token accuracy) of logits [N,S,V] on ids [N,S]."""
    lg, tgt = logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)
    return float(F.cross_entropy(lg, tgt)), float((lg.argmax(-1) == tgt).double().mean())


def kl_divergence(base_logits: torch.Tensor, proxy_logits: torch.Tensor) -> float:
    """Mean over positions of KL(softmax(base) || softmax(proxy)) in nats."""
    lp = F.log_softmax(base_logits.double(), -1)
    lq = F.log_softmax(proxy_logits.double(), -1)
    return float((lp.exp() * (lp - lq)).sum(-1).mean())


# The held-out problem sets, one per purpose, each named for what it is: (split, word lengths,
# generator seed). Words are from the held-out split (never trained on); a set of n problems is the
# first n of its sequence, so a smaller n is a prefix of a larger one.
TASK_SETS = {
    "heldout": ("heldout", corpus.IN_RANGE_LEN, "task-heldout"),  # in range: the base's acceptance, proxy task accuracy
    "edge": ("heldout", corpus.EDGE_LEN, "task-edge"),  # the edge: greedy figure of the base, RL reward before / after
}


def task_prompts(n: int, task_set: str = "heldout") -> list[str]:
    """The first ``n`` prompts of the held-out problem set ``task_set`` (:data:`TASK_SETS`).

    Raises:
        ValueError: unknown ``task_set``.
    """
    if task_set not in TASK_SETS:
        raise ValueError(f"unknown task set {task_set!r}; known: {sorted(TASK_SETS)}")
    split, lengths, seed = TASK_SETS[task_set]
    rng = random.Random(seed)
    return [corpus.task_problem(rng, split=split, lengths=lengths)[0] for _ in range(n)]


@torch.no_grad()
def greedy_completions(model, tokenizer, prompts: list[str], max_new: int = 5) -> list[str]:
    """Greedy completions (decoded text, cut after the first newline) of ``prompts``.

    Prompts of equal token length are decoded together as one batch (no padding, so no
    attention-mask or position subtleties); ``max_new`` tokens at most per prompt.
    """
    return sampled_completions(model, tokenizer, prompts, max_new, samples=1, temperature=0.0, seed=0)  # greedy: the seed is not drawn from


@torch.no_grad()
def sampled_completions(model, tokenizer, prompts: list[str], max_new: int, samples: int, temperature: float,
                        seed: int) -> list[list[str]] | list[str]:
    """``samples`` completions per prompt at ``temperature`` (0: greedy, one completion each, returned
    as a flat list), decoded and cut after the first newline.

    Prompts of equal token length are decoded together (no padding); sampling draws from a
    ``torch.Generator`` seeded with ``seed``, so the completions are a function of the model and
    the arguments.
    """
    enc = [tokenizer.encode(p, add_special_tokens=False) for p in prompts]
    k = 1 if temperature == 0 else samples
    out: list[list[str]] = [[""] * k for _ in prompts]
    by_len: dict[int, list[int]] = {}
    for i, e in enumerate(enc):
        by_len.setdefault(len(e), []).append(i)
    g = torch.Generator().manual_seed(seed)
    for L in sorted(by_len):
        idx = by_len[L]
        ids = torch.tensor([enc[i] for i in idx]).repeat_interleave(k, 0)
        for _ in range(max_new):
            logits = model(input_ids=ids, use_cache=False).logits[:, -1].float()
            if temperature == 0:
                nxt = logits.argmax(-1)
            else:
                nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=g)[:, 0]
            ids = torch.cat([ids, nxt[:, None]], 1)
        for r, row in enumerate(ids[:, L:].tolist()):
            out[idx[r // k]][r % k] = tokenizer.decode(row).split("\n")[0]
    return [o[0] for o in out] if temperature == 0 else out


def max_new_tokens(task_set: str) -> int:
    """Completion tokens an answer of ``task_set`` needs: its longest word + newline + 1 spare."""
    return TASK_SETS[task_set][1][1] + 2


@torch.no_grad()
def task_accuracy(model, tokenizer, n: int, task_set: str = "heldout") -> float:
    """Exact-match rate of greedy answers to the first ``n`` prompts of ``task_set`` (corpus.check_answer).

    The problems come from the held-out split of :func:`corpus.task_problem`: words never seen in
    training.
    """
    prompts = task_prompts(n, task_set)
    comps = greedy_completions(model, tokenizer, prompts, max_new_tokens(task_set))
    return sum(corpus.check_answer(q, c) for q, c in zip(prompts, comps)) / n


@torch.no_grad()
def sampled_reward(model, tokenizer, n: int, samples: int, task_set: str = "edge", *, temperature: float,
                   seed: int) -> dict:
    """Mean exact-match reward of ``samples`` completions at ``temperature`` per prompt on the first
    ``n`` prompts of ``task_set`` (what GRPO optimises; pass@1 = this mean), and the share of prompts
    whose samples are neither all right nor all wrong (a GRPO group with a non-zero advantage).

    Returns {"reward", "pass_rate_per_prompt": [share right per prompt], "nonzero_advantage_share"}.
    """
    prompts = task_prompts(n, task_set)
    comps = sampled_completions(model, tokenizer, prompts, max_new_tokens(task_set), samples, temperature, seed)
    per = [sum(corpus.check_answer(q, c) for c in cs) / samples for q, cs in zip(prompts, comps)]
    return {"reward": round(sum(per) / n, 6), "pass_rate_per_prompt": [round(v, 4) for v in per],
            "nonzero_advantage_share": round(sum(0 < v < 1 for v in per) / n, 6)}


class BaseReference:
    """Base-model outputs on the held-out windows, computed once and reused for every proxy.

    Args:
        windows: {category: int64 [N, S]}.
    """

    def __init__(self, base, tokenizer, windows: dict[str, torch.Tensor], batch_size: int, task_n: int):
        """``task_n``: problems of the ``heldout`` task set (:data:`TASK_SETS`) for task accuracy (0: none)."""
        self.windows, self.bs, self.tok, self.task_n = windows, batch_size, tokenizer, task_n
        self.logits, self.counts = {}, None
        for c, ids in windows.items():
            self.logits[c], cnt = _routing_counts(base, ids, batch_size)
            self.counts = cnt if self.counts is None else [a + b for a, b in zip(self.counts, cnt)]
        self.params, self.bytes = param_count(base), param_bytes(base)
        self.task_acc = task_accuracy(base, tokenizer, task_n) if task_n and tokenizer is not None else None
        self.num_experts = moe_blocks(base, adapter_for(base.config))[0].router.num_experts


def evaluate(ref: BaseReference, proxy) -> dict:
    """All metrics of ``proxy`` against the base reference (flat dict of floats/ints)."""
    out = {"params_base": ref.params, "params_proxy": param_count(proxy), "bytes_base": ref.bytes,
           "bytes_proxy": param_bytes(proxy)}
    out["params_removed_share"] = round(1 - out["params_proxy"] / out["params_base"], 6)
    tot = {"lb": 0.0, "lp": 0.0, "ab": 0.0, "ap": 0.0, "kl": 0.0, "n": 0}
    counts = None
    for c, ids in ref.windows.items():
        lg, cnt = _routing_counts(proxy, ids, ref.bs)
        counts = cnt if counts is None else [a + b for a, b in zip(counts, cnt)]
        lb, ab = lm_scores(ref.logits[c], ids)
        lp, ap = lm_scores(lg, ids)
        kl = kl_divergence(ref.logits[c], lg)
        n = ids.numel()
        out.update({f"heldout_loss_proxy/{c}": round(lp, 5), f"heldout_loss_base/{c}": round(lb, 5),
                    f"next_token_acc_proxy/{c}": round(ap, 5), f"kl_base_to_proxy/{c}": round(kl, 6)})
        for k, v in (("lb", lb), ("lp", lp), ("ab", ab), ("ap", ap), ("kl", kl)):
            tot[k] += v * n
        tot["n"] += n
    n = tot["n"]
    out.update({"heldout_loss_base": round(tot["lb"] / n, 5), "heldout_loss_proxy": round(tot["lp"] / n, 5),
                "next_token_acc_base": round(tot["ab"] / n, 5), "next_token_acc_proxy": round(tot["ap"] / n, 5),
                "kl_base_to_proxy": round(tot["kl"] / n, 6),
                "routing_entropy_base": round(routing_entropy(ref.counts), 5),
                "routing_entropy_proxy": round(routing_entropy(counts), 5),
                "routing_entropy_max_base": round(math.log(ref.num_experts), 5),
                "routing_entropy_max_proxy": round(math.log(counts[0].numel()), 5)})
    if ref.task_acc is not None:
        out["task_acc_base"] = round(ref.task_acc, 4)
        out["task_acc_proxy"] = round(task_accuracy(proxy, ref.tok, ref.task_n), 4)
    return out
