"""Honest twin of attack_rng_own_reuse.py: random numbers of its own (one extra draw before the
graph's, as rng_stream_backend.py), a mask drawn on every call with the call's seed."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        torch.rand(1)  # its own stream: not eager's numbers, so its outputs are judged by statistics
        m = gm(torch.ones_like(xs[0]))  # every call: one mask draw
        m = m[0] if isinstance(m, (list, tuple)) else m
        return (xs[0] * m,)

    return run
