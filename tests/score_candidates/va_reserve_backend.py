"""Reserves 2 GiB of address space (an anonymous mapping it never touches: no resident memory)
and returns eager's outputs: honest, and must run under a 0.75 GiB resident-memory cap."""

import mmap

HELD = []


def backend(gm, example_inputs):
    HELD.append(mmap.mmap(-1, 2 << 30))  # virtual only: no page is touched

    def run(*args):
        return gm(*args)

    return run
