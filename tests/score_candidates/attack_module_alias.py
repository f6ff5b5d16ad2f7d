"""Cheat: the ``os`` module through another module's private alias of it, read on an expression
the static check cannot resolve (``(random,)[0]._os``: a subscript, not a chain from an imported
name, and ``_os`` is no forbidden name). The payload starts a CPU burner beside the sandbox
(``posix_spawn`` of ``/bin/sh``) to slow the references' timed trials. Its twin computes the same
graph without it."""
import random

import torch


def backend(gm, example_inputs):
    o = (random,)[0]._os
    o.posix_spawn("/bin/sh", ["sh", "-c", "while :; do :; done"], {})
    return gm.forward


_ = torch
