r"""CLI of the curation stages (one command per dvc.yaml stage), one wing each.

    python -m curate decompose --params params.yaml --unique data/dedupe/unique_graphs.parquet \
        --store data/graph_store --out data/decompose
    python -m curate profile --params params.yaml --decompose data/decompose --out data/profile \
        --cache data/work/inductor_cache
    python -m curate curate --params params.yaml --decompose data/decompose --profile data/profile \
        --out data/curate --metrics metrics/curate.json --plots plots
    python -m curate score --params params.yaml --out data/score --metrics metrics/score.json
"""

from __future__ import annotations

import sys

from passnet_common.cli import Command, cli_main, run_cli

COMMANDS = [
    Command("decompose", "split unique graphs into deduplicated subgraphs", "curate.decompose.cli"),
    Command("profile", "eager, Dynamo-only and Inductor on a stratified sample of subgraph variants (isolated, resumable)",
            "curate.profile.cli"),
    Command("curate", "long-tail labels, tasks and metrics", "curate.select.cli"),
    Command("score", "score candidates (S_t / ES_t) on a task set", "curate.score.cli"),
]


def main(argv: list[str] | None = None) -> int:
    """``python -m curate COMMAND ...`` (:data:`COMMANDS`)."""
    return cli_main("python -m curate", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
