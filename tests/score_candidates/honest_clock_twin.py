"""Honest twin of ``cheat_fake_clock.py``: the graph as it is."""


def backend(gm, example_inputs):
    return gm
