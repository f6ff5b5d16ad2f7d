"""PassNet's dispatch guard (its ``PoisonDispatchTensor``) for pass replacements (option
``score.dispatch_guard``).

A pass must bring its own kernel: when a ``(pattern, replacement)`` pair matches, the
replacement is called once, before the rewritten graph is run or timed, on the values that reach
the match (computed by running the original graph on the example inputs), each tensor wrapped in
:class:`PoisonDispatchTensor`. On those arguments only factory / metadata ATen ops
(:data:`ALLOWED_ATEN`: ``empty_like``, views, ``detach``...) and ops outside the ``aten`` / ``prims``
namespaces (the pass's own kernel, e.g. a ``torch.library`` custom op) are allowed; any other ATen
op raises :class:`DispatchGuardError`, which the scorer records as a ``dispatch_guard`` violation.
So a "pass" that re-expresses the pattern in other ATen ops (eager work relabelled as a pass)
is told apart from one that calls a kernel of its own. Python-level metadata (``.shape``,
``.dtype``) is available on the wrapper without dispatch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._pytree import tree_map

ALLOWED_ATEN = frozenset({
    "empty_like", "empty", "empty_strided", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "zeros_like",
    "ones_like", "full_like", "detach", "alias", "view", "_unsafe_view", "_reshape_alias", "as_strided", "t",
    "transpose", "permute", "expand", "unsqueeze", "squeeze", "slice", "select", "sym_size", "sym_stride", "sym_numel",
    "sym_storage_offset", "is_contiguous", "size", "stride", "dim", "numel",
})
"""ATen op base names allowed on guarded arguments (factory and metadata ops)."""


class DispatchGuardError(RuntimeError):
    """A replacement ran a compute ATen op on a guarded argument (message names the op)."""


class PoisonDispatchTensor(torch.Tensor):
    """A wrapper tensor (same shape, dtype, strides as ``elem``) whose ATen dispatch allows only
    :data:`ALLOWED_ATEN` and non-ATen ops; results of allowed ATen ops stay guarded."""

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                device=elem.device, requires_grad=False)
        r.elem = elem
        return r

    def __repr__(self):  # noqa: D105
        return f"PoisonDispatchTensor({tuple(self.shape)}, {self.dtype})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ns = getattr(func, "namespace", "aten")
        base = func.__name__.split(".")[0]

        def unwrap(x):
            return x.elem if isinstance(x, PoisonDispatchTensor) else x

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs)) if (ns not in ("aten", "prims") or base in ALLOWED_ATEN) else None
        if ns not in ("aten", "prims"):
            return out  # the pass's own kernel: plain results
        if base not in ALLOWED_ATEN:
            raise DispatchGuardError(f"replacement runs {ns}.{func.__name__} on a guarded argument "
                                     "(only factory/metadata ops are allowed: the pass must bring its own kernel)")
        return tree_map(lambda x: PoisonDispatchTensor(x) if isinstance(x, torch.Tensor) else x, out)


def node_values(gm: torch.fx.GraphModule, inputs: list) -> dict[str, Any]:
    """Value of every node of ``gm`` on ``inputs`` (node name -> value), by ``torch.fx.Interpreter``."""
    env: dict[str, Any] = {}

    class Rec(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            env[n.name] = v
            return v

    with torch.no_grad():
        Rec(gm).run(*inputs)
    return env


def check_replacement(pattern, replacement, match, env: dict[str, Any]) -> None:
    """Call ``replacement`` on guarded values of the arguments of one ``match`` (a
    ``torch.fx.subgraph_rewriter.Match``). Raises :class:`DispatchGuardError`."""
    phs = [k for k in match.nodes_map if k.op == "placeholder"]
    order = {n: i for i, n in enumerate(phs[0].graph.nodes)} if phs else {}
    args = [env.get(match.nodes_map[k].name) for k in sorted(phs, key=order.get)]
    guarded = [PoisonDispatchTensor(a.detach()) if isinstance(a, torch.Tensor) else a for a in args]
    with torch.no_grad():
        replacement(*guarded)
