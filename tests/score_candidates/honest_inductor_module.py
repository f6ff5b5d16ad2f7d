"""An honest module candidate that wraps Inductor: its kernels compile in the untrusted sandbox (the
compiler runs as the sandbox's uid, in its own Inductor cache)."""
from torch._inductor.compile_fx import compile_fx


def backend(gm, example_inputs):
    return compile_fx(gm, example_inputs)
