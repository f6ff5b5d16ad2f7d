"""Train the default base: a tiny Qwen3-MoE on the offline corpus until experts specialise.

The model is a real ``Qwen3MoeForCausalLM`` (no custom code), saved with ``save_pretrained``
together with its byte-level tokenizer, so every later stage loads it with plain
``AutoModelForCausalLM.from_pretrained``. Specialisation is shown, not assumed: after
training, routing on held-out windows of each category is summarised (per layer: routing
entropy vs the uniform maximum log E, and the Jensen-Shannon divergence between the
categories' expert-load distributions) in ``specialisation.json``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import torch
from tqdm import tqdm
from transformers import AutoConfig, AutoModelForCausalLM

from passnet_common.io import atomic_write_json

from . import corpus


def make_config(p: dict, vocab_size: int, special_ids: dict):
    """A ``Qwen3MoeConfig`` from the ``proxy.base`` params (all sizes explicit)."""
    return AutoConfig.for_model(
        p.get("model_type", "qwen3_moe"),
        vocab_size=vocab_size,
        hidden_size=p["hidden_size"],
        intermediate_size=p["hidden_size"] * 2,
        moe_intermediate_size=p["moe_intermediate_size"],
        num_hidden_layers=p["num_layers"],
        num_attention_heads=p["num_heads"],
        num_key_value_heads=p["num_kv_heads"],
        head_dim=p["hidden_size"] // p["num_heads"],
        num_experts=p["num_experts"],
        num_experts_per_tok=p["top_k"],
        norm_topk_prob=True,
        router_aux_loss_coef=p["aux_loss_coef"],
        output_router_logits=False,
        max_position_embeddings=p["seq_len"] * 2,
        tie_word_embeddings=True,
        **special_ids,
    )


def training_batches(tokenizer, p: dict) -> torch.Tensor:
    """Mixed training windows of all categories, shuffled with the seed: int64 [N, seq_len].

    ``p["category_mix"]`` (optional {category: factor}) scales ``train_windows_per_category``
    per category (e.g. more arithmetic so the verifiable task is learnt in the step budget).
    """
    per_cat = p["train_windows_per_category"]
    mix = p.get("category_mix") or {}
    wins = [corpus.category_windows(tokenizer, c, "train", p["seq_len"], int(per_cat * mix.get(c, 1.0)),
                                    seed=p["seed"]) for c in corpus.CATEGORIES]
    for c, w in zip(corpus.CATEGORIES, wins):
        want = int(per_cat * mix.get(c, 1.0))
        if len(w) < want:
            raise ValueError(f"proxy.base.train_windows_per_category: category {c!r} has {len(w)} windows of "
                             f"{p['seq_len']} tokens in the corpus, {want} asked")
    data = torch.cat(wins)
    g = torch.Generator().manual_seed(p["seed"])
    return data[torch.randperm(len(data), generator=g)]


@torch.no_grad()
def routing_summary(model, tokenizer, seq_len: int, windows: int) -> dict:
    """Per-category expert load on held-out windows and per-layer specialisation numbers.

    Returns {"load": {category: [[share per expert] per layer]}, "entropy": {category: [H per layer]},
    "max_entropy": log E, "js_divergence": [mean pairwise JS between categories, per layer]} (nats).
    """
    from .adapters import adapter_for, moe_blocks

    a = adapter_for(model.config)
    blocks = moe_blocks(model, a)
    loads = {}
    for cat in corpus.CATEGORIES:
        ids = corpus.category_windows(tokenizer, cat, "heldout", seq_len, windows)
        counts = [torch.zeros(b.router.num_experts) for b in blocks]
        hooks = []
        for i, b in enumerate(blocks):
            def hook(mod, inp, out, i=i):
                counts[i] += torch.bincount(out[2].reshape(-1), minlength=mod.num_experts).float()
            hooks.append(b.router.register_forward_hook(hook))
        try:
            model(ids)
        finally:
            for h in hooks:
                h.remove()
        loads[cat] = [(c / c.sum()) for c in counts]

    def H(p):
        p = p[p > 0]
        return float(-(p * p.log()).sum())

    def js(p, q):
        m = (p + q) / 2
        return H(m) - (H(p) + H(q)) / 2

    cats = list(loads)
    js_layer = []
    for li in range(len(blocks)):
        pairs = [js(loads[x][li], loads[y][li]) for i, x in enumerate(cats) for y in cats[i + 1:]]
        js_layer.append(sum(pairs) / len(pairs))
    E = blocks[0].router.num_experts
    return {
        "load": {c: [[round(float(v), 6) for v in l] for l in ls] for c, ls in loads.items()},
        "entropy": {c: [round(H(l), 6) for l in ls] for c, ls in loads.items()},
        "max_entropy": math.log(E),
        "js_divergence": [round(v, 6) for v in js_layer],
        "max_js_divergence": math.log(2),
    }


def train_base(p: dict, out_dir: str | Path) -> dict:
    """Train the default base with params ``p`` (``proxy.base``) and save it to ``out_dir``.

    Writes ``out_dir/{config.json, model.safetensors, tokenizer files, train_log.json,
    specialisation.json}``. Returns the summary written to ``train_log.json`` plus
    ``train_seconds`` (wall time, printed, never written).
    """
    out_dir = Path(out_dir)
    torch.manual_seed(p["seed"])
    torch.set_num_threads(p.get("threads", 1))
    tok = corpus.build_tokenizer()
    cfg = make_config(p, len(tok), dict(pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                                        eos_token_id=tok.eos_token_id))
    model = AutoModelForCausalLM.from_config(cfg)
    data = training_batches(tok, p)
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=0.01, betas=(0.9, 0.95))
    steps, bs = p["steps"], p["batch_size"]
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    model.train()
    log, t0 = [], time.time()
    bar = tqdm(range(steps), desc="train base", mininterval=2.0)
    for step in bar:
        i = (step * bs) % (len(data) - bs)
        ids = data[i: i + bs]
        out = model(input_ids=ids, labels=ids, output_router_logits=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step % 20 == 0 or step == steps - 1:
            lm = float(out.loss - cfg.router_aux_loss_coef * out.aux_loss) if out.aux_loss is not None else float(out.loss)
            log.append({"step": step, "loss": round(lm, 5), "aux_loss": round(float(out.aux_loss), 5)})
            bar.set_postfix(loss=f"{lm:.3f}")
    model.eval()
    spec = routing_summary(model, tok, p["seq_len"], p.get("spec_windows", 32))
    from .metrics import task_accuracy

    task_n = int(p.get("task_problems", 128))
    task_acc = task_accuracy(model, tok, task_n)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    summary = {"steps": steps, "batch_size": bs, "seq_len": p["seq_len"],
               "final_loss": log[-1]["loss"], "log": log, "num_parameters": model.num_parameters(),
               "model_type": cfg.model_type, "task": corpus.TASK, "task_acc_heldout": round(task_acc, 4),
               "task_problems": task_n, "corpus_sha256": corpus.corpus_sha256()}
    atomic_write_json(out_dir / "specialisation.json", spec, indent=1)
    # Wall time stays out of the files: a rebuild must give byte-identical outputs.
    atomic_write_json(out_dir / "train_log.json", summary, indent=1)
    return {**summary, "train_seconds": round(time.time() - t0, 1)}
