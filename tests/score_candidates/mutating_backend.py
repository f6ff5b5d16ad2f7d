"""Cheat: computes in place, overwriting its first input."""


def backend(gm, example_inputs):
    def run(*args):
        out = gm(*args)
        first = out[0] if isinstance(out, tuple) else out
        if args[0].shape == first.shape:
            args[0].copy_(first)
            return (args[0],) if isinstance(out, tuple) else args[0]
        return out

    return run
