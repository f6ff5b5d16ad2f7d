"""Detector verdicts with seed statistics: calibration on healthy seeds, rates with intervals.

A single run pair cannot tell a fault's signature from seed noise (a second healthy seed of the
same model gets kinds of its own). So:

- **Calibration** (:func:`calibrate`): every healthy seed is judged, leave-one-out, against the
  ensemble of the model's other healthy seeds; a kind it shows is a false positive. The
  false-positive rate per kind is ``flagged runs / healthy runs`` (all models pooled), with a Wilson
  score interval. The thresholds are read from these runs, so the out-of-sample rate comes from
  held-out healthy seeds judged against the whole ensemble (:func:`calibrate_heldout`).
- **Fault-specific kinds** (:data:`FAULT_KINDS`): a fault run is judged only on the kinds its
  mechanism must produce (``lr_spike`` -> ``kl_blowup``, ...), never on the generic kinds
  (:data:`GENERIC_KINDS`: they fire on several faults, so they cannot say which one a proxy
  reproduced); :func:`generic_detection` reports how often they fire on the fault runs.
- **Rates over seeds** (:func:`fault_rates`): per model and fault, the detection rate (the specific
  kind fires, from the fault's onset on) and the reproduction rate: seed s of a proxy reproduces
  the fault when its specific signature equals the base's seed-s signature (same kinds, first
  steps within ``step_tolerance``; seed s of both shares prompts and sampling seed); on a
  ``<fault>+fix`` run the base's signature is what the fix left (none where it removed it), and the
  proxy reproduces it when it shows the same, absence included (:func:`matches` ``absent_ok``). The base's
  **self-reproduction rate** (seed s_i against seed s_{i+1}, cyclically) is its own seed-to-seed
  agreement: a reference, not a ceiling (a proxy's seed s is compared with the base's seed s, which
  shares its prompts and sampling seed, so it can agree more often than two base seeds do). A fault the
  base does not show on every seed is flagged ``base_reliable: false``; one it never shows is "no
  signature".

Interval: Wilson score interval (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``;
Wilson 1927), 95%.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Sequence

from scipy.stats import binomtest

from .detector import signature

KINDS = ("nan_inf", "grad_spike", "kl_blowup", "reward_collapse", "grad_collapse", "logprob_mismatch",
         "expert_collapse", "frozen_policy", "divergence", "weights_nonfinite", "router_flip")
GENERIC_KINDS = ("nan_inf", "grad_spike", "reward_collapse", "divergence")  # reported, never in a verdict
FAULT_KINDS = {
    "logprob_bf16": ("logprob_mismatch",),        # bf16 rollouts vs fp32 training forward
    # trainer-side bf16 router GEMM vs the rollout's fp32 one: the routes it flips (R3's own measurement). Not
    # logprob_mismatch: the bf16 GEMM also rounds the gate weights of the experts both passes select, which routing
    # replay (the fix) leaves in place, so the mismatch is not what the fix is judged on (it is reported beside it)
    "swapped_operator": ("router_flip",),
    "skip_actor_update": ("frozen_policy",),
    "lr_spike": ("kl_blowup",),
    # fp16 underflow flushes the gradients. Not logprob_mismatch: the fp16 training forward departs from the fp32
    # rollouts with or without loss scaling (the fix), so it is the forward's precision, not the underflow
    "fp16_no_loss_scaling": ("grad_collapse",),
    "no_load_balancing": ("expert_collapse",),
    # fp16 gradients above 65504 become Inf; clipping turns them into NaN and the optimizer writes them into the weights
    "fp16_overflow": ("weights_nonfinite",),
}

# Per fault: how it is triggered here, the signature the literature documents (with its source), and the
# fix ("<fault>+fix" runs apply it where rl.FIXABLE lists the fault; otherwise how the fix is checked;
# ``fix_run_exists`` False: no run applies the fix, so the healthy runs' rate is not a rate with the fix).
FAULT_CATALOG = {
    "logprob_bf16": {
        "trigger": "rollout-side forwards (generation, old-policy and reference log-probs) under bf16 autocast, "
                   "training forward in fp32",
        "signature": "train/rollout log-prob mismatch on fresh rollouts far above a healthy run's",
        "quantities": ["logprob_mismatch", "router_flip_rate", "extreme_token_share"],
        "source": "arXiv 2510.26788 (bf16 rounding alone creates the train/infer mismatch that collapses RL; "
                  "fp16 removes it); arXiv 2512.01374 (rising train/infer KL precedes collapse)",
        "fix": "fp16 for rollouts and training alike (10 mantissa bits to bf16's 7, one precision on both sides, as "
               "arXiv 2510.26788 does): run logprob_bf16+fix. Here both passes run the same kernels, so the fix removes "
               "the mismatch entirely; fp16 rollouts against an fp32 training forward only shrink it"},
    "swapped_operator": {
        "trigger": "training engine's router GEMM in bf16 (inputs and weight rounded), rollout's in fp32",
        "signature": "routing decisions (top-k expert sets per token and layer) that flip between the rollout-side "
                     "and the training forward on fresh rollouts, where a healthy fp32 run flips none, and the "
                     "train/rollout log-prob mismatch they cause",
        "quantities": ["router_flip_rate", "logprob_mismatch", "extreme_token_share"],
        "source": "arXiv 2510.11370 (R3: ~10% of router decisions differ between rollout and training; "
                  "replaying the rollout's routes fixes it)",
        "fix": "routing replay (R3, arXiv 2510.11370): the experts the rollout-side forward selected, per layer and "
               "token, are replayed in the training forward, whose router still gives the gate weights: run "
               "swapped_operator+fix. The bf16 rounding of those gate weights stays, so a smaller log-prob "
               "mismatch remains",
        "fix_run_exists": True},
    "skip_actor_update": {
        "trigger": "gradients dropped before the optimizer step from fault_step on",
        "signature": "parameter update norm 0 while the healthy runs move",
        "source": "the seed paper's injected fault (an omitted actor update)",
        "fix": "the update: the healthy run is the fixed run"},
    "lr_spike": {
        "trigger": "learning rate x lr_spike_factor for lr_spike_steps steps from fault_step",
        "signature": "KL to the reference jumps (logit growth, loss jump)",
        "source": "arXiv 2309.14322 (high learning rates make small models show large-model instabilities)",
        "fix": "the scheduled learning rate: the healthy run is the fixed run"},
    "fp16_no_loss_scaling": {
        "trigger": "fp16 training forward/backward from fault_step at a full-size batch's per-token gradient "
                   "magnitude (loss x fp16_grad_scale), no loss scaler, fp16 gradient storage",
        "signature": "gradient norm collapses, of the whole model or of a module group (underflow flushes "
                     "gradient values under 2^-24 to zero; the gradients of the fp16 matmuls go first)",
        "source": "Micikevicius et al. 2018, Mixed Precision Training (loss scaling exists for this)",
        "fix": "static loss scaling by 1 / fp16_grad_scale: run fp16_no_loss_scaling+fix"},
    "fp16_overflow": {
        "trigger": "fp16 training forward/backward from fault_step with the loss summed over a full-size batch "
                   "(loss x fp16_overflow_scale), fp16 gradient storage, no overflow check",
        "signature": "Inf gradients, NaN weights after the step (the run cannot sample any more)",
        "source": "Micikevicius et al. 2018 (fp16 range 6e-8..65504; dynamic loss scaling skips overflowed "
                  "steps); gradient overflow is the seed paper's headline observed failure",
        "fix": "dynamic loss scaling (torch.amp.GradScaler's rule: skip the step, halve the scale): run "
               "fp16_overflow+fix"},
    "no_load_balancing": {
        "trigger": "router load-balancing loss off and router lr x router_lr_factor",
        "signature": "one expert takes most of a layer's routed slots (expert collapse); it develops over a "
                     "training horizon far longer than a short RL plan, so a base rate of 0 means no signature "
                     "within the plan's steps, not a detector miss",
        "source": "Shazeer et al. 2017 / Fedus et al. 2022 (the auxiliary balancing loss exists for this)",
        "fix": "the balancing loss: the healthy run is the fixed run"},
}


def fault_name(fault: str) -> str:
    """The catalog name of a run switch (``"fp16_overflow+fix"`` -> ``"fp16_overflow"``)."""
    return fault.partition("+")[0]


def wilson(k: int, n: int, level: float = 0.95) -> list[float] | None:
    """Wilson score interval [low, high] of ``k`` successes in ``n`` trials; None when ``n == 0``."""
    if n == 0:
        return None

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return [round(float(ci.low), 4), round(float(ci.high), 4)]


def at_least_share(k: int, n: int, share: float) -> bool:
    """``k`` of ``n`` is at least ``share``, with ``share`` read as the nearest fraction of denominator <= 12
    (0.6667 -> 2/3), compared exactly: 2 of 3 seeds meet a 2/3 rule that ``2 >= 0.6667 * 3`` would fail.
    False when ``n == 0``."""
    f = Fraction(share).limit_denominator(12)
    return n > 0 and k * f.denominator >= f.numerator * n


def rate(k: int, n: int) -> dict:
    """{"rate", "k", "n", "ci95"} (rate None when n == 0)."""
    return {"rate": round(k / n, 4) if n else None, "k": int(k), "n": int(n), "ci95": wilson(k, n)}


def specific(sig: Mapping[str, int] | None, fault: str) -> dict:
    """The part of a signature made of ``fault``'s specific kinds."""
    kinds = FAULT_KINDS.get(fault_name(fault), ())
    return {k: v for k, v in (sig or {}).items() if k in kinds}


def matches(ref: Mapping[str, int], got: Mapping[str, int], tol: int, absent_ok: bool = False) -> bool:
    """``ref`` non-empty (or, with ``absent_ok``, empty on both sides), same kinds as ``got``, every first
    step within ``tol``. ``absent_ok`` is the rule of a ``<fault>+fix`` run: what the proxy must reproduce
    there is the base's fixed run, where the fix removed the signature, so no kind on either side matches."""
    if not ref:
        return absent_ok and not got
    return set(ref) == set(got) and all(abs(ref[k] - got[k]) <= tol for k in ref)


def calibrate(healthy_by_model: Mapping[str, Mapping[int, Sequence[Mapping]]], det: Mapping, fault_step: int,
              kind_onset: Mapping[str, int] | None = None) -> dict:
    """Leave-one-out false positives of the detector on healthy seeds.

    A healthy run is judged exactly as a fault run is: :func:`detector.signature` with the same
    ``fault_step``, and a kind counts only from ``kind_onset[kind]`` (the earliest onset of the
    faults judged on it; default 1), so the rate is the one that applies to the verdicts.

    Args:
        healthy_by_model: {model: {seed: step rows of a healthy run}}; models with < 2 seeds are skipped.

    Returns {"runs": n, "flagged": {model: {seed: signature}}, "false_positive_rate": {kind: rate dict}}.
    """
    cases = [(model, seed, rows, [r for s, r in runs.items() if s != seed])
             for model, runs in healthy_by_model.items() if len(runs) >= 2 for seed, rows in runs.items()]
    return _false_positives(cases, det, fault_step, kind_onset)


def calibrate_heldout(healthy_by_model: Mapping[str, Mapping[int, Sequence[Mapping]]],
                      heldout_by_model: Mapping[str, Mapping[int, Sequence[Mapping]]], det: Mapping,
                      fault_step: int, kind_onset: Mapping[str, int] | None = None) -> dict:
    """False positives on held-out healthy seeds, each judged against the model's whole ensemble.

    This is how a fault run is judged (:func:`detector.signature` against every healthy seed), on
    seeds that were never in the ensemble nor used to choose a threshold, so the rate is an
    out-of-sample one (the leave-one-out rate of :func:`calibrate` is measured on the runs the
    thresholds were read from). Same counting as :func:`calibrate` (``kind_onset``).

    Args:
        healthy_by_model: {model: {seed: step rows}}, the ensembles.
        heldout_by_model: {model: {seed: step rows}}; models without an ensemble are skipped.

    Returns {"runs": n, "flagged": {model: {seed: signature}}, "false_positive_rate": {kind: rate dict}}.
    """
    cases = [(model, seed, rows, list((healthy_by_model.get(model) or {}).values()))
             for model, runs in heldout_by_model.items() for seed, rows in sorted(runs.items())
             if healthy_by_model.get(model)]
    return _false_positives(cases, det, fault_step, kind_onset)


def _false_positives(cases, det: Mapping, fault_step: int, kind_onset: Mapping[str, int] | None) -> dict:
    """Count the kinds of healthy runs: ``cases`` [(model, seed, rows, ensemble)]; a kind counts from
    ``kind_onset[kind]`` (default step 1). Returns :func:`calibrate`'s dict."""
    flagged: dict = {}
    counts = {k: 0 for k in KINDS}
    for model, seed, rows, ens in cases:
        sig = {k: v for k, v in signature(rows, ens, det, fault_step).items() if v >= (kind_onset or {}).get(k, 1)}
        flagged.setdefault(model, {})[int(seed)] = sig
        for k in sig:
            counts[k] = counts.get(k, 0) + 1
    n = len(cases)
    return {"runs": n, "flagged": flagged, "false_positive_rate": {k: rate(c, n) for k, c in counts.items()}}


def generic_detection(sigs: Mapping[str, Mapping[str, Mapping[int, Mapping[str, int]]]],
                      onset: Mapping[str, int]) -> dict:
    """How often each generic kind fires on the fault runs, from the fault's onset, all models pooled.

    The check that a calibrated generic kind still sees something: {kind: {fault: rate dict}}
    (``sigs`` as in :func:`fault_rates`).
    """
    out: dict = {k: {} for k in GENERIC_KINDS}
    faults = sorted({f for per_fault in sigs.values() for f in per_fault})
    for kind in GENERIC_KINDS:
        for f in faults:
            got = [sig.get(kind) for per_fault in sigs.values() for sig in (per_fault.get(f) or {}).values()]
            out[kind][f] = rate(sum(v is not None and v >= onset.get(f, 0) for v in got), len(got))
    return out


def fault_rates(sigs: Mapping[str, Mapping[str, Mapping[int, Mapping[str, int]]]], tol: int,
                onset: Mapping[str, int]) -> dict:
    """Detection and reproduction rates over seeds.

    Args:
        sigs: {model: {fault: {seed: full signature against the model's healthy ensemble}}};
            model ``base`` is the reference.
        onset: {fault: first step at which its specific kind may appear} (earlier firings are
            not the fault's and count as not detected).

    Returns {"base_self": {fault: rate}, "models": {model: {fault: {"detection", "reproduction",
    "specific": {seed: sig}}}}, "base_reliable": {fault: bool}, "no_signature": [fault, ...]}.
    """
    def spec(model, fault, seed):
        s = specific(sigs[model][fault].get(seed), fault)
        return {k: v for k, v in s.items() if v >= onset.get(fault, 0)}

    base = sigs["base"]
    out: dict = {"base_self": {}, "models": {}, "base_reliable": {}, "no_signature": []}
    for fault in base:
        seeds = sorted(base[fault])
        det = [bool(spec("base", fault, s)) for s in seeds]
        out["base_reliable"][fault] = bool(seeds) and all(det)
        if seeds and not any(det):
            out["no_signature"].append(fault)
        pairs = [(seeds[i], seeds[(i + 1) % len(seeds)]) for i in range(len(seeds))] if len(seeds) > 1 else []
        fixed = fault.endswith("+fix")
        out["base_self"][fault] = rate(sum(matches(spec("base", fault, a), spec("base", fault, b), tol, fixed)
                                           for a, b in pairs), len(pairs))
    for model, per_fault in sigs.items():
        out["models"][model] = {}
        for fault, by_seed in per_fault.items():
            seeds = sorted(by_seed)
            d = sum(bool(spec(model, fault, s)) for s in seeds)
            paired = [s for s in seeds if s in base.get(fault, {})]
            rep = sum(matches(spec("base", fault, s), spec(model, fault, s), tol, fault.endswith("+fix"))
                      for s in paired)
            out["models"][model][fault] = {"detection": rate(d, len(seeds)), "reproduction": rate(rep, len(paired)),
                                           "specific": {int(s): spec(model, fault, s) for s in seeds}}
    return out
