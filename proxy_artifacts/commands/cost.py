"""``python -m proxy_artifacts cost``: measured step time and peak memory of base and proxies side by side
(``proxy.fidelity.cost``)."""

from __future__ import annotations

import argparse
import json

from proxy_artifacts.commands import model_folder, parse_pairs
from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.cost import measure_models, write_cost


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--models", nargs="*", default=[],
                   help="name=model folder of each model to time side by side (one is base=...); none: skipped")
    p.add_argument("--grpo-timing", nargs="*", default=[], help="name=timing JSON of each model's GRPO stage")
    p.add_argument("--metrics", required=True, help="metrics/proxy_cost.json")
    p.add_argument("--report", help="markdown cost report")


def run(args: argparse.Namespace) -> int:
    prm = load_proxy_params(args.params)
    models, timing = parse_pairs(args.models, "--models", "name=path"), parse_pairs(args.grpo_timing, "--grpo-timing", "name=path")
    for name, path in models.items():
        model_folder(path, "--models")
    side = measure_models(models, prm) if models else None
    m = write_cost(side, timing, args.metrics, args.report, fidelity_params=prm["fidelity"],
                   command="python -m proxy_artifacts " + " ".join(args.argv))
    print(json.dumps({k: m[k] for k in ("step_time_ratio_measured", "peak_memory_ratio_measured",
                                        "load_average_start")}, indent=1))
    return 0
