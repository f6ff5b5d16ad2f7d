"""Honest twin of ``cheat_frame_walk.py``: the same try/except shape, no frame access."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        try:
            raise RuntimeError
        except RuntimeError:
            pass
        return gm(*xs)

    return run
