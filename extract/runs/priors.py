"""Expected capture seconds per model: the committed prior of a clean clone and the work folder's own times.

:func:`extract.runs.scheduler.longest_first` orders the captures by expected time. A work folder
that has run before knows each model's time (``timings.jsonl``); a clean clone has none, and the
depth prior of :func:`extract.runs.scheduler.estimated_seconds` (transformers ~3 s + 0.3 s per
layer, everything else 3 s) puts a slow vision model late: on the default catalog
``torchvision:retinanet_resnet50_fpn`` (94 s: a real-tensor capture with a retry) was estimated
at 3 s, started 614 s into the 708-s capture phase and left the other worker idle for its last
~50 s (2 workers, quiet 2-core machine, clean-clone ``dvc repro``).
:data:`PRIOR_FILE` holds the wall seconds of the latest attempt of every model of one full run
(:func:`write_prior` from that run's ``timings.jsonl``); it only orders the work, never changes
what is captured, and it is not part of the attempt key (a refresh re-captures nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

from passnet_common.io import atomic_write_json

PRIOR_FILE = Path(__file__).with_name("expected_seconds.json")


def load_prior(path: Path | None = None) -> dict[str, float]:
    """``model_id -> expected wall seconds`` of :data:`PRIOR_FILE` (or ``path``); empty when the
    file is absent or unreadable (the schedule then falls back to the depth prior)."""
    p = Path(path) if path is not None else PRIOR_FILE
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def write_prior(work: Path, path: Path | None = None, measured_on: str = "") -> dict[str, float]:
    """Write the prior from a work folder's ``timings.jsonl``: the latest entry's wall seconds
    per model (:func:`timing_history`), rounded to 0.1 s, sorted by
    model_id, with ``measured_on`` (machine, load, command) beside them. Returns the mapping.

    Raises:
        ValueError: ``work/timings.jsonl`` is absent or holds no entry.
    """
    hist = timing_history(Path(work))
    if not hist:
        raise ValueError(f"{Path(work) / 'timings.jsonl'}: no capture timings to build a prior from")
    seconds = {k: round(v, 1) for k, v in sorted(hist.items())}
    atomic_write_json(Path(path) if path is not None else PRIOR_FILE,
                      {"measured_on": measured_on, "seconds": seconds}, indent=1)
    return seconds


def timing_history(work: Path) -> dict[str, float]:
    """``model_id -> seconds`` of the latest entry per model in ``work/timings.jsonl`` (written by
    :func:`extract.runs.scheduler.capture_wave`; every earlier attempt, whatever its code version;
    unreadable lines are skipped)."""
    out: dict[str, float] = {}
    log = Path(work) / "timings.jsonl"
    if not log.exists():
        return out
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            e = json.loads(line)
            out[e["model_id"]] = float(e["seconds"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def schedule_history(work: Path) -> dict[str, float]:
    """``model_id -> expected seconds`` for :func:`extract.runs.scheduler.longest_first`: the
    committed prior (:func:`load_prior`, one full run's times, so a clean clone starts a slow model
    early) overridden by the work folder's own :func:`timing_history`."""
    return {**load_prior(), **timing_history(work)}
