"""Cheat: computes once, then returns the cached outputs forever."""

_CACHE = {}


def backend(gm, example_inputs):
    def run(*args):
        if "out" not in _CACHE:
            _CACHE["out"] = gm(*args)
        return _CACHE["out"]

    return run
