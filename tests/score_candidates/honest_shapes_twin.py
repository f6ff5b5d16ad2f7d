"""Honest twin of ``cheat_public_shapes``: the same code without the special case."""

PUBLIC = {(1, 16, 128), (1, 64, 256), (2, 64, 512)}


def backend(gm, example_inputs):
    def run(*args):
        return gm(*args)

    return run
