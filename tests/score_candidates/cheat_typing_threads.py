"""Static bypass: typing.get_type_hints evaluates a string annotation (eval with builtins) ->
torch.set_num_threads(2) though the static check refuses the name."""
import typing


def _f(x: "__import__('torch').set_num_threads"): pass


typing.get_type_hints(_f)["x"](2)


def backend(gm, example_inputs):
    return gm.forward
