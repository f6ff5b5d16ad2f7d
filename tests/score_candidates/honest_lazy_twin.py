"""Honest twin of ``cheat_lazy_subclass.py``: the same backend shape, computing in the call and
returning a plain tensor."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        out = gm(*xs)
        return out if isinstance(out, torch.Tensor) else out

    return run
