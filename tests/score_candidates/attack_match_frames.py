"""Cheat: frames reached through ``match`` class patterns, which read any attribute by a keyword
name (``case object(__traceback__=tb)``, ``tb_frame``, ``f_back``, ``f_locals``) that the static
check only judged on attribute expressions. From its call's frame it walks up to the sandbox's
``Runner.run``, shadows the loop's check of outputs on the output slots on that instance, and
writes each call's tanh-GELU straight into the call's output slot (found by the input tensor's
identity), so the loop's copy into the slot, which every other side pays inside its window, is
a copy of the slot onto itself. Its twin (honest_slot_direct_twin.py) runs the same arithmetic
into a fresh tensor."""
import torch


def _runner():
    try:
        raise ValueError("where am I")
    except ValueError as e:
        err = e
    tb = fr = None
    match err:
        case object(__traceback__=tb):
            pass
    match tb:
        case object(tb_frame=fr):
            pass
    while fr is not None:
        loc = up = None
        match fr:
            case object(f_locals=loc, f_back=up):
                pass
        r = loc.get("self") if isinstance(loc, dict) else None
        if type(r).__name__ == "Runner":
            return r
        fr = up
    return None


def backend(gm, example_inputs):
    st = {}

    def slot_of(x):
        r = st.get("r")
        if r is None:
            r = _runner()
            if r is not None:
                r._in_output_slots = lambda o: False  # the loop's own report, shadowed on its instance
            st["r"] = r
        if r is None or r.outs is None:
            return None
        for k, row in enumerate(r.ins.sets):
            if row and row[0] is x:
                return r.outs.sets[k][0]
        return None

    def run(*xs):
        x = xs[0]
        a = x * x
        a.mul_(x).mul_(0.044715).add_(x).mul_(0.7978845608028654).tanh_().add_(1.0)
        out = slot_of(x)
        if out is None:
            out = torch.empty_like(x)
        torch.mul(a, x, out=out).mul_(0.5)
        return (out,)

    return run
