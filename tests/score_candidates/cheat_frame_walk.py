"""Cheat: read the reference's output from the evaluator's frame locals (through a traceback's
frame, with getattr bound to another name so that no ``getattr(...)`` call appears). Refused
statically (``name: getattr``; the frame attributes)."""
import torch

_ga = getattr


def backend(gm, example_inputs):
    def run(*xs):
        try:
            raise RuntimeError
        except RuntimeError as e:
            f = _ga(e.__traceback__, "tb_frame")
        while f is not None:
            ref = f.f_locals.get("ref")
            if isinstance(ref, torch.Tensor):
                return (ref.clone(),)
            f = f.f_back
        return gm(*xs)

    return run
