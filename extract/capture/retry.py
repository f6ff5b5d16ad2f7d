"""The retry ladder of a capture.

A failure that comes from tracing a value as a symbol (a failed runtime assertion,
``GuardOnDataDependentSymNode``, a data-dependent specialisation) turns the Dynamo settings of
:data:`RETRY_LADDER` off one by one (:func:`capture_with_retry`); a meta capture whose value
check needs a meta tensor's value is taken once more with transformers' torch checks off
(:func:`meta_capture`). Every step is recorded in the returned ``used`` settings (``retry``).
"""

from __future__ import annotations

import os

import torch.fx.experimental._config as fx_config

from extract.capture import dynamo as backend
from extract.capture.build import meta_tensor_constants
from extract.capture.completeness import first_line
from passnet_common.record import CapturedGraph

# Failures that come from tracing data-dependent values as symbols (unbacked SymInts from
# ``.item()`` / ``.tolist()`` with ``capture_scalar_outputs``, or from ``nonzero`` & co.
# with ``capture_dynamic_output_shape_ops``) rather than from the program: a runtime
# assertion Dynamo inserted ("u0 >= 2" for the box count of a detection head) that one
# execution's values break -- on random weights a nonzero() may return fewer rows than the
# traced code assumed --, or a branch/reshape that needs the symbol's value at trace time
# (``GuardOnDataDependentSymNode``: the M-RoPE position ids of Qwen2/3-VL computed from
# ``image_grid_thw.tolist()``). Eager code handles both; a graph break at the op does too.
RUNTIME_ASSERT_MARK = "Runtime assertion failed for expression"


DATA_DEPENDENT_MARKS = (
    RUNTIME_ASSERT_MARK,
    "Could not guard on data-dependent expression",
    "Could not extract specialized integer from data-dependent expression",
)


DATA_DEPENDENT_TYPES = ("GuardOnDataDependentSymNode", "DataDependentOutputException")


# The settings turned off, one more per retry, after a data-dependent failure.
RETRY_LADDER = ("capture_dynamic_output_shape_ops", "capture_scalar_outputs")


def _exception_chain(exc: BaseException | None, limit: int = 8):
    seen = 0
    while exc is not None and seen < limit:
        yield exc
        exc = exc.__cause__ or exc.__context__
        seen += 1


def is_runtime_assert_failure(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) is a failed Dynamo runtime
    assertion on an unbacked symbol (:data:`RUNTIME_ASSERT_MARK`)."""
    return any(RUNTIME_ASSERT_MARK in str(e) for e in _exception_chain(exc))


def is_data_dependent_failure(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) comes from tracing a
    data-dependent value as a symbol: a failed runtime assertion on an unbacked symbol or
    a guard / specialisation on one (:data:`DATA_DEPENDENT_MARKS`,
    :data:`DATA_DEPENDENT_TYPES`)."""
    return any(type(e).__name__ in DATA_DEPENDENT_TYPES or any(m in str(e) for m in DATA_DEPENDENT_MARKS)
               for e in _exception_chain(exc))


def capture_with_retry(model, args, kwargs, settings: dict, **kw) -> tuple[list[CapturedGraph], dict]:
    """:func:`extract.capture.dynamo.dynamo_capture` with the general retry rule for data-dependent values.

    When the capture fails in a way :func:`is_data_dependent_failure` recognises, the
    model is captured again with the next setting of :data:`RETRY_LADDER` that is still on
    turned off: first ``capture_dynamic_output_shape_ops`` (Dynamo then breaks the graph at
    ``nonzero`` & co.), then ``capture_scalar_outputs`` (a break at ``.item()`` /
    ``.tolist()``); the broken-out ops run eagerly, which is faithful for any values. The
    settings actually used are returned, with ``retry: {"changed": {...}, "reason": ...,
    "reasons": [...]}`` when a retry happened (``reason``: the first failure's first line).
    A capture that succeeds but runs frames eagerly is taken once more on the same model
    (one-time initialisation in a first call); the second capture replaces it only when it
    is complete, recorded as ``second_call: {"reason": <the first's incompleteness>}``.

    Returns:
        (graphs, settings used).

    Raises:
        Whatever the last capture raised (a failure of another kind is not retried).
    """
    current = dict(settings)
    changed: dict = {}
    reasons: list[str] = []
    while True:
        try:
            graphs = backend.dynamo_capture(model, args, kwargs, settings={k: current[k] for k in backend.DYNAMO_DEFAULTS}, **kw)
            break
        except Exception as exc:
            step = next((k for k in RETRY_LADDER if current.get(k)), None)
            if step is None or not is_data_dependent_failure(exc):
                raise
            reasons.append(first_line(str(exc)))
            current[step] = False
            changed[step] = False
    used = dict(current)
    if changed:
        used["retry"] = {"changed": changed, "reason": reasons[0], "reasons": reasons}
    first = backend.dynamo_capture.last_completeness
    if first is not None and not first.complete and first.eager_frames and graphs:
        # One-time initialisation on a model's first call can run frames eagerly that a
        # second call never enters (transformers installs its output-capturing hooks under a
        # threading.Lock, which Dynamo cannot enter, on the first forward that requests
        # hidden states: Wav2Vec2 with use_weighted_layer_sum). Capture the second call;
        # keep it only when it is complete.
        try:
            again = backend.dynamo_capture(model, args, kwargs, settings={k: current[k] for k in backend.DYNAMO_DEFAULTS}, **kw)
        except Exception:  # noqa: BLE001 - the first capture stands
            again = None
        second = backend.dynamo_capture.last_completeness
        if again and second is not None and second.complete:
            used["second_call"] = {"reason": first.reason}
            return again, used
        backend.dynamo_capture.last_completeness = first
    return graphs, used


# The message PyTorch gives when eager code (between graphs, or a compiled graph run on
# the meta inputs) needs a value of a meta tensor.
META_VALUE_MARK = "cannot be called on meta tensors"


def meta_capture(model, args, kwargs, settings: dict, **kw) -> tuple[list[CapturedGraph], dict]:
    """:func:`capture_with_retry` of a model whose parameters and inputs are meta tensors.

    Meta tensors have shapes but no values, so the capture runs with
    :func:`meta_tensor_constants` and with ``meta_nonzero_assume_all_nonzero`` (PyTorch's
    own switch: ``nonzero`` of a meta tensor counts every element, so a compiled graph with
    a data-dependent ``nonzero`` -- MoE expert dispatch, X-MOD's language adapters -- runs
    on meta; the traced graph is the same). When value checks still need a value
    (:data:`META_VALUE_MARK`: transformers' ``torch_compilable_check`` formats a tensor
    into its message after a graph break), the capture is taken once more with those
    checks off (``TRANSFORMERS_DISABLE_TORCH_CHECK=1``, transformers' documented switch;
    they are assertions, not compute), recorded as ``meta_retry``.

    Raises:
        Whatever the last capture raised.
    """
    with meta_tensor_constants(), fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        try:
            return capture_with_retry(model, args, kwargs, settings, **kw)
        except Exception as exc:
            if META_VALUE_MARK not in str(exc) or os.environ.get("TRANSFORMERS_DISABLE_TORCH_CHECK") == "1":
                raise
            reason = first_line(str(exc))
        os.environ["TRANSFORMERS_DISABLE_TORCH_CHECK"] = "1"
        try:
            graphs, used = capture_with_retry(model, args, kwargs, settings, **kw)
        finally:
            os.environ.pop("TRANSFORMERS_DISABLE_TORCH_CHECK", None)
    used["meta_retry"] = {"transformers_torch_checks": False, "reason": reason}
    return graphs, used
