"""How a model becomes graphs.

``build`` (true size on meta, real fallback at reduced depth) -> ``synth`` / ``inputs`` /
``multimodal`` (example inputs from what the model declares) -> ``dynamo`` (the TorchDynamo
backend that receives every graph, breaks included) with ``completeness`` (did every frame
become a graph) and ``retry`` (the ladder for data-dependent failures) -> ``row``
(:func:`capture_row`, one catalog row). The graph record and its statistics are the core's
(:mod:`passnet_common.record`). Public entry points are handed on here.
"""

from extract.capture.dynamo import DYNAMO_DEFAULTS, dynamo_capture, dynamo_settings
from extract.capture.row import CaptureResult, capture_row

__all__ = ["DYNAMO_DEFAULTS", "CaptureResult", "capture_row", "dynamo_capture", "dynamo_settings"]
