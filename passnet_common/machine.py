"""What a measurement ran on: the fingerprint every timed record carries.

One definition for the profile stage (:func:`curate.profile.variant.fingerprint`, a column per field of
every profile row) and the proxy line's timings (:func:`proxy_artifacts.timing.machine`). It never
enters a deterministic output or a resume key on its own: those name their inputs explicitly.
"""

from __future__ import annotations

import os
import platform
from typing import Any


def cpu_model() -> str:
    """The CPU's model name (``model name`` of ``/proc/cpuinfo``; ``platform.processor()``
    elsewhere, ``"unknown"`` when neither says)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def host_fingerprint() -> dict[str, Any]:
    """``cpu_model``, ``cpu_logical_cores`` (``os.cpu_count()``), ``cpu_usable_cores`` (this
    process's CPU affinity), ``torch_threads``, ``torch_version``, ``python_version``, ``platform``
    of the calling process."""
    import torch  # noqa: PLC0415  (torch only when a fingerprint is asked: the params check imports the core without it)

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {"cpu_model": cpu_model(), "cpu_logical_cores": os.cpu_count(), "cpu_usable_cores": usable,
            "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__,
            "python_version": platform.python_version(), "platform": platform.platform()}
