"""Cheat: correct on the first calls of an RNG graph (the checked ones before timing), then
``empty_like`` in the timed calls, whose outputs an RNG graph once did not have checked. Caught
at run time: ``timed_output_mismatch`` (timed outputs of RNG graphs compared by distribution and
by agreement with eager's output on the same inputs)."""
import torch


def backend(gm, example_inputs):
    calls = [0]

    def run(*xs):
        calls[0] += 1
        if calls[0] <= 4:
            return gm(*xs)
        return (torch.empty_like(xs[0]),)

    return run
