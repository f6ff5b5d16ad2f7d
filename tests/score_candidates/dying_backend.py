"""Kills its own process when run (a native crash as seen from the evaluator)."""


def backend(gm, example_inputs):
    def run(*args):
        __import__("o" + "s")._exit(3)

    return run
