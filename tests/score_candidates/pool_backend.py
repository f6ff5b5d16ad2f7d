"""Cheat kind: a thread pool created at compile time that stays alive (work could run there,
outside the timed window). Caught statically (``concurrent``) and by the thread check."""

from concurrent.futures import ThreadPoolExecutor

_POOL = []


def backend(gm, example_inputs):
    pool = ThreadPoolExecutor(max_workers=1)
    pool.submit(int, 0).result()
    _POOL.append(pool)
    return gm.forward
