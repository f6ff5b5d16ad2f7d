"""CLI of the proxy stages: ``python -m proxy_artifacts <subcommand>``.

Subcommands (each a thin wrapper over a function in this package):

- ``build-corpus`` rewrite the committed stdlib text/code corpus file (``corpus.CORPUS_FILE``)
- ``train-base``  train the default tiny MoE base (``proxy.base`` params)
- ``stats``       expert-activation statistics per calibration category (``proxy.model``, ``proxy.stats``)
- ``prune``       one proxy at ``--keep-ratio`` (``proxy.prune``, ``proxy.eval``)
- ``compare``     clustering vs frequency / REAP / random selection at every ratio (``proxy.compare``)
- ``grpo``        GRPO runs (healthy + every fault of the catalog) of one model (``proxy.grpo``)
- ``control``     a negative control of a proxy: random experts, random + output merge, re-initialised weights
- ``fidelity``    fault signatures, base-vs-proxy fidelity, cost projection; report + metrics (``proxy.fidelity``)
- ``cost``        measured step time and peak memory of base and proxies side by side (``proxy.fidelity.cost``)
- ``publish``     push a proxy folder to the Hub (``--endpoint`` or ``HF_ENDPOINT``; token from env / login)
- ``pull``        fetch ``owner/name@revision`` into the Hub cache and verify its lineage
"""

from __future__ import annotations

import argparse
import json
import sys

from passnet_common.cli import run_cli
from passnet_common.io import atomic_write_json
from passnet_common.params import load_params

from .config import proxy_params


def _params(path: str) -> dict:
    """The validated ``proxy`` block of ``path``, every key a file leaves out at its default."""
    return proxy_params(load_params(path, "proxy"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proxy_artifacts", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("build-corpus", help="rewrite the committed stdlib corpus file")
    p.add_argument("--out", help="output file (default: proxy_artifacts/corpus_files/stdlib_py311.json.gz)")
    p.add_argument("--stdlib", help="stdlib folder (default: this interpreter's)")

    p = sub.add_parser("train-base", help="train the default base model")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--out", required=True)
    p.add_argument("--metrics", help="JSON with training and specialisation numbers")

    p = sub.add_parser("stats", help="collect expert statistics")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id (default: proxy.model.path)")
    p.add_argument("--out", required=True)
    p.add_argument("--plot", help="PNG expert-load heatmap")

    p = sub.add_parser("prune", help="write one proxy")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base", help="local folder or Hub id of the base (default: proxy.model.path)")
    p.add_argument("--stats", required=True, help="folder written by the stats subcommand")
    p.add_argument("--keep-ratio", type=float, required=True, help="share of routed experts kept per layer, in (0, 1]")
    p.add_argument("--out", required=True, help="output folder (model/, kept experts, card, lineage)")
    p.add_argument("--metrics", help="JSON file for the proxy's metrics")

    p = sub.add_parser("compare", help="compare selection methods")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--base")
    p.add_argument("--stats", required=True)
    p.add_argument("--out", required=True, help="Parquet table of the proxies table")
    p.add_argument("--metrics", required=True)

    p = sub.add_parser("grpo", help="GRPO runs (healthy + faults) of one model")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--model", required=True, help="model folder (the base, or a proxy's model/ folder)")
    p.add_argument("--name", required=True, help="name in the report (base, r0.5, ...)")
    p.add_argument("--out", required=True, help="output folder (<fault>.jsonl step logs, summary.json)")
    p.add_argument("--timing", help="JSON file for the measured step times / memory (kept out of --out)")
    p.add_argument("--control", action="store_true",
                   help="a control model's plan: no held-out healthy seeds (a control never calibrates the detector) "
                        "and no fix runs (the fixes are judged on the base)")

    p = sub.add_parser("control", help="one negative control of a proxy (proxy.fidelity.controls)")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--kind", required=True, help="random_experts | random_output_merge | reinit")
    p.add_argument("--base", help="local folder or Hub id of the base (default: proxy.model.path)")
    p.add_argument("--stats", required=True, help="folder written by the stats subcommand")
    p.add_argument("--proxy", required=True, help="the proxy's model folder (reinit takes its architecture)")
    p.add_argument("--out", required=True, help="output folder (model/, control.json)")

    p = sub.add_parser("fidelity", help="fidelity report of the GRPO runs")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--runs", nargs="+", required=True, help="name=folder of each model's grpo output (one is base=...)")
    p.add_argument("--report", required=True, help="markdown report path")
    p.add_argument("--metrics", required=True, help="metrics/fidelity.json")
    p.add_argument("--plots", required=True, help="folder for fidelity_*.png")
    p.add_argument("--controls", nargs="*", default=[],
                   help="proxy:name=folder of each control's grpo output (e.g. r0.5:control_reinit=...)")

    p = sub.add_parser("cost", help="measured step time and peak memory of base and proxies")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--models", nargs="*", default=[],
                   help="name=model folder of each model to time side by side (one is base=...); none: skipped")
    p.add_argument("--grpo-timing", nargs="*", default=[], help="name=timing JSON of each model's GRPO stage")
    p.add_argument("--metrics", required=True, help="metrics/proxy_cost.json")
    p.add_argument("--report", help="markdown cost report")

    p = sub.add_parser("publish", help="push a proxy folder to the Hub")
    p.add_argument("folder", help="a proxy model folder (config, safetensors, lineage.json, README.md card)")
    p.add_argument("repo_id", help="owner/name on the Hub")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.add_argument("--fidelity", help="metrics/fidelity.json: the card shows RL and fault figures (needs --name)")
    p.add_argument("--name", help="the proxy's name in the fidelity record (r0.5, ...)")
    p.add_argument("--base-metrics", help="metrics/proxy_base.json: the card shows the task and its chance level")
    p.add_argument("--base-model", help="the base's Hub id for the card metadata (a local base published there)")

    p = sub.add_parser("pull", help="download and verify owner/name@revision")
    p.add_argument("spec", help="owner/name@revision (a pinned commit sha)")
    p.add_argument("--endpoint", help="Hub URL (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--cache-dir", help="Hub cache folder (default: HF_HUB_CACHE)")
    p.add_argument("--expect-base", help="fail unless lineage.json names this base model id")
    p.add_argument("--allow-unpinned", action="store_true",
                   help="accept a branch/tag or no revision (default: a 40-hex commit sha is required)")

    a = ap.parse_args(argv)
    if a.cmd == "build-corpus":
        from . import corpus  # noqa: PLC0415  (per command: only the chosen subcommand's code is imported, as passnet_common.cli does; --help loads no torch / transformers / trl)

        print(corpus.build_corpus_file(a.out or corpus.CORPUS_FILE, a.stdlib))
    elif a.cmd == "train-base":
        from .base_model import check_competent, train_base  # noqa: PLC0415  (per command, as above)

        prm = _params(a.params)["base"]
        summary = train_base(prm, a.out)
        print(f"train-base: {summary['steps']} steps in {summary['train_seconds']} s, final loss "
              f"{summary['final_loss']:.4f}, held-out {summary['task']} exact match {summary['task_acc_heldout']} "
              f"in range, {summary['task_acc_edge']} at the edge")
        if a.metrics:
            spec = json.loads((__import__("pathlib").Path(a.out) / "specialisation.json").read_text())
            atomic_write_json(a.metrics, {
                "final_train_loss": summary["final_loss"],
                "num_experts": prm["num_experts"], "top_k": prm["top_k"],
                "corpus_sha256": summary["corpus_sha256"],
                "task": summary["task"], "task_acc_heldout": summary["task_acc_heldout"],
                "task_acc_edge": summary["task_acc_edge"], "task_reward_edge": summary["task_reward_edge"],
                "task_nonzero_advantage_share_edge": summary["task_nonzero_advantage_share_edge"],
                "task_lengths": summary["task_lengths"],
                "task_problems": summary["task_problems"], "min_task_acc": prm["min_task_acc"],
                "num_parameters": summary["num_parameters"],
                "routing_entropy_by_category": {c: sum(v) / len(v) for c, v in spec["entropy"].items()},
                "routing_entropy_max": spec["max_entropy"],
                "js_divergence_between_categories": sum(spec["js_divergence"]) / len(spec["js_divergence"]),
            }, indent=1)
        check_competent(summary, prm["min_task_acc"])
    elif a.cmd == "stats":
        from .pipeline import run_stats  # noqa: PLC0415  (per command, as above)

        prm = _params(a.params)
        run_stats(prm, a.base or prm["model"]["path"], a.out, a.plot)
    elif a.cmd == "prune":
        from .pipeline import run_prune  # noqa: PLC0415  (per command, as above)

        prm = _params(a.params)
        m = run_prune(prm, a.base or prm["model"]["path"], a.stats, a.keep_ratio, a.out, a.metrics)
        print(json.dumps({k: v for k, v in m.items() if "/" not in k}, indent=1))
    elif a.cmd == "control":
        from .pipeline import build_control  # noqa: PLC0415  (per command, as above)

        prm = _params(a.params)
        build_control(prm, a.kind, a.base or prm["model"]["path"], a.stats, a.proxy,
                      float(prm["fidelity"]["controls"]["keep_ratio"]), a.out)
    elif a.cmd == "compare":
        from .pipeline import run_compare  # noqa: PLC0415  (per command, as above)

        prm = _params(a.params)
        run_compare(prm, a.base or prm["model"]["path"], a.stats, a.out, a.metrics)
    elif a.cmd == "grpo":
        from .rl import run_grpo_all  # noqa: PLC0415  (per command, as above)

        gp = _params(a.params)["grpo"]
        if a.control:
            gp = dict(gp, heldout_healthy_seeds=[], fix_runs=[])
        s = run_grpo_all(a.model, a.name, gp, a.out, timing_path=a.timing)
        if not s["complete"]:
            print(f"grpo {a.name}: INCOMPLETE, failed runs: "
                  f"{sorted(f for f, r in s['runs'].items() if 'error' in r)}", file=sys.stderr)
    elif a.cmd == "fidelity":
        from .fidelity import run_fidelity  # noqa: PLC0415  (per command, as above)

        dirs = {}
        for item in a.runs:
            name, eq, folder = item.partition("=")
            if not eq or not name or not folder:
                raise ValueError(f"--runs item {item!r} is not name=folder")
            dirs[name] = folder
        ctl: dict = {}
        for item in a.controls:
            key, eq, folder = item.partition("=")
            proxy, colon, name = key.partition(":")
            if not eq or not colon or not proxy or not name or not folder:
                raise ValueError(f"--controls item {item!r} is not proxy:name=folder")
            ctl.setdefault(proxy, {})[name] = folder
        prm = _params(a.params)
        m = run_fidelity(prm, dirs, a.report, a.metrics, a.plots, control_dirs=ctl)
        print(json.dumps({"false_positive_rate": m["false_positive_rate"], "reproduction_rate": m["reproduction_rate"],
                          "base_self_reproduction_rate": m["base_self_reproduction_rate"]}, indent=1))
    elif a.cmd == "cost":
        from .cost import measure_side_by_side, write_cost  # noqa: PLC0415  (per command, as above)

        def pairs(items, flag):
            out = {}
            for item in items:
                name, eq, path = item.partition("=")
                if not eq or not name or not path:
                    raise ValueError(f"{flag} item {item!r} is not name=path")
                out[name] = path
            return out

        prm = _params(a.params)
        models, timing = pairs(a.models, "--models"), pairs(a.grpo_timing, "--grpo-timing")
        side = None
        if models:
            cp = prm["fidelity"].get("cost") or {}
            gp = prm["grpo"]
            side = measure_side_by_side(models, batch=int(gp["prompts_per_step"]) * int(gp["num_generations"]),
                                        seq_len=int(cp.get("seq_len", 32)), steps=int(cp.get("steps", 4)),
                                        rounds=int(cp.get("rounds", 2)), threads=int(gp.get("threads", 1)))
        m = write_cost(side, timing, a.metrics, a.report, fidelity_params=prm["fidelity"],
                       command="python -m proxy_artifacts " + " ".join(sys.argv[1:] if argv is None else argv))
        print(json.dumps({k: m[k] for k in ("step_time_ratio_measured", "peak_memory_ratio_measured",
                                            "load_average_start")}, indent=1))
    elif a.cmd == "publish":
        from .hub import publish  # noqa: PLC0415  (per command, as above)

        print(publish(a.folder, a.repo_id, endpoint=a.endpoint, private=a.private, fidelity=a.fidelity,
                      proxy_name=a.name, base_metrics=a.base_metrics, base_model=a.base_model))
    elif a.cmd == "pull":
        from .hub import pull  # noqa: PLC0415  (per command, as above)

        print(pull(a.spec, endpoint=a.endpoint, cache_dir=a.cache_dir, expect_base=a.expect_base,
                   allow_unpinned=a.allow_unpinned))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
