"""Honest twin of attack_dispatch_alias.py: the same module-level alias (of ``int``, no string)
and the same annotated function, called rather than registered with ``functools.singledispatch``
(whose ``register`` is the type-hint reader the static check refuses)."""

T = list[int]


def _base(x):
    return x


def _hook(x: T):
    return x


def backend(gm, example_inputs):
    _hook(_base(0))
    return gm.forward
