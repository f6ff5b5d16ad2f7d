"""Honest under the dispatch guard: the replacement calls a kernel of its own (a torch.library
custom op), not other ATen ops."""

import torch


if not hasattr(torch.ops.passnet_fixture, "gelu_tanh"):
    @torch.library.custom_op("passnet_fixture::gelu_tanh", mutates_args=())
    def _gelu_kernel(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")

    @_gelu_kernel.register_fake
    def _(x):
        return torch.empty_like(x)


def pattern(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


def replacement(x):
    return torch.ops.passnet_fixture.gelu_tanh(x)
