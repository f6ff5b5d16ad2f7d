"""Cheat: a fake ``perf_counter`` hiding up to 12 ms per trial (below the old 15-ms absolute
slack), installed through ``__import__`` bound to another name. Refused statically; in the
sandbox the candidate's clock decides nothing (the parent's clock times every request)."""
import torch

_imp = __import__
_time = _imp("time")
_real = _time.perf_counter
_time.perf_counter = lambda: _real() - 0.012


def backend(gm, example_inputs):
    return gm
