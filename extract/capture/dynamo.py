"""The TorchDynamo custom backend (the GraphNet capture protocol).

``torch.compile(model, backend=...)`` hands the backend one ``(GraphModule, example_inputs)``
pair per graph; when Dynamo breaks the graph every piece is kept, in compile order, with the
reason Dynamo gave (``gm.compile_subgraph_reason``). :func:`dynamo_capture` also compares the
outputs the graphs recorded with those of the run, and asks :mod:`extract.capture.completeness`
whether every frame became a graph. Dynamo settings: :data:`DYNAMO_DEFAULTS`.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
import torch._dynamo
import torch.fx as fx
from torch._dynamo.utils import counters

from extract.capture import config_reads
from extract.capture.completeness import LogCollector, account_ops, assess_completeness
from extract.config import CaptureConfig, DynamoConfig, capture_config
from passnet_common.record import CapturedGraph

# Dynamo settings of a capture when params give none: the defaults of
# :class:`extract.config.DynamoConfig` (params ``extract.capture.dynamo``, where each is explained).
DYNAMO_DEFAULTS = DynamoConfig().to_params()


# The logger methods ignored with ``ignore_logging_functions`` (transformers adds
# ``warning_once`` / ``info_once`` to ``logging.Logger``).
LOGGER_METHODS = ("debug", "info", "warning", "warn", "error", "warning_once", "info_once")


def _logger_methods() -> set:
    return {getattr(logging.Logger, m) for m in LOGGER_METHODS if callable(getattr(logging.Logger, m, None))}


def dynamo_settings(capture: CaptureConfig | dict) -> dict:
    """The Dynamo config of a capture (:class:`extract.config.CaptureConfig` or its params
    mapping): :data:`DYNAMO_DEFAULTS` updated by ``capture.dynamo``.

    Raises:
        passnet_common.spec.ParamsError: an unknown setting name (a ValueError naming it).
    """
    return capture_config(capture).dynamo.to_params()


def _source_kind(source: Any) -> str | None:
    """``parameter`` / ``buffer`` when a Dynamo source chain passes through a module's
    ``_parameters`` / ``_buffers`` dict (nearest to the leaf wins), else None."""
    seen = 0
    while source is not None and seen < 64:
        member = getattr(source, "member", None)
        if member == "_parameters":
            return "parameter"
        if member == "_buffers":
            return "buffer"
        source = getattr(source, "base", None)
        seen += 1
    return None


def _recorded_outputs(gm: fx.GraphModule) -> list[tuple[list, str] | None]:
    out = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    vals = out.args[0] if isinstance(out.args[0], (list, tuple)) else [out.args[0]]
    res = []
    for v in vals:
        ev = v.meta.get("example_value") if isinstance(v, fx.Node) else None
        if isinstance(ev, torch.Tensor):
            res.append(([str(d) for d in ev.shape], str(ev.dtype)))
        else:
            res.append(None)
    return res


def compare_outputs(recorded: list, outputs: Any) -> list[str]:
    """Mismatches between the output metadata Dynamo recorded for a graph and one real
    execution of it: ``"output i: recorded [4] float32, executed [2] quint8"``. Symbolic
    sizes (unbacked symbols) are not compared."""
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    bad = []
    for i, (rec, val) in enumerate(zip(recorded, outs)):
        if rec is None or not isinstance(val, torch.Tensor):
            continue
        shape, dtype = rec
        exe_shape = [str(d) for d in val.shape]
        same_shape = len(shape) == len(exe_shape) and all(a == b or not a.isdigit() for a, b in zip(shape, exe_shape))
        if not same_shape or dtype != str(val.dtype):
            bad.append(f"output {i}: recorded [{', '.join(shape)}] {dtype.replace('torch.', '')}, "
                       f"executed [{', '.join(exe_shape)}] {str(val.dtype).replace('torch.', '')}")
    return bad


def dynamo_capture(model: torch.nn.Module, args: tuple = (), kwargs: dict | None = None,
                   settings: dict | None = None, check_outputs: bool = False,
                   buffer_info: dict[int, dict] | None = None, account: bool = True) -> list[CapturedGraph]:
    """Run ``model(*args, **kwargs)`` under ``torch.compile`` with a collecting backend.

    Placeholder kinds come from the source Dynamo records for each graph argument
    (``node.meta["grapharg"].source``: an attribute of a module's ``_parameters`` /
    ``_buffers``), then from tensor identity with the model's parameters/buffers; never
    from node names.

    Args:
        settings: Dynamo config (:func:`dynamo_settings`); defaults when None.
        check_outputs: compare each graph's recorded output shapes/dtypes with its real
            execution (real tensors only); mismatches go to ``output_mismatch``.
        buffer_info: ``id(buffer) -> {"name", "stats"}`` of the model's buffers, attached
            to the graphs that take them.
        account: take the op account of :func:`extract.capture.completeness.account_ops`
            (one more eager run plus one run of each graph, under a counting dispatch mode):
            ops that ran outside every graph make the capture incomplete.

    Returns:
        Every graph Dynamo produced, in compile order; completeness of the run is in
        :attr:`dynamo_capture.last_completeness` (a :class:`Completeness`). Exceptions
        raised by the model (in traced or eager parts) propagate.
    """
    kwargs = kwargs or {}
    settings = dynamo_settings({"dynamo": settings or {}})
    torch._dynamo.reset()
    counters.clear()
    param_ids = {id(p) for p in model.parameters()}
    buffer_ids = {id(b) for b in model.buffers()}
    graphs: list[CapturedGraph] = []
    runs: list = []

    def backend(gm: fx.GraphModule, example_inputs):
        kinds, sources = [], []
        for t, node in zip(example_inputs, [n for n in gm.graph.nodes if n.op == "placeholder"]):
            ga = node.meta.get("grapharg")
            src = getattr(ga, "source", None)
            kind = _source_kind(src)
            if kind is None:
                if id(t) in param_ids or isinstance(t, torch.nn.Parameter):
                    kind = "parameter"
                elif id(t) in buffer_ids:
                    kind = "buffer"
                else:
                    kind = "input"
            kinds.append(kind)
            sources.append(src.name() if src is not None and hasattr(src, "name") and callable(src.name) else None)
        reason = getattr(gm, "compile_subgraph_reason", None)
        text = None
        if reason is not None and getattr(reason, "graph_break", False):
            text = str(getattr(reason, "reason", reason))[:500]
        binfo = {pos: buffer_info[id(t)] for pos, t in enumerate(example_inputs)
                 if buffer_info and id(t) in buffer_info}
        g = CapturedGraph(gm, kinds, list(example_inputs), text, sources, [], binfo)
        graphs.append(g)
        recorded = _recorded_outputs(gm) if check_outputs else None
        slot = [gm, None, 0]  # graph, its first call's inputs, times run (the op account)
        runs.append(slot)

        def run(*a):
            if slot[1] is None and account:
                slot[1] = a
            slot[2] += 1
            out = gm.forward(*a)
            if recorded is not None and slot[2] == 1:
                g.output_mismatch = compare_outputs(recorded, out)
            return out

        return run

    logs = LogCollector()
    with logs.active(), torch._dynamo.config.patch(
        capture_scalar_outputs=bool(settings["capture_scalar_outputs"]),
        capture_dynamic_output_shape_ops=bool(settings["capture_dynamic_output_shape_ops"]),
        recompile_limit=int(settings["recompile_limit"]),
        accumulated_recompile_limit=max(256, 4 * int(settings["recompile_limit"])),
        ignore_logging_functions=_logger_methods() if settings["ignore_logging_functions"] else set(),
    ):
        compiled = torch.compile(model, backend=backend, dynamic=False, fullgraph=False)
        with torch.no_grad():
            compiled(*args, **kwargs)
        snapshot = {k: dict(v) for k, v in counters.items()}
    torch._dynamo.reset()
    counts = None
    if account:
        try:
            with config_reads.active() as rec:  # the eager run reads what forward reads (extract/capture/config_reads.py)
                counts = account_ops(model, args, kwargs, runs)
                if rec is not None:
                    rec.forward_runs += 1
        except Exception as exc:  # noqa: BLE001 - recorded: the capture is then not proven complete
            counts = exc
    meta = any(isinstance(t, torch.Tensor) and t.device.type == "meta"
               for t in list(args) + list(kwargs.values()) + list(model.parameters())[:1])
    dynamo_capture.last_completeness = assess_completeness(snapshot, logs.records, len(graphs),
                                                           int(settings["recompile_limit"]), counts, meta)
    runs.clear()
    return graphs
