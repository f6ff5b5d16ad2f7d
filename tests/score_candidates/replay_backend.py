"""Cheat: output replay. Returns a *clone* of the output it cached for inputs of the same shapes
(a clone defeats a storage-alias check; the values are those of the first inputs)."""

_CACHE = {}


def backend(gm, example_inputs):
    def run(*args):
        key = tuple(tuple(a.shape) for a in args)
        if key not in _CACHE:
            _CACHE[key] = gm(*args)
        out = _CACHE[key]
        return tuple(o.clone() for o in out) if isinstance(out, (tuple, list)) else out.clone()

    return run
