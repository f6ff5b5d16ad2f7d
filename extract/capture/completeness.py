"""Completeness of a capture, read from Dynamo's frame counters and trace log.

A capture is complete when every frame Dynamo saw became a graph (no frame left eager, no
recompile limit hit); :func:`assess_completeness` says which frames were not and why.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Completeness:
    """Whether Dynamo captured every frame of a model run as graphs.

    Read from Dynamo's own bookkeeping (``torch._dynamo.utils.counters["frames"]``: frames
    seen vs frames converted) and its log records (``recompile_limit`` hits), never from
    hidden warnings.

    Attributes:
        complete: True when every frame Dynamo saw was converted, no frame hit the
            recompile limit, and at least one graph was captured.
        reason: why not (None when complete).
        eager_frames: frames that ran eagerly (skipped, failed to convert, or over the
            recompile limit).
        recompile_limit_hits: log records saying a frame hit ``recompile_limit``.
        frames_total / frames_ok: Dynamo's frame counters.
    """

    complete: bool
    reason: str | None
    eager_frames: int
    recompile_limit_hits: int
    frames_total: int
    frames_ok: int


class _LogCollector:
    """Collects Dynamo's WARNING+ log records during a capture instead of printing them."""

    def __init__(self):
        import logging

        self.records: list[str] = []
        self.handler = logging.Handler(logging.WARNING)
        self.handler.emit = lambda rec: self.records.append(rec.getMessage() if rec.args else str(rec.msg))

    @contextmanager
    def active(self):
        import logging

        lg = logging.getLogger("torch._dynamo")
        old = (lg.level, list(lg.handlers), lg.propagate)
        lg.handlers = [self.handler]
        lg.setLevel(logging.WARNING)
        lg.propagate = False
        try:
            yield self
        finally:
            lg.setLevel(old[0])
            lg.handlers = old[1]
            lg.propagate = old[2]


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")[:200]


def assess_completeness(counters: dict, log_records: list[str], num_graphs: int, limit: int) -> Completeness:
    """Turn Dynamo's frame counters and log records into a :class:`Completeness`."""
    frames = counters.get("frames", {})
    total, ok = int(frames.get("total", 0)), int(frames.get("ok", 0))
    hits = [r for r in log_records if "recompile_limit" in r or "cache_size_limit" in r]
    eager = max(0, total - ok)
    reasons = []
    if num_graphs == 0:
        reasons.append("no graph captured")
    if hits:
        reasons.append(f"{len(hits)} frame(s) hit the recompile limit ({limit}) and ran eagerly: {_first_line(hits[0])}")
    if eager:
        why = [_first_line(k) for k in counters.get("unimplemented", {})]
        skipped = [r for r in log_records if "skip" in r.lower()]
        detail = why[0] if why else (_first_line(skipped[0]) if skipped else "not converted")
        reasons.append(f"{eager} of {total} frame(s) ran eagerly ({detail})")
    return Completeness(not reasons, "; ".join(reasons) or None, eager, len(hits), total, ok)
