"""Train the default base: a tiny Qwen3-MoE on the offline corpus until experts specialise.

The model is a real ``Qwen3MoeForCausalLM`` (no custom code), saved with ``save_pretrained``
together with its byte-level tokenizer, so every later stage loads it with plain
``AutoModelForCausalLM.from_pretrained``. Specialisation is shown, not assumed: after
training, routing on held-out windows of each category is summarised (per layer: routing
entropy vs the uniform maximum log E, and the Jensen-Shannon divergence between the
categories' expert-load distributions) in ``specialisation.json``.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import torch
from tqdm import tqdm
from transformers import AutoConfig, AutoModelForCausalLM

from passnet_common.io import atomic_write_json

from . import corpus
from .adapters import adapter_for, moe_blocks
from .checkpoint import weights_sha256
from .config import base_params
from .metrics import sampled_reward, task_accuracy


def make_config(p: dict, vocab_size: int, special_ids: dict):
    """A ``Qwen3MoeConfig`` from the ``proxy.base`` params (all sizes explicit; keys ``p`` leaves out at
    their :class:`proxy_artifacts.config.BaseConfig` defaults)."""
    p = base_params(p)
    return AutoConfig.for_model(
        p["model_type"],
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


def training_batches(tokenizer, p: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Mixed training windows of all categories, shuffled with the seed: (ids, labels), each int64
    [N, seq_len].

    ``p["category_mix"]`` (optional {category: factor}) scales ``train_windows_per_category``
    per category (e.g. more task windows so the verifiable task is learnt in the step budget).
    Labels equal the ids (next-token loss on every token), except the task category's windows with
    ``p["task_answer_loss"]``: :func:`corpus.task_windows`, loss on the answers only. The task's edge
    lengths are drawn at relative weight ``p["edge_weight"]`` (:func:`corpus.task_length`), and
    ``p["edge_noise_share"]`` of the edge answers have one letter replaced by a random one
    (:func:`corpus.reverse_problem`): the base's edge is partly solved by construction.

    Raises:
        ValueError: a text/code category has fewer windows in the corpus than asked.
    """
    per_cat = p["train_windows_per_category"]
    mix = p.get("category_mix") or {}
    ids, labels = [], []
    for c in corpus.CATEGORIES:
        want = int(per_cat * mix.get(c, 1.0))
        if c == corpus.TASK and p["task_answer_loss"]:
            w, lab = corpus.task_windows(tokenizer, "train", p["seq_len"], want, seed=p["seed"],
                                         edge_weight=p["edge_weight"], edge_noise_share=p["edge_noise_share"])
        else:
            w = corpus.category_windows(tokenizer, c, "train", p["seq_len"], want, seed=p["seed"],
                                        edge_weight=p["edge_weight"], edge_noise_share=p["edge_noise_share"])
            lab = w
        if len(w) < want:
            raise ValueError(f"proxy.base.train_windows_per_category: category {c!r} has {len(w)} windows of "
                             f"{p['seq_len']} tokens in the corpus, {want} asked")
        ids.append(w)
        labels.append(lab)
    data, lab = torch.cat(ids), torch.cat(labels)
    g = torch.Generator().manual_seed(p["seed"])
    perm = torch.randperm(len(data), generator=g)
    return data[perm], lab[perm]


def lr_factor(step: int, steps: int, warmup_share: float, decay_share: float, min_lr_ratio: float) -> float:
    """Warmup-stable-decay learning-rate factor of optimizer step ``step`` (0-based) of ``steps``.

    Linear warmup over ``warmup_share`` of the steps, then constant 1, then a linear decay over the
    last ``decay_share`` of the steps to ``min_lr_ratio`` (never 0). The task is learnt in a phase
    change whose step varies with the seed (a loss plateau, then a drop); a cosine to 0 takes the
    lr away from a seed whose drop comes late, the constant phase does not (WSD schedule: Hu et al.
    2024, MiniCPM, arXiv 2404.06395).
    """
    warm = max(1, int(steps * warmup_share))
    w = min(1.0, (step + 1) / warm)
    d0 = steps * (1 - decay_share)
    if step < d0:
        return w
    return w * (min_lr_ratio + (1 - min_lr_ratio) * (1 - (step - d0) / max(1e-9, steps - d0)))


@torch.no_grad()
def routing_summary(model, tokenizer, seq_len: int, windows: int) -> dict:
    """Per-category expert load on held-out windows and per-layer specialisation numbers.

    Returns {"load": {category: [[share per expert] per layer]}, "entropy": {category: [H per layer]},
    "max_entropy": log E, "js_divergence": [mean pairwise JS between categories, per layer]} (nats).
    """
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
        "load": {c: [[round(float(v), 6) for v in layer] for layer in ls] for c, ls in loads.items()},
        "entropy": {c: [round(H(layer), 6) for layer in ls] for c, ls in loads.items()},
        "max_entropy": math.log(E),
        "js_divergence": [round(v, 6) for v in js_layer],
        "max_js_divergence": math.log(2),
    }


def train_base(p: dict, out_dir: str | Path) -> dict:
    """Train the default base with params ``p`` (``proxy.base``) and save it to ``out_dir``.

    Writes ``out_dir/{config.json, model.safetensors, tokenizer files, train_log.json,
    specialisation.json}``. Returns the summary written to ``train_log.json`` plus
    ``train_seconds`` (wall time, printed, never written). Task figures: greedy exact match on the
    ``heldout`` set (in-range word lengths, ``task_acc_heldout``) and on the ``edge`` set (the
    longest lengths, ``task_acc_edge``), ``task_problems`` problems each (:data:`metrics.TASK_SETS`), and on
    the edge set the mean reward of ``p["edge_samples"]`` samples at T = 1 per problem (``task_reward_edge``,
    where GRPO starts) with the share of problems whose samples disagree
    (``task_nonzero_advantage_share_edge``).
    """
    p = base_params(p)
    out_dir = Path(out_dir)
    torch.manual_seed(p["seed"])
    torch.set_num_threads(p["threads"])
    tok = corpus.build_tokenizer()
    cfg = make_config(p, len(tok), dict(pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                                        eos_token_id=tok.eos_token_id))
    model = AutoModelForCausalLM.from_config(cfg)
    data, labels = training_batches(tok, p)
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=0.01, betas=(0.9, 0.95))
    steps, bs = p["steps"], p["batch_size"]
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: lr_factor(s, steps, p["warmup_share"], p["decay_share"], p["min_lr_ratio"]))
    model.train()
    log, t0 = [], time.time()
    bar = tqdm(range(steps), desc="train base", mininterval=2.0)
    for step in bar:
        i = (step * bs) % (len(data) - bs)
        ids = data[i: i + bs]
        out = model(input_ids=ids, labels=labels[i: i + bs], output_router_logits=True)
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
    spec = routing_summary(model, tok, p["seq_len"], p["spec_windows"])
    task_n = int(p["task_problems"])
    acc = {s: task_accuracy(model, tok, task_n, s) for s in ("heldout", "edge")}
    # what RL starts from at the edge: the reward of samples at T = 1 (GRPO's rollouts)
    edge_sampled = sampled_reward(model, tok, task_n, int(p["edge_samples"]), "edge", temperature=1.0, seed=0)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    summary = {"steps": steps, "batch_size": bs, "seq_len": p["seq_len"],
               "final_loss": log[-1]["loss"], "log": log, "num_parameters": model.num_parameters(),
               "model_type": cfg.model_type, "task": corpus.TASK, "task_acc_heldout": round(acc["heldout"], 4),
               "task_acc_edge": round(acc["edge"], 4), "task_reward_edge": edge_sampled["reward"],
               "task_nonzero_advantage_share_edge": edge_sampled["nonzero_advantage_share"],
               "task_edge_samples": int(p["edge_samples"]), "task_problems": task_n,
               "task_lengths": {"heldout": list(corpus.IN_RANGE_LEN), "edge": list(corpus.EDGE_LEN)},
               "corpus_sha256": corpus.corpus_sha256()}
    atomic_write_json(out_dir / "specialisation.json", spec, indent=1)
    # Wall time stays out of the files: a rebuild must give byte-identical outputs.
    atomic_write_json(out_dir / "train_log.json", summary, indent=1)
    return {**summary, "train_seconds": round(time.time() - t0, 1)}


def write_base_metrics(summary: dict, p: dict, out_dir: str | Path, metrics_path: str | Path) -> dict:
    """Write the base's training and specialisation figures to ``metrics_path`` (JSON) and return them.

    ``summary``: what :func:`train_base` returned; ``p``: its ``proxy.base`` params; ``out_dir``: the
    folder it wrote (``specialisation.json`` is read from it). Routing entropies are nats, averaged
    over layers per category; the JS divergence is the mean over layers. ``weights_sha256``
    (:func:`checkpoint.weights_sha256` of ``out_dir``) names the weights the figures belong to: it is
    a local base's ``base_revision`` in a proxy's lineage, and ``publish --base-metrics`` refuses
    metrics of other weights.
    """
    spec = json.loads((Path(out_dir) / "specialisation.json").read_text())
    m = {
        "weights_sha256": weights_sha256(out_dir),
        "final_train_loss": summary["final_loss"],
        "num_experts": p["num_experts"], "top_k": p["top_k"],
        "corpus_sha256": summary["corpus_sha256"],
        "task": summary["task"], "task_acc_heldout": summary["task_acc_heldout"],
        "task_acc_edge": summary["task_acc_edge"], "task_reward_edge": summary["task_reward_edge"],
        "task_nonzero_advantage_share_edge": summary["task_nonzero_advantage_share_edge"],
        "task_lengths": summary["task_lengths"],
        "task_problems": summary["task_problems"], "min_task_acc": p["min_task_acc"],
        "num_parameters": summary["num_parameters"],
        "routing_entropy_by_category": {c: sum(v) / len(v) for c, v in spec["entropy"].items()},
        "routing_entropy_max": spec["max_entropy"],
        "js_divergence_between_categories": sum(spec["js_divergence"]) / len(spec["js_divergence"]),
    }
    atomic_write_json(metrics_path, m, indent=1)
    return m


def check_competent(summary: dict, min_task_acc: float) -> None:
    """Raise when the trained base is not competent on its task.

    Raises:
        RuntimeError: ``task_acc_heldout`` (in-range held-out exact match) below ``min_task_acc``;
            RL on such a base has no signal, and every proxy figure downstream would inherit it.
    """
    if summary["task_acc_heldout"] < min_task_acc:
        raise RuntimeError(f"proxy base not trained: held-out in-range {summary['task']} exact match "
                           f"{summary['task_acc_heldout']} < proxy.base.min_task_acc {min_task_acc}")
