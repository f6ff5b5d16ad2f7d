"""Completeness of a capture: Dynamo's frame counters, and an op account that does not trust them.

A capture is complete when every frame Dynamo saw became a graph (no frame left eager, no
recompile limit hit) AND every ATen op that one eager run of the model dispatches is also
dispatched by the captured graphs (:func:`account_ops`). The account is what proves it:
Dynamo counts a frame as converted when a graph was compiled before a break, and does not
count frames it never enters (``torch.compiler.disable``, modules it skips such as
``nn.LSTM`` / ``nn.GRU``), so its counters alone call such a run complete while ops ran in
no graph. :func:`assess_completeness` turns both into a :class:`Completeness`.

The account: the model is run once more, eagerly, on the same inputs (meta tensors in a meta
capture, so it costs no FLOPs) under a counting ``TorchDispatchMode``; every captured graph
is run under the same mode on the inputs it received in the compiled run, its counts times
the number of times it ran. An op name whose eager count exceeds its graph count ran outside
every graph; the row is ``incomplete`` and names those ops (``aten.lstm: 1``). A dispatch mode
cannot be active during the compiled run itself (Dynamo then runs every frame eagerly), so
the account takes the two extra runs.
"""

from __future__ import annotations

import logging
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.compiler as tc
from torch.utils._python_dispatch import TorchDispatchMode


@dataclass
class Completeness:
    """Whether Dynamo captured every frame of a model run as graphs.

    Read from Dynamo's own bookkeeping (``torch._dynamo.utils.counters["frames"]``: frames
    seen vs frames converted) and its log records (``recompile_limit`` hits), never from
    hidden warnings.

    Attributes:
        complete: True when every frame Dynamo saw was converted, no frame hit the
            recompile limit, and at least one graph was captured.
        reason: why not (None when complete).
        eager_frames: frames that ran eagerly (skipped, failed to convert, or over the
            recompile limit).
        recompile_limit_hits: log records saying a frame hit ``recompile_limit``.
        frames_total / frames_ok: Dynamo's frame counters.
        ops_outside: ``{"aten.<op>": count}`` of ops one eager run dispatched that no
            captured graph dispatched (:func:`account_ops`); empty when every op is in a graph.
        ops_eager / ops_in_graphs: ATen ops dispatched by the eager run / by the graphs.
    """

    complete: bool
    reason: str | None
    eager_frames: int
    recompile_limit_hits: int
    frames_total: int
    frames_ok: int
    ops_outside: dict = field(default_factory=dict)
    ops_eager: int = 0
    ops_in_graphs: int = 0


class LogCollector:
    """Collects Dynamo's WARNING+ log records during a capture instead of printing them."""

    def __init__(self):
        self.records: list[str] = []
        self.handler = logging.Handler(logging.WARNING)
        self.handler.emit = lambda rec: self.records.append(rec.getMessage() if rec.args else str(rec.msg))

    @contextmanager
    def active(self):
        lg = logging.getLogger("torch._dynamo")
        old = (lg.level, list(lg.handlers), lg.propagate)
        lg.handlers = [self.handler]
        lg.setLevel(logging.WARNING)
        lg.propagate = False
        try:
            yield self
        finally:
            lg.setLevel(old[0])
            lg.handlers = old[1]
            lg.propagate = old[2]


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped, at most 200 characters."""
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")[:200]


# ATen ops whose meta / fake kernel is known to disagree with the real kernel on output
# metadata (shape or dtype): on meta a graph records the fake kernel's answer, so a meta
# capture holding one of them is not trusted (``convolution_backward`` records
# grad_bias ``[4]`` where the op returns ``[2]`` when bias_sizes disagrees with the weight;
# ``quantize_per_tensor``'s meta kernel returns float32 where the op returns quint8, checked
# on torch 2.14; ``quantize_per_channel`` has no meta kernel, so it fails instead). Names as
# in ``str(func.overloadpacket)``; add an op here with a fixture in tests/fixtures/modules.
META_UNTRUSTED_OPS = frozenset({"aten.convolution_backward", "aten.quantize_per_tensor"})


# Torch functions that change global state (the RNG) without dispatching an op: called
# outside a graph (a graph break), the graphs do not reproduce the model's state.
STATEFUL_BREAK_MARKS = ("`manual_seed`", "`seed`", "`set_rng_state`", "`fork_rng`")


class OpCounter(TorchDispatchMode):
    """``TorchDispatchMode`` that counts every ATen op that computes values dispatched while
    it is active (``counts``: ``"aten.<op>" -> int``), then runs the op unchanged. View ops
    (``OpOverload.is_view``: the output aliases an input, no value is computed) are counted
    apart (``views``): Dynamo folds some of them on trace-time constants (a mask's
    ``unsqueeze``), so they do not enter the account."""

    def __init__(self):
        super().__init__()
        self.counts: Counter = Counter()
        self.views: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        (self.views if getattr(func, "is_view", False) else self.counts)[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def account_ops(model, args: tuple, kwargs: dict, runs: list) -> tuple[Counter, Counter]:
    """ATen op counts of one eager run of ``model(*args, **kwargs)`` and of the captured
    graphs. ``runs``: ``[graph_module, first_call_args | None, times_run]`` per graph, as the
    capture backend recorded them. Runs under ``torch.no_grad``.

    Returns:
        (eager counts, graph counts): ``Counter`` of ``"aten.<op>"``.

    Raises:
        Whatever the eager run or a graph's re-run raises (the caller records it).
    """
    flag = tc._is_compiling_flag
    with torch.no_grad():
        ref = OpCounter()
        # the eager run takes the code paths the traced one took: model code that asks
        # torch.compiler.is_compiling() (transformers' masks skip value checks) sees True,
        # as under Dynamo (the flag torch's non-strict export sets for the same purpose)
        tc._is_compiling_flag = True
        try:
            with ref:
                model(*args, **kwargs)
        finally:
            tc._is_compiling_flag = flag
        graph = Counter()
        for gm, first_args, times in runs:
            if first_args is None or not times:
                continue
            mode = OpCounter()
            with mode:
                gm.forward(*first_args)
            for k, v in mode.counts.items():
                graph[k] += v * times
    return ref.counts, graph


def _ops_text(ops: dict, limit: int = 8) -> str:
    items = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k}: {v}" for k, v in items[:limit])
    return text + (f", ... ({len(items)} op names)" if len(items) > limit else "")


def assess_completeness(counters: dict, log_records: list[str], num_graphs: int, limit: int,
                        account: tuple | None = None, meta: bool = False) -> Completeness:
    """Turn Dynamo's frame counters and log records, and the op account
    (:func:`account_ops`: ``(eager Counter, graph Counter)``, or an exception when it could
    not be taken), into a :class:`Completeness`. ``meta``: the graphs ran on meta tensors
    (ops of :data:`META_UNTRUSTED_OPS` then make the capture incomplete)."""
    frames = counters.get("frames", {})
    total, ok = int(frames.get("total", 0)), int(frames.get("ok", 0))
    hits = [r for r in log_records if "recompile_limit" in r or "cache_size_limit" in r]
    eager = max(0, total - ok)
    reasons = []
    if num_graphs == 0:
        reasons.append("no graph captured")
    if hits:
        reasons.append(f"{len(hits)} frame(s) hit the recompile limit ({limit}) and ran eagerly: {first_line(hits[0])}")
    if eager:
        why = [first_line(k) for k in counters.get("unimplemented", {})]
        skipped = [r for r in log_records if "skip" in r.lower()]
        detail = why[0] if why else (first_line(skipped[0]) if skipped else "not converted")
        reasons.append(f"{eager} of {total} frame(s) ran eagerly ({detail})")
    outside: dict = {}
    n_eager = n_graph = 0
    if isinstance(account, BaseException):
        reasons.append(f"op account failed ({type(account).__name__}: {first_line(str(account))})")
    elif account is not None:
        ref, graph = account
        n_eager, n_graph = sum(ref.values()), sum(graph.values())
        outside = dict(sorted((ref - graph).items()))
        if outside:
            reasons.append(f"{sum(outside.values())} of {n_eager} op call(s) ran outside every graph ({_ops_text(outside)})")
        if meta:
            untrusted = sorted(k for k in graph if k in META_UNTRUSTED_OPS)
            if untrusted:
                reasons.append(f"meta metadata not trusted for {', '.join(untrusted)} (fake kernel known to disagree)")
    stateful = sorted({m.strip("`") for r in counters.get("graph_break", {}) for m in STATEFUL_BREAK_MARKS if m in r})
    if stateful:
        reasons.append(f"global-state call(s) outside every graph: torch.{', torch.'.join(stateful)}")
    return Completeness(not reasons, "; ".join(reasons) or None, eager, len(hits), total, ok, outside, n_eager, n_graph)
