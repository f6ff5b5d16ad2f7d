"""Cheat: replace the evaluator's timed-output check and ``torch.isnan`` so that every comparison
passes, reaching them with ``__import__`` / ``setattr`` bound to other names (the old static check
refused only their calls). Refused statically (``name: __import__``, ``name: setattr``)."""
import torch

_imp, _sa = __import__, setattr


def backend(gm, example_inputs):
    try:
        clock = _imp("curate.score.defenses.clock", fromlist=["fast_min_pass_t"])
        _sa(clock, "fast_min_pass_t", lambda *a, **k: -10)
        _sa(torch, "isnan", lambda x: torch.zeros_like(x, dtype=torch.bool))
    except ImportError:
        pass

    def run(*xs):
        return (torch.empty_like(xs[0]),)

    return run
