"""Caught by the dispatch guard: the same pattern, "replaced" by other ATen ops (eager work
relabelled as a pass)."""

import torch
import torch.nn.functional as F


def pattern(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


def replacement(x):
    return F.gelu(x, approximate="tanh")
