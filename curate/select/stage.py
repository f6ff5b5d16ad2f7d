"""The curate stage: long-tail labels, tasks, task folders, metrics and plots from the profile's rows.

:func:`curate_stage` is what ``python -m curate curate`` runs (its CLI only reads the params and prints).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from curate.profile.variant import fingerprint
from curate.select.config import SelectConfig
from curate.select.longtail import curate_metrics, label_row, long_tail_tasks, long_tail_variants
from curate.select.plots import write_plots
from curate.select.tasks import group_tasks, write_task_folders
from passnet_common.io import atomic_write_json, write_parquet
from passnet_common.schema import to_table


def profile_rates(stats: dict, rows: list[dict]) -> dict:
    """Profile throughput in variant-runs per core-hour. Cold: the compile phase (empty Inductor
    cache; ``compile_workers`` cores) plus timing run 0 (one core; screen and full protocol), over
    the variants compiled; warm: the timing runs >= 1 (one core; each re-compiles from the warm
    cache and times with the full protocol); with a screen, ``screened_per_core_hour`` (run 0's
    screen on the timing core) beside ``protocol_per_core_hour`` (run 0's full protocol on the
    screen's candidates and audit sample, same run, same core)."""
    cpu = stats.get("cpu", {})
    t = cpu.get("timing", [])
    run0 = next((x for x in t if x["run"] == 0), None)
    warm = [x for x in t if x["run"] >= 1 and x["attempts"]]
    out = {"profile_rate_per_core_hour_cold": None, "profile_rate_per_core_hour_warm": None}
    sc = cpu.get("screen")
    if run0 and run0["attempts"] and cpu.get("compile_attempts"):
        core_s = cpu["compile_seconds"] * cpu.get("compile_workers", 1) + run0["seconds"] + (sc["protocol_seconds"] if sc else 0.0)
        out["profile_rate_per_core_hour_cold"] = round(cpu["compile_attempts"] / (core_s / 3600), 1)
    if warm:
        out["profile_rate_per_core_hour_warm"] = round(sum(x["attempts"] for x in warm) / (sum(x["seconds"] for x in warm) / 3600), 1)
    if sc:  # the timing core's rates in run 0 (its waits for the compile phase left out): the screen vs the full protocol
        out["screened_per_core_hour"] = round(sc["variants"] / (sc["seconds"] / 3600), 1) if sc["seconds"] and sc["variants"] else None
        out["protocol_per_core_hour"] = round(sc["protocol_variants"] / (sc["protocol_seconds"] / 3600), 1) \
            if sc["protocol_seconds"] and sc["protocol_variants"] else None
        # the same from the timing children's CPU seconds (what a variant costs a core, whatever the load)
        n_prot = sum(1 for r in rows if r.get("run") == 0 and r.get("phase") == "protocol")
        out["screened_per_cpu_hour"] = round(sc["variants"] / (sc["cpu_seconds"] / 3600), 1) if sc.get("cpu_seconds") else None
        out["protocol_per_cpu_hour"] = round(n_prot / (sc["protocol_cpu_seconds"] / 3600), 1) \
            if sc.get("protocol_cpu_seconds") and n_prot else None
    return out


def curate_stage(cfg: SelectConfig, decompose: str | Path, profile: str | Path, out: str | Path, metrics_path: str | Path,
                 plots: str | Path) -> dict[str, Any]:
    """Label every CPU ``profiles`` row (:func:`curate.select.longtail.label_row`), select the long-tail
    variants and tasks, write ``out/{tasks.parquet,long_tail.parquet,tasks/}``, ``metrics_path``
    (:func:`curate.select.longtail.curate_metrics` plus the build spreads) and the plots under ``plots``.

    Returns:
        the metrics written.

    Raises:
        FileNotFoundError: a missing ``subgraphs.parquet`` / ``profiles.parquet`` / ``profile.json``.
    """
    t, rule = cfg.tolerance_t, cfg.rule
    subs = {r["subgraph_hash"]: r for r in pl.read_parquet(Path(decompose) / "subgraphs.parquet").to_dicts()}
    profiles = pl.read_parquet(Path(profile) / "profiles.parquet").to_dicts()
    pstats = json.loads((Path(profile) / "profile.json").read_text())
    labelled = [{**r, **label_row(r, t, rule, cfg.build_spread), "pattern": subs[r["subgraph_hash"]]["pattern"]}
                for r in profiles if r["device"] == "cpu"]
    lt = long_tail_variants(labelled)
    lt_tasks = long_tail_tasks(labelled, rule, cfg.min_task_variants, cfg.task_build_spread, cfg.min_task_shapes)
    members = []
    for r in labelled:
        if r["run"] == 0 and r["subgraph_hash"] in lt_tasks and r.get("long_tail") is not None:
            s = subs[r["subgraph_hash"]]
            folder = (Path(decompose) / "subgraph_store" / r["subgraph_hash"][:2] / r["subgraph_hash"]) if r["size"] == "catalog" \
                else Path(profile) / "variants" / r["subgraph_hash"][:2] / r["subgraph_hash"] / r["size"]
            members.append({**r, "anchor": s["anchor"], "model_ids": s["model_ids"], "variant_folder": str(folder)})
    tasks = group_tasks(members, cfg.task_size, cfg.max_tasks, rule)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    hw = fingerprint("cpu")
    timed0 = [r for r in labelled if r["run"] == 0 and r.get("load_avg_start") is not None]
    hardware = {"cpu_model": hw["cpu_model"], "cores": hw["cpu_logical_cores"], "torch": hw["torch_version"],
                "threads": profiles[0]["threads"] if profiles else None,
                "load_avg_median": round(float(sorted(r["load_avg_start"] for r in timed0)[len(timed0) // 2]), 2) if timed0 else None}
    write_task_folders(tasks, out / "tasks", t, hw, timing=pstats.get("cpu", {}).get("timing_config"), rule=rule)
    write_parquet(out / "tasks.parquet", to_table("tasks", [{k: v for k, v in task.items() if not k.startswith("_")}
                                                            | {"tolerance_t": t} for task in tasks]))
    write_parquet(out / "long_tail.parquet", to_table("long_tail", [r | {"tolerance_t": t, "rule": rule} for r in labelled]))
    metrics = curate_metrics(list(subs.values()), labelled, tasks, lt, hardware, profile_rates(pstats, profiles))
    metrics["build_spread"], metrics["task_build_spread"] = cfg.build_spread, cfg.task_build_spread
    # the threshold 1 - min_effect the labels used (long_tail.parquet has no min_effect column; compare_builds reads it here)
    metrics["min_effect"] = next((float(r["min_effect"]) for r in labelled if r.get("min_effect") is not None), None)
    atomic_write_json(metrics_path, metrics, indent=2)
    write_plots(labelled, Path(plots))
    return metrics
