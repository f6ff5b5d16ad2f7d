"""Cheat: honest while watched, cheap afterwards. Correct for its first calls (the checks
before timing), then returns uninitialised buffers (``empty_like``)."""

import torch

_CALLS = [0]


def backend(gm, example_inputs):
    def run(*args):
        _CALLS[0] += 1
        if _CALLS[0] <= 4:
            return gm(*args)
        return torch.empty_like(args[0])  # the work is skipped once nobody seems to look

    return run
