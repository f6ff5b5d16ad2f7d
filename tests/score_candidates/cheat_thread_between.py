"""Cheat: return an empty output at once and fill it from a worker thread that is alive only
between the evaluator's thread-count checkpoints (the old child counted threads after import,
after the checked calls and after timing). Refused statically (``import: threading``); at run
time the boundary copies the (still empty) output inside the timed call, the parent sees the
thread alive at a trial's edge and the process's CPU time above its wall time."""
import threading

import torch


def backend(gm, example_inputs):
    def run(*xs):
        out = torch.empty_like(xs[0])
        ins = [x.clone() for x in xs]

        def fill():
            for _ in range(3):
                out.copy_(gm(*ins)[0])  # a backend's graph returns a tuple of outputs

        threading.Thread(target=fill).start()
        return (out,)

    return run
