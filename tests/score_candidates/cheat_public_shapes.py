"""Cheat: exact on the public task set's shapes, wrong on any other (a kernel fitted to what it was shown)."""

PUBLIC = {(1, 16, 128), (1, 64, 256), (2, 64, 512)}


def backend(gm, example_inputs):
    def run(*args):
        out = gm(*args)
        if tuple(args[0].shape) in PUBLIC:
            return out
        return out + 0.05 if not isinstance(out, tuple) else tuple(o + 0.05 for o in out)

    return run
