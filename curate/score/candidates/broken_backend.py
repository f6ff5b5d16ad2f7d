"""A deliberately broken torch.compile backend (a reference row of the score table).

Chosen per graph from its number of call nodes ``n`` so that every error code occurs on a
task set of a few patterns: ``n % 4 == 0`` raises while compiling (code 3, compile failure),
``n % 4`` in (1, 3) returns a callable that raises when run (code 2, runtime crash), ``n % 4 == 2``
returns outputs shifted by 0.01 (code 1 at tight tolerances; passes from the level whose atol
exceeds 0.01). On the built-in task set: gelu_tanh (8 calls) compile failure, softmax (5) and
swiglu (3) runtime crash, rmsnorm (6) shifted outputs.
"""

import torch


def _n_calls(gm):
    return sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))


def backend(gm, example_inputs):
    """``torch.compile`` backend: ``(GraphModule, example_inputs) -> callable``."""
    kind = _n_calls(gm) % 4
    if kind == 0:
        raise RuntimeError("broken backend: refusing to compile this graph")

    def crash(*args):
        raise RuntimeError("broken backend: crash at run time")

    def shifted(*args):
        out = gm(*args)
        if isinstance(out, torch.Tensor):
            return out + 0.01
        return tuple(o + 0.01 if isinstance(o, torch.Tensor) and o.is_floating_point() else o for o in out)

    return shifted if kind == 2 else crash
