"""Shared CLI behaviour: bad input ends with one clear line, not a traceback."""

from __future__ import annotations

import sys
from typing import Callable


def run_cli(main: Callable[[], int]) -> int:
    """Run ``main``; ValueError / FileNotFoundError / KeyError (bad input: the message names
    it) print ``error: ...`` on stderr and return exit status 2."""
    try:
        return main()
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
