"""Cheat: code run from a string through ``functools.singledispatch``: ``register`` reads the
function's type hints (``typing.get_type_hints``), which turns a string inside a generic alias
(``list["..."]``) into a ``ForwardRef`` and evals it with the module's globals, so the real
builtins. The string is not in an annotation (the alias is a module variable: the annotation is
the name ``T``), so the static check's string-annotation rule does not see it. The payload raises
the sandbox's scheduling priority (``os.nice(-5)``), to run ahead of the references on a loaded
machine. Its twin registers an alias of ``int``."""
import functools

T = list["[__import__('os').nice(-5), int][1]"]


def _base(x):
    return x


def _hook(x: T):
    return x


def backend(gm, example_inputs):
    try:
        functools.singledispatch(_base).register(_hook)
    except TypeError:  # the alias is not a class: registered nothing, the payload ran
        pass
    return gm.forward
