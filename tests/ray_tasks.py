"""Task bodies for the executor tests (importable by Ray workers: module level)."""

import json
import time
from pathlib import Path


def square_task(arg, out_dir: Path) -> None:
    """Writes ``result.json`` = {"x": arg, "y": arg**2}; arg < 0 raises; arg == 99 sleeps past timeouts."""
    if arg < 0:
        raise ValueError(f"negative {arg}")
    if arg == 99:
        time.sleep(60)
    (Path(out_dir) / "result.json").write_text(json.dumps({"x": arg, "y": arg * arg}))
