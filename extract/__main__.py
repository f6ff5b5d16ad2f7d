r"""CLI of the extract stages (one module per command, :mod:`passnet_common.cli`).

    python -m extract catalog --params params.yaml --out data/catalog/models.parquet
    python -m extract capture --params params.yaml --catalog data/catalog/models.parquet \
        --out data/extract --store data/graph_store --work data/work/extract
    python -m extract crawl --params params.yaml --work data/hub --cache data/hub/cache   (Hub listing)
    python -m extract publish --repo org/passnet --tables data/extract --store data/graph_store
    python -m extract export --store data/graph_store --out data/graphnet_export [--graph-hash H ...]
        (our unique graphs as GraphNet sample folders; every stored graph without --graph-hash)
    python -m extract coverage --params params.yaml --sample transformers=200 \
        --metrics metrics/bench/coverage.json
"""

from __future__ import annotations

import os
import sys

# env: set before any command module is imported, since huggingface_hub and transformers read them
# once at import; only crawl and publish talk to the Hub.
if not (len(sys.argv) > 1 and sys.argv[1] in ("crawl", "publish")):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # huggingface_hub also reads TRANSFORMERS_OFFLINE as HF_HUB_OFFLINE: set only off the Hub commands
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from passnet_common.cli import Command, cli_main, run_cli  # noqa: E402 - after the environment above
from passnet_common.worker import die_with_parent  # noqa: E402

COMMANDS = [
    Command("catalog", "build the models catalog from params", "extract.sources.catalog_cli"),
    Command("capture", "capture graphs of every catalog model (resumable)", "extract.runs.capture_cli"),
    Command("coverage", "capture a seeded sample of the all catalogs; write coverage metrics", "extract.runs.coverage_cli"),
    Command("export", "write stored graphs as GraphNet sample folders (extract/sources/graphnet.py)",
            "extract.publish.export_cli"),
    Command("crawl", "list Hub models and download their config.json (resumable)", "extract.sources.crawl_cli"),
    Command("publish", "upload tables and graph store to a Hub dataset repo (not in dvc repro)", "extract.publish.publish_cli"),
]


def main(argv: list[str] | None = None) -> int:
    """``python -m extract COMMAND ...`` (:data:`COMMANDS`)."""
    return cli_main("python -m extract", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    die_with_parent()  # a killed `dvc repro` takes this stage (and, through theirs, its children) with it
    sys.exit(run_cli(main))
