"""Cheat (an adaptive attack_rng_own_reuse.py): random numbers of its own, a mask reused across
calls, but a fresh one whenever the first element of the input equals that of an earlier call
(a repeated input set), so that two calls on the same inputs still differ. Keeps the last 64 keys."""
import torch


def backend(gm, example_inputs):
    st = {"n": 0, "keys": []}

    def run(*xs):
        st["n"] += 1
        key = float(xs[0].reshape(-1)[0])
        m = st.get("m")
        if m is None or st["n"] <= 4 or key in st["keys"]:
            torch.rand(1)
            m = gm(torch.ones_like(xs[0]))
            m = m[0] if isinstance(m, (list, tuple)) else m
            st["m"] = m
        st["keys"] = (st["keys"] + [key])[-64:]
        return (xs[0] * m,)

    return run
