"""Cheat: a result cache keyed on the inputs' data pointers (the catalogued replay that C++
extensions do invisibly). Caught: the boundary writes fresh values into the same slots, so the
replayed output is stale (``input_independent`` / ``fresh_input_mismatch`` / timed mismatch)."""
import torch


def backend(gm, example_inputs):
    cache = {}

    def run(*xs):
        key = tuple(x.data_ptr() for x in xs)
        if key not in cache:
            cache[key] = tuple(o.clone() for o in gm(*xs))
        return cache[key]

    return run
