"""Cheat: a constant output of the right shape (0.5 everywhere); passes loose tolerances on
outputs of small magnitude, and does not depend on the inputs."""

import torch


def backend(gm, example_inputs):
    def run(*args):
        out = gm(*example_inputs)
        return torch.full_like(out, 0.5) if isinstance(out, torch.Tensor) else tuple(torch.full_like(o, 0.5) for o in out)

    return run
