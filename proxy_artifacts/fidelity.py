"""Base-vs-proxy fidelity of GRPO runs: the ``proxy_fidelity`` stage.

:func:`run_fidelity` loads the GRPO runs of the base and every proxy, turns each into a fault
signature (:mod:`proxy_artifacts.detector`), judges reproduction over seeds
(:mod:`proxy_artifacts.verdicts`), projects cost (:mod:`proxy_artifacts.projection`: accelerator
arithmetic), compares routing drift, and writes the report (:mod:`proxy_artifacts.report`), the
metrics and the run plot. Every output is deterministic: no wall time or measured memory enters
it (the GRPO logs hold none; the measured cost is the ``proxy_cost`` stage's,
:mod:`proxy_artifacts.cost`, in ``metrics/proxy_cost.json``).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Mapping, Sequence

from scipy.stats import t as student_t

from passnet_common.io import atomic_write_json, atomic_write_text

from . import verdicts
from .config import proxy_params
from .controls import control_verdicts, quantities_of
from .detector import SIGNALS, curve_similarity, finite_values, forward_fill, series, signature
from .projection import accelerators, full_size_counts, projection
from .report import report_markdown
from .verdicts import FAULT_CATALOG, FAULT_KINDS, at_least_share, rate


def parse_control_dirs(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """``proxy:name=folder`` items (a control's GRPO output folder) as ``{proxy: {name: folder}}``.

    Raises:
        ValueError: an item not of that form.
    """
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, eq, folder = item.partition("=")
        proxy, colon, name = key.partition(":")
        if not eq or not colon or not proxy or not name or not folder:
            raise ValueError(f"--controls item {item!r} is not proxy:name=folder")
        out.setdefault(proxy, {})[name] = folder
    return out


FRESH_QUANTITIES = ("router_flip_rate", "extreme_token_share", "logprob_mismatch")  # rl.py, per step


def fresh_quantities(by_seed: Mapping | None) -> dict | None:
    """The rollout/training pair figures of one model's runs of one fault on fresh-rollout steps: per quantity of
    :data:`FRESH_QUANTITIES` (``rl.py``), ``max_per_seed`` {seed: largest value on a fresh step} and ``mean``
    (over every fresh step of every seed); None without a run, a quantity None when no fresh step logged it."""
    rows = {sd: r["rows"] for sd, r in (by_seed or {}).items() if r.get("rows")}
    if not rows:
        return None
    out = {}
    for q in FRESH_QUANTITIES:
        per = {int(sd): [float(x[q]) for x in rr if x.get("fresh_rollout") and x.get(q) is not None]
               for sd, rr in sorted(rows.items())}
        vals = [v for vs in per.values() for v in vs]
        out[q] = None if not vals else {"max_per_seed": {sd: round(max(vs), 8) for sd, vs in per.items() if vs},
                                        "mean": round(statistics.mean(vals), 8)}
    return out


def _fresh_max(rows) -> dict | None:
    """Largest log-prob mismatch (nats) and importance-ratio departure on fresh-rollout steps."""
    fr = [r for r in rows or [] if r.get("fresh_rollout") and "logprob_mismatch" in r]
    if not fr:
        return None
    return {"logprob_mismatch": round(max(float(r["logprob_mismatch"]) for r in fr), 8),
            "is_ratio_max_dev": round(max(float(r["is_ratio_max_dev"]) for r in fr), 8)}


HELDOUT = "none_heldout"  # {seed: run} of the held-out healthy seeds in a _load_runs result


def _load_runs(folder) -> dict:
    """{fault: {seed: {"summary", "rows"}}} of a grpo folder (rows None for a failed run).

    Reads ``summary.json``; keys ``<fault>.s<seed>`` (seeded runs) or a plain ``<fault>`` (seed 0).
    Healthy runs of the summary's ``heldout_healthy_seeds`` go under ``HELDOUT`` instead of ``none``:
    they are never part of the healthy ensemble.
    """
    folder = Path(folder)
    summ = json.loads((folder / "summary.json").read_text())
    runs: dict = {}
    for key, sm in summ["runs"].items():
        fault, _, sd = key.partition(".s")
        seed = int(sd) if sd.isdigit() else int(sm.get("seed", 0))
        if fault == "none" and seed in set(summ.get("heldout_healthy_seeds") or ()):
            fault = HELDOUT
        p = folder / f"{key}.jsonl"
        rows = [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() and "error" not in sm \
            else None
        runs.setdefault(fault, {})[seed] = {"summary": sm, "rows": rows}
    return runs


def proxy_weights_sha256(grpo_dir) -> str | None:
    """The ``proxy_weights_sha256`` of the model a GRPO folder ran (its ``summary.json`` ``model_dir``,
    that folder's ``lineage.json``); None when the model has no lineage (the base, a control)."""
    summ = json.loads((Path(grpo_dir) / "summary.json").read_text())
    lin = Path(summ.get("model_dir") or "") / "lineage.json"
    return json.loads(lin.read_text()).get("proxy_weights_sha256") if summ.get("model_dir") and lin.is_file() else None


def _rows_by_seed(by_seed: Mapping | None) -> dict:
    """{seed: step rows} of a {seed: run} map, failed runs (rows None) left out."""
    return {sd: r["rows"] for sd, r in (by_seed or {}).items() if r["rows"] is not None}


def mean_ci95(xs: Sequence[float]) -> dict:
    """{"mean", "ci95": [low, high] (Student t interval of the mean; None below 2 values), "n", "values"}."""
    xs = [float(x) for x in xs]
    if not xs:
        return {"mean": None, "ci95": None, "n": 0, "values": []}
    m = statistics.mean(xs)
    ci = None
    if len(xs) > 1:
        h = float(student_t.ppf(0.975, len(xs) - 1)) * statistics.stdev(xs) / len(xs) ** 0.5
        ci = [round(m - h, 6), round(m + h, 6)]
    return {"mean": round(m, 6), "ci95": ci, "n": len(xs), "values": [round(x, 6) for x in xs]}


def rl_capability(by_seed: Mapping | None) -> dict:
    """What the healthy runs of one model did to its task, seed by seed (``rl.run_grpo`` summaries).

    Returns {"edge_reward_before", "edge_reward_after" (per seed: each run samples its evaluation with its own
    seed, ``eval_seed``, the same before and after), "eval_seed" (per seed), "rl_gain_edge" (after - before in
    reward points x 100, :func:`mean_ci95` over seeds), "heldout_acc_before", "heldout_acc_after" (per
    seed), "nonzero_advantage_share" (mean over the runs' fresh-rollout steps, :func:`mean_ci95` of the
    per-run means)}. Runs without an after figure are left out of the gain.
    """
    runs = [r for _, r in sorted((by_seed or {}).items())]
    summ = [r["summary"] for r in runs]
    gains = [100 * (sm["edge_reward_after"] - sm["edge_reward_before"]) for sm in summ
             if sm.get("edge_reward_after") is not None and sm.get("edge_reward_before") is not None]
    share = []
    for r in runs:
        v = [float(x["nonzero_advantage_share"]) for x in r["rows"] or [] if x.get("nonzero_advantage_share") is not None]
        if v:
            share.append(statistics.mean(v))
    return {"edge_reward_before": [sm.get("edge_reward_before") for sm in summ],
            "edge_reward_after": [sm.get("edge_reward_after") for sm in summ],
            "eval_seed": [sm.get("eval_seed") for sm in summ],
            "rl_gain_edge": mean_ci95(gains),
            "heldout_acc_before": [sm.get("heldout_acc_before") for sm in summ],
            "heldout_acc_after": [sm.get("heldout_acc_after") for sm in summ],
            "nonzero_advantage_share": mean_ci95(share)}


def _max_rate(calib: Mapping, kinds) -> float:
    """The largest false-positive rate of ``kinds`` in a :func:`verdicts.calibrate` result (0.0 without runs)."""
    return max((calib["false_positive_rate"][k]["rate"] or 0.0 for k in kinds), default=0.0)


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
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

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
                    (line,) = ax.plot([r["step"] for r in rows], forward_fill(series(rows, s)), label=name,
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


SCHEDULED_FAULTS = ("skip_actor_update", "lr_spike", "fp16_no_loss_scaling", "fp16_overflow")  # from row fault_step + 1


def fault_table(faults: Sequence[str], rates: Mapping, calib_ho: Mapping, onset: Mapping[str, int],
                min_seed_share: float) -> dict:
    """Per fault (:data:`verdicts.FAULT_CATALOG`): trigger, signature, source, fix, the base's
    detection rate over the fault seeds (``base_rate``), the rate on the fix runs (``fix_rate``:
    ``<fault>+fix`` runs where they exist, else the base's held-out healthy runs, which are the fixed run of a
    fault whose fix is "do not inject it"), and ``fix_removes``: the base shows the signature on at least
    ``min_seed_share`` of the seeds (``proxy.fidelity.controls.min_seed_share``, the rule a proxy's
    reproduction is held to; :func:`verdicts.at_least_share`) and never on the fixed runs (None when there is
    no signature to remove, or no run applies the fix: catalog ``fix_run_exists`` False, ``fix_run`` and
    ``fix_rate`` None too).

    Raises:
        ValueError: a fault (not a ``+fix`` run) has no catalog entry: its row would have no trigger,
            signature, source or fix.
    """
    base = rates["models"]["base"]
    out = {}
    for f in faults:
        if "+" in f:
            continue
        if f not in FAULT_CATALOG:
            raise ValueError(f"fault {f!r} has no entry in proxy_artifacts.verdicts.FAULT_CATALOG "
                             f"(trigger, signature, source, fix); catalogued: {sorted(FAULT_CATALOG)}")
        br = base[f]["detection"]
        if f"{f}+fix" in base:
            fr, fix_run = base[f"{f}+fix"]["detection"], f"{f}+fix"
        else:
            kinds = set(FAULT_KINDS.get(f, ()))
            flagged = (calib_ho.get("flagged") or {}).get("base") or {}
            hit = sum(any(k in kinds and v >= onset.get(f, 1) for k, v in sig.items()) for sig in flagged.values())
            fr, fix_run = rate(hit, len(flagged)), "none (held-out healthy seeds)"
        shows = at_least_share(br["k"], br["n"], min_seed_share)
        # no run applies the fix (catalog fix_run_exists False): whether it removes the signature is unmeasured
        measured = FAULT_CATALOG[f].get("fix_run_exists", True)
        out[f] = {**FAULT_CATALOG[f], "kinds": list(FAULT_KINDS.get(f, ())), "base_rate": br, "fix_run": fix_run if measured else None,
                  "fix_rate": fr if measured else None,
                  "fix_removes": (fr["n"] > 0 and fr["k"] == 0) if shows and measured else None}
    return out


def run_fidelity(params: dict, grpo_dirs: Mapping[str, str], report_path, metrics_path, plot_dir,
                 control_dirs: Mapping[str, Mapping[str, str]] | None = None) -> dict:
    """Fidelity report of the GRPO runs of the base (``grpo_dirs['base']``) and its proxies.

    ``control_dirs`` {proxy: {control name: grpo folder}}: the negative controls of a proxy
    (:mod:`proxy_artifacts.controls`); each control's fault runs are judged against its own healthy
    ensemble (controls stay out of the detector's calibration) and the metrics get a ``controls`` block
    (:func:`controls.control_verdicts`: per proxy, fault and control the magnitude fidelity score with
    its interval, whether the proxy beats the control, and the faults it reproduces beyond its controls).

    Each model's healthy seeds form its healthy ensemble; the detector is calibrated on them
    (leave-one-out false positives, :func:`verdicts.calibrate`), the held-out healthy seeds are judged
    against the whole ensemble (:func:`verdicts.calibrate_heldout`) and every fault run is judged
    against its model's ensemble on the fault's specific kinds (:func:`verdicts.fault_rates`).

    Writes the markdown report, ``plot_dir/fidelity_runs.png`` (lowest seed, every fault x signal,
    base and proxies overlaid) and ``metrics_path`` (``metrics/fidelity.json``): flat headline keys
    (``healthy_seeds``, ``heldout_healthy_seeds``, ``fault_seeds``, ``false_positive_rate``,
    ``false_positive_rate_heldout``, ``false_positive_max_specific`` (the headline: the largest held-out rate
    of the kinds a verdict uses), ``false_positive_max_specific_calibration`` (the same, leave-one-out on the
    ensemble runs the thresholds were read from), ``false_positive_max_generic_heldout``, ``reproduction_rate``,
    ``base_self_reproduction_rate``) and the detail (per proxy the ``proxy_weights_sha256`` of the model its
    runs loaded, which ``publish`` checks against the folder it uploads; signatures per seed, curve similarity, routing
    drift, capability, accelerator counts and the full-size projection). All three outputs are
    deterministic functions of the GRPO logs and ``params`` (byte-identical on a rebuild); the
    measured ``step_time_ratio_measured`` / ``peak_memory_ratio_measured`` are in
    ``metrics/proxy_cost.json`` (:func:`cost.write_cost`).
    """
    params = proxy_params(params)
    fp = params["fidelity"]
    det, tol = fp["detector"], int(fp["step_tolerance"])
    fault_step = int(params["grpo"]["fault_step"])
    runs = {name: _load_runs(d) for name, d in grpo_dirs.items()}
    if "base" not in runs:
        raise ValueError(f"fidelity needs the base's GRPO runs; got {sorted(runs)}")
    healthy = {n: _rows_by_seed(rr.get("none")) for n, rr in runs.items()}
    heldout = {n: _rows_by_seed(rr.pop(HELDOUT, None)) for n, rr in runs.items()}
    faults = [f for f in runs["base"] if f != "none"]
    onset = {f: (fault_step + 1 if verdicts.fault_name(f) in SCHEDULED_FAULTS else 1) for f in faults}
    kind_onset: dict[str, int] = {}
    for f in faults:
        for k in verdicts.FAULT_KINDS.get(verdicts.fault_name(f), ()):
            kind_onset[k] = min(kind_onset.get(k, onset[f]), onset[f])
    calib = verdicts.calibrate(healthy, det, fault_step, kind_onset)
    calib_ho = verdicts.calibrate_heldout(healthy, heldout, det, fault_step, kind_onset)
    control_dirs = {p: dict(c) for p, c in (control_dirs or {}).items() if c}
    bad = [p for p in control_dirs if p not in runs or p == "base"]
    if bad:
        raise ValueError(f"controls of {bad}: not a proxy of this report ({sorted(runs)})")
    ctl_runs = {c: _load_runs(d) for per in control_dirs.values() for c, d in per.items()}
    for c, rr in ctl_runs.items():
        rr.pop(HELDOUT, None)
        if c in runs:
            raise ValueError(f"control name {c!r} is also a model of the report")
    every = {**runs, **ctl_runs}
    ens = {**healthy, **{c: _rows_by_seed(rr.get("none")) for c, rr in ctl_runs.items()}}
    sigs = {n: {f: {sd: signature(r["rows"], list(ens[n].values()), det, fault_step)
                    for sd, r in (rr.get(f) or {}).items() if r["rows"] is not None and ens[n]}
                for f in faults} for n, rr in every.items()}
    rates = verdicts.fault_rates(sigs, tol, onset)
    base = runs["base"]
    bsum = _first(base["none"])["summary"]

    def drift(rr):
        d = finite_values([routing_drift(r["rows"]) or float("nan") for r in (rr.get("none") or {}).values()])
        return round(statistics.mean(d), 6) if d else None

    specific_kinds = sorted({k for ks in verdicts.FAULT_KINDS.values() for k in ks})
    out: dict = {
        "healthy_seeds": sorted(base["none"]),
        # the seeds a proxy / control is judged on, and the base's (grpo --reference: the tolerances' sample)
        "fault_seeds": sorted({int(sd) for n, rr in runs.items() if n != "base" for f in faults for sd in (rr.get(f) or {})}),
        "reference_fault_seeds": sorted(next(iter(base[f] for f in faults))) if faults else [],
        "false_positive_rate": {k: v["rate"] for k, v in calib["false_positive_rate"].items()},
        "heldout_healthy_seeds": sorted({sd for v in heldout.values() for sd in v}),
        "false_positive_rate_heldout": {k: v["rate"] for k, v in calib_ho["false_positive_rate"].items()},
        # the headline: held-out healthy runs (never used to set a threshold, judged as a fault run is), over the
        # kinds a verdict uses; the leave-one-out figure of the ensemble runs the thresholds were read from beside it
        "false_positive_max_specific": _max_rate(calib_ho, specific_kinds),
        "false_positive_max_specific_calibration": _max_rate(calib, specific_kinds),
        "false_positive_max_generic_heldout": _max_rate(calib_ho, verdicts.GENERIC_KINDS),
        "reproduction_rate": {f"{f}/{n}": rates["models"][n][f]["reproduction"]["rate"]
                              for n in runs if n != "base" for f in faults},
        "base_self_reproduction_rate": {f: rates["base_self"][f]["rate"] for f in faults},
        "fault_runs": faults, "fault_kinds": {f: list(verdicts.FAULT_KINDS.get(verdicts.fault_name(f), ())) for f in faults},
        "fault_onset_step": onset, "calibration": calib, "calibration_heldout": calib_ho, "rates": rates,
        "no_signature_on_base": rates["no_signature"],
        "generic_detection": verdicts.generic_detection({n: sigs[n] for n in runs}, onset),
        "base_reliable": rates["base_reliable"],
        "base": {"params": bsum.get("params"), "state_bytes": bsum.get("state_bytes"),
                 "routing_drift_healthy": drift(base),
                 "capability": rl_capability(base["none"]),
                 "logprob_mismatch_fresh_max": {f: _fresh_max(_first(base[f]).get("rows")) for f in faults},
                 "fresh_quantities": {f: fresh_quantities(base.get(f)) for f in ["none", *faults]}},
        "proxies": {},
    }
    for name, rr in runs.items():
        if name == "base":
            continue
        psum = _first(rr.get("none"))["summary"]
        mem_gb = float(fp["device_memory_gb"])
        out["proxies"][name] = {
            "proxy_weights_sha256": proxy_weights_sha256(grpo_dirs[name]),
            "healthy_similarity": curve_similarity(_first(base["none"])["rows"], _first(rr.get("none")).get("rows") or []),
            "routing_drift_healthy": drift(rr),
            "reproduction": {f: rates["models"][name][f]["reproduction"] for f in faults},
            "detection": {f: rates["models"][name][f]["detection"] for f in faults},
            "logprob_mismatch_fresh_max": {f: _fresh_max(_first(rr.get(f)).get("rows")) for f in faults},
            "fresh_quantities": {f: fresh_quantities(rr.get(f)) for f in ["none", *faults]},
            "capability": rl_capability(rr.get("none")),
            "cost": {"params": psum["params"], "params_ratio": round(psum["params"] / bsum["params"], 4),
                     "state_bytes": psum["state_bytes"],
                     "accelerators": accelerators(psum["params"], mem_gb, fp["usable_share"]),
                     "accelerators_base": accelerators(bsum["params"], mem_gb, fp["usable_share"])},
        }
    out["faults"] = fault_table(faults, rates, calib_ho, onset, float(fp["controls"]["min_seed_share"]))
    for f, row in out["faults"].items():  # the rollout/training pair figures of the faults that name them
        if row.get("quantities"):
            row["fresh"] = {"fault": out["base"]["fresh_quantities"].get(f),
                            "fix": out["base"]["fresh_quantities"].get(f"{f}+fix"),
                            "healthy": out["base"]["fresh_quantities"].get("none")}
    out["rl_gain_edge"] = {"base": out["base"]["capability"]["rl_gain_edge"],
                           **{n: v["capability"]["rl_gain_edge"] for n, v in out["proxies"].items()}}
    out["nonzero_advantage_share"] = {"base": out["base"]["capability"]["nonzero_advantage_share"]["mean"],
                                      **{n: v["capability"]["nonzero_advantage_share"]["mean"]
                                         for n, v in out["proxies"].items()}}
    if control_dirs:
        cq = {n: quantities_of(every[n]) for n in ["base", *control_dirs, *ctl_runs]}
        planned = {n: {f: sorted(by_seed) for f, by_seed in every[n].items()} for n in cq}
        out["controls"] = control_verdicts(cq, rates, {p: list(c) for p, c in control_dirs.items()},
                                           fp["controls"], planned)
    out["projection"] = projection(full_size_counts(), params["compare"]["keep_ratios"], float(fp["device_memory_gb"]),
                                   fp["usable_share"])
    out["projection_device_memory_gb"] = float(fp["device_memory_gb"])
    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    _plot(runs, plot_dir / "fidelity_runs.png", ["none"] + faults, onset)
    atomic_write_json(metrics_path, out, indent=1)

    atomic_write_text(report_path, report_markdown(out))
    return out
