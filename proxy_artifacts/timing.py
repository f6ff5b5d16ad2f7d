"""Where the proxy line's wall-clock and memory measurements are recorded, and on what.

Measured times and memory change on every run (machine, load, allocator), so they never enter a
deterministic output (a GRPO run log, ``metrics/fidelity.json``): the GRPO stages write them to
``data/proxy/grpo_timing/<name>.json`` and the ``proxy_cost`` stage to ``metrics/proxy_cost.json``,
each with :func:`context` (load average and machine fingerprint at the measurement).
"""

from __future__ import annotations

import os
import time
from typing import Callable

import torch

from passnet_common.machine import host_fingerprint

Clock = Callable[[], float]
DEFAULT_CLOCK: Clock = time.perf_counter  # seconds; tests inject a fake clock


def load_average() -> list[float] | None:
    """1-, 5- and 15-minute load averages (``os.getloadavg``), None where unsupported."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine() -> dict:
    """Fingerprint of the measuring process (:func:`passnet_common.machine.host_fingerprint`:
    CPU model, logical / usable cores, torch threads and version, Python, platform), with
    ``cuda_device`` when a CUDA device is visible."""
    fp = host_fingerprint()
    if torch.cuda.is_available():
        fp["cuda_device"] = torch.cuda.get_device_name(0)
    return fp
