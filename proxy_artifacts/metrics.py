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


def task_prompts(n: int, seed: int = 1234, split: str = "heldout") -> list[str]:
    """``n`` prompts of the verifiable task of ``split`` (default: held-out problems, never trained on)."""
    rng = random.Random(f"task-eval-{seed}")
    return [corpus.task_problem(rng, split=split)[0] for _ in range(n)]


@torch.no_grad()
def greedy_completions(model, tokenizer, prompts: list[str], max_new: int = 5) -> list[str]:
    """Greedy completions (decoded text, cut after the first newline) of ``prompts``.

    Prompts of equal token length are decoded together as one batch (no padding, so no
    attention-mask or position subtleties); ``max_new`` tokens at most per prompt.
    """
    enc = [tokenizer.encode(p, add_special_tokens=False) for p in prompts]
    out: list[str] = [""] * len(prompts)
    by_len: dict[int, list[int]] = {}
    for i, e in enumerate(enc):
        by_len.setdefault(len(e), []).append(i)
    for L, idx in by_len.items():
        ids = torch.tensor([enc[i] for i in idx])
        for _ in range(max_new):
            nxt = model(input_ids=ids, use_cache=False).logits[:, -1].argmax(-1)
            ids = torch.cat([ids, nxt[:, None]], 1)
        for row, i in zip(ids[:, L:].tolist(), idx):
            out[i] = tokenizer.decode(row).split("\n")[0]
    return out


@torch.no_grad()
def task_accuracy(model, tokenizer, n: int, seed: int = 1234, max_new: int = 8) -> float:
    """Exact-match rate of greedy answers to ``n`` held-out task prompts (corpus.check_answer).

    The problems come from the held-out split of :func:`corpus.task_problem`: words (or operand
    pairs) never seen in training.
    """
    prompts = task_prompts(n, seed)
    comps = greedy_completions(model, tokenizer, prompts, max_new)
    return sum(corpus.check_answer(q, c) for q, c in zip(prompts, comps)) / n


class BaseReference:
    """Base-model outputs on the held-out windows, computed once and reused for every proxy.

    Args:
        windows: {category: int64 [N, S]}.
    """

    def __init__(self, base, tokenizer, windows: dict[str, torch.Tensor], batch_size: int = 16, task_n: int = 0):
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
