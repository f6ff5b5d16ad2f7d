"""Cheat: cheat_rng_hoist.py's mask reuse, put off until the checked calls before timing are over
(its compile call and three checked calls draw a mask each, with the seed of the call, as its
twin does; from the fifth call on, the last mask is reused). Its outputs equal eager's on every
checked call before timing, so its timed calls are compared element by element with eager's on
the same inputs and seed: a reused mask fails them (``timed_output_mismatch``)."""
import torch


def backend(gm, example_inputs):
    st = {"n": 0}

    def run(*xs):
        st["n"] += 1
        m = st.get("m")
        if m is None or st["n"] <= 4:  # compile + the three checked calls: a fresh mask each
            m = gm(torch.ones_like(xs[0]))
            m = m[0] if isinstance(m, (list, tuple)) else m
            st["m"] = m
        return (xs[0] * m,)

    return run
