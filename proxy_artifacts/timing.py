"""Where the proxy line's wall-clock and memory measurements are recorded, and on what.

Measured times and memory change on every run (machine, load, allocator), so they never enter a
deterministic output (a GRPO run log, ``metrics/fidelity.json``): the GRPO stages write them to
``data/proxy/grpo_timing/<name>.json`` and the ``proxy_cost`` stage to ``metrics/proxy_cost.json``,
each with :func:`context` (load average and machine fingerprint at the measurement).
"""

from __future__ import annotations

import os
import platform
import time
from typing import Callable

Clock = Callable[[], float]
DEFAULT_CLOCK: Clock = time.perf_counter  # seconds; tests inject a fake clock


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> list[float] | None:
    """1-, 5- and 15-minute load averages (``os.getloadavg``), None where unsupported."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine() -> dict:
    """Fingerprint of the measuring process: CPU model, logical / usable cores, torch threads and
    version, Python, platform, and the CUDA device when one is visible."""
    import torch

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    fp = {"cpu_model": cpu_model(), "cpu_logical_cores": os.cpu_count(), "cpu_usable_cores": usable,
          "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__,
          "python_version": platform.python_version(), "platform": platform.platform()}
    if torch.cuda.is_available():
        fp["cuda_device"] = torch.cuda.get_device_name(0)
    return fp
