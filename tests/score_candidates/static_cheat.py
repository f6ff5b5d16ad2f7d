"""Cheat caught statically: imports the evaluator, a timer and a thread; patches torch."""
import time
import threading
from curate import tolerance
import torch

torch.matmul = lambda a, b: a


def backend(gm, example_inputs):
    t0 = time.perf_counter()
    open("/tmp/x", "w")
    return gm.forward
