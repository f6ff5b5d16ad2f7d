"""Shared CLI behaviour: bad input ends with one clear line, not a traceback."""

from __future__ import annotations

import os
import sys
from typing import Callable


def run_cli(main: Callable[[], int]) -> int:
    """Run ``main``; ValueError / FileNotFoundError / KeyError (bad input: the message names
    it) print ``error: ...`` on stderr and return exit status 2."""
    try:
        return main()
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        stage = os.environ.get("DVC_STAGE")  # set by DVC for every stage command
        if stage:
            print(f"hint: DVC removed the outputs of stage {stage!r} before running it; "
                  f"`dvc checkout {stage}` restores them from the cache", file=sys.stderr)
        return 2
