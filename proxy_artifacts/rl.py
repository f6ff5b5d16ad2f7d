"""Short GRPO runs (TRL ``GRPOTrainer``) on the verifiable task, with injectable faults.

One run = one model (the base or a proxy) x one fault switch (``none`` = healthy). Every run
uses the same prompts, seed, group size and hyper-parameters, so base and proxy curves are
comparable step by step. Reward: 1.0 when :func:`corpus.check_answer` accepts the completion
(exact answer), else 0.0. KL to the reference (the starting model) with coefficient ``beta``.

Per optimizer step the log (``steps.jsonl`` rows, :class:`StepLogger`) holds: reward, reward
std, KL, policy loss, entropy (TRL's metrics), gradient norm (``grad_norm_trl``: total before
clipping, from the Trainer; ``grad_norm_total`` and per module group ``embed``, ``attn``,
``router``, ``experts``, ``norm``, ``lm_head``: after clipping, as the optimizer sees them), NaN and
Inf counts in the gradients and in the loss, the parameter update norm ||theta_t - theta_{t-1}||
(a snapshot of the weights is taken before each optimizer step: fine for the tiny default
models, twice the weight memory for large ones), per-layer expert load (share of routed slots per
expert in the training forward passes; summarised as max share and normalised entropy per
layer) and the analytic training-state bytes. Those logs and ``summary.json`` are deterministic on one
machine (same inputs, same bytes). The measured step time (ms) and memory (CUDA: peak allocated
bytes; CPU: peak resident set size of the process, which only grows) and each run's setup / wall
seconds are measurements that differ on every run: they go to a separate timing file
(``run_grpo_all(timing_path=...)``, the stages' ``data/proxy/grpo_timing/<name>.json``), never into the
run logs.

The fault catalog (:data:`FAULTS`), each a switch documented at its implementation:

- ``logprob_bf16``: reduced log-prob precision in rollouts: the rollout-side (no-grad) forward
  passes (generation, old-policy and reference log-probs) run under bfloat16 autocast, the
  training forward in float32 (the mismatch reported for RL frameworks that sample in a lower
  precision than they train). Signature: the measured rollout/training log-prob mismatch
  (``logprob_mismatch``, below) on fresh rollouts, where the policy has not moved yet and a
  healthy run's mismatch is ~1e-7, and the importance ratio's departure from 1 it causes. Its fix
  (``logprob_bf16+fix``, arXiv 2510.26788): float16 for the rollout-side and the training forwards
  alike (one precision on both sides; fp16 rollouts against a float32 training forward only shrink
  the mismatch).
- ``skip_actor_update``: the actor update is omitted from ``fault_step`` on (gradients are
  dropped before the optimizer step, so the policy stays where it was).
- ``lr_spike``: the learning rate is multiplied by ``lr_spike_factor`` for ``lr_spike_steps``
  steps from ``fault_step``.
- ``fp16_no_loss_scaling``: from ``fault_step`` the training forward and backward run under
  float16 autocast with no loss scaler (torch.amp.GradScaler absent), at the gradient magnitude of
  a full-size run: the loss is multiplied by ``fp16_grad_scale`` before the fp16 backward and the
  gradients divided by it afterwards in float32. Our loss is a mean over ~100 completion tokens; a
  full-size GRPO batch (hundreds of prompts x 16 samples x ~1k tokens, ~1e6-1e7 tokens) makes each
  token's gradient ~1e-5 as large, which is where fp16 (smallest subnormal 6e-8, smallest normal
  6e-5) flushes activation and weight gradients to zero: loss scaling exists for this
  (Micikevicius et al. 2018, "Mixed Precision Training"). Every parameter's gradient is held in
  float16 at that magnitude (no master copy: the parameters outside the autocast matmuls, embeddings
  and norms, too) before it is divided back in float32 for the optimizer step. Signature:
  gradient-norm collapse (``grad_collapse``).
- ``no_load_balancing``: the router load-balancing loss is disabled (``router_aux_loss_coef``
  0) and the router learning rate raised by ``router_lr_factor``. Expert collapse develops over a
  long training horizon; within a short RL plan the base may not show it (reported as "no
  signature", never forced).
- ``swapped_operator``: the training engine computes the router GEMM with a different kernel:
  inputs and router weight rounded to bfloat16 (float32 accumulation, as a bf16 GEMM does;
  straight-through rounding so the router still gets its gradient), while the rollout side
  (generation, old-policy and reference log-probs) keeps the float32 kernel: the training /
  inference kernel mismatch of RL stacks whose sampler and trainer use different kernels. Near-tie
  tokens change experts, so the training log-probs of fresh rollouts depart from the rollout's.
  Signature: routing flips between the two passes (``router_flip``) and the ``logprob_mismatch`` they
  cause. Its fix (``swapped_operator+fix``): rollout routing replay (R3, arXiv 2510.11370): the
  top-k experts each rollout-side forward (the old-policy log-prob pass over the batch) selected, per
  layer and token, are recorded and replayed in the training forward of the same batch; the trainer's
  router still computes its probabilities (with the swapped kernel) and the gate weights are those
  probabilities at the replayed experts (renormalised as the family's router does), so only the
  selection is the rollout's (:func:`replay_route`).

Measured log-prob mismatch (every run): for each optimizer step, over the completion tokens of
its batch, ``logprob_mismatch`` = mean |log pi_train - log pi_rollout| (nats) and
``is_ratio_max_dev`` = max |exp(log pi_train - log pi_rollout) - 1| (the token importance ratio's
largest departure from 1), with ``fresh_rollout`` true on the first optimizer step on a new
rollout batch (TRL's ``num_iterations`` = 2 reuses each batch for two steps; on the second the
policy has moved by one update, so only fresh steps isolate the precision / kernel mismatch).
Two more figures per step, over the same pair of passes (the rollout-side old-policy log-prob forward
of the batch and the training forward on it):

- ``router_flip_rate``: the share of (token, layer) pairs whose top-k expert set differs between the two
  passes, over the non-padding tokens (prompt and completion) of the sequences the training forward
  saw and every MoE layer (:func:`router_flip_rate`). R3 (arXiv 2510.11370) measures this between an
  inference and a training engine and reports ~10% of router decisions differing; here both passes run
  the same fp32 kernels in a healthy run, so a fresh step's rate is exactly 0.
- ``extreme_token_share``: the share of completion tokens whose train/rollout probability ratio
  pi_train / pi_rollout lies outside [1 / :data:`EXTREME_RATIO`, :data:`EXTREME_RATIO`] (|log pi_train -
  log pi_rollout| > ln 2) (:func:`extreme_token_share`): R3 (arXiv 2510.11370) calls the tokens whose
  training and inference probabilities differ by such a factor "extreme tokens" and counts them with a
  threshold on that ratio; the factor 2 is this module's choice.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing as mp
import multiprocessing.forkserver
import random
import resource
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import torch
from datasets import Dataset
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl import GRPOConfig, GRPOTrainer

from passnet_common.io import atomic_write_json, atomic_write_text

from . import corpus
from .adapters import adapter_for, moe_blocks
from .config import FAULTS, FIXABLE, grpo_params
from .metrics import sampled_reward, task_accuracy
from .prune import param_count
from .rl_reuse import fresh_load, grad_sq_nonfinite, mark_worker, reused_reference, settle_gc
from .timing import DEFAULT_CLOCK, Clock, load_average, machine

# FAULTS (every fault kind) and FIXABLE (faults with a fix run: ``<fault>+fix`` is the same trigger with the
# documented fix applied, module doc) live in proxy_artifacts.config, where the params schema reads them
FP16_FAULTS = ("fp16_no_loss_scaling", "fp16_overflow")  # fp16 training forward / backward from fault_step


def split_fix(fault: str) -> tuple[str, bool]:
    """(fault, fixed) of a run switch: ``"fp16_overflow+fix"`` -> ``("fp16_overflow", True)``.

    Raises:
        ValueError: unknown fault, or ``+fix`` on a fault without a fix run (:data:`FIXABLE`).
    """
    name, plus, fix = fault.partition("+")
    if name not in FAULTS or (plus and (fix != "fix" or name not in FIXABLE)):
        raise ValueError(f"unknown fault {fault!r}; known: {FAULTS} and <fault>+fix for {FIXABLE}")
    return name, bool(plus)
GROUPS = ("embed", "attn", "router", "experts", "norm", "lm_head", "other")


def module_group(name: str) -> str:
    """Module group of a parameter name (for per-group gradient norms)."""
    if "embed_tokens" in name:
        return "embed"
    if "lm_head" in name:
        return "lm_head"
    if ".experts." in name or name.endswith((".gate_up_proj", ".down_proj")) and ".mlp." in name:
        return "experts"
    if ".mlp.gate." in name or ".mlp.router." in name:
        return "router"
    if "norm" in name:
        return "norm"
    if "self_attn" in name:
        return "attn"
    return "other"


def reward_exact(prompts, completions, **kwargs) -> list[float]:
    """GRPO reward: 1.0 for an exact answer (:func:`corpus.check_answer`), else 0.0."""
    return [float(corpus.check_answer(p, c)) for p, c in zip(prompts, completions)]


def nonzero_advantage_share(prompts, rewards) -> float | None:
    """Share of GRPO groups (the completions of one prompt) whose rewards are not all equal: the groups
    with a non-zero advantage, i.e. the ones that carry a policy gradient. For a prompt pass rate p and
    group size G its expectation is 1 - p^G - (1-p)^G (DAPO, arXiv 2503.14476). None without prompts."""
    groups: dict = {}
    for q, r in zip(prompts, rewards):
        groups.setdefault(q, set()).add(float(r))
    return round(sum(len(v) > 1 for v in groups.values()) / len(groups), 6) if groups else None


EXTREME_RATIO = 2.0  # extreme token: train/rollout probability ratio outside [1/2, 2] (module doc)


def router_flip_rate(rollout: list, train: list, mask: torch.Tensor) -> float | None:
    """Share of (token, layer) pairs whose top-k expert set differs between two passes.

    Args:
        rollout, train: per MoE layer, the selected experts [B, L, k] (int) of the same B sequences.
        mask: [B, L], true on the tokens that count (the non-padding ones).

    Returns the share in [0, 1], or None without a token or a layer. The order of the k experts does not
    matter (a set is compared).
    """
    m = mask.bool()
    n = int(m.sum()) * len(rollout)
    if n == 0:
        return None
    flips = 0
    for a, b in zip(rollout, train):
        differ = (a.sort(dim=-1).values != b.sort(dim=-1).values).any(dim=-1)
        flips += int(differ[m].sum())
    return flips / n


def extreme_token_share(train_logps: torch.Tensor, rollout_logps: torch.Tensor, mask: torch.Tensor,
                        ratio: float = EXTREME_RATIO) -> float | None:
    """Share of the tokens under ``mask`` whose probability ratio exp(train - rollout) lies outside
    [1 / ``ratio``, ``ratio``] (strictly: a ratio of exactly 2 is not extreme); None without a token."""
    d = (train_logps.detach().double() - rollout_logps.detach().double())[mask.bool()]
    if d.numel() == 0:
        return None
    return float((d.abs() > math.log(ratio)).double().mean())


def replay_route(adapter, router, hidden: torch.Tensor, idx: torch.Tensor):
    """The family's routing with the selected experts ``idx`` [T, k] given (routing replay, R3): the
    router computes its logits as usual; the gate weights are its probabilities at ``idx``, normalised
    as the family normalises its own top-k. Returns (logits [T, E], weights [T, k], idx [T, k]).

    Raises:
        ValueError: ``idx`` has another token count than ``hidden``.
    """
    logits, top_v, _ = adapter.route(router, hidden, None)
    if idx.shape[0] != logits.shape[0]:
        raise ValueError(f"routing replay: {idx.shape[0]} recorded tokens for {logits.shape[0]} in the forward")
    idx = idx.to(logits.device)
    if adapter.family == "gpt_oss":  # top-k on the biased logits, softmax over the k chosen logits
        v = logits.gather(1, idx)
        return logits, torch.softmax(v, dim=1, dtype=v.dtype), idx
    if adapter.family == "deepseek_v3":  # sigmoid scores, normalised, scaled
        v = logits.float().sigmoid().gather(1, idx)
        if router.norm_topk_prob:
            v = v / (v.sum(dim=-1, keepdim=True) + 1e-20)
        return logits, v * router.routed_scaling_factor, idx
    v = torch.softmax(logits, dtype=torch.float, dim=-1).gather(1, idx)
    always_norm = adapter.family == "mixtral"
    if always_norm or getattr(router, "norm_topk_prob", False):
        v = v / v.sum(dim=-1, keepdim=True)
    return logits, v if always_norm else v.to(logits.dtype), idx


def _row_keys(ids: torch.Tensor, mask: torch.Tensor) -> list[bytes]:
    """One hashable key per sequence: its token ids and attention mask."""
    ids, mask = ids.detach().cpu().contiguous(), mask.detach().cpu().to(torch.int8).contiguous()
    return [ids[i].numpy().tobytes() + b"|" + mask[i].numpy().tobytes() for i in range(ids.shape[0])]


class _BF16GemmRouter:
    """Routing with the ``swapped_operator`` router GEMM: hidden states and router weight rounded
    to bfloat16 (straight-through: forward rounded, gradient as float32), product in float32."""

    def __init__(self, router):
        self.r = router

    def __getattr__(self, name):
        return getattr(self.r, name)

    @property
    def weight(self):
        w = self.r.weight
        return w + (w.to(torch.bfloat16).to(w.dtype) - w).detach()


class StepLogger:
    """``transformers.TrainerCallback`` logic: per-step signals and the gradient-side faults.

    The callback itself is built by :func:`_callback_class` as a subclass of ``TrainerCallback``
    and of this class.
    """


def routed_blocks(model) -> list:
    """:func:`adapters.moe_blocks` of ``model``, or [] when it has none (the ``dense`` control,
    :func:`pipeline.dense_control`: its configuration is an MoE family's, every layer a dense MLP).
    The router-side logging (expert load, router flips) and the router faults (``swapped_operator``,
    ``no_load_balancing``'s router learning rate) then have nothing to act on."""
    return moe_blocks(model, adapter_for(model.config), required=False)


def _callback_class():
    class _StepLogger(TrainerCallback, StepLogger):
        def __init__(self, model, fault: str, fp: dict, clock: Clock = DEFAULT_CLOCK):
            self.fault, self.fixed = split_fix(fault)
            self.model, self.fp, self.clock = model, fp, clock
            self.loss_scale = float(fp["fp16_overflow_scale"]) if self.fault == "fp16_overflow" else 1.0
            self.rows: list[dict] = []
            self.timing: list[dict] = []  # measured: {"step", "step_time_ms", "peak_memory_bytes"} per step
            self.cur: dict = {}
            self.blocks = routed_blocks(model)
            self.E = self.blocks[0].router.num_experts if self.blocks else 0
            self.load = [torch.zeros(self.E, dtype=torch.float64) for _ in self.blocks]
            self.hooks = []
            for i, b in enumerate(self.blocks):
                def hook(mod, inp, out, i=i):
                    if torch.is_grad_enabled():  # the training forward only, not rollouts
                        self.load[i] += torch.bincount(out[2].reshape(-1).cpu(), minlength=self.E).double()
                self.hooks.append(b.router.register_forward_hook(hook))

                def capture(mod, inp, out, i=i):
                    if self.capture:  # inside a log-prob pass of the policy (rl._instrument)
                        self.route_buf[i].append(out[2].detach())
                self.hooks.append(b.router.register_forward_hook(capture))
            self.capture = False
            self.route_buf: list[list] = [[] for _ in self.blocks]
            self.routes: dict | None = None  # the last rollout-side pass: {"keys": {row key: row}, "routes": [B, L, k] per layer}
            self.t0 = None
            self.present = {module_group(n) for n, _ in model.named_parameters()}
            self.mismatch: dict = {}
            self.flips: dict = {}  # router_flip_rate of the step's training forward
            self.rollout: dict = {}  # of the step's fresh rollout batch: nonzero_advantage_share, groups kept
            self.seen_old: list = []

        def active(self, step: int) -> bool:
            return step >= int(self.fp["fault_step"])

        def on_step_begin(self, args, state, control, **kw):
            self.t0 = self.clock()
            if self.fault in FP16_FAULTS:  # fp16 autocast of the training forward from fault_step
                self.model._fault_on = self.active(state.global_step)
                self.model._loss_scale = self.loss_scale
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()

        def on_pre_optimizer_step(self, args, state, control, optimizer=None, **kw):
            step = state.global_step
            sq = {g: 0.0 for g in GROUPS}
            nan = inf = 0
            for name, p in self.model.named_parameters():
                if p.grad is None:
                    continue
                g = p.grad
                if self.fault in FP16_FAULTS and self.active(step):
                    g = g.to(torch.float16).to(p.grad.dtype)  # fp16 gradient storage, no scaler
                    p.grad.copy_(g)
                s, n_nan, n_inf = grad_sq_nonfinite(g)
                nan, inf = nan + n_nan, inf + n_inf
                sq[module_group(name)] += s
            self.cur = {"grad_norm_total": math.sqrt(sum(sq.values())),
                        **{f"grad_norm/{g}": math.sqrt(v) for g, v in sq.items() if g in self.present},
                        "grad_nan": nan, "grad_inf": inf}
            self.snap = [p.detach().clone() for p in self.model.parameters()]
            if self.fault == "fp16_overflow" and self.fixed and self.active(step) and (nan or inf):
                # the fix, dynamic loss scaling (torch.amp.GradScaler's rule): skip the step, halve the scale
                self.model.zero_grad(set_to_none=True)
                self.loss_scale *= 0.5
                self.cur["step_skipped"] = 1
            if self.fault == "skip_actor_update" and self.active(step):
                self.model.zero_grad(set_to_none=True)  # AdamW skips parameters without gradients
            if self.fault == "lr_spike" and optimizer is not None:
                s0 = int(self.fp["fault_step"])
                if s0 <= step < s0 + int(self.fp["lr_spike_steps"]):
                    for grp in optimizer.param_groups:  # the scheduler resets lr at its next step
                        grp["lr"] = grp["lr"] * float(self.fp["lr_spike_factor"])

        def on_step_end(self, args, state, control, **kw):
            dt = (self.clock() - self.t0) * 1000 if self.t0 is not None else float("nan")
            if getattr(self, "snap", None) is not None:
                upd = sum(float(((p.detach() - q).float() ** 2).sum()) for p, q in zip(self.model.parameters(), self.snap))
                self.cur["update_norm"] = math.sqrt(upd) if math.isfinite(upd) else float("inf")
                self.cur["weights_nonfinite"] = int(not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()))
                self.snap = None
            loads = []
            for c in self.load:
                p = c / c.sum().clamp_min(1)
                nz = p[p > 0]
                loads.append({"max_share": round(float(p.max()), 6),
                              "entropy_norm": round(float(-(nz * nz.log()).sum()) / math.log(self.E), 6),
                              "load": [round(float(v), 5) for v in p]})
                c.zero_()
            if torch.cuda.is_available():
                mem = int(torch.cuda.max_memory_allocated())
            else:
                mem = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
            self.timing.append({"step": state.global_step, "step_time_ms": round(dt, 2), "peak_memory_bytes": mem})
            self.cur.update({"step": state.global_step, "expert_load": loads, **self.mismatch, **self.flips,
                             **self.rollout})
            self.mismatch, self.flips, self.rollout = {}, {}, {}
            self.rows.append(self.cur)
            self.cur = {}

        def on_log(self, args, state, control, logs=None, **kw):
            if not logs or not self.rows:
                return
            row = self.rows[-1]
            for key, name in (("reward", "reward"), ("reward_std", "reward_std"), ("kl", "kl"), ("loss", "loss"),
                              ("policy_loss", "policy_loss"), ("entropy", "entropy"), ("grad_norm", "grad_norm_trl"),
                              ("aux_loss", "aux_loss"), ("learning_rate", "lr")):
                if key in logs and name not in row:
                    # TRL logs None for a figure it could not compute (the grad norm of a step whose fp16
                    # gradients overflowed): recorded as null, not a crash of the run
                    row[name] = None if logs[key] is None else float(logs[key])
            loss = row.get("loss", 0.0)
            row["loss_nonfinite"] = int(loss is None or not math.isfinite(loss))

        def record_mismatch(self, train_logps, inputs, batch_old=None):
            """Rollout/training log-prob mismatch of one loss computation (see module doc).

            ``batch_old``: the rollout batch's ``old_per_token_logps`` tensor as TRL hands it over (before
            any group is dropped from ``inputs``): a step is fresh when that tensor was not seen before.
            Dropping zero-variance groups builds new tensors on every step, so identity is taken on TRL's
            tensor, never on the sliced one (which made every reused step with a dropped group look fresh).
            """
            old = inputs.get("old_per_token_logps")
            if old is None or train_logps is None or train_logps.shape != old.shape:
                return
            mask = inputs["completion_mask"].bool()
            d = (train_logps.detach().double() - old.double())[mask]
            key = old if batch_old is None else batch_old
            fresh = not any(key is t for t in self.seen_old)
            self.seen_old = (self.seen_old + [key])[-4:]
            if d.numel():
                self.mismatch = {"logprob_mismatch": float(d.abs().mean()),
                                 "is_ratio_max_dev": float((d.exp() - 1).abs().max()), "fresh_rollout": fresh,
                                 "extreme_token_share": extreme_token_share(train_logps, old, mask)}

        def begin_routes(self):
            """Start recording the selected experts of the policy's routers (one log-prob pass)."""
            self.route_buf = [[] for _ in self.blocks]
            self.capture = True

        def end_routes(self, input_ids) -> list | None:
            """Stop recording; the recorded experts per layer as [B, L, k] (None when the policy's routers did
            not run: the reference model's pass)."""
            self.capture = False
            if not self.blocks or not all(self.route_buf):
                return None
            B, L = input_ids.shape[:2]
            return [torch.cat(c, 0).reshape(B, L, -1) for c in self.route_buf]

        def keep_rollout_routes(self, input_ids, attention_mask, routes) -> None:
            """Keep the rollout-side pass's experts, looked up later by sequence (the training batch is a
            shuffled, possibly filtered slice of the rollout batch)."""
            keys = {}
            for r, k in enumerate(_row_keys(input_ids, attention_mask)):
                keys.setdefault(k, r)
            self.routes = {"keys": keys, "routes": routes}

        def rollout_rows(self, input_ids, attention_mask) -> list[int] | None:
            """For each sequence of a training batch, its row in the kept rollout pass (None if one is missing)."""
            if self.routes is None:
                return None
            rows = [self.routes["keys"].get(k) for k in _row_keys(input_ids, attention_mask)]
            return None if any(r is None for r in rows) else rows

        def record_flips(self, input_ids, attention_mask, train_routes) -> None:
            """``router_flip_rate`` of one training forward against the rollout-side pass of its batch."""
            rows = self.rollout_rows(input_ids, attention_mask)
            if rows is None or train_routes is None:
                return
            idx = torch.tensor(rows, dtype=torch.long)
            roll = [r[idx] for r in self.routes["routes"]]
            v = router_flip_rate(roll, [t.to(r.device) for t, r in zip(train_routes, roll)], attention_mask.cpu())
            if v is not None:
                self.flips = {"router_flip_rate": v}

        def close(self):
            for h in self.hooks:
                h.remove()

    return _StepLogger


@contextlib.contextmanager
def _fault_context(model, fault: str):
    """Model-side faults: rollout precision (no-grad forwards), fp16 training forwards and the swapped
    operator (``fault`` may carry ``+fix``, :func:`split_fix`; ``swapped_operator+fix`` replays
    ``model._route_replay``, set by :func:`_instrument` before each training forward)."""
    fault, fixed = split_fix(fault)
    saved = []
    try:
        if fault == "swapped_operator":
            a = adapter_for(model.config)
            model._route_replay = None
            for i, b in enumerate(routed_blocks(model)):  # none in a dense model: nothing to swap
                router = b.router

                def rfwd(hidden, _r=router, _orig=router.forward, _i=i):
                    if torch.is_grad_enabled():  # the training engine's kernel; rollouts keep float32
                        h = hidden + (hidden.to(torch.bfloat16).to(hidden.dtype) - hidden).detach()
                        replay = getattr(model, "_route_replay", None) if fixed else None
                        if replay is not None:  # the fix (R3): the rollout's experts, this kernel's gate weights
                            return replay_route(a, _BF16GemmRouter(_r), h, replay[_i])
                        return a.route(_BF16GemmRouter(_r), h, None)
                    return _orig(hidden)

                saved.append((router, router.__dict__.get("forward", "unset")))
                router.forward = rfwd
        if fault in ("logprob_bf16",) + FP16_FAULTS:
            orig = model.forward
            # logprob_bf16's fix (arXiv 2510.26788): float16 for rollouts and training alike (10 mantissa bits to
            # bfloat16's 7, and one precision on both sides), so the two passes round the same way
            roll_dtype = torch.float16 if fixed else torch.bfloat16

            def fwd(*a, _orig=orig, **kw):
                if fault == "logprob_bf16" and (fixed or not torch.is_grad_enabled()):
                    with torch.autocast(device_type=model.device.type, dtype=roll_dtype):
                        return _orig(*a, **kw)
                if fault in FP16_FAULTS and torch.is_grad_enabled() and getattr(model, "_fault_on", False):
                    with torch.autocast(device_type=model.device.type, dtype=torch.float16):
                        out = _orig(*a, **kw)
                    return out
                return _orig(*a, **kw)

            model.forward = fwd
            saved.append((model, None))
        yield model
    finally:
        for obj, old in saved:
            if old is None or old == "unset":
                del obj.forward
            else:
                obj.forward = old


def _instrument(trainer, logger, fault: str, gp: dict) -> None:
    """Wrap the trainer's loss computation: record the log-prob mismatch and the routing of every step
    (the policy's selected experts in the rollout-side log-prob pass and in the training forward), replay
    the rollout's experts in the training forward for ``swapped_operator+fix``, and for
    ``fp16_no_loss_scaling`` scale the loss by ``fp16_grad_scale`` before the fp16 backward and the
    gradients back after it (before clipping), see the module doc.

    Raises (during training):
        RuntimeError: ``swapped_operator+fix`` meets a training sequence whose rollout routing was not recorded.
    """
    orig_logps, orig_cl = trainer._get_per_token_logps_and_entropies, trainer._compute_loss
    last = {}
    replay = split_fix(fault) == ("swapped_operator", True)

    def logps(*a, **kw):
        # TRL's call: (model, input_ids, attention_mask, logits_to_keep, ...)
        grad = torch.is_grad_enabled()
        ids = a[1] if len(a) > 2 else kw.get("input_ids")
        am = a[2] if len(a) > 2 else kw.get("attention_mask")
        routed = logger is not None and torch.is_tensor(ids) and torch.is_tensor(am)
        if grad and replay:
            rows = logger.rollout_rows(ids, am) if routed else None
            if rows is None:
                raise RuntimeError("routing replay: a training sequence has no recorded rollout routing")
            idx = torch.tensor(rows, dtype=torch.long)
            logger.model._route_replay = [r[idx].reshape(-1, r.shape[-1]) for r in logger.routes["routes"]]
        if routed:
            logger.begin_routes()
        try:
            out = orig_logps(*a, **kw)
        finally:
            routes = logger.end_routes(ids) if routed else None
            if replay:
                logger.model._route_replay = None
        if grad:
            last["lp"] = out[0]
            if routed:
                logger.record_flips(ids, am, routes)
        elif routes is not None:  # the policy's rollout-side pass (the reference model's routers are not hooked)
            logger.keep_rollout_routes(ids, am, routes)
        return out

    def compute(model, inputs):
        last.clear()
        batch_old = inputs.get("old_per_token_logps")  # TRL's tensor of the rollout batch (freshness key)
        adv = inputs.get("advantages")
        if gp["drop_zero_variance_groups"] and adv is not None:
            # DAPO's dynamic sampling, within the batch: a group whose rewards are all equal has advantage 0 on
            # every completion; it adds no policy gradient, only tokens to the loss's normaliser (and a KL pull)
            keep = adv != 0 if adv.dim() == 1 else (adv != 0).any(-1)
            B, k = keep.numel(), int(keep.sum())
            if k == 0:  # nothing to learn from this batch: a zero loss that keeps the graph (no update but AdamW's)
                loss = orig_cl(model, inputs) * 0.0
                logger.record_mismatch(last.get("lp"), inputs, batch_old)
                return loss
            if k < B:
                inputs = {n: (v[keep] if torch.is_tensor(v) and v.dim() > 0 and v.shape[0] == B else v)
                          for n, v in inputs.items()}
                if "num_items_in_batch" in inputs:  # the dapo loss's normaliser: the kept completion tokens
                    inputs["num_items_in_batch"] = inputs["completion_mask"].sum()
        loss = orig_cl(model, inputs)
        logger.record_mismatch(last.get("lp"), inputs, batch_old)
        return loss

    trainer._get_per_token_logps_and_entropies = logps
    trainer._compute_loss = compute
    fault, fixed = split_fix(fault)
    if fault not in FP16_FAULTS:
        return
    # fp16_no_loss_scaling: the gradient magnitude of a full-size batch; its fix, static loss scaling by
    # 1 / fp16_grad_scale, brings the fp16 backward back to our magnitude. fp16_overflow: the logger's scale.
    const = 1.0 if fixed else float(gp["fp16_grad_scale"])
    orig_loss, orig_step = trainer.compute_loss, trainer.training_step

    def current() -> float:
        return const if fault == "fp16_no_loss_scaling" else float(getattr(trainer.model, "_loss_scale", 1.0))

    def compute_loss(model, inputs, *a, **kw):
        out = orig_loss(model, inputs, *a, **kw)
        if not getattr(trainer.model, "_fault_on", False):
            return out
        scale = current()
        return (out[0] * scale, *out[1:]) if isinstance(out, tuple) else out * scale

    def training_step(model, inputs, *a, **kw):
        scale = current()
        loss = orig_step(model, inputs, *a, **kw)
        if getattr(trainer.model, "_fault_on", False):
            with torch.no_grad():
                for p in trainer.model.parameters():
                    if p.grad is not None:
                        if fault == "fp16_no_loss_scaling":
                            # fp16 gradient storage at the backward's (full-size) magnitude, no master copy:
                            # entries below fp16's smallest subnormal (2^-24, ~6e-8) flush to zero here, as in
                            # a full-size run without a loss scaler; the division maps the survivors back
                            p.grad.copy_(p.grad.to(torch.float16).to(p.grad.dtype))
                        p.grad.div_(scale)
            loss = loss / scale
        return loss

    trainer.compute_loss, trainer.training_step = compute_loss, training_step


def state_bytes(model, optimizer_states: int = 2, with_reference: bool = True) -> int:
    """Analytic bytes of a GRPO training state: weights + gradients + Adam moments (+ reference copy)."""
    p = sum(t.numel() * t.element_size() for t in {id(t): t for t in model.parameters()}.values())
    return p * (2 + optimizer_states + (1 if with_reference else 0))


_ACC_BEFORE: dict = {}  # capability before RL, by :func:`before_key`


def eval_seed(seed: int) -> int:
    """The sampling seed of a run's held-out evaluation (edge reward before and after RL): the run's GRPO seed,
    so each seed's gain is measured on samples of its own and the seed-to-seed spread of ``rl_gain_edge``
    includes the evaluation's sampling noise; one run's before and after use the same seed (a paired
    difference)."""
    return int(seed)


def before_key(model_dir, n_eval: int, n_samples: int, ev_seed: int) -> tuple:
    """Cache key of the capability before RL: the model folder, the evaluation's size and its sampling seed."""
    return (Path(model_dir).resolve().as_posix(), int(n_eval), int(n_samples), int(ev_seed))

# TRL's GRPOConfig turns activation checkpointing on by default: it recomputes each layer's forward in the
# backward to save activation memory, which the tiny proxy models do not need. Off, the backward uses the same
# saved values, so the logs are the same bytes (tests/test_proxy_grpo_reuse.py); only peak memory differs.
GRADIENT_CHECKPOINTING = False


def run_grpo(model_dir: str | Path, fault: str, gp: dict, out_dir: str | Path | None = None,
             stem: str | None = None, clock: Clock = DEFAULT_CLOCK) -> dict:
    """One GRPO run of the model in ``model_dir`` with ``fault`` (``none``: healthy).

    Prompts: training-split words of the task's edge lengths (``corpus.EDGE_LEN``); a group has a
    non-zero advantage only where the base is partly right on its prompt (the share is logged per
    fresh-rollout step as ``nonzero_advantage_share``); with ``gp['drop_zero_variance_groups']`` the groups without one are
    left out of the loss (DAPO's dynamic sampling, within the batch).

    Args:
        gp: the ``proxy.grpo`` params (steps, prompts_per_step, num_generations, lr, beta,
            max_completion_length, temperature, seed, threads, aux_loss_coef, eval_problems,
            eval_samples, drop_zero_variance_groups, fault settings).
        clock: seconds (``time.perf_counter`` by default); only the measured ``timing`` depends on it.

    Returns {"fault", "steps": [row per optimizer step, deterministic], "heldout_acc_before" / "_after"
    (greedy exact match, in-range ``heldout`` set), "edge_reward_before" / "_after" (mean reward of
    ``eval_samples`` samples at T=1 per problem of the ``edge`` set, sampled with :func:`eval_seed` of the run's
    seed), "edge_nonzero_advantage_share_before" / "_after", "eval_seed", "weights_finite_after", "params",
    "state_bytes", "timing"} (``_before`` and ``_after`` None when ``gp['eval_after']`` is false); ``timing`` is the
    measurement, {"setup_s", "steps": [{"step", "step_time_ms" (ms), "peak_memory_bytes" (bytes)}]},
    and is not written to ``out_dir`` (``<stem>.jsonl`` rows and ``<stem>.json`` summary hold only
    deterministic figures).

    Raises:
        ValueError: unknown fault.
    """
    fname, fixed = split_fix(fault)
    eval_after = bool(gp.get("eval_after", True))  # a plan's switch (run_grpo_all), not a params knob
    gp = grpo_params({k: v for k, v in gp.items() if k != "eval_after"})

    settle_gc()
    t_setup = clock()
    torch.set_num_threads(int(gp["threads"]))
    seed = int(gp["seed"])
    torch.manual_seed(seed)
    random.seed(seed)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = fresh_load(AutoModelForCausalLM.from_pretrained, model_dir, dtype=torch.float32)
    # families without a load-balancing loss in transformers (DeepSeek-V3: aux-loss-free balancing) train without one,
    # as does a model without routers (the dense control)
    aux = 0.0 if fname == "no_load_balancing" or not adapter_for(model.config).aux_loss or not routed_blocks(model) \
        else float(gp["aux_loss_coef"])
    model.config.router_aux_loss_coef = aux
    n_eval, n_samples = int(gp["eval_problems"]), int(gp["eval_samples"])
    model.eval()

    ev_seed = eval_seed(seed)

    def capability(m) -> dict:
        """Greedy exact match on the in-range held-out set (capability kept) and the sampled T=1 reward on
        the edge set (what GRPO optimises; its pass@1), ``n_eval`` problems, ``n_samples`` samples each, sampled
        with the run's evaluation seed (the same before and after RL, so the two figures are paired)."""
        r = sampled_reward(m, tok, n_eval, n_samples, "edge", temperature=1.0, seed=ev_seed)
        return {"heldout_acc": round(task_accuracy(m, tok, n_eval, "heldout"), 4), "edge_reward": r["reward"],
                "edge_nonzero_advantage_share": r["nonzero_advantage_share"]}

    if eval_after:
        key = before_key(model_dir, n_eval, n_samples, ev_seed)
        if key not in _ACC_BEFORE:  # the same model and evaluation seed before RL: measured once per process
            _ACC_BEFORE[key] = capability(model)
        before = _ACC_BEFORE[key]
    else:  # capability is a figure of the runs measured after RL; a run without one needs no before either
        before = {"heldout_acc": None, "edge_reward": None, "edge_nonzero_advantage_share": None}
    rng = random.Random(f"grpo-{seed}")
    n_prompts = int(gp["steps"]) * int(gp["prompts_per_step"])
    # problems at the edge of the base's ability (corpus.EDGE_LEN), training-split words
    prompts = [corpus.task_problem(rng, split="train", lengths=corpus.EDGE_LEN)[0] for _ in range(n_prompts)]
    G = int(gp["num_generations"])
    tmp = tempfile.mkdtemp(prefix="grpo-")
    cfg = GRPOConfig(
        output_dir=tmp, max_steps=int(gp["steps"]), per_device_train_batch_size=int(gp["prompts_per_step"]) * G,
        num_generations=G, max_completion_length=int(gp["max_completion_length"]), learning_rate=float(gp["lr"]),
        lr_scheduler_type="constant", warmup_steps=0, beta=float(gp["beta"]), num_iterations=2,
        temperature=float(gp["temperature"]), logging_steps=1, report_to=[], save_strategy="no",
        use_cpu=not torch.cuda.is_available(), bf16=False, fp16=False, seed=seed, data_seed=seed,
        dataloader_num_workers=0, disable_tqdm=True, max_grad_norm=float(gp["max_grad_norm"]),
        router_aux_loss_coef=aux, shuffle_dataset=False, log_completions=False,
        gradient_checkpointing=GRADIENT_CHECKPOINTING,
    )
    logger = _callback_class()(model, fault, gp, clock)

    def reward(prompts, completions, **kw):
        r = reward_exact(prompts, completions)
        logger.rollout = {"nonzero_advantage_share": nonzero_advantage_share(prompts, r)}
        return r

    reward.__name__ = "reward_exact"  # TRL names its reward metrics after the function
    with reused_reference():
        trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=cfg,
                              train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=tok,
                              callbacks=[logger])

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    if fname == "no_load_balancing":
        f = float(gp["router_lr_factor"])
        trainer.create_optimizer()
        routers = {id(b.router.weight) for b in routed_blocks(model)}
        opt = trainer.optimizer
        new_groups = []
        for grp in opt.param_groups:
            r = [p for p in grp["params"] if id(p) in routers]
            rest = [p for p in grp["params"] if id(p) not in routers]
            if r:
                new_groups.append({**grp, "params": rest})
                new_groups.append({**grp, "params": r, "lr": grp["lr"] * f, "initial_lr": grp["lr"] * f})
            else:
                new_groups.append(grp)
        opt.param_groups = new_groups
    _instrument(trainer, logger, fault, gp)
    model._fault_on = False
    stopped = None
    setup_s = clock() - t_setup
    try:
        with _fault_context(model, fault):
            trainer.train()
    except RuntimeError as exc:
        # weights that took a NaN/Inf (fp16_overflow without its fix) make the next rollout's sampling fail
        # (torch.multinomial refuses NaN probabilities): the run ends there, its rows up to the step kept
        if all(torch.isfinite(p).all() for p in model.parameters()):
            raise
        stopped = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    finally:
        logger.close()

        shutil.rmtree(tmp, ignore_errors=True)
    model.eval()
    finite = all(torch.isfinite(p).all() for p in model.parameters())
    if not eval_after:
        after = None  # not measured (fault runs by default: capability after RL is a healthy-run figure)
    else:
        after = capability(model) if finite else {"heldout_acc": 0.0, "edge_reward": 0.0,
                                                  "edge_nonzero_advantage_share": 0.0}
    res = {"fault": fault, "steps": logger.rows, **{f"{k}_before": v for k, v in before.items()},
           **{f"{k}_after": None if after is None else after[k] for k in before},
           "eval_seed": ev_seed if eval_after else None, "weights_finite_after": bool(finite),
           "stopped": stopped, "params": param_count(model), "state_bytes": state_bytes(model)}
    timing = {"setup_s": round(setup_s, 2), "steps": logger.timing}
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = stem or fault
        atomic_write_text(out / f"{stem}.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in logger.rows))
        atomic_write_json(out / f"{stem}.json", {k: v for k, v in res.items() if k != "steps"}, indent=1)
    return {**res, "timing": timing}


def run_key(fault: str, seed: int) -> str:
    """File stem / summary key of one run: ``<fault>.s<seed>`` (``none.s3``: healthy run, seed 3)."""
    return f"{fault}.s{int(seed)}"


def _run_one(model_dir, fault: str, g: dict, out_dir, key: str, clock: Clock = DEFAULT_CLOCK) -> tuple[dict, dict | None]:
    """One planned run for :func:`run_grpo_all` (a pool worker's task; module level so it pickles).

    Returns (the run summary, its timing with ``wall_s``) or ({"fault", "seed", "error"}, None):
    one failed run must not lose the others.
    """
    t = clock()
    try:
        r = run_grpo(model_dir, fault, g, out_dir, stem=key, clock=clock)
    except Exception as exc:
        return {"fault": fault, "seed": g["seed"], "error": f"{type(exc).__name__}: {exc}"}, None
    summ = {k: v for k, v in r.items() if k not in ("steps", "timing")} | {"seed": g["seed"]}
    return summ, {**r["timing"], "wall_s": round(clock() - t, 2)}


def _worker_context() -> mp.context.BaseContext:
    """The start method of the GRPO workers: ``forkserver`` preloading this module where the platform
    has it, ``spawn`` elsewhere. The fork server is a fresh interpreter that imports torch,
    transformers, TRL and datasets once (~7 s CPU, paid per worker when spawned) and runs no torch op;
    each worker is forked from it. Forking the caller itself is not safe: a caller that has run
    autograd (a test session, a notebook) leaves autograd's worker threads behind and every forked
    worker's ``backward`` raises ``RuntimeError: Unable to handle autograd's threading in combination
    with fork-based multiprocessing`` (https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork).
    Each run sets its own threads and seeds (:func:`run_grpo`), so a run's files do not depend on the
    start method (``tests/test_proxy_fidelity.py`` compares workers 2 with a one-process run)."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _stop_fork_server() -> None:
    """Stop the fork server once the workers are done, and wait for it: the caller then holds the
    CPU seconds of every worker the server reaped (``RUSAGE_CHILDREN``, what ``time`` and
    ``benchmarks/repro_budget_run.py`` read; an unreaped server takes them with it), and the server's
    preloaded torch does not outlive the stage's GRPO plan. Uses CPython's ``ForkServer._stop`` (its own
    tests' hook) where it exists; a no-op elsewhere."""
    stop = getattr(getattr(mp.forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        stop()


def control_plan(gp: dict) -> dict:
    """The ``proxy.grpo`` plan of a control model: no held-out healthy seeds (a control never
    calibrates the detector) and no fix runs (the fixes are judged on the base)."""
    return dict(gp, heldout_healthy_seeds=[], fix_runs=[])


def reference_plan(gp: dict) -> dict:
    """The ``proxy.grpo`` plan of the reference model (the base): faults on ``reference_fault_seeds``, the
    sample its seed-to-seed spread (the fidelity tolerances, :func:`controls.tolerance`) is taken from.

    Raises:
        ValueError: a ``fault_seeds`` seed is not among ``reference_fault_seeds`` (a proxy's fault run of
            seed s is judged against the base's run of seed s).
    """
    ref = [int(x) for x in gp["reference_fault_seeds"]]
    missing = sorted({int(x) for x in gp["fault_seeds"]} - set(ref))
    if missing:
        raise ValueError(f"proxy.grpo.reference_fault_seeds {ref} lacks fault_seeds {missing}: a proxy's fault run "
                         "of seed s is compared with the base's run of seed s")
    return dict(gp, fault_seeds=ref)


def run_grpo_all(model_dir: str | Path, name: str, gp: dict, out_dir: str | Path, progress: bool = True,
                 timing_path: str | Path | None = None, clock: Clock = DEFAULT_CLOCK) -> dict:
    """Healthy runs on ``gp['healthy_seeds']``, every fault of ``gp['faults']`` on ``gp['fault_seeds']``,
    and healthy runs on ``gp['heldout_healthy_seeds']`` (the detector's held-out false-positive check,
    never evaluated for capability).

    Seeds default to ``[gp['seed']]``. A seed sets the prompts, the sampling and the initial
    torch state (the fault run of seed s and the healthy run of seed s share everything up to the
    fault), so a run does not depend on which runs came before it in its process: ``gp['workers']``
    (default 1) child processes (forked from a preloaded fork server where possible, :func:`_worker_context`; ``gp['threads']`` torch
    threads each) run the plan at once,
    and the files are byte-identical to a one-process run (``tests/test_proxy_fidelity.py``).
    Writes ``out_dir/<fault>.s<seed>.jsonl`` (step rows), ``.json`` (run summary) and
    ``out_dir/summary.json`` ({"name", "runs": {run_key: summary} in plan order, "healthy_seeds",
    "heldout_healthy_seeds", "fault_seeds", "complete"}). The held-out capability after RL is measured
    on the ``healthy_seeds`` runs only (fault runs record the ``_after`` figures too when
    ``gp['eval_fault_runs']``). A run that raises is recorded with ``error`` (its class and message)
    and the other runs go on. Returns the summary.

    Everything under ``out_dir`` is deterministic on one machine. The measurement (differs on
    every run) goes to ``timing_path`` when given: {"name", "measured": true, "clock", "workers"
    (runs timed side by side), "machine" (:func:`timing.machine`), "load_average_start",
    "load_average_end" (1/5/15 min), "runs": {run_key: {"setup_s", "wall_s" (s), "steps": [{"step",
    "step_time_ms" (ms), "peak_memory_bytes" (bytes)}]}}}; ``clock`` (seconds) is injectable for tests
    (an injected clock runs the plan in this process).
    """
    gp = grpo_params(gp)
    faults = [f for f in gp["faults"] if f != "none"]
    faults += [f"{f}+fix" for f in gp["fix_runs"] if f in faults]
    hs = [int(x) for x in gp["healthy_seeds"] or [gp["seed"]]]
    ho = [int(x) for x in gp["heldout_healthy_seeds"] if int(x) not in hs]
    fs = [int(x) for x in gp["fault_seeds"] or [gp["seed"]]]
    plan = [("none", s) for s in hs] + [(f, s) for f in faults for s in fs] + [("none", s) for s in ho]
    jobs = [(f, dict(gp, seed=s, eval_after=(f == "none" and s in hs) or gp["eval_fault_runs"]),
             run_key(f, s)) for f, s in plan]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    workers = 1 if clock is not DEFAULT_CLOCK else max(1, min(int(gp["workers"]), len(jobs)))
    done: dict = {}
    load0 = load_average()
    bar = tqdm(total=len(jobs), desc=f"grpo {name}", disable=not progress, mininterval=5.0)

    def record(key, res):
        done[key] = res
        summ, tm = res
        bar.update(1)
        bar.write(f"grpo {name} {key}: FAILED {summ['error']}" if tm is None else
                  f"grpo {name} {key}: edge reward {summ['edge_reward_before']} -> {summ['edge_reward_after']} "
                  f"({tm['wall_s']:.1f} s)")

    if workers == 1:
        for f, g, key in jobs:
            record(key, _run_one(model_dir, f, g, out_dir, key, clock))
    else:
        ctx = _worker_context()
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=mark_worker) as pool:
            futs = {pool.submit(_run_one, model_dir, f, g, out_dir, key): (f, g, key) for f, g, key in jobs}
            for fut in as_completed(futs):
                f, g, key = futs[fut]
                try:
                    record(key, fut.result())
                except Exception as exc:  # the worker itself died (killed, out of memory)
                    record(key, ({"fault": f, "seed": g["seed"], "error": f"{type(exc).__name__}: {exc}"}, None))
        if ctx.get_start_method() == "forkserver":
            _stop_fork_server()
    bar.close()
    runs = {key: done[key][0] for _, _, key in jobs}
    timing = {key: done[key][1] for _, _, key in jobs if done[key][1] is not None}
    summary = {"name": name, "model_dir": Path(model_dir).as_posix(), "runs": runs, "healthy_seeds": hs,
               "heldout_healthy_seeds": ho, "fault_seeds": fs, "complete": all("error" not in r for r in runs.values())}
    atomic_write_json(out_dir / "summary.json", summary, indent=1)
    if timing_path is not None:
        Path(timing_path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(timing_path, {
            "name": name, "measured": True, "clock": getattr(clock, "__qualname__", repr(clock)), "workers": workers,
            "machine": machine(), "load_average_start": load0, "load_average_end": load_average(),
            "runs": timing}, indent=1)
    return summary
