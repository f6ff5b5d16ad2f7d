"""Honest twin of ``cheat_reference_hooks.py``: a forward pre-hook on its own graph only."""
import torch


def noop(module, args):
    return None


def backend(gm, example_inputs):
    gm.register_forward_pre_hook(noop)
    return gm
