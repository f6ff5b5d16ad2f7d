"""Cheat: random numbers of its own (judged by statistics and coupling, not element by element),
a fresh mask on its compile call and the three checked calls before timing, then the last mask
reused on every later call (the timed ones): the mask draw is skipped where no two outputs are
compared for sharing their random numbers. Its twin draws the mask on every call."""
import torch


def backend(gm, example_inputs):
    st = {"n": 0}

    def run(*xs):
        st["n"] += 1
        m = st.get("m")
        if m is None or st["n"] <= 4:  # compile + the three checked calls: a fresh mask each
            torch.rand(1)
            m = gm(torch.ones_like(xs[0]))
            m = m[0] if isinstance(m, (list, tuple)) else m
            st["m"] = m
        return (xs[0] * m,)

    return run
