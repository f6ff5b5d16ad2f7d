"""Honest twin of attack_fx_slot_direct.py: the same in-place tanh-GELU arithmetic, its last
multiply into a fresh tensor (which the sandbox then copies into its slot, as for every side)."""
import torch


def backend(gm, example_inputs):
    def run(*xs):
        x = xs[0]
        a = x * x
        a.mul_(x).mul_(0.044715).add_(x).mul_(0.7978845608028654).tanh_().add_(1.0)
        out = torch.empty_like(x)
        torch.mul(a, x, out=out).mul_(0.5)
        return (out,)

    return run
