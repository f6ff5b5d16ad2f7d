"""CLI of the proxy stages: ``python -m proxy_artifacts <subcommand>``, one module per subcommand
(:mod:`proxy_artifacts.commands`), each a thin wrapper over functions of this package.

    python -m proxy_artifacts build-corpus [--out FILE] [--stdlib DIR]
    python -m proxy_artifacts train-base --params params.yaml --out data/proxy/base --metrics metrics/proxy_base.json
    python -m proxy_artifacts stats --params params.yaml --out data/proxy/stats
    python -m proxy_artifacts prune --params params.yaml --stats data/proxy/stats --keep-ratio 0.5 --out DIR
    python -m proxy_artifacts compare --params params.yaml --stats data/proxy/stats --out FILE --metrics FILE
    python -m proxy_artifacts grpo --params params.yaml --model DIR --name base --out DIR [--control | --reference]
    python -m proxy_artifacts control --params params.yaml --kind reinit --stats DIR --proxy DIR --out DIR
    python -m proxy_artifacts fidelity --params params.yaml --runs base=DIR ... --report F --metrics F --plots DIR
    python -m proxy_artifacts cost --params params.yaml --models base=DIR ... --metrics metrics/proxy_cost.json
    python -m proxy_artifacts publish FOLDER owner/name [--endpoint URL]
    python -m proxy_artifacts pull owner/name@revision [--expect-base ID]
"""

from __future__ import annotations

import sys

from passnet_common.cli import Command, cli_main, run_cli

COMMANDS = [
    Command("build-corpus", "rewrite the committed stdlib corpus file (corpus.CORPUS_FILE)",
            "proxy_artifacts.commands.build_corpus"),
    Command("train-base", "train the default tiny MoE base (proxy.base)", "proxy_artifacts.commands.train_base"),
    Command("stats", "expert-activation statistics per calibration category (proxy.model, proxy.stats)",
            "proxy_artifacts.commands.stats"),
    Command("prune", "one proxy at --keep-ratio (proxy.prune, proxy.eval)", "proxy_artifacts.commands.prune"),
    Command("compare", "clustering vs frequency / REAP / random selection at every ratio (proxy.compare)",
            "proxy_artifacts.commands.compare"),
    Command("grpo", "GRPO runs (healthy + every fault of the catalog) of one model (proxy.grpo)",
            "proxy_artifacts.commands.grpo"),
    Command("control", "a negative control of a proxy: random experts, random + output merge, re-initialised weights",
            "proxy_artifacts.commands.control"),
    Command("fidelity", "fault signatures, base-vs-proxy fidelity, cost projection; report + metrics (proxy.fidelity)",
            "proxy_artifacts.commands.fidelity"),
    Command("cost", "measured step time and peak memory of base and proxies side by side (proxy.fidelity.cost)",
            "proxy_artifacts.commands.cost"),
    Command("publish", "push a proxy folder to the Hub (--endpoint or HF_ENDPOINT; token from env / login)",
            "proxy_artifacts.commands.publish"),
    Command("pull", "fetch owner/name@revision into the Hub cache and verify its lineage", "proxy_artifacts.commands.pull"),
]


def main(argv: list[str] | None = None) -> int:
    """``python -m proxy_artifacts COMMAND ...`` (:data:`COMMANDS`)."""
    return cli_main("python -m proxy_artifacts", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
