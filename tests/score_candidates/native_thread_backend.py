"""Cheat kind: an OS thread started with ``_thread`` at import time (invisible to
``threading.enumerate``); it sleeps a few seconds and ends."""

import _thread
import time

_thread.start_new_thread(time.sleep, (3.0,))


def backend(gm, example_inputs):
    return gm.forward
