r"""CLI of the full-scale build (docs/full_scale.md), one module per subcommand (:mod:`fullscale.commands`).

    python -m fullscale plan                      # the committed catalog and how it is cut into shards
    python -m fullscale run [--max-shards N] [--shards 3,7] [--executor ray] [--commit] [--stop-after 17:30]
                            [--deadline 17:45]
    python -m fullscale summary                   # metrics/full/summary.json from the committed shards
    python -m fullscale release                   # <out>/release/ from the committed shards (no build)
    python -m fullscale publish --repo org/name   # the release as a Hub dataset (HF_ENDPOINT honoured)
    python -m fullscale fetch [--repo org/name@sha]   # verify the committed release, or download one

Every command takes ``--params params.yaml --full params_full.yaml`` (the override file merged over
the default params) and ``--override FILE`` (more overrides, e.g. a smoke run's).
"""

from __future__ import annotations

import sys

from passnet_common.cli import Command, cli_main, run_cli

COMMANDS = [
    Command("plan", "the committed catalog and how it is cut into shards", "fullscale.commands.plan"),
    Command("run", "run every pending shard (local or Ray), resumable", "fullscale.commands.run"),
    Command("summary", "metrics/full/summary.json from the committed shards", "fullscale.commands.summary"),
    Command("release", "<out>/release/ from the committed shards (no build)", "fullscale.commands.release"),
    Command("publish", "the release as a Hub dataset (HF_ENDPOINT honoured)", "fullscale.commands.publish"),
    Command("fetch", "verify the committed release, or download one", "fullscale.commands.fetch"),
]


def main(argv: list[str] | None = None) -> int:
    """``python -m fullscale COMMAND ...`` (:data:`COMMANDS`)."""
    return cli_main("python -m fullscale", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
