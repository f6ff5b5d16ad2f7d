"""Honest twin of cheat_rng_hoist.py and cheat_rng_hoist_late.py: the same mask-by-ones code, the
mask drawn on every call (with the call's own seed)."""
import torch


def backend(gm, example_inputs):
    st = {}

    def run(*xs):
        m = gm(torch.ones_like(xs[0]))  # every call: one mask draw
        m = m[0] if isinstance(m, (list, tuple)) else m
        st["m"] = m
        return (xs[0] * m,)

    return run
