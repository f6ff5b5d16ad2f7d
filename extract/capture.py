"""Graph capture with a TorchDynamo custom backend (the GraphNet protocol).

``torch.compile(model, backend=...)`` hands the backend one ``(GraphModule,
example_inputs)`` pair per graph; when Dynamo breaks the graph every piece is kept, in
compile order, with the reason Dynamo gave (``gm.compile_subgraph_reason``).

Models are built on the meta device first (``with torch.device("meta")``), so a full-size
config (e.g. 70B parameters) is traced without allocating weights. Architectures that
cannot run on meta tensors (data-dependent ops such as ``.item()``, ``nonzero``) fall back
to real CPU tensors: transformers configs with their depth reduced to
``capture.fallback_layers`` layers, timm/torchvision models at their true size. The mode
used and the reason for a fallback are recorded.
"""

from __future__ import annotations

import json
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from passnet_common.record import CapturedGraph, buffer_stats, describe_graph, tensor_stats  # noqa: F401
from extract.inputs import hf_inputs, vision_inputs

# Config keys that count layers, capped in the reduced-depth fallback.
DEPTH_KEYS = (
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_encoder_layers", "num_decoder_layers", "depth", "num_blocks",
)
# Per-layer lists whose length must follow the layer count.
PER_LAYER_LIST_KEYS = ("layer_types", "mlp_only_layers", "sliding_window_pattern_list", "block_types",
                       "attention_layers", "mlp_layer_types")


class TrustRemoteCodeRefused(RuntimeError):
    """The config needs custom code from its repository; it is never executed."""


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


# Dynamo settings of a capture (params ``extract.capture.dynamo``). Chosen for the fewest
# graph breaks that still capture faithfully: ``.item()`` / ``tolist()`` and ops with
# data-dependent output shapes (``nonzero``) are traced as unbacked symbols instead of
# breaking the graph; the recompile limit is high enough that a block called with many
# different Python ints (one frame per value) is captured whole.
DYNAMO_DEFAULTS = {
    "capture_scalar_outputs": True,
    "capture_dynamic_output_shape_ops": True,
    "recompile_limit": 64,
    # calls of ``logging.Logger`` methods (``logger.warning(...)`` in a forward, e.g.
    # BigBird's fallback notice) are no-ops to Dynamo (``ignore_logging_functions``)
    # instead of frames that run eagerly: they compute nothing a graph holds.
    "ignore_logging_functions": True,
}

# The logger methods ignored with ``ignore_logging_functions`` (transformers adds
# ``warning_once`` / ``info_once`` to ``logging.Logger``).
LOGGER_METHODS = ("debug", "info", "warning", "warn", "error", "warning_once", "info_once")


def _logger_methods() -> set:
    import logging

    return {getattr(logging.Logger, m) for m in LOGGER_METHODS if callable(getattr(logging.Logger, m, None))}


def dynamo_settings(capture: dict) -> dict:
    """The Dynamo config of a capture: :data:`DYNAMO_DEFAULTS` updated by ``capture["dynamo"]``.

    Raises:
        ValueError: an unknown setting name.
    """
    given = dict(capture.get("dynamo") or {})
    unknown = sorted(set(given) - set(DYNAMO_DEFAULTS))
    if unknown:
        raise ValueError(f"extract.capture.dynamo: unknown setting(s) {unknown}; known: {sorted(DYNAMO_DEFAULTS)}")
    return {**DYNAMO_DEFAULTS, **given}


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
    """

    complete: bool
    reason: str | None
    eager_frames: int
    recompile_limit_hits: int
    frames_total: int
    frames_ok: int


class _LogCollector:
    """Collects Dynamo's WARNING+ log records during a capture instead of printing them."""

    def __init__(self):
        import logging

        self.records: list[str] = []
        self.handler = logging.Handler(logging.WARNING)
        self.handler.emit = lambda rec: self.records.append(rec.getMessage() if rec.args else str(rec.msg))

    @contextmanager
    def active(self):
        import logging

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


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")[:200]


def assess_completeness(counters: dict, log_records: list[str], num_graphs: int, limit: int) -> Completeness:
    """Turn Dynamo's frame counters and log records into a :class:`Completeness`."""
    frames = counters.get("frames", {})
    total, ok = int(frames.get("total", 0)), int(frames.get("ok", 0))
    hits = [r for r in log_records if "recompile_limit" in r or "cache_size_limit" in r]
    eager = max(0, total - ok)
    reasons = []
    if num_graphs == 0:
        reasons.append("no graph captured")
    if hits:
        reasons.append(f"{len(hits)} frame(s) hit the recompile limit ({limit}) and ran eagerly: {_first_line(hits[0])}")
    if eager:
        why = [_first_line(k) for k in counters.get("unimplemented", {})]
        skipped = [r for r in log_records if "skip" in r.lower()]
        detail = why[0] if why else (_first_line(skipped[0]) if skipped else "not converted")
        reasons.append(f"{eager} of {total} frame(s) ran eagerly ({detail})")
    return Completeness(not reasons, "; ".join(reasons) or None, eager, len(hits), total, ok)


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
                   buffer_info: dict[int, dict] | None = None) -> list[CapturedGraph]:
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

    Returns:
        Every graph Dynamo produced, in compile order; completeness of the run is in
        :attr:`dynamo_capture.last_completeness` (a :class:`Completeness`). Exceptions
        raised by the model (in traced or eager parts) propagate.
    """
    import torch._dynamo
    from torch._dynamo.utils import counters

    kwargs = kwargs or {}
    settings = dynamo_settings({"dynamo": settings or {}})
    torch._dynamo.reset()
    counters.clear()
    param_ids = {id(p) for p in model.parameters()}
    buffer_ids = {id(b) for b in model.buffers()}
    graphs: list[CapturedGraph] = []

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
        if not check_outputs:
            return gm.forward
        recorded = _recorded_outputs(gm)
        checked = [False]

        def run(*a):
            out = gm.forward(*a)
            if not checked[0]:
                checked[0] = True
                g.output_mismatch = compare_outputs(recorded, out)
            return out

        return run

    logs = _LogCollector()
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
    dynamo_capture.last_completeness = assess_completeness(snapshot, logs.records, len(graphs),
                                                           int(settings["recompile_limit"]))
    torch._dynamo.reset()
    return graphs


dynamo_capture.last_completeness = None


def reduce_depth(config: dict, layers: int) -> dict:
    """Copy of an HF config dict with every layer count capped at ``layers`` (also in
    nested sub-configs), and what is indexed by layer made to match:

    * per-layer lists (:data:`PER_LAYER_LIST_KEYS`) truncated;
    * ``per_layer_config`` (heterogeneous layers, Gemma 4) keeps the entries of the kept
      layers only (its keys must be layer indices below the layer count);
    * a backbone whose ``stage_names`` has one stage per layer (``stem``, ``stage1`` ..,
      ViTPose): ``stage_names`` truncated, and ``out_indices``/``out_features`` that name a
      removed stage moved to the last kept one (duplicates dropped), so the reduced
      backbone still returns a feature map where the full one did.
    """
    out = json.loads(json.dumps(config, allow_nan=True))

    def visit(d: dict):
        cut = None
        for k in list(d):
            v = d[k]
            if isinstance(v, dict) and k != "per_layer_config":
                visit(v)
            elif k in DEPTH_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > layers:
                d[k] = layers
                cut = cut or v
        for k in PER_LAYER_LIST_KEYS:
            if isinstance(d.get(k), list):
                d[k] = d[k][:layers]
        plc = d.get("per_layer_config")
        if isinstance(plc, dict) and cut:
            d["per_layer_config"] = {k: v for k, v in plc.items() if str(k).lstrip("-").isdigit() and int(k) < layers}
        stages = d.get("stage_names")
        if cut and isinstance(stages, list) and len(stages) == cut + 1:
            d["stage_names"] = stages[: layers + 1]
            idx = d.get("out_indices")
            if not isinstance(idx, list) and isinstance(d.get("out_features"), list):
                idx = [stages.index(f) for f in d["out_features"] if f in stages]
            if isinstance(idx, list) and all(isinstance(i, int) for i in idx):
                kept = sorted({min(i % (cut + 1), layers) for i in idx})
                d["out_indices"] = kept
                d["out_features"] = [d["stage_names"][i] for i in kept]

    visit(out)
    return out


# Tensors a builder creates with more elements than this are born on meta even when they
# are not parameters (a fused 77 GB expert weight must never be allocated, not even as
# untouched memory); smaller ones are real until registered as parameters.
LARGE_NUMEL = 1 << 22


def _size_numel(args: tuple, kwargs: dict) -> int | None:
    size = kwargs.get("size")
    if size is None:
        size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)) else args
    try:
        return math.prod(int(d) for d in size)
    except (TypeError, ValueError):
        return None


class _LargeOnMeta(torch.overrides.TorchFunctionMode):
    """Factory calls (``torch.empty``/``zeros``/``ones``/``rand*``/``full``) without an
    explicit device and above :data:`LARGE_NUMEL` elements create meta tensors."""

    SIZED = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _LargeOnMeta.SIZED is None:
            _LargeOnMeta.SIZED = {torch.empty, torch.zeros, torch.ones, torch.rand, torch.randn}
        if kwargs.get("device") is None:
            if func in _LargeOnMeta.SIZED:
                n = _size_numel(args, kwargs)
            elif func is torch.full and args:
                n = _size_numel((args[0],), {})
            else:
                n = None
            if n is not None and n > LARGE_NUMEL:
                kwargs["device"] = "meta"
        return func(*args, **kwargs)


@contextmanager
def init_on_device(device: str):
    """Where a model is built. ``"meta"``: parameters go to the meta device as they are
    registered (``nn.Module.register_parameter`` patched, as
    ``accelerate.init_empty_weights(include_buffers=False)`` does) and large tensors are
    created on meta directly (:class:`_LargeOnMeta`), while small buffers and the plain
    tensors a builder computes with (e.g. torchvision's RegNet widths computed with
    ``torch.arange(...).tolist()``, which fail under a global ``torch.device("meta")``)
    stay real. Parameters made with legacy constructors (``torch.Tensor(n)``) are moved
    too, so a model is built at true size without allocating weights. Other devices:
    ``torch.device(device)``."""
    if device != "meta":
        with torch.device(device):
            yield
        return
    orig = torch.nn.Module.register_parameter

    def register_parameter(module, name, param):
        orig(module, name, param)
        p = module._parameters.get(name)
        if p is not None and p.device.type != "meta":
            extra = {k: v for k, v in p.__dict__.items()}
            new = type(p)(p.to("meta"), requires_grad=p.requires_grad)
            new.__dict__.update(extra)
            module._parameters[name] = new

    torch.nn.Module.register_parameter = register_parameter
    try:
        with _LargeOnMeta():
            yield
    finally:
        torch.nn.Module.register_parameter = orig


@contextmanager
def meta_tensor_constants():
    """Make ``torch.tensor(data, device="meta")`` traceable: under Dynamo's fake mode that
    call returns a plain (non-fake) meta tensor -- the tensor constructor bypasses the
    dispatch mode for the meta device --, and the first op mixing it with a fake tensor
    fails ("Please convert all Tensors to FakeTensors first"; Qwen3.5/Cosmos3 vision
    towers build ``torch.tensor([merge_size], device=grid.device)``). Inside this context
    such a call builds the constant on the CPU and moves it with ``.to("meta")``, which
    fake mode tracks; every other call is unchanged. Only the meta capture needs it."""
    orig = torch.tensor

    def tensor(data, *args, **kwargs):
        device = kwargs.get("device")
        if device is not None and torch.device(device).type == "meta":
            kwargs = {k: v for k, v in kwargs.items() if k != "device"}
            return orig(data, *args, **kwargs).to("meta")
        return orig(data, *args, **kwargs)

    torch.tensor = tensor
    try:
        yield
    finally:
        torch.tensor = orig


def params_to_meta(model: torch.nn.Module) -> int:
    """Move every parameter still holding data to meta (those a builder assigned without
    ``register_parameter``); returns how many moved."""
    moved = 0
    for mod in model.modules():
        for name, p in list(mod._parameters.items()):
            if p is not None and p.device.type != "meta":
                mod._parameters[name] = type(p)(p.detach().to("meta"), requires_grad=p.requires_grad)
                moved += 1
    return moved


def buffers_to_meta(model: torch.nn.Module, with_stats: bool = True) -> dict[int, dict]:
    """Record the statistics of each real buffer, then move every buffer to meta (Dynamo's
    fake tensors cannot mix real CPU and meta tensors).

    Returns:
        ``id(meta buffer) -> {"name": qualified name, "stats": buffer_stats(...)}``.
    """
    info: dict[int, dict] = {}
    for mod_name, mod in model.named_modules():
        for name, b in list(mod._buffers.items()):
            if b is None:
                continue
            stats = buffer_stats(b) if with_stats and b.device.type != "meta" else None
            mb = b if b.device.type == "meta" else b.to("meta")
            mod._buffers[name] = mb
            info[id(mb)] = {"name": f"{mod_name}.{name}" if mod_name else name, "stats": stats}
    return info


def _hf_config(config: dict):
    from transformers import AutoConfig

    cfg_cls = type(AutoConfig.for_model(config["model_type"]))
    clean = {k: v for k, v in config.items() if not k.startswith("_config_error")}
    cfg = cfg_cls.from_dict(clean)
    for sub in (cfg, getattr(cfg, "text_config", None), getattr(cfg, "decoder", None)):
        if sub is not None and hasattr(sub, "use_cache"):
            sub.use_cache = False
    return cfg


def build_model(row: dict, device: str, capture: dict, reduced: bool = False):
    """Build the model of a catalog row on ``device`` and synthesise its inputs.

    Returns:
        (model, args, kwargs, spec).

    Raises:
        TrustRemoteCodeRefused: the row needs custom code.
        ValueError: the config could not be built (its error is in the message).
        extract.inputs.UnsupportedInput: no rule for a required input.
    """
    config = json.loads(row["config_json"]) if row.get("config_json") else {}
    lib = row["library"]
    if row.get("trust_remote_code"):
        raise TrustRemoteCodeRefused(f"{row['model_id']}: config requires trust_remote_code; not executed")
    if lib == "transformers":
        import transformers

        if "_config_error" in config:
            raise ValueError(f"{row['model_id']}: default config cannot be built: {config['_config_error']}")
        if reduced:
            config = reduce_depth(config, int(capture.get("fallback_layers", 2)))
        cfg = _hf_config(config)
        arch = row.get("architecture")
        with init_on_device(device):
            if arch:
                model = getattr(transformers, arch)._from_config(cfg)
            else:
                model = transformers.AutoModel.from_config(cfg)
        model.eval()
        kwargs, spec = hf_inputs(model, cfg, capture, device)
        return model, (), kwargs, spec
    if lib == "timm":
        import timm

        with init_on_device(device):
            model = timm.create_model(config["name"], pretrained=False)
        model.eval()
        args, spec = vision_inputs(config, capture, device)
        return model, args, {}, spec
    if lib == "torchvision":
        import torchvision

        import inspect

        builder = torchvision.models.get_model_builder(config["name"])
        accepted = inspect.signature(builder).parameters
        extra = {}
        if config["name"].startswith("quantized_"):
            extra["quantize"] = False
        if "weights_backbone" in accepted:
            extra["weights_backbone"] = None  # never download backbone weights
        with init_on_device(device):
            model = torchvision.models.get_model(config["name"], weights=None, **extra)
        model.eval()
        args, spec = vision_inputs(config, capture, device)
        return model, args, {}, spec
    raise ValueError(f"{row['model_id']}: unknown library {lib!r}")


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
    """:func:`dynamo_capture` with the general retry rule for data-dependent values.

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
            graphs = dynamo_capture(model, args, kwargs, settings={k: current[k] for k in DYNAMO_DEFAULTS}, **kw)
            break
        except Exception as exc:
            step = next((k for k in RETRY_LADDER if current.get(k)), None)
            if step is None or not is_data_dependent_failure(exc):
                raise
            reasons.append(_first_line(str(exc)))
            current[step] = False
            changed[step] = False
    used = dict(current)
    if changed:
        used["retry"] = {"changed": changed, "reason": reasons[0], "reasons": reasons}
    first = dynamo_capture.last_completeness
    if first is not None and not first.complete and first.eager_frames and graphs:
        # One-time initialisation on a model's first call can run frames eagerly that a
        # second call never enters (transformers installs its output-capturing hooks under a
        # threading.Lock, which Dynamo cannot enter, on the first forward that requests
        # hidden states: Wav2Vec2 with use_weighted_layer_sum). Capture the second call;
        # keep it only when it is complete.
        try:
            again = dynamo_capture(model, args, kwargs, settings={k: current[k] for k in DYNAMO_DEFAULTS}, **kw)
        except Exception:  # noqa: BLE001 - the first capture stands
            again = None
        second = dynamo_capture.last_completeness
        if again and second is not None and second.complete:
            used["second_call"] = {"reason": first.reason}
            return again, used
        dynamo_capture.last_completeness = first
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
    import torch.fx.experimental._config as fx_config

    with meta_tensor_constants(), fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        try:
            return capture_with_retry(model, args, kwargs, settings, **kw)
        except Exception as exc:
            if META_VALUE_MARK not in str(exc) or os.environ.get("TRANSFORMERS_DISABLE_TORCH_CHECK") == "1":
                raise
            reason = _first_line(str(exc))
        os.environ["TRANSFORMERS_DISABLE_TORCH_CHECK"] = "1"
        try:
            graphs, used = capture_with_retry(model, args, kwargs, settings, **kw)
        finally:
            os.environ.pop("TRANSFORMERS_DISABLE_TORCH_CHECK", None)
    used["meta_retry"] = {"transformers_torch_checks": False, "reason": reason}
    return graphs, used


def capture_row(row: dict, capture: dict) -> CaptureResult:
    """Capture every graph of one catalog row: meta device first, real tensors on failure.

    On meta, parameters are meta and buffers real until the trace (their statistics are
    kept, see :func:`buffers_to_meta`). In real mode each graph's recorded output
    shapes/dtypes are checked against its execution. Completeness (Dynamo's frame
    counters) is in ``CaptureResult.completeness``; the Dynamo settings used in
    ``CaptureResult.dynamo``.

    Raises the real-tensor attempt's exception when both fail (the caller records its class).
    """
    settings = dynamo_settings(capture)
    torch.manual_seed(0)
    fallback_reason = None
    if capture.get("meta", True):
        try:
            model, args, kwargs, spec = build_model(row, "meta", capture)
            params_to_meta(model)
            n_params = sum(p.numel() for p in model.parameters())
            binfo = buffers_to_meta(model)
            graphs, used = meta_capture(model, args, kwargs, settings, buffer_info=binfo)
            return CaptureResult(graphs, "meta", None, spec, n_params, dynamo_capture.last_completeness, used)
        except TrustRemoteCodeRefused:
            raise
        except Exception as exc:  # noqa: BLE001 - the fallback records it
            fallback_reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    reduced = row["library"] == "transformers"
    try:
        model, args, kwargs, spec = build_model(row, "cpu", capture, reduced=reduced)
        n_params = sum(p.numel() for p in model.parameters())
        graphs, used = capture_with_retry(model, args, kwargs, settings, check_outputs=True)
    except Exception as exc:
        if fallback_reason:  # both attempts failed: the record names the meta failure too
            exc.add_note(f"(the meta-device attempt failed first: {fallback_reason})")
        raise
    return CaptureResult(graphs, "real_reduced" if reduced else "real", fallback_reason, spec, n_params,
                         dynamo_capture.last_completeness, used)
