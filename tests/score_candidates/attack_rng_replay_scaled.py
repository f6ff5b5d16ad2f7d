"""Cheat: a call on an input set it has seen (the first element as the key) returns that earlier
call's output scaled by ``1 + 1e-7``, with no mask drawn and no graph run: not identical to the
earlier output, so a check for identical outputs on the same inputs with two seeds passes, and an
output of eager's distribution and coupling. Every other call draws a mask of its own, as its twin
(honest_rng_own_twin.py) does on every call."""
import torch


def backend(gm, example_inputs):
    st = {"seen": {}}

    def run(*xs):
        key = float(xs[0].reshape(-1)[0])
        prev = st["seen"].get(key)
        if prev is not None:
            return (prev * (1 + 1e-7),)
        torch.rand(1)
        m = gm(torch.ones_like(xs[0]))
        m = m[0] if isinstance(m, (list, tuple)) else m
        y = xs[0] * m
        st["seen"] = dict(list(st["seen"].items())[-63:] + [(key, y)])
        return (y,)

    return run
