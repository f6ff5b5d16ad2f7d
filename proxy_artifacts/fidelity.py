"""Fault signatures, base-vs-proxy fidelity of GRPO runs, and cost accounting.

Detector (:func:`signature`): a run's per-step curves, compared with the healthy runs (one or
an ensemble of seeds) of the same model, become a set of fault kinds with their first step
(thresholds: the ``proxy.fidelity.detector`` params, taken over the whole healthy ensemble):

- ``nan_inf``: first step with a NaN/Inf gradient entry or a non-finite loss.
- ``grad_spike``: first step whose total gradient norm before clipping (the Trainer's
  ``grad_norm``; the per-group norms of the step log are measured after clipping) exceeds
  ``grad_spike_factor`` x the healthy ensemble's maximum.
- ``kl_blowup``: first step whose KL exceeds ``kl_blowup_factor`` x the healthy run's maximum
  KL and ``kl_blowup_min``.
- ``reward_collapse``: first step (from ``fault_step``) where the running mean reward over
  ``window`` steps falls below ``reward_collapse_frac`` x the healthy run's running mean there
  (and the healthy mean is >= ``reward_min``).
- ``expert_collapse``: first step where some layer's largest expert share of routed slots
  exceeds ``expert_collapse_share``.
- ``frozen_policy``: the parameter update norm stays below ``update_frozen`` for every step
  after ``fault_step`` while the healthy run's exceeds it (an omitted actor update). Step rows
  are numbered from 1; ``fault_step`` is the 0-based index of the first faulty optimizer step,
  i.e. the fault shows from row ``fault_step + 1``.
- ``grad_collapse``: first step after ``fault_step`` whose gradient norm before clipping is below
  ``grad_collapse_factor`` x the healthy median at the same step (where that median is above
  ``divergence_floor``), holding on ``grad_collapse_steps`` consecutive such steps: gradients
  flushed to zero (fp16 underflow).
- ``logprob_mismatch``: first fresh-rollout step (the policy has not moved since the rollout,
  see :mod:`rl`) whose mean |log pi_train - log pi_rollout| exceeds
  ``max(logprob_mismatch_factor x healthy maximum on fresh steps, logprob_mismatch_min)`` nats
  (rollout precision or kernel differing from training's).
- ``divergence``: first step where loss, KL or gradient norm leaves the healthy ensemble's range
  at that step by more than ``divergence_rel`` x its largest magnitude (floor ``divergence_floor``).

Verdicts over seeds (calibration, fault-specific kinds, rates with intervals) are in
:mod:`verdicts`; :func:`reproduces` is the plain signature comparison. Curve similarity of healthy runs
(:func:`curve_similarity`): Pearson correlation and the normalised distance
``mean|b - p| / mean|b|`` per signal.

Cost (:func:`projection`; measured: :mod:`cost`): training-state bytes of a GRPO run in mixed
precision (per parameter: 2 B bf16 weights + 4 B fp32 master + 4 + 4 B Adam moments + 2 B
bf16 gradients + 2 B bf16 reference = 18 B, the ZeRO paper's 16 B/param mixed-precision Adam
plus a frozen bf16 reference), accelerators = ceil(bytes / (device memory x usable share)).
No per-step cost ratio is derived from the accelerator ratio: pruning keeps top-k, so FLOPs per
token are unchanged and fewer accelerators carry the same compute.
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

SIGNALS = ("reward", "kl", "loss", "grad_norm_trl", "entropy", "expert_max_share")
BYTES_PER_PARAM = 18


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


def _finite(xs):
    return [x for x in xs if x is not None and math.isfinite(x)]


def _ffill(xs: list[float]) -> list[float]:
    out, last = [], float("nan")
    for x in xs:
        last = x if math.isfinite(x) else last
        out.append(last)
    return out


def _running_mean(xs: list[float], w: int) -> list[float]:
    out = []
    for i in range(len(xs)):
        win = _finite(xs[max(0, i - w + 1): i + 1])
        out.append(sum(win) / len(win) if win else float("nan"))
    return out


def _ensemble(healthy) -> list[list[Mapping]]:
    if not healthy:
        return []
    return [list(healthy)] if isinstance(healthy[0], Mapping) else [list(h) for h in healthy]


def _at_step(ens: list[list[Mapping]], key: str) -> dict[int, list[float]]:
    """{step: [finite values of key over the healthy runs]}."""
    out: dict[int, list[float]] = {}
    for rows in ens:
        for r, v in zip(rows, series(rows, key)):
            if math.isfinite(v):
                out.setdefault(int(r["step"]), []).append(v)
    return out


def signature(rows: Sequence[Mapping], healthy, det: Mapping, fault_step: int = 0) -> dict:
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
    gkey = "grad_norm_trl" if any("grad_norm_trl" in r for h in ens for r in h) else "grad_norm_total"
    g_h = [v for h in ens for v in _finite(series(h, gkey))]
    g_max = max(g_h) if g_h else float("nan")
    for s, g in zip(steps, series(rows, gkey)):
        if math.isfinite(g) and math.isfinite(g_max) and g > det["grad_spike_factor"] * g_max:
            sig["grad_spike"] = s
            break
    kl_h = [v for h in ens for v in _finite(series(h, "kl"))]
    kl_max = max(kl_h) if kl_h else 0.0
    for s, v in zip(steps, series(rows, "kl")):
        if not math.isfinite(v) or (v > det["kl_blowup_factor"] * kl_max and v > det["kl_blowup_min"]):
            if math.isfinite(v) or "nan_inf" in sig:
                sig["kl_blowup"] = s
                break
    w = int(det["window"])
    rm = _running_mean(series(rows, "reward"), w)
    rh: dict[int, list[float]] = {}
    for h in ens:
        for r, v in zip(h, _running_mean(series(h, "reward"), w)):
            if math.isfinite(v):
                rh.setdefault(int(r["step"]), []).append(v)
    for s, a in zip(steps, rm):
        b = statistics.mean(rh[s]) if rh.get(s) else float("nan")
        if s >= fault_step + w and math.isfinite(b) and b >= det["reward_min"] and (
                not math.isfinite(a) or a < det["reward_collapse_frac"] * b):
            sig["reward_collapse"] = s
            break
    g_med = {k: statistics.median(v) for k, v in _at_step(ens, gkey).items()}
    g_rows = series(rows, gkey)
    hold = int(det.get("grad_collapse_steps", 1))

    def informative(i):  # the healthy median is above the floor: a low norm here means something
        gh = g_med.get(steps[i])
        return gh is not None and gh > det["divergence_floor"]

    def low(i):
        return informative(i) and math.isfinite(g_rows[i]) and \
            g_rows[i] < det.get("grad_collapse_factor", 0.1) * g_med[steps[i]]

    # a collapse holds on `hold` consecutive informative steps (or on all that remain): steps where
    # the healthy median itself is ~0 (zero-reward batches) neither confirm nor break it
    for i, s in enumerate(steps):
        if s > fault_step and low(i):
            nxt = [j for j in range(i + 1, len(steps)) if informative(j)][: hold - 1]
            if all(low(j) for j in nxt):
                sig["grad_collapse"] = s
                break
    fresh_h = [float(r["logprob_mismatch"]) for h in ens for r in h if r.get("fresh_rollout") and "logprob_mismatch" in r]
    thr = max(det.get("logprob_mismatch_factor", 10.0) * max(fresh_h, default=0.0), det.get("logprob_mismatch_min", 1e-4))
    for r, s in zip(rows, steps):
        v = r.get("logprob_mismatch")
        if r.get("fresh_rollout") and v is not None and (not math.isfinite(v) or v > thr):
            sig["logprob_mismatch"] = s
            break
    for s, v in zip(steps, series(rows, "expert_max_share")):
        if math.isfinite(v) and v > det["expert_collapse_share"]:
            sig["expert_collapse"] = s
            break
    after = [v for s, v in zip(steps, series(rows, "update_norm")) if s > fault_step]
    after_h = [v for h in ens for s, v in zip([int(r["step"]) for r in h], series(h, "update_norm")) if s > fault_step]
    if after and _finite(after_h) and min(_finite(after_h)) > det["update_frozen"] and \
            all(math.isfinite(v) and v < det["update_frozen"] for v in after):
        sig["frozen_policy"] = fault_step + 1
    ranges = {key: _at_step(ens, key) for key in ("loss", "kl", "grad_norm_total")}
    for r, s in zip(rows, steps):
        for key, by_step in ranges.items():
            a, hv = r.get(key), by_step.get(s)
            if a is None or not hv:
                continue
            a = float(a)
            lo, hi = min(hv), max(hv)
            margin = det["divergence_rel"] * max(max(abs(lo), abs(hi)), det["divergence_floor"])
            if not math.isfinite(a) or a < lo - margin or a > hi + margin:
                sig["divergence"] = s
                break
        if "divergence" in sig:
            break
    return sig


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
        a, b = _ffill(series(base_rows, sig)), _ffill(series(proxy_rows, sig))
        pts = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
        if not pts:
            out[sig] = {"pearson": None, "norm_dist": None}
            continue
        den = sum(abs(x) for x, _ in pts) / len(pts)
        dist = sum(abs(x - y) for x, y in pts) / len(pts) / den if den > 0 else None
        r = _pearson(a, b)
        out[sig] = {"pearson": None if r is None else round(r, 4), "norm_dist": None if dist is None else round(dist, 4)}
    return out


def accelerators(params: int, device_memory_gb: float, usable_share: float = 0.8) -> int:
    """Accelerators holding the GRPO training state of ``params`` parameters (18 B/param, see module doc)."""
    return max(1, math.ceil(params * BYTES_PER_PARAM / (device_memory_gb * 1e9 * usable_share)))


def projection(family_configs: Mapping[str, Mapping], keep_ratios: Sequence[float], device_memory_gb: float,
               usable_share: float = 0.8) -> dict:
    """Parameters and accelerators of real families' full-size configs at each keep ratio.

    Args:
        family_configs: name -> {"total": parameters of the full model, "expert": parameters of
            one routed expert, "moe_layers": MoE layers (incl. MTP), "experts": routed experts per
            layer, "top_k": experts per token, "n_group"/"topk_group" (optional)}.

    Proxy parameters = total - moe_layers x (E - k) x expert, k from :func:`prune.keep_count`.
    Memory only (training state); rollout-engine weights, KV cache, activations and node
    rounding are not modelled.
    """
    from .prune import keep_count

    out = {}
    for name, c in family_configs.items():
        base_acc = accelerators(c["total"], device_memory_gb, usable_share)
        rows = {"params": c["total"], "accelerators": base_acc}
        for r in keep_ratios:
            k = keep_count(c["experts"], r, c["top_k"], c.get("n_group", 1), None, c.get("topk_group"))
            p = c["total"] - c["moe_layers"] * (c["experts"] - k) * c["expert"]
            acc = accelerators(p, device_memory_gb, usable_share)
            rows[f"r{r}"] = {"experts_kept": k, "params": p, "accelerators": acc,
                             "accelerators_saved_share": round(1 - acc / base_acc, 4)}
        out[name] = rows
    return out


def full_size_counts() -> dict:
    """Parameter counts of Qwen3-30B-A3B and DeepSeek-V3, built on the meta device.

    DeepSeek-V3: transformers' default ``DeepseekV3Config`` (61 layers, 256 routed experts, top-8,
    8 groups / top-4 groups, 1 MTP layer, counted as one more decoder layer). Qwen3-30B-A3B: the
    sizes of its published config.json (48 layers, hidden 2048, 32/4 heads of 128, 128 experts
    of 768, top-8, vocab 151936, untied embeddings).
    """
    import torch
    from transformers import AutoModelForCausalLM, DeepseekV3Config, Qwen3MoeConfig

    from .adapters import adapter_for, expert_count, moe_blocks

    out = {}
    for name, cfg in (("Qwen3-30B-A3B", Qwen3MoeConfig(
            hidden_size=2048, num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
            intermediate_size=6144, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
            vocab_size=151936, tie_word_embeddings=False)), ("DeepSeek-V3", DeepseekV3Config())):
        with torch.device("meta"):
            m = AutoModelForCausalLM.from_config(cfg)
        a = adapter_for(cfg)
        blocks = moe_blocks(m, a)
        E = expert_count(cfg, a)
        per_expert = sum(getattr(blocks[0].experts, p).numel() for p in a.expert_params) // E
        mtp = max([int(getattr(cfg, k, 0) or 0) for k in a.mtp_keys], default=0)
        total = sum(p.numel() for p in m.parameters()) + mtp * (len(blocks) and (
            sum(p.numel() for p in m.model.layers[-1].parameters())))
        out[name] = {"total": int(total), "expert": int(per_expert), "moe_layers": len(blocks) + mtp, "experts": E,
                     "top_k": int(cfg.num_experts_per_tok),
                     **({"n_group": int(cfg.n_group), "topk_group": int(cfg.topk_group)} if a.group_keys else {})}
        del m
    return out


def _fresh_max(rows) -> dict | None:
    """Largest log-prob mismatch (nats) and importance-ratio departure on fresh-rollout steps."""
    fr = [r for r in rows or [] if r.get("fresh_rollout") and "logprob_mismatch" in r]
    if not fr:
        return None
    return {"logprob_mismatch": round(max(float(r["logprob_mismatch"]) for r in fr), 8),
            "is_ratio_max_dev": round(max(float(r["is_ratio_max_dev"]) for r in fr), 8)}


def _load_runs(folder) -> dict:
    """{fault: {seed: {"summary", "rows"}}} of a grpo folder (rows None for a failed run).

    Reads ``summary.json``; keys ``<fault>.s<seed>`` (seeded runs) or a plain ``<fault>`` (seed 0).
    """
    import json
    from pathlib import Path

    folder = Path(folder)
    summ = json.loads((folder / "summary.json").read_text())
    runs: dict = {}
    for key, sm in summ["runs"].items():
        fault, _, sd = key.partition(".s")
        seed = int(sd) if sd.isdigit() else int(sm.get("seed", 0))
        p = folder / f"{key}.jsonl"
        rows = [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() and "error" not in sm \
            else None
        runs.setdefault(fault, {})[seed] = {"summary": sm, "rows": rows}
    return runs


def _first(by_seed: Mapping | None) -> dict:
    """The lowest seed's run of a {seed: run} map ({} when absent)."""
    if not by_seed:
        return {}
    return by_seed[min(by_seed)]


def routing_drift(rows: Sequence[Mapping]) -> float | None:
    """Mean over layers of the total-variation distance between the first and last step's expert
    load (0: routing unchanged during RL, 1: disjoint experts); None without load logs."""
    loads = [r.get("expert_load") for r in rows or [] if r.get("expert_load")]
    if len(loads) < 2:
        return None
    first, last = loads[0], loads[-1]
    d = [0.5 * sum(abs(x - y) for x, y in zip(a["load"], b["load"])) for a, b in zip(first, last)
         if a.get("load") and b.get("load")]
    return round(sum(d) / len(d), 6) if d else None


def _plot(runs_by_model: dict, path, faults: Sequence[str], onset: Mapping[str, int] | None = None) -> None:
    """PNG grid of the first seed's runs: one row per fault (``none`` = healthy), one column per
    signal, one line per model; the fault's first faulty step (``onset``) is marked by a dashed
    line, the x axis is the GRPO step, and one legend names the models."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sigs = SIGNALS + ("logprob_mismatch",)  # the rollout/training mismatch (fresh and reused rollouts)
    fig, axes = plt.subplots(len(faults), len(sigs), figsize=(3.4 * len(sigs), 2.4 * len(faults) + 0.8),
                             squeeze=False)
    handles: dict = {}
    for i, f in enumerate(faults):
        for j, s in enumerate(sigs):
            ax = axes[i][j]
            for name, runs in runs_by_model.items():
                rows = _first(runs.get(f)).get("rows")
                if rows:
                    (line,) = ax.plot([r["step"] for r in rows], _ffill(series(rows, s)), label=name,
                                      lw=2.0 if name == "base" else 1.2)
                    handles.setdefault(name, line)
            if onset and f in onset:
                ax.axvline(onset[f], color="crimson", ls="--", lw=1.0)
            if i == 0:
                ax.set_title(s, fontsize=11)
            if j == 0:
                ax.set_ylabel(f, fontsize=10)
            if i == len(faults) - 1:
                ax.set_xlabel("GRPO step", fontsize=10)
            if s in ("kl", "grad_norm_total", "logprob_mismatch"):
                ax.set_yscale("symlog", linthresh=1e-4)
            ax.tick_params(labelsize=8)
    if onset:
        handles["fault onset"] = plt.Line2D([], [], color="crimson", ls="--", lw=1.0)
    fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=len(handles), fontsize=10,
               frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    fig.savefig(path, dpi=90)
    plt.close(fig)


SCHEDULED_FAULTS = ("skip_actor_update", "lr_spike", "fp16_no_loss_scaling")  # start at row fault_step + 1


def _median_step_ms(by_seed: Mapping | None) -> float:
    ms = [v for run in (by_seed or {}).values() for v in _finite([r.get("step_time_ms") for r in (run["rows"] or [])[1:]])]
    return statistics.median(ms) if ms else float("nan")


def run_fidelity(params: dict, grpo_dirs: Mapping[str, str], report_path, metrics_path, plot_dir,
                 cost: Mapping | None = None) -> dict:
    """Fidelity report of the GRPO runs of the base (``grpo_dirs['base']``) and its proxies.

    Each model's healthy seeds form its healthy ensemble; the detector is calibrated on them
    (leave-one-out false positives, :func:`verdicts.calibrate`) and every fault run is judged
    against its model's ensemble on the fault's specific kinds (:func:`verdicts.fault_rates`).
    ``cost``: the side-by-side measurement of :func:`cost.measure_side_by_side` (optional).

    Writes the markdown report, ``plot_dir/fidelity_runs.png`` (lowest seed, every fault x signal,
    base and proxies overlaid) and ``metrics_path`` (``metrics/fidelity.json``): flat headline keys
    (``healthy_seeds``, ``fault_seeds``, ``false_positive_rate``, ``reproduction_rate``,
    ``base_self_reproduction_rate``, ``step_time_ratio_measured``, ``peak_memory_ratio_measured``)
    and the detail (signatures per seed, curve similarity, routing drift, capability, projection).
    """
    from pathlib import Path

    from passnet_common.io import atomic_write_json, atomic_write_text

    from . import verdicts

    fp = params["fidelity"]
    det, tol = fp["detector"], int(fp["step_tolerance"])
    fault_step = int(params["grpo"].get("fault_step", 0))
    runs = {name: _load_runs(d) for name, d in grpo_dirs.items()}
    if "base" not in runs:
        raise ValueError(f"fidelity needs the base's GRPO runs; got {sorted(runs)}")
    healthy = {n: {sd: r["rows"] for sd, r in (rr.get("none") or {}).items() if r["rows"] is not None}
               for n, rr in runs.items()}
    faults = [f for f in runs["base"] if f != "none"]
    onset = {f: (fault_step + 1 if f in SCHEDULED_FAULTS else 1) for f in faults}
    kind_onset: dict[str, int] = {}
    for f in faults:
        for k in verdicts.FAULT_KINDS.get(f, ()):
            kind_onset[k] = min(kind_onset.get(k, onset[f]), onset[f])
    calib = verdicts.calibrate(healthy, det, fault_step, kind_onset)
    sigs = {n: {f: {sd: signature(r["rows"], list(healthy[n].values()), det, fault_step)
                    for sd, r in (rr.get(f) or {}).items() if r["rows"] is not None and healthy[n]}
                for f in faults} for n, rr in runs.items()}
    rates = verdicts.fault_rates(sigs, tol, onset)
    base = runs["base"]
    bsum = _first(base["none"])["summary"]
    base_ms = _median_step_ms(base["none"])

    def drift(rr):
        d = _finite([routing_drift(r["rows"]) or float("nan") for r in (rr.get("none") or {}).values()])
        return round(statistics.mean(d), 6) if d else None

    out: dict = {
        "healthy_seeds": sorted(base["none"]), "fault_seeds": sorted(next(iter(base[f] for f in faults))) if faults else [],
        "false_positive_rate": {k: v["rate"] for k, v in calib["false_positive_rate"].items()},
        "false_positive_max_specific": max((calib["false_positive_rate"][k]["rate"] or 0.0
                                            for k in {k for ks in verdicts.FAULT_KINDS.values() for k in ks}), default=0.0),
        "reproduction_rate": {f"{f}/{n}": rates["models"][n][f]["reproduction"]["rate"]
                              for n in runs if n != "base" for f in faults},
        "base_self_reproduction_rate": {f: rates["base_self"][f]["rate"] for f in faults},
        "step_time_ratio_measured": dict((cost or {}).get("step_time_ratio") or {}),
        "peak_memory_ratio_measured": dict((cost or {}).get("peak_memory_ratio") or {}),
        "faults": faults, "fault_kinds": {f: list(verdicts.FAULT_KINDS.get(f, ())) for f in faults},
        "fault_onset_step": onset, "calibration": calib, "rates": rates,
        "no_signature_on_base": rates["no_signature"],
        "base_reliable": rates["base_reliable"], "cost_measured": dict(cost or {}),
        "base": {"params": bsum.get("params"), "state_bytes": bsum.get("state_bytes"),
                 "step_time_ms_median_grpo": round(base_ms, 2), "routing_drift_healthy": drift(base),
                 "task_acc_before_rl": bsum.get("task_acc_before"),
                 "task_acc_after_rl": [r["summary"].get("task_acc_after") for r in base["none"].values()],
                 "logprob_mismatch_fresh_max": {f: _fresh_max(_first(base[f]).get("rows")) for f in faults}},
        "proxies": {},
    }
    for name, rr in runs.items():
        if name == "base":
            continue
        psum = _first(rr.get("none"))["summary"]
        p_ms = _median_step_ms(rr.get("none"))
        mem_gb = float(fp["device_memory_gb"])
        out["proxies"][name] = {
            "healthy_similarity": curve_similarity(_first(base["none"])["rows"], _first(rr.get("none")).get("rows") or []),
            "routing_drift_healthy": drift(rr),
            "reproduction": {f: rates["models"][name][f]["reproduction"] for f in faults},
            "detection": {f: rates["models"][name][f]["detection"] for f in faults},
            "logprob_mismatch_fresh_max": {f: _fresh_max(_first(rr.get(f)).get("rows")) for f in faults},
            "task_acc_before_rl": psum.get("task_acc_before"),
            "task_acc_after_rl": [r["summary"].get("task_acc_after") for r in rr["none"].values()],
            "cost": {"params": psum["params"], "params_ratio": round(psum["params"] / bsum["params"], 4),
                     "state_bytes": psum["state_bytes"],
                     "step_time_ms_median_grpo": round(p_ms, 2),
                     "step_time_ratio_grpo_separate_runs": round(p_ms / base_ms, 4),
                     "accelerators": accelerators(psum["params"], mem_gb, fp.get("usable_share", 0.8)),
                     "accelerators_base": accelerators(bsum["params"], mem_gb, fp.get("usable_share", 0.8))},
        }
    out["projection"] = projection(full_size_counts(), params["compare"]["keep_ratios"], float(fp["device_memory_gb"]),
                                   fp.get("usable_share", 0.8))
    out["projection_device_memory_gb"] = float(fp["device_memory_gb"])
    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    _plot(runs, plot_dir / "fidelity_runs.png", ["none"] + faults, onset)
    atomic_write_json(metrics_path, out, indent=1)
    from .report import report_markdown

    atomic_write_text(report_path, report_markdown(out))
    return out
