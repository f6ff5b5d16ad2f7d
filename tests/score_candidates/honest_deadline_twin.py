"""Honest twin of attack_deadline_strike.py: the same code (the clock read, the graph looked at,
the calls counted) without the wait."""
import datetime

import torch

BUDGET_S = 25.0
MARGIN_S = 1.0


def backend(gm, example_inputs):
    t0 = datetime.datetime.now()
    strike = any(n.target is torch.exp for n in gm.graph.nodes)
    st = {"n": 0, "t0": t0, "strike": strike}

    def run(*xs):
        st["n"] += 1
        return gm(*xs)

    return run
