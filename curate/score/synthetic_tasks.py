"""A small built-in task set for the ``score`` command and its tests (``--tasks builtin``).

Four tasks of long-tail-style patterns as Dynamo records them from transformers layers
(decomposed RMSNorm, tanh-GELU, written-out SiLU-gated MLP, written-out softmax), three sizes
each, as standalone ``GraphModule`` s (``torch.fx.symbolic_trace``) whose weights are
placeholders (as Dynamo lifts them). Inputs come from a seeded generator, so the same
``(subgraph_id, seed)`` always gives the same tensors and a new seed gives fresh ones.

Plus ``tiny:near_zero`` (only with ``include_trivial=True``): a subgraph whose reference output is
near zero, used to test that such samples are excluded; ``rng:dropout`` (only with
``include_rng=True``): a training-mode dropout, for the RNG checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.fx as fx


@dataclass(frozen=True)
class TaskSubgraph:
    """One subgraph of a task: ``build() -> GraphModule``; ``make_inputs(seed) -> list[Tensor]``."""

    task_id: str
    subgraph_id: str
    build: Callable[[], fx.GraphModule]
    make_inputs: Callable[[int], list]


def rmsnorm(x, w):
    v = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(v + 1e-6))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


def swiglu(g, u):
    return (g * torch.sigmoid(g)) * u


def softmax(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def dropout_train(x):
    return torch.nn.functional.dropout(x, 0.1, training=True)


def near_zero(x):
    return x * 1e-9


_SHAPES = [(1, 16, 128), (1, 64, 256), (2, 64, 512)]

HELD_OUT_SHAPES = [(3, 24, 96), (1, 40, 320)]
"""Shapes of the held-out variants (task set ``builtin-heldout``): in no public subgraph, for
re-validating top candidates on shapes they never saw (:mod:`curate.score.defenses.revalidate`)."""


def _randn(shape, seed, scale=1.0):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    return x if scale == 1.0 else x * scale  # x * 1.0 is x: no copy of every input set


def builtin_task_set(include_trivial: bool = False, include_rng: bool = False, held_out: bool = False) -> list[TaskSubgraph]:
    """The built-in tasks (4 tasks x 3 sizes = 12 subgraphs; +1 trivial one and +1 training-mode
    dropout one, ``rng:dropout``, on request). ``held_out``: the same 4 tasks at
    :data:`HELD_OUT_SHAPES` instead (8 subgraphs, ids ``<task>:h<i>``; task set ``builtin-heldout``)."""
    out = []
    for i, shape in enumerate(HELD_OUT_SHAPES if held_out else _SHAPES):
        h, v = shape[-1], f"h{i}" if held_out else str(i)
        out.append(TaskSubgraph("rmsnorm", f"rmsnorm:{v}", lambda: fx.symbolic_trace(rmsnorm),
                                lambda s, shape=shape, h=h: [_randn(shape, s), 1 + 0.1 * _randn((h,), s + 1000)]))
        out.append(TaskSubgraph("gelu_tanh", f"gelu_tanh:{v}", lambda: fx.symbolic_trace(gelu_tanh),
                                lambda s, shape=shape: [_randn(shape, s)]))
        out.append(TaskSubgraph("swiglu", f"swiglu:{v}", lambda: fx.symbolic_trace(swiglu),
                                lambda s, shape=shape: [_randn(shape, s), _randn(shape, s + 1000)]))
        out.append(TaskSubgraph("softmax", f"softmax:{v}", lambda: fx.symbolic_trace(softmax),
                                lambda s, shape=shape: [_randn(shape, s, 3.0)]))
    if include_trivial:
        out.append(TaskSubgraph("tiny", "tiny:near_zero", lambda: fx.symbolic_trace(near_zero),
                                lambda s: [_randn((4, 64), s)]))
    if include_rng:
        out.append(TaskSubgraph("rng", "rng:dropout", lambda: fx.symbolic_trace(dropout_train),
                                lambda s: [_randn((16, 256), s)]))
    return out
