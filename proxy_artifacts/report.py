"""Markdown fidelity report (``plots/fidelity_report.md``) from the metrics of :func:`fidelity.run_fidelity`.

Deterministic (no measured time or memory); the measured cost report is :func:`cost.cost_markdown`.
"""

from __future__ import annotations

from .detector import SIGNALS
from .projection import BYTES_PER_PARAM


def _fmt_sig(s) -> str:
    if s is None:
        return "n/a"
    return ", ".join(f"{k}@{v}" for k, v in sorted(s.items(), key=lambda kv: kv[1])) or "none"


def _fmt_rate(r) -> str:
    if not r or r.get("rate") is None:
        return "n/a"
    ci = r.get("ci95") or [None, None]
    return f"{r['k']}/{r['n']} = {r['rate']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def controls_markdown(controls: dict | None) -> list[str]:
    """Report lines of the ``controls`` block (:func:`controls.control_verdicts`): per proxy, one row per
    fault with the magnitude score of the base against itself (its seed-to-seed agreement), of the proxy and
    of each control (``k/n`` cells within tolerance, Wilson interval; ``pass`` when the model passes the
    fidelity test; ``d`` the mean magnitude distance), ``beaten`` where the paired run distance difference's
    interval lies above 0 and its mean reaches ``min_effect``, and whether the proxy reproduces the fault
    beyond its controls (``None``: no control ran the row); then the pooled comparison over every fault.
    Empty without controls."""
    if not controls:
        return []
    L = ["", "## Controls: does the fidelity test tell the proxy from a bad proxy?", "",
         "Magnitude score: share of (seed, quantity) cells (reward, entropy, KL, gradient norm, fresh log-prob "
         "mismatch) within the base's seed-to-seed tolerance of the base's run of the same fault and "
         "seed (`proxy.fidelity.controls`). A model passes a fault when its score reaches `min_score` and its "
         "signature reproduces the base's on `min_seed_share` of the seeds. `d`: mean magnitude distance "
         "(|model - base| / tolerance per cell, capped at `dist_cap`; lower is closer). The proxy beats a control "
         "where the 95% t interval of the paired run distance difference (control - proxy, seed by seed) lies above 0 "
         "and its mean is at least `min_effect`, and reproduces the fault only where it passes and beats every "
         "control that ran it. With 3 seeds a per-fault interval has 2 degrees of freedom; the pooled table below "
         "has all the runs. One draw of a random control is one draw.", ""]
    for proxy, blk in controls.items():
        names = blk["controls"]
        L += [f"| fault | base vs itself | {proxy} | " + " | ".join(f"{c} (control)" for c in names)
              + f" | {proxy} reproduces beyond the controls |", "|---|---|---|" + "---|" * len(names) + "---|"]
        for f, row in blk["faults"].items():
            def cell(e):
                if e.get("ran") is False:
                    return "not run"
                if e.get("incomplete"):
                    return "incomplete (a run failed or a seed is missing)"
                d = (e.get("distance") or {}).get("distance")
                return (_fmt_rate(e["score"]) + (" pass" if e["passes"] else " fail")
                        + (f", d {d:.2f}" if d is not None else ""))
            L.append(f"| {f} | {_fmt_rate(row['base_self'])} | {cell(row['proxy'])} | "
                     + " | ".join(cell(row["controls"][c]) + (" (beaten)" if row["controls"][c]["beaten"] else "")
                                  for c in names) + f" | {row['reproduces']} |")
        overall = blk.get("overall") or {}
        if overall:
            L += ["", f"Pooled over every fault a control ran completely: mean run distance difference (control - "
                      f"{proxy}) with its 95% t interval over the paired runs (positive: the proxy is closer to the base).",
                  "", "| control | difference | 95% interval | runs | beaten |", "|---|---|---|---|---|"]
            for c in names:
                o = overall.get(c)
                L.append(f"| {c} | {o['mean']:+.3f} | [{o['ci95'][0]:+.3f}, {o['ci95'][1]:+.3f}] | {o['n']} | "
                         f"{o.get('beaten')} |" if o else f"| {c} | n/a | n/a | 0 | False |")
        L.append("")
    return L


def report_markdown(m: dict) -> str:
    """The fidelity report (markdown) from the metrics dict of :func:`run_fidelity`."""
    names = list(m["proxies"])
    L = ["# Proxy fidelity report", "",
         "GRPO (TRL GRPOTrainer) on the verifiable task, base and proxies: healthy runs on seeds "
         f"{m['healthy_seeds']}, each injected fault on seeds {m['fault_seeds']} (the base on "
         f"{m['reference_fault_seeds']}: its seed-to-seed spread sets the magnitude tolerances). "
         "Rates are `k/n = rate [95% Wilson "
         "interval]`. Thresholds: `params.yaml` `proxy.fidelity.detector`. Figure: `plots/fidelity_runs.png` "
         "(lowest seed).", "",
         "## Detector calibration: false positives on healthy seeds (all models pooled)", "",
         "Leave-one-out: each ensemble seed judged against the model's other ensemble seeds (the runs the "
         f"thresholds were read from). Held-out: seeds {m.get('heldout_healthy_seeds', [])}, never used to set a "
         "threshold, each judged against the whole ensemble exactly as a fault run is.", "",
         "| kind | leave-one-out | held-out |", "|---|---|---|"]
    ho = (m.get("calibration_heldout") or {}).get("false_positive_rate", {})
    for k, v in m["calibration"]["false_positive_rate"].items():
        L.append(f"| {k} | {_fmt_rate(v)} | {_fmt_rate(ho.get(k))} |")
    L += ["", "A fault run is judged only on its specific kinds (the generic kinds `grad_spike`, `divergence`, "
          "`reward_collapse` and `nan_inf` are reported, never used in a verdict). The figure to read is the held-out "
          f"one: largest held-out rate of a specific kind {m.get('false_positive_max_specific')} (leave-one-out on the "
          f"ensemble: {m.get('false_positive_max_specific_calibration')}); of a generic kind "
          f"{m.get('false_positive_max_generic_heldout')}.", ""]
    gd = m.get("generic_detection") or {}
    if gd:
        fl = sorted({f for v in gd.values() for f in v})
        L += ["Generic kinds on the fault runs (from the fault's onset, all models and seeds pooled): what the "
              "calibrated thresholds still see.", "", "| kind | " + " | ".join(fl) + " |", "|---|" + "---|" * len(fl)]
        L += [f"| {k} | " + " | ".join(f"{v[f]['k']}/{v[f]['n']}" for f in fl) + " |" for k, v in gd.items()]
        L += [""]
    L += ["## Faults: detection on the base and reproduction by each proxy (seed s of the proxy vs seed s of the base)",
          "", "| fault | specific kind | base detection | base self-reproduction | "
          + " | ".join(f"{n} reproduction" for n in names) + " |", "|---|---|---|---|" + "---|" * len(names)]
    for f in m["fault_runs"]:
        base_det = m["rates"]["models"]["base"][f]["detection"]
        note = " (no signature)" if f in m["no_signature_on_base"] else \
            ("" if m["base_reliable"].get(f) else " (not reliable on the base)")
        L.append(f"| {f} | {', '.join(m['fault_kinds'][f])} | {_fmt_rate(base_det)}{note} | "
                 f"{_fmt_rate(m['rates']['base_self'][f])} | "
                 + " | ".join(_fmt_rate(m["proxies"][n]["reproduction"][f]) for n in names) + " |")
    L += controls_markdown(m.get("controls"))
    L += ["", "## Healthy runs: curve similarity (lowest seed; Pearson r / normalised distance) and routing drift", "",
          "Routing drift: mean over layers of the total-variation distance between the first and the last RL "
          f"step's expert load (healthy seeds averaged); base {m['base']['routing_drift_healthy']}.", ""]
    sigs = list(SIGNALS)
    L.append("| proxy | routing drift | " + " | ".join(sigs) + " |")
    L.append("|---|---|" + "---|" * len(sigs))
    for n in names:
        hs = m["proxies"][n]["healthy_similarity"]
        L.append(f"| {n} | {m['proxies'][n]['routing_drift_healthy']} | "
                 + " | ".join(f"{hs[s]['pearson']} / {hs[s]['norm_dist']}" for s in sigs) + " |")
    L += ["", "## Fault catalog: trigger, documented signature, source, fix", "",
          "Base rate: the fault's specific kinds on the base over the fault seeds. Fix rate: the same kinds on the "
          "fixed runs (`<fault>+fix`, or the held-out healthy seeds where the fix is not injecting the fault).", "",
          "| fault | trigger | signature (kinds) | source | fix | base rate | fix rate | fix removes it |",
          "|---|---|---|---|---|---|---|---|"]
    for f, c in (m.get("faults") or {}).items():
        L.append(f"| {f} | {c['trigger']} | {c['signature']} ({', '.join(c['kinds'])}) | {c['source']} | {c['fix']} | "
                 f"{_fmt_rate(c['base_rate'])} | {_fmt_rate(c['fix_rate'])} | {c['fix_removes']} |")
    rows = [(f, c["fresh"]) for f, c in (m.get("faults") or {}).items() if c.get("fresh")]
    if rows:
        L += ["", "## Rollout/training pair on fresh rollouts (base): router flips, extreme tokens, log-prob mismatch", "",
              "Per fresh-rollout step (the policy has not moved since the rollout), between the rollout-side "
              "log-prob forward and the training forward of the same batch: router flip rate (share of (token, "
              "layer) top-k expert sets that differ), extreme-token share (completion tokens whose train/rollout "
              "probability ratio is outside [1/2, 2]) and the mean |log pi_train - log pi_rollout| (nats). Mean "
              "over every fresh step of the row's seeds / largest per seed: `healthy` rows the healthy seeds "
              f"{m['healthy_seeds']}, `fault` and `+fix` rows the fault seeds {m['fault_seeds']} "
              f"(the base's: {m['reference_fault_seeds']}).", "",
              "| fault | runs | router flip rate | extreme-token share | log-prob mismatch |", "|---|---|---|---|---|"]
        for f, fr in rows:
            for label, q in (("healthy", fr.get("healthy")), ("fault", fr.get("fault")), ("+fix", fr.get("fix"))):
                if q is None:
                    continue
                cells = [("-" if q.get(k) is None else f"{q[k]['mean']:.3g} / {list(q[k]['max_per_seed'].values())}")
                         for k in ("router_flip_rate", "extreme_token_share", "logprob_mismatch")]
                L.append(f"| {f} | {label} | " + " | ".join(cells) + " |")
    L += ["", "## What RL did to the task (healthy seeds)", "",
          "Edge reward: mean exact-match reward of samples at T=1 on the held-out edge set (what GRPO optimises); "
          "gain: after - before in points, mean over seeds with a 95% t interval. In-range accuracy: greedy exact "
          "match on the held-out in-range set (capability kept). Non-zero-advantage share: GRPO groups whose samples "
          "disagree, mean over fresh-rollout steps.", "",
          "| model | edge reward before | after (per seed) | gain (points) [95% CI] | in-range before | after (per seed) "
          "| non-zero-advantage share |", "|---|---|---|---|---|---|---|"]
    for n, c in [("base", m["base"]["capability"])] + [(n, m["proxies"][n]["capability"]) for n in names]:
        g = c["rl_gain_edge"]
        L.append(f"| {n} | {c['edge_reward_before']} | {c['edge_reward_after']} | {g['mean']} {g['ci95']} | "
                 f"{c['heldout_acc_before']} | {c['heldout_acc_after']} | {c['nonzero_advantage_share']['mean']} |")
    L += ["", "## Measured cost", "",
          "Step time and peak memory are measurements (they differ on every run): `metrics/proxy_cost.json` and "
          "`plots/proxy_cost_report.md` (stage `proxy_cost`), not this deterministic report."]
    L += ["", f"## Projection for full-size configs ({m['projection_device_memory_gb']} GB accelerators, "
          f"{BYTES_PER_PARAM} B/param GRPO state)", "",
          "| model | keep | experts kept | params | accelerators | saved |", "|---|---|---|---|---|---|"]
    for name, rows in m["projection"].items():
        L.append(f"| {name} | 1.0 | all | {rows['params']:.3e} | {rows['accelerators']} | 0 |")
        for k, v in rows.items():
            if k.startswith("r"):
                L.append(f"| {name} | {k[1:]} | {v['experts_kept']} | {v['params']:.3e} | {v['accelerators']} | "
                         f"{v['accelerators_saved_share']:.1%} |")
    L += ["", "Assumptions of the projection: memory = the GRPO training state only (18 B/param: bf16 weights, fp32 "
          "master, two fp32 Adam moments, bf16 gradients, bf16 reference), accelerators = ceil(state / (memory x usable "
          "share)); rollout-engine weights + KV cache and activations at the RL sequence length are not counted, nor "
          "the rounding to nodes of 8. Compute: pruning keeps top-k, so FLOPs per token are unchanged; the whole "
          "step's compute is spread over fewer accelerators, so the saving is in accelerators (memory), not in "
          "accelerator-hours per step; the measured step-time ratio (`metrics/proxy_cost.json`) is the evidence at tiny scale."]
    return "\n".join(L) + "\n"
