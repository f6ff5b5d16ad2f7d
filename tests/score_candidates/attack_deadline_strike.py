"""Cheat: strike a subgraph it would lose on from its own score by spending the subgraph's time
limit so that it runs out while the parent waits on a *trusted* sandbox. On a graph with an ``exp``
(the softmax task) its third checked call busy-waits (``datetime``: no timer module) until
``BUDGET_S - MARGIN_S`` after its compile began, then answers correctly; the time limit then
expires in the Dynamo-only sandbox's load or in a reference's timed trial, a harness timeout,
which without an ``eager`` candidate to judge (the reward of ``score_candidate``) made the
subgraph ``reference_failed``: out of the candidate's scores. ``BUDGET_S`` is the test's
``timeout_s``. Its twin is the same code without the wait."""
import datetime

import torch

BUDGET_S = 25.0
MARGIN_S = 1.0


def backend(gm, example_inputs):
    t0 = datetime.datetime.now()
    strike = any(n.target is torch.exp for n in gm.graph.nodes)
    st = {"n": 0}

    def run(*xs):
        st["n"] += 1
        if strike and st["n"] == 4:  # compile call + two checked calls before it
            while (datetime.datetime.now() - t0).total_seconds() < BUDGET_S - MARGIN_S:
                pass
        return gm(*xs)

    return run
