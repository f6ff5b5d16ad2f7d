"""Honest twin of ``cheat_thread_between.py``: the same copy, done in the call."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        out = torch.empty_like(xs[0])
        out.copy_(gm(*[x.clone() for x in xs])[0])  # a backend's graph returns a tuple of outputs
        return (out,)

    return run
