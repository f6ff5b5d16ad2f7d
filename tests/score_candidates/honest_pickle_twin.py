"""Honest twin of cheat_pickle_exec.py: the same helper, defined in the module itself (no payload,
no loader): the graph's own forward."""
import torch


def _helper():
    return lambda gm: gm.forward


def backend(gm, example_inputs):
    assert isinstance(gm, torch.nn.Module)
    return _helper()(gm)
