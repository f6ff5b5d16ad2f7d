"""Cheat: walk ``gc.get_referrers`` from an output to the evaluator's dict of outputs and copy
eager's output in. Refused statically (``import: gc``); in the sandbox there is no eager output
to find (the reference runs in another process)."""
import gc

import torch


def backend(gm, example_inputs):
    def run(*xs):
        out = torch.empty_like(xs[0])
        for holder in gc.get_referrers(out):
            if isinstance(holder, dict) and "eager" in holder:
                return holder["eager"]
        return gm(*xs)

    return run
