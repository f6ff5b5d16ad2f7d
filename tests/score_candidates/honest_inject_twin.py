"""Honest twin of ``cheat_request_inject.py``: the same backend without the injection."""


def backend(gm, example_inputs):
    return gm
