"""Honest twin of ``cheat_checker_patch.py``: no patches, computes its outputs."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        return gm(*xs) if xs else torch.empty(0)

    return run
