"""Cheat: rewrites the evaluator's clock through ``torch.sys.modules`` item / attribute access
(no getattr / setattr / __import__ call): ``time.perf_counter`` and the originals the evaluator
stored in ``curate.score.defenses.integrity`` both become a clock running at half speed, so ``timers_intact()``
compares two patched values. Caught statically (``sys``, ``__setattr__``) and, with the static
check off, by the parent's clock."""

import torch

_MODS = torch.sys.modules


def backend(gm, example_inputs):
    t = _MODS["time"]
    integ = _MODS["curate.score.defenses.integrity"]
    real = integ.original_perf_counter()
    name = "perf_" + "counter"

    def fake():
        return real() * 0.5

    t.__setattr__(name, fake)
    integ._ORIGINAL_TIMERS[name] = fake
    return gm.forward
