"""Static bypass of PATCHABLE_ROOTS by alias: cfg.cpp.threads = 2 (root `cfg`, not `torch`), then Inductor."""
import torch._inductor.config as cfg
from torch._inductor.compile_fx import compile_fx

cfg.cpp.threads = 2


def backend(gm, example_inputs):
    return compile_fx(gm, example_inputs)
