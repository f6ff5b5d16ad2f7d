"""Honest twin of ``cheat_gc_walk.py``: the same backend without the walk."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        out = torch.empty_like(xs[0])
        return gm(*xs) if out.numel() else (out,)

    return run
