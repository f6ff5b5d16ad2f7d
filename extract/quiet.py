"""Library noise off for the extract commands (their output is their summary)."""

from __future__ import annotations

import warnings


def quiet_libraries() -> None:
    """Python UserWarnings off and transformers' logging at errors only (what a capture needs to
    say is in the tables)."""
    import transformers  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    warnings.filterwarnings("ignore", category=UserWarning)
    transformers.logging.set_verbosity_error()
