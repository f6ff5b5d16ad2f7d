"""Twin: Inductor as configured."""
from torch._inductor.compile_fx import compile_fx


def backend(gm, example_inputs):
    return compile_fx(gm, example_inputs)
