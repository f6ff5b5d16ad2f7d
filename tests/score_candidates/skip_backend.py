"""Cheat: skips the computation and returns zeros of the right shape (passes a loose tolerance
when the reference is near zero)."""

import torch


def backend(gm, example_inputs):
    def run(*args):
        out = gm(*args)
        if isinstance(out, tuple):
            return tuple(torch.zeros_like(o) for o in out)
        return torch.zeros_like(out)

    return run
