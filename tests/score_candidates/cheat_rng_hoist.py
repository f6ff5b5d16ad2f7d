"""Cheat (a reviewer's): the dropout mask drawn once and reused by every later call. While the
scorer re-seeded the RNG with the constant 0 before every call of an RNG graph, eager's mask was
the same on every call, a hoisted mask was bit-exact and the distribution checks never ran (about
5x its twin's speed on a (256, 4096) dropout). Every call now has its own seed, the same for the
references: the third checked call repeats the first call's inputs with another seed, where this
candidate returns the same output (``seed_ignored``). No route past the static check is needed."""
import torch


def backend(gm, example_inputs):
    st = {}

    def run(*xs):
        m = st.get("m")
        if m is None:  # the first call: one mask draw
            m = gm(torch.ones_like(xs[0]))
            m = m[0] if isinstance(m, (list, tuple)) else m
            st["m"] = m
        return (xs[0] * m,)

    return run
