"""One catalog row -> its graphs: build (meta first, real fallback), inputs, capture.

:func:`capture_row` is what the isolated worker runs for a model: it builds the model
(:mod:`extract.capture.build`), synthesises its inputs (:mod:`extract.capture.inputs`),
captures on meta with the retry ladder (:mod:`extract.capture.retry`) and falls back to real
CPU tensors when the meta capture fails. The mode used and the reason for a fallback are
recorded in :class:`CaptureResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from extract.capture import build, retry
from extract.capture import dynamo as backend
from extract.capture.completeness import Completeness
from extract.config import CaptureConfig, capture_config
from passnet_common.record import CapturedGraph


@dataclass
class CaptureResult:
    """All graphs of one model plus how they were obtained."""

    graphs: list[CapturedGraph]
    mode: str
    fallback_reason: str | None
    input_spec: list[dict]
    param_count: int
    completeness: "Completeness | None" = None
    dynamo: dict = field(default_factory=dict)


def capture_row(row: dict, capture: CaptureConfig | dict) -> CaptureResult:
    """Capture every graph of one catalog row: meta device first, real tensors on failure.

    On meta, parameters are meta and buffers real until the trace (their statistics are
    kept, see :func:`extract.capture.build.buffers_to_meta`). In real mode each graph's recorded output
    shapes/dtypes are checked against its execution. Completeness (Dynamo's frame
    counters) is in ``CaptureResult.completeness``; the Dynamo settings used in
    ``CaptureResult.dynamo``. ``capture``: the ``extract.capture`` params (config or mapping).

    Raises the real-tensor attempt's exception when both fail (the caller records its class).
    """
    capture = capture_config(capture)
    settings = backend.dynamo_settings(capture)
    torch.manual_seed(0)
    fallback_reason = None
    if capture.meta:
        try:
            model, args, kwargs, spec = build.build_model(row, "meta", capture)
            build.params_to_meta(model)
            n_params = sum(p.numel() for p in model.parameters())
            binfo = build.buffers_to_meta(model)
            graphs, used = retry.meta_capture(model, args, kwargs, settings, buffer_info=binfo)
            return CaptureResult(graphs, "meta", None, spec, n_params, backend.dynamo_capture.last_completeness, used)
        except build.TrustRemoteCodeRefused:
            raise
        except Exception as exc:  # noqa: BLE001 - the fallback records it
            fallback_reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    reduced = row["library"] == "transformers"
    try:
        model, args, kwargs, spec = build.build_model(row, "cpu", capture, reduced=reduced)
        n_params = sum(p.numel() for p in model.parameters())
        graphs, used = retry.capture_with_retry(model, args, kwargs, settings, check_outputs=True)
    except Exception as exc:
        if fallback_reason:  # both attempts failed: the record names the meta failure too
            exc.add_note(f"(the meta-device attempt failed first: {fallback_reason})")
        raise
    return CaptureResult(graphs, "real_reduced" if reduced else "real", fallback_reason, spec, n_params,
                         backend.dynamo_capture.last_completeness, used)
