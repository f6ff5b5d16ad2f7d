"""The fault detector: a GRPO run's per-step curves -> fault kinds with their first step.

Detector (:func:`signature`): a run's per-step curves, compared with the healthy runs (one or
an ensemble of seeds) of the same model, become a set of fault kinds with their first step
(thresholds: the ``proxy.fidelity.detector`` params, taken over the whole healthy ensemble):

- ``nan_inf``: first step with a NaN/Inf gradient entry or a non-finite loss.
- ``weights_nonfinite``: first step after which a weight is NaN/Inf (the optimizer applied a
  non-finite gradient; a skipped step, as dynamic loss scaling does, leaves the weights finite).
- ``grad_spike``: first step whose total gradient norm before clipping (the Trainer's
  ``grad_norm``; the per-group norms of the step log are measured after clipping) exceeds
  ``grad_spike_factor`` x the healthy ensemble's maximum.
- ``kl_blowup``: first step whose KL exceeds ``kl_blowup_factor`` x the healthy run's maximum
  KL and ``kl_blowup_min``.
- ``reward_collapse``: on each of ``reward_window`` consecutive fresh-rollout steps, all after
  ``fault_step``, the reward is below ``reward_collapse_frac`` x the healthy ensemble's mean at that
  step (where that mean is >= ``reward_min``); reported at the window's last step.
- ``expert_collapse``: first step where some layer's largest expert share of routed slots
  exceeds ``expert_collapse_share``.
- ``frozen_policy``: the parameter update norm stays below ``update_frozen`` for every step
  after ``fault_step`` whose batch carries a gradient (:func:`batch_share` not 0; at least one such
  step) while the healthy run's exceeds it (an omitted actor update). Step rows
  are numbered from 1; ``fault_step`` is the 0-based index of the first faulty optimizer step,
  i.e. the fault shows from row ``fault_step + 1``.
- ``grad_collapse``: first step after ``fault_step`` whose gradient norm before clipping, or the
  gradient norm of one module group (``grad_norm/<group>``: embed, attn, router, experts, norm; after
  clipping, which scales every group alike), is below ``grad_collapse_factor`` x the healthy median of
  the same quantity at the same step (where that median is above ``divergence_floor``), holding on
  ``grad_collapse_steps`` consecutive such steps: gradients flushed to zero (fp16 underflow zeroes the
  values under 2^-24, so a module whose gradients are small, e.g. those computed by fp16 matmuls, goes
  to 0 while the largest entries elsewhere survive and carry the total norm). Only steps where a
  gradient is due count, in the run and in the healthy median: a batch whose groups all have equal
  rewards (``nonzero_advantage_share`` 0, :func:`batch_share`) has no policy gradient by
  construction, so its ~0 norm is not a collapse.
- ``logprob_mismatch``: first fresh-rollout step (the policy has not moved since the rollout,
  see :mod:`rl`) whose mean |log pi_train - log pi_rollout| exceeds
  ``max(logprob_mismatch_factor x healthy maximum on fresh steps, logprob_mismatch_min)`` nats
  (rollout precision or kernel differing from training's).
- ``router_flip``: first fresh-rollout step whose ``router_flip_rate`` (share of (token, layer) top-k expert
  sets that differ between the rollout-side and the training forward, :func:`rl.router_flip_rate`) exceeds
  ``max(router_flip_factor x healthy maximum on fresh steps, router_flip_min)``: routing decisions flipped
  by a kernel or precision that differs between the two passes (a healthy fp32 run flips none on a fresh step).
- ``divergence``: first step where loss, KL or the gradient norm before clipping leaves the healthy
  ensemble's whole-run envelope (loss: widened by ``divergence_rel`` x its width; KL, grad norm:
  ``divergence_factor`` x its max, its min / the factor) and stays out for ``divergence_steps``
  consecutive steps.

Verdicts over seeds (calibration, fault-specific kinds, rates with intervals) are in
:mod:`verdicts`; :func:`reproduces` is the plain signature comparison. Curve similarity of healthy runs
(:func:`curve_similarity`): Pearson correlation and the normalised distance
``mean|b - p| / mean|b|`` per signal.
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

SIGNALS = ("reward", "kl", "loss", "grad_norm_trl", "entropy", "expert_max_share")


def series(rows: Sequence[Mapping], key: str) -> list[float]:
    """Per-step values of ``key`` (NaN where absent); ``expert_max_share``: max over layers."""
    out = []
    for r in rows:
        if key == "expert_max_share":
            loads = r.get("expert_load") or []
            out.append(max((x["max_share"] for x in loads), default=float("nan")))
        else:
            v = r.get(key)
            out.append(float(v) if v is not None else float("nan"))
    return out


def finite_values(xs):
    """The items of ``xs`` that are finite numbers (None, NaN and +-inf left out), in order."""
    return [x for x in xs if x is not None and math.isfinite(x)]


def forward_fill(xs: list[float]) -> list[float]:
    """``xs`` with each non-finite value replaced by the last finite one before it (NaN before the first)."""
    out, last = [], float("nan")
    for x in xs:
        last = x if math.isfinite(x) else last
        out.append(last)
    return out


def batch_share(rows: Sequence[Mapping]) -> list[float | None]:
    """Per step, the ``nonzero_advantage_share`` of the rollout batch the step trained on.

    The share is logged on the step that generated the batch (the fresh-rollout step, when the reward
    is computed); the steps that reuse the batch (TRL's ``num_iterations``) carry it forward. None
    before the first logged share (logs without the field: every step counts as carrying a gradient).
    A share of 0 means every group's rewards were equal: every advantage is 0, so the policy-gradient
    term is 0 by construction (and with ``drop_zero_variance_groups`` the whole loss is), whatever the
    model or fault.
    """
    out, last = [], None
    for r in rows:
        v = r.get("nonzero_advantage_share")
        last = float(v) if v is not None else last
        out.append(last)
    return out


def _ensemble(healthy) -> list[list[Mapping]]:
    if not healthy:
        return []
    return [list(healthy)] if isinstance(healthy[0], Mapping) else [list(h) for h in healthy]


def _at_step(ens: list[list[Mapping]], key: str, with_gradient: bool = False) -> dict[int, list[float]]:
    """{step: [finite values of key over the healthy runs]}; ``with_gradient``: only the steps whose batch
    carries a policy gradient (:func:`batch_share` not 0)."""
    out: dict[int, list[float]] = {}
    for rows in ens:
        for r, v, sh in zip(rows, series(rows, key), batch_share(rows)):
            if math.isfinite(v) and not (with_gradient and sh == 0):
                out.setdefault(int(r["step"]), []).append(v)
    return out


def signature(rows: Sequence[Mapping], healthy, det: Mapping, fault_step: int) -> dict:
    """{kind: first step} of the fault kinds detected in ``rows`` against the healthy runs.

    ``healthy``: one healthy run (a list of step rows) or an ensemble (a list of such lists, one per
    seed); every threshold is taken over the whole ensemble (maxima, per-step medians, per-step
    ranges), so more healthy seeds widen what counts as healthy (see module doc for the kinds).
    """
    ens = _ensemble(healthy)
    sig: dict[str, int] = {}
    steps = [int(r["step"]) for r in rows]
    for r, s in zip(rows, steps):
        if r.get("grad_nan", 0) or r.get("grad_inf", 0) or r.get("loss_nonfinite", 0):
            sig["nan_inf"] = s
            break
    for r, s in zip(rows, steps):
        if r.get("weights_nonfinite", 0):
            sig["weights_nonfinite"] = s
            break
    gkey = "grad_norm_trl" if any("grad_norm_trl" in r for h in ens for r in h) else "grad_norm_total"
    g_h = [v for h in ens for v in finite_values(series(h, gkey))]
    g_max = max(g_h) if g_h else float("nan")
    for s, g in zip(steps, series(rows, gkey)):
        if math.isfinite(g) and math.isfinite(g_max) and g > det["grad_spike_factor"] * g_max:
            sig["grad_spike"] = s
            break
    kl_h = [v for h in ens for v in finite_values(series(h, "kl"))]
    kl_max = max(kl_h) if kl_h else 0.0
    for s, v in zip(steps, series(rows, "kl")):
        if not math.isfinite(v) or (v > det["kl_blowup_factor"] * kl_max and v > det["kl_blowup_min"]):
            if math.isfinite(v) or "nan_inf" in sig:
                sig["kl_blowup"] = s
                break
    rc = _reward_collapse(rows, ens, det, fault_step)
    if rc is not None:
        sig["reward_collapse"] = rc
    share = batch_share(rows)
    gc = [c for c in (_grad_collapse(rows, ens, key, det, fault_step, share) for key in (gkey, *_group_keys(rows, ens)))
          if c is not None]
    if gc:
        sig["grad_collapse"] = min(gc)
    fresh_h = [float(r["logprob_mismatch"]) for h in ens for r in h if r.get("fresh_rollout") and "logprob_mismatch" in r]
    thr = max(det["logprob_mismatch_factor"] * max(fresh_h, default=0.0), det["logprob_mismatch_min"])
    for r, s in zip(rows, steps):
        v = r.get("logprob_mismatch")
        if r.get("fresh_rollout") and v is not None and (not math.isfinite(v) or v > thr):
            sig["logprob_mismatch"] = s
            break
    flip_h = [float(r["router_flip_rate"]) for h in ens for r in h if r.get("fresh_rollout") and "router_flip_rate" in r]
    thr = max(det["router_flip_factor"] * max(flip_h, default=0.0), det["router_flip_min"])
    for r, s in zip(rows, steps):
        v = r.get("router_flip_rate")
        if r.get("fresh_rollout") and v is not None and v > thr:
            sig["router_flip"] = s
            break
    for s, v in zip(steps, series(rows, "expert_max_share")):
        if math.isfinite(v) and v > det["expert_collapse_share"]:
            sig["expert_collapse"] = s
            break
    # judged on the steps whose batch carries a gradient: a run whose batches after the fault all have zero
    # advantage does not move because nothing asks it to (not judged: no such step)
    after = [v for s, v, sh in zip(steps, series(rows, "update_norm"), share) if s > fault_step and sh != 0]
    after_h = [v for h in ens for s, v in zip([int(r["step"]) for r in h], series(h, "update_norm")) if s > fault_step]
    if after and finite_values(after_h) and min(finite_values(after_h)) > det["update_frozen"] and \
            all(math.isfinite(v) and v < det["update_frozen"] for v in after):
        sig["frozen_policy"] = fault_step + 1
    dv = _divergence(rows, ens, det, gkey)
    if dv is not None:
        sig["divergence"] = dv
    return sig


def _group_keys(rows, ens) -> list[str]:
    """The per-module-group gradient norm keys (``grad_norm/<group>``) logged by the run and its ensemble."""
    have = {k for r in rows for k in r if k.startswith("grad_norm/")}
    return sorted(k for k in have if any(k in r for h in ens for r in h))


def _grad_collapse(rows, ens, key: str, det: Mapping, fault_step: int, share) -> int | None:
    """First step after ``fault_step`` where ``key`` (a gradient norm) is below ``grad_collapse_factor`` x the
    healthy median at that step, holding on ``grad_collapse_steps`` consecutive informative steps (or on all
    that remain). Informative: a gradient is due (the run's batch share is not 0) and the healthy median,
    taken over the healthy runs whose batch at that step carries a gradient, is above ``divergence_floor``;
    other steps neither confirm nor break a collapse."""
    steps = [int(r["step"]) for r in rows]
    g_med = {k: statistics.median(v) for k, v in _at_step(ens, key, with_gradient=True).items()}
    g_rows = series(rows, key)
    hold = int(det["grad_collapse_steps"])

    def informative(i):
        gh = g_med.get(steps[i])
        return share[i] != 0 and gh is not None and gh > det["divergence_floor"]

    def low(i):
        return informative(i) and math.isfinite(g_rows[i]) and g_rows[i] < det["grad_collapse_factor"] * g_med[steps[i]]

    for i, s in enumerate(steps):
        if s > fault_step and low(i):
            nxt = [j for j in range(i + 1, len(steps)) if informative(j)][: hold - 1]
            if all(low(j) for j in nxt):
                return s
    return None


def _reward_collapse(rows, ens, det: Mapping, fault_step: int) -> int | None:
    """Last step of the first ``reward_window`` consecutive fresh-rollout steps (all after ``fault_step``)
    on each of which the reward is below ``reward_collapse_frac`` x the healthy ensemble's mean at that
    step (a step is informative only where that mean is >= ``reward_min``; a non-finite reward counts as
    collapsed); an uninformative step in the window makes it no collapse.

    A step's reward is a mean over ``prompts_per_step`` prompts (16 samples at the default), and the pass
    rate of edge prompts is bimodal, so a healthy step below the line happens (a draw of hard prompts); a
    collapse holds on every step of the window, as ``grad_collapse`` and ``divergence`` hold on consecutive
    steps. A window whose mean is low because one step drew no success is not one.
    """
    w = int(det["reward_window"])

    def fresh(rs):
        return [(int(r["step"]), float(r["reward"])) for r in rs if r.get("reward") is not None]

    run, healthy = fresh(rows), [dict(fresh(h)) for h in ens]

    def low(s, v):
        hb = [h[s] for h in healthy if s in h]
        b = statistics.mean(hb) if hb else float("nan")
        if not math.isfinite(b) or b < det["reward_min"]:
            return False
        return not math.isfinite(v) or v < det["reward_collapse_frac"] * b

    for i in range(w - 1, len(run)):
        win = run[i - w + 1: i + 1]
        if win[0][0] <= fault_step:
            continue
        if all(low(s, v) for s, v in win):
            return win[-1][0]
    return None


def _divergence(rows, ens, det: Mapping, gkey: str) -> int | None:
    """First step of a departure from the healthy ensemble's whole-run envelope that holds on
    ``divergence_steps`` consecutive steps (a non-finite value departs at once).

    Envelope per signal over every step of every healthy run: ``loss`` (can be negative) outside
    ``[lo - rel x (hi - lo), hi + rel x (hi - lo)]`` (``divergence_rel``; width floored at
    ``divergence_floor``); ``kl`` and the gradient norm before clipping (``gkey``; positive, heavy-tailed
    across seeds, so judged by ratio) above ``divergence_factor x max(hi, floor)`` or, where ``lo`` is above
    the floor, below ``lo / divergence_factor``. A per-step range of a few seeds is narrower than the
    seed-to-seed spread of these curves (the rule this replaces flagged 13 of 20 healthy runs).
    """
    need, rel, f, floor = int(det["divergence_steps"]), det["divergence_rel"], det["divergence_factor"], \
        det["divergence_floor"]
    first = None
    for key in ("loss", "kl", gkey):
        hv = [v for h in ens for v in finite_values(series(h, key))]
        if not hv:
            continue
        lo, hi = min(hv), max(hv)
        if key == "loss":
            width = max(hi - lo, floor)
            lo_b, hi_b = lo - rel * width, hi + rel * width
        else:
            lo_b, hi_b = (lo / f if lo > floor else -math.inf), f * max(hi, floor)
        run = 0
        for r in rows:
            if r.get(key) is None:  # not logged at this step: neither confirms nor breaks a departure
                continue
            v = float(r[key])
            if not math.isfinite(v):
                s = int(r["step"])
                first = s if first is None else min(first, s)
                break
            run = run + 1 if (v < lo_b or v > hi_b) else 0
            if run == 1:
                start = int(r["step"])
            if run >= need:
                s = start
                first = s if first is None else min(first, s)
                break
    return first


def reproduces(base_sig: Mapping[str, int], proxy_sig: Mapping[str, int], tol: int) -> bool:
    """Same kinds, and each kind's first step within ``tol`` steps."""
    return set(base_sig) == set(proxy_sig) and all(abs(base_sig[k] - proxy_sig[k]) <= tol for k in base_sig)


def _pearson(a: list[float], b: list[float]) -> float | None:
    pts = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
    if len(pts) < 3:
        return None
    xs, ys = zip(*pts)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / (sx * sy)


def curve_similarity(base_rows: Sequence[Mapping], proxy_rows: Sequence[Mapping]) -> dict:
    """{signal: {"pearson": r or None (constant/too short), "norm_dist": mean|b-p| / mean|b|}}."""
    out = {}
    for sig in SIGNALS:
        a, b = forward_fill(series(base_rows, sig)), forward_fill(series(proxy_rows, sig))
        pts = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
        if not pts:
            out[sig] = {"pearson": None, "norm_dist": None}
            continue
        den = sum(abs(x) for x, _ in pts) / len(pts)
        dist = sum(abs(x - y) for x, y in pts) / len(pts) / den if den > 0 else None
        r = _pearson(a, b)
        out[sig] = {"pearson": None if r is None else round(r, 4), "norm_dist": None if dist is None else round(dist, 4)}
    return out
