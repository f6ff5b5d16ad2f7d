"""``python -m proxy_artifacts grpo``: GRPO runs (healthy + every fault of the catalog) of one model (``proxy.grpo``)."""

from __future__ import annotations

import argparse
import sys

from proxy_artifacts.commands import model_folder
from proxy_artifacts.config import load_proxy_params
from proxy_artifacts.rl import control_plan, reference_plan, run_grpo_all


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--model", required=True, help="model folder (the base, or a proxy's model/ folder)")
    p.add_argument("--name", required=True, help="name in the report (base, r0.5, ...)")
    p.add_argument("--out", required=True, help="output folder (<fault>.jsonl step logs, summary.json)")
    p.add_argument("--timing", help="JSON file for the measured step times / memory (kept out of --out)")
    p.add_argument("--control", action="store_true",
                   help="a control model's plan: no held-out healthy seeds (a control never calibrates the detector) "
                        "and no fix runs (the fixes are judged on the base)")
    p.add_argument("--reference", action="store_true",
                   help="the reference model's plan (the base): faults on proxy.grpo.reference_fault_seeds, whose "
                        "seed-to-seed spread sets the fidelity tolerances")


def run(args: argparse.Namespace) -> int:
    gp = load_proxy_params(args.params)["grpo"]
    if args.control and args.reference:
        print("grpo: --control and --reference exclude each other", file=sys.stderr)
        return 2
    if args.control:
        gp = control_plan(gp)
    if args.reference:
        try:
            gp = reference_plan(gp)
        except ValueError as exc:
            print(f"grpo: {exc}", file=sys.stderr)
            return 2
    s = run_grpo_all(model_folder(args.model, "--model"), args.name, gp, args.out, timing_path=args.timing)
    if not s["complete"]:
        failed = sorted(f for f, r in s["runs"].items() if "error" in r)
        print(f"grpo {args.name}: INCOMPLETE, failed runs: {failed}", file=sys.stderr)
        if len(failed) == len(s["runs"]):  # nothing ran: not a partial record but a failed command
            return 1
    return 0
