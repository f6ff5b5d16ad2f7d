"""Honest twin of attack_module_alias.py: the same imports, the graph as given."""
import random

import torch


def backend(gm, example_inputs):
    random.random()
    return gm.forward


_ = torch
