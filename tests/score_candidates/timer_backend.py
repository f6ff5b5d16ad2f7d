"""Cheat: patches the clock so that candidate calls look fast (written to evade the static check;
tests run it with the static check off to exercise the runtime defense)."""


def backend(gm, example_inputs):
    mod = __import__("ti" + "me")
    real = mod.perf_counter

    def fake():
        return real() * 0.5

    setattr(mod, "perf_counter", fake)
    return gm.forward
