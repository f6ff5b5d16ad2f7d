"""Honest twin of ``attack_defer_after_done.py``: the same profile hook, switched on for the same
calls, every call computed before it returns."""
from collections import _sys
from random import _os

import torch


def backend(gm, example_inputs):
    nout = len(gm(*example_inputs))
    known = {}
    st = {"cur": None, "n": 0, "learn": False}
    rd = _os.read

    def hook(frame, event, arg):
        if st["n"] < nout:
            if event == "c_call" and repr(arg).startswith("<built-in method copy_ of Tensor"):
                if st["learn"]:
                    known[st["cur"]][0].append(arg)
                st["n"] += 1
        elif event == "call":
            known[st["cur"]][1] = True
            _sys.setprofile(None)
        elif event == "c_call" and arg is rd:
            known[st["cur"]][1] = False
            _sys.setprofile(None)

    def run(*xs):
        out = gm(*xs)
        p = xs[0].data_ptr()
        k = known.get(p)
        if k is None:
            known[p] = [[], False]
            st.update(cur=p, n=0, learn=True)
            _sys.setprofile(hook)
        elif k[1]:
            st.update(cur=p, n=0, learn=False)
            _sys.setprofile(hook)
        return out

    return run
