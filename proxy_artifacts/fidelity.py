"""Fault signatures, base-vs-proxy fidelity of GRPO runs, and cost accounting.

Detector (:func:`signature`): a run's per-step curves, compared with the healthy run of the
same model, become a set of fault kinds with their first step (thresholds: the
``proxy.fidelity.detector`` params):

- ``nan_inf``: first step with a NaN/Inf gradient entry or a non-finite loss.
- ``grad_spike``: first step whose total gradient norm before clipping (the Trainer's
  ``grad_norm``; the per-group norms of the step log are measured after clipping) exceeds
  ``grad_spike_factor`` x the healthy run's median.
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
  ``grad_collapse_factor`` x the healthy run's at the same step (where the healthy one is above
  ``divergence_floor``): gradients flushed to zero (fp16 underflow).
- ``logprob_mismatch``: first fresh-rollout step (the policy has not moved since the rollout,
  see :mod:`rl`) whose mean |log pi_train - log pi_rollout| exceeds
  ``max(logprob_mismatch_factor x healthy maximum on fresh steps, logprob_mismatch_min)`` nats
  (rollout precision or kernel differing from training's).
- ``divergence``: first step where loss, KL or gradient norm departs from the healthy curve
  by more than ``divergence_rel`` (relative to the healthy value, floor ``divergence_floor``).

A proxy reproduces a fault when its signature has the same kinds as the base's and every
kind's first step is within ``step_tolerance`` steps. A fault whose base run shows no signature is
reported as "not detectable at this scale" (verdict None), never as reproduced. Curve similarity of healthy runs
(:func:`curve_similarity`): Pearson correlation and the normalised distance
``mean|b - p| / mean|b|`` per signal.

Cost (:func:`cost_row`, :func:`projection`): training-state bytes of a GRPO run in mixed
precision (per parameter: 2 B bf16 weights + 4 B fp32 master + 4 + 4 B Adam moments + 2 B
bf16 gradients + 2 B bf16 reference = 18 B, the ZeRO paper's 16 B/param mixed-precision Adam
plus a frozen bf16 reference), accelerators = ceil(bytes / (device memory x usable share)),
per-step cost = accelerators x step time.
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


def signature(rows: Sequence[Mapping], healthy: Sequence[Mapping], det: Mapping, fault_step: int = 0) -> dict:
    """{kind: first step} of the fault kinds detected in ``rows`` against ``healthy`` (see module doc)."""
    sig: dict[str, int] = {}
    steps = [int(r["step"]) for r in rows]
    for r, s in zip(rows, steps):
        if r.get("grad_nan", 0) or r.get("grad_inf", 0) or r.get("loss_nonfinite", 0):
            sig["nan_inf"] = s
            break
    gkey = "grad_norm_trl" if any("grad_norm_trl" in r for r in healthy) else "grad_norm_total"
    g_h = _finite(series(healthy, gkey))
    med = statistics.median(g_h) if g_h else float("nan")
    for s, g in zip(steps, series(rows, gkey)):
        if math.isfinite(g) and math.isfinite(med) and g > det["grad_spike_factor"] * med:
            sig["grad_spike"] = s
            break
    kl_h = _finite(series(healthy, "kl"))
    kl_max = max(kl_h) if kl_h else 0.0
    kl = series(rows, "kl")
    for s, v in zip(steps, kl):
        if not math.isfinite(v) or (v > det["kl_blowup_factor"] * kl_max and v > det["kl_blowup_min"]):
            if math.isfinite(v) or "nan_inf" in sig:
                sig["kl_blowup"] = s
                break
    w = int(det["window"])
    rm = _running_mean(series(rows, "reward"), w)
    rh = _running_mean(series(healthy, "reward"), w)
    for s, a, b in zip(steps, rm, rh):
        if s >= fault_step + w and math.isfinite(b) and b >= det["reward_min"] and (
                not math.isfinite(a) or a < det["reward_collapse_frac"] * b):
            sig["reward_collapse"] = s
            break
    g_rows, g_hs = series(rows, gkey), {int(r["step"]): r.get(gkey) for r in healthy}
    for s, g in zip(steps, g_rows):
        gh = g_hs.get(s)
        if s > fault_step and gh is not None and math.isfinite(g) and float(gh) > det["divergence_floor"] and \
                g < det.get("grad_collapse_factor", 0.1) * float(gh):
            sig["grad_collapse"] = s
            break
    fresh_h = [float(r["logprob_mismatch"]) for r in healthy if r.get("fresh_rollout") and "logprob_mismatch" in r]
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
    after_h = [v for s, v in zip([int(r["step"]) for r in healthy], series(healthy, "update_norm")) if s > fault_step]
    if after and _finite(after_h) and min(_finite(after_h)) > det["update_frozen"] and \
            all(math.isfinite(v) and v < det["update_frozen"] for v in after):
        sig["frozen_policy"] = fault_step + 1
    hs = {int(r["step"]): r for r in healthy}
    for r, s in zip(rows, steps):
        h = hs.get(s)
        if h is None:
            continue
        for key in ("loss", "kl", "grad_norm_total"):
            a, b = r.get(key), h.get(key)
            if a is None or b is None:
                continue
            a, b = float(a), float(b)
            if not math.isfinite(a) or abs(a - b) > det["divergence_rel"] * max(abs(b), det["divergence_floor"]):
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
    Per-step cost ratio = accelerators ratio (active parameters per token are unchanged by
    pruning, so the per-accelerator step time is taken as equal: an assumption, stated).
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
                             "accelerators_saved_share": round(1 - acc / base_acc, 4),
                             "per_step_cost_ratio": round(base_acc / acc, 3)}
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
    import json
    from pathlib import Path

    folder = Path(folder)
    summ = json.loads((folder / "summary.json").read_text())
    runs = {}
    for f, s in summ["runs"].items():
        p = folder / f"{f}.jsonl"
        rows = [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() and "error" not in s \
            else None
        runs[f] = {"summary": s, "rows": rows}
    return runs


def _plot(runs_by_model: dict, path, faults: Sequence[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sigs = SIGNALS + ("logprob_mismatch",)  # the rollout/training mismatch (fresh and reused rollouts)
    fig, axes = plt.subplots(len(faults), len(sigs), figsize=(3.2 * len(sigs), 2.2 * len(faults)), squeeze=False)
    for i, f in enumerate(faults):
        for j, s in enumerate(sigs):
            ax = axes[i][j]
            for name, runs in runs_by_model.items():
                rows = (runs.get(f) or {}).get("rows")
                if rows:
                    ax.plot([r["step"] for r in rows], _ffill(series(rows, s)), label=name,
                            lw=2.0 if name == "base" else 1.0)
            if i == 0:
                ax.set_title(s, fontsize=9)
            if j == 0:
                ax.set_ylabel(f, fontsize=9)
            if s in ("kl", "grad_norm_total", "logprob_mismatch"):
                ax.set_yscale("symlog", linthresh=1e-4)
            ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def run_fidelity(params: dict, grpo_dirs: Mapping[str, str], report_path, metrics_path, plot_dir) -> dict:
    """Fidelity report of the GRPO runs of the base (``grpo_dirs['base']``) and its proxies.

    Writes the markdown report, ``plot_dir/fidelity_runs.png`` (every fault x signal, base and
    proxies overlaid) and ``metrics_path`` (``metrics/fidelity.json``): healthy-run curve
    similarity per proxy, per-fault signatures and reproduction, capability before/after RL,
    cost per proxy (measured) and the full-size projection.
    """
    from pathlib import Path

    from passnet_common.io import atomic_write_json, atomic_write_text

    fp = params["fidelity"]
    det, tol = fp["detector"], int(fp["step_tolerance"])
    fault_step = int(params["grpo"].get("fault_step", 0))
    runs = {name: _load_runs(d) for name, d in grpo_dirs.items()}
    if "base" not in runs:
        raise ValueError(f"fidelity needs the base's GRPO runs; got {sorted(runs)}")
    faults = [f for f in runs["base"] if runs["base"][f]["rows"] is not None]
    sigs = {}
    for name, rr in runs.items():
        healthy = (rr.get("none") or {}).get("rows")
        sigs[name] = {}
        for f in faults:
            rows = (rr.get(f) or {}).get("rows")
            sigs[name][f] = None if rows is None or healthy is None else \
                signature(rows, healthy, det, 0 if f == "none" else fault_step)
    base = runs["base"]
    base_steps = _finite([r.get("step_time_ms") for r in base["none"]["rows"][1:]])
    base_ms = statistics.median(base_steps) if base_steps else float("nan")
    out: dict = {"faults": faults, "proxies": {}, "base": {}}
    bsum = base["none"]["summary"]
    out["base"] = {"params": bsum.get("params"), "state_bytes": bsum.get("state_bytes"),
                   "step_time_ms_median": round(base_ms, 2),
                   "task_acc_before_rl": bsum.get("task_acc_before"), "task_acc_after_rl": bsum.get("task_acc_after"),
                   "signatures": sigs["base"],
                   "logprob_mismatch_fresh_max": {f: _fresh_max(base[f]["rows"]) for f in faults}}
    for name, rr in runs.items():
        if name == "base":
            continue
        psum = rr["none"]["summary"]
        ms = _finite([r.get("step_time_ms") for r in (rr["none"]["rows"] or [])[1:]])
        p_ms = statistics.median(ms) if ms else float("nan")
        per_fault = {}
        for f in faults:
            if f == "none":
                continue
            b, p = sigs["base"][f], sigs[name].get(f)
            detectable = bool(b)
            per_fault[f] = {"base": b, "proxy": p, "detectable_on_base": detectable,
                            "reproduced": None if p is None or not detectable else reproduces(b, p, tol)}
        mem_gb = float(fp["device_memory_gb"])
        acc_b = accelerators(bsum["params"], mem_gb, fp.get("usable_share", 0.8))
        acc_p = accelerators(psum["params"], mem_gb, fp.get("usable_share", 0.8))
        out["proxies"][name] = {
            "healthy_similarity": curve_similarity(base["none"]["rows"], rr["none"]["rows"] or []),
            "faults": per_fault,
            "faults_reproduced": sorted(f for f, v in per_fault.items() if v["reproduced"]),
            "faults_not_detectable": sorted(f for f, v in per_fault.items() if not v["detectable_on_base"]),
            "reproduced_share": round(sum(bool(v["reproduced"]) for v in per_fault.values())
                                      / max(1, sum(v["detectable_on_base"] for v in per_fault.values())), 4),
            "logprob_mismatch_fresh_max": {f: _fresh_max((rr.get(f) or {}).get("rows")) for f in faults},
            "task_acc_before_rl": psum.get("task_acc_before"), "task_acc_after_rl": psum.get("task_acc_after"),
            "cost": {"params": psum["params"], "params_ratio": round(psum["params"] / bsum["params"], 4),
                     "state_bytes": psum["state_bytes"],
                     "peak_memory_bytes": max((r.get("peak_memory_bytes", 0) for r in rr["none"]["rows"] or []),
                                              default=None),
                     "step_time_ms_median": round(p_ms, 2), "step_time_ratio": round(p_ms / base_ms, 4),
                     "accelerators": acc_p, "accelerators_base": acc_b,
                     "per_step_cost_ratio": round((acc_b * base_ms) / (acc_p * p_ms), 4)},
        }
    out["projection"] = projection(full_size_counts(), params["compare"]["keep_ratios"], float(fp["device_memory_gb"]),
                                   fp.get("usable_share", 0.8))
    out["projection_device_memory_gb"] = float(fp["device_memory_gb"])
    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    _plot({n: r for n, r in runs.items()}, plot_dir / "fidelity_runs.png", faults)
    atomic_write_json(metrics_path, out, indent=1)
    atomic_write_text(report_path, report_markdown(out))
    return out


def _fmt_sig(s) -> str:
    if s is None:
        return "n/a"
    return ", ".join(f"{k}@{v}" for k, v in sorted(s.items(), key=lambda kv: kv[1])) or "none"


def report_markdown(m: dict) -> str:
    """The fidelity report (markdown) from the metrics dict of :func:`run_fidelity`."""
    L = ["# Proxy fidelity report", "",
         "GRPO (TRL GRPOTrainer) on the verifiable task, base and proxies, healthy run and each injected fault.",
         "Signatures are `kind@first step` from the detector (thresholds in `params.yaml` `proxy.fidelity`).",
         "Figure: `plots/fidelity_runs.png`.", "", "## Healthy runs: curve similarity (Pearson r / normalised distance)", ""]
    names = list(m["proxies"])
    sigs = list(SIGNALS)
    L.append("| proxy | " + " | ".join(sigs) + " |")
    L.append("|---|" + "---|" * len(sigs))
    for n in names:
        hs = m["proxies"][n]["healthy_similarity"]
        L.append(f"| {n} | " + " | ".join(f"{hs[s]['pearson']} / {hs[s]['norm_dist']}" for s in sigs) + " |")
    L += ["", "## Capability (held-out task exact match) before -> after RL (healthy run)", "",
          "| model | before | after |", "|---|---|---|",
          f"| base | {m['base']['task_acc_before_rl']} | {m['base']['task_acc_after_rl']} |"]
    for n in names:
        L.append(f"| {n} | {m['proxies'][n]['task_acc_before_rl']} | {m['proxies'][n]['task_acc_after_rl']} |")
    L += ["", "## Faults: base signature vs proxy signature (reproduced?)", "",
          "| fault | base | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for f in m["faults"]:
        if f == "none":
            continue
        cells = []
        for n in names:
            v = m["proxies"][n]["faults"].get(f, {})
            verdict = "not detectable at this scale" if not v.get("detectable_on_base", True) else \
                ("yes" if v.get("reproduced") else "no")
            cells.append(f"{_fmt_sig(v.get('proxy'))} ({verdict})")
        L.append(f"| {f} | {_fmt_sig(m['base']['signatures'].get(f))} | " + " | ".join(cells) + " |")
    L += ["", "## Rollout / training log-prob mismatch on fresh rollouts (max mean |dlogp| nats / max |ratio - 1|)", "",
          "| fault | base | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]

    def _mm(v):
        return "n/a" if not v else f"{v['logprob_mismatch']:.2e} / {v['is_ratio_max_dev']:.3f}"

    for f in m["faults"]:
        L.append(f"| {f} | {_mm(m['base'].get('logprob_mismatch_fresh_max', {}).get(f))} | " + " | ".join(
            _mm(m["proxies"][n].get("logprob_mismatch_fresh_max", {}).get(f)) for n in names) + " |")
    L += ["", "## Cost per proxy (measured on this machine)", "",
          "| proxy | params | params ratio | step ms (base " + str(m["base"]["step_time_ms_median"]) +
          ") | step time ratio | accelerators | per-step cost ratio |", "|---|---|---|---|---|---|---|"]
    for n in names:
        c = m["proxies"][n]["cost"]
        L.append(f"| {n} | {c['params']} | {c['params_ratio']} | {c['step_time_ms_median']} | {c['step_time_ratio']} | "
                 f"{c['accelerators']} (base {c['accelerators_base']}) | {c['per_step_cost_ratio']} |")
    L += ["", f"## Projection for full-size configs ({m['projection_device_memory_gb']} GB accelerators, "
          f"{BYTES_PER_PARAM} B/param GRPO state)", "",
          "| model | keep | experts kept | params | accelerators | saved | per-step cost ratio |",
          "|---|---|---|---|---|---|---|"]
    for name, rows in m["projection"].items():
        L.append(f"| {name} | 1.0 | all | {rows['params']:.3e} | {rows['accelerators']} | 0 | 1 |")
        for k, v in rows.items():
            if k.startswith("r"):
                L.append(f"| {name} | {k[1:]} | {v['experts_kept']} | {v['params']:.3e} | {v['accelerators']} | "
                         f"{v['accelerators_saved_share']:.1%} | {v['per_step_cost_ratio']}x |")
    L += ["", "Per-step cost ratio of the projection = accelerator ratio (pruning keeps top-k, so the active "
          "parameters per token and the per-accelerator step time are assumed equal)."]
    return "\n".join(L) + "\n"
