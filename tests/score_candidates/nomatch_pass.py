"""A pass whose pattern occurs in no task (cos(cos(x)))."""

import torch


def pattern(x):
    return torch.cos(torch.cos(x))


def replacement(x):
    return torch.cos(x)
