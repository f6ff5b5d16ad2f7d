"""Cheat: the work of a trial's calls done after their done bytes. A profile hook on the
sandbox loop (reached through ``from collections import _sys``, which the static check refuses;
the tests run it past that check) records each output slot's ``copy_``; a call on an input slot
seen before returns stale buffers at once, and on the call that ends its request the hook computes
every deferred call and writes the true outputs into their slots before the reply line. Caught by
the parent copying each checked call's slots at its done byte (``timed_output_mismatch``)."""
from collections import _sys
from random import _os

import torch


def backend(gm, example_inputs):
    ref = gm(*example_inputs)
    bufs = tuple(o.detach().clone() for o in ref)
    nout = len(bufs)
    known = {}                     # input pointer -> [copy_ methods, ends its request]
    st = {"cur": None, "n": 0, "learn": False, "pending": []}
    rd = _os.read

    def flush():
        for xs, copies in st["pending"]:
            outs = gm(*xs)
            for bm, o in zip(copies, outs):
                bm(o)
        st["pending"] = []

    def hook(frame, event, arg):
        if st["n"] < nout:
            if event == "c_call" and repr(arg).startswith("<built-in method copy_ of Tensor"):
                if st["learn"]:
                    known[st["cur"]][0].append(arg)
                st["n"] += 1
        elif event == "call":      # after the copies (and the done byte): the reply line is next
            known[st["cur"]][1] = True
            flush()
            _sys.setprofile(None)
        elif event == "c_call" and arg is rd:  # the next go byte: this call did not end the request
            known[st["cur"]][1] = False
            _sys.setprofile(None)

    def run(*xs):
        p = xs[0].data_ptr()
        k = known.get(p)
        if k is None:
            out = gm(*xs)
            known[p] = [[], False]
            st.update(cur=p, n=0, learn=True)
            _sys.setprofile(hook)
            return out
        st["pending"].append((xs, k[0]))
        if k[1]:
            st.update(cur=p, n=0, learn=False)
            _sys.setprofile(hook)
        return bufs

    return run
