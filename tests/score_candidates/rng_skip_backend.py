"""Cheat on an RNG subgraph: skips the dropout (returns its input)."""


def backend(gm, example_inputs):
    def run(*args):
        return (args[0].clone(),)  # a backend's graph returns a tuple of outputs

    return run
