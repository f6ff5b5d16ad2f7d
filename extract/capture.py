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
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from passnet_common.canonical import CANONICAL_VERSION, canonicalize
from extract.inputs import hf_inputs, vision_inputs

# Config keys that count layers, capped in the reduced-depth fallback.
DEPTH_KEYS = (
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_encoder_layers", "num_decoder_layers", "depth", "num_blocks",
)
# Per-layer lists whose length must follow the layer count.
PER_LAYER_LIST_KEYS = ("layer_types", "mlp_only_layers", "sliding_window_pattern_list", "block_types")


class TrustRemoteCodeRefused(RuntimeError):
    """The config needs custom code from its repository; it is never executed."""


@dataclass
class CapturedGraph:
    """One graph handed to the backend.

    Attributes:
        gm: the GraphModule (parameters lifted to placeholders).
        kinds: kind of each placeholder: ``input``, ``parameter`` or ``buffer``.
        example_inputs: the tensors Dynamo passed (meta tensors in meta mode).
        break_reason: Dynamo's reason for ending this graph, None at a normal return.
    """

    gm: fx.GraphModule
    kinds: list[str]
    example_inputs: list[Any]
    break_reason: str | None


@dataclass
class CaptureResult:
    """All graphs of one model plus how they were obtained."""

    graphs: list[CapturedGraph]
    mode: str
    fallback_reason: str | None
    input_spec: list[dict]
    param_count: int


def dynamo_capture(model: torch.nn.Module, args: tuple = (), kwargs: dict | None = None) -> list[CapturedGraph]:
    """Run ``model(*args, **kwargs)`` under ``torch.compile`` with a collecting backend.

    Returns every graph Dynamo produced, in compile order. Exceptions raised by the model
    (in traced or eager parts) propagate.
    """
    import torch._dynamo

    kwargs = kwargs or {}
    torch._dynamo.reset()
    param_ids = {id(p) for p in model.parameters()}
    buffer_ids = {id(b) for b in model.buffers()}
    graphs: list[CapturedGraph] = []

    def backend(gm: fx.GraphModule, example_inputs):
        kinds = []
        for t, node in zip(example_inputs, [n for n in gm.graph.nodes if n.op == "placeholder"]):
            if id(t) in param_ids:
                kinds.append("parameter")
            elif id(t) in buffer_ids:
                kinds.append("buffer")
            elif "_parameters_" in node.name:
                kinds.append("parameter")
            elif "_buffers_" in node.name:
                kinds.append("buffer")
            else:
                kinds.append("input")
        reason = getattr(gm, "compile_subgraph_reason", None)
        text = None
        if reason is not None and getattr(reason, "graph_break", False):
            text = str(getattr(reason, "reason", reason))[:500]
        graphs.append(CapturedGraph(gm, kinds, list(example_inputs), text))
        return gm.forward

    compiled = torch.compile(model, backend=backend, dynamic=False, fullgraph=False)
    with torch.no_grad():
        compiled(*args, **kwargs)
    return graphs


def reduce_depth(config: dict, layers: int) -> dict:
    """Copy of an HF config dict with every layer count capped at ``layers`` (also in
    nested sub-configs) and per-layer lists truncated to match."""
    out = json.loads(json.dumps(config, allow_nan=True))

    def visit(d: dict):
        for k in list(d):
            v = d[k]
            if isinstance(v, dict):
                visit(v)
            elif k in DEPTH_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > layers:
                d[k] = layers
        for k in PER_LAYER_LIST_KEYS:
            if isinstance(d.get(k), list):
                d[k] = d[k][:layers]

    visit(out)
    return out


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
        with torch.device(device):
            if arch:
                model = getattr(transformers, arch)._from_config(cfg)
            else:
                model = transformers.AutoModel.from_config(cfg)
        model.eval()
        kwargs, spec = hf_inputs(model, cfg, capture, device)
        return model, (), kwargs, spec
    if lib == "timm":
        import timm

        with torch.device(device):
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
        with torch.device(device):
            model = torchvision.models.get_model(config["name"], weights=None, **extra)
        model.eval()
        args, spec = vision_inputs(config, capture, device)
        return model, args, {}, spec
    raise ValueError(f"{row['model_id']}: unknown library {lib!r}")


def capture_row(row: dict, capture: dict) -> CaptureResult:
    """Capture every graph of one catalog row: meta device first, real tensors on failure.

    Raises the real-tensor attempt's exception when both fail (the caller records its class).
    """
    torch.manual_seed(0)
    fallback_reason = None
    if capture.get("meta", True):
        try:
            model, args, kwargs, spec = build_model(row, "meta", capture)
            n_params = sum(p.numel() for p in model.parameters())
            graphs = dynamo_capture(model, args, kwargs)
            return CaptureResult(graphs, "meta", None, spec, n_params)
        except TrustRemoteCodeRefused:
            raise
        except Exception as exc:  # noqa: BLE001 - the fallback records it
            fallback_reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    reduced = row["library"] == "transformers"
    model, args, kwargs, spec = build_model(row, "cpu", capture, reduced=reduced)
    n_params = sum(p.numel() for p in model.parameters())
    graphs = dynamo_capture(model, args, kwargs)
    return CaptureResult(graphs, "real_reduced" if reduced else "real", fallback_reason, spec, n_params)


def tensor_stats(t: Any) -> dict | None:
    """Summary statistics of a real tensor (min, max, mean, std), None on meta/fake.

    ``std`` is None for tensors with fewer than 2 elements (GraphNet recorded NaN there);
    non-finite values are reported as None.
    """
    if not isinstance(t, torch.Tensor) or t.device.type == "meta" or t.numel() == 0:
        return None
    try:
        x = t.detach()
        if x.is_complex():
            return None
        xf = x.double() if x.dtype != torch.bool else x.to(torch.float64)

        def f(v):
            v = float(v)
            return v if math.isfinite(v) else None

        return {
            "min": f(xf.min()), "max": f(xf.max()), "mean": f(xf.mean()),
            "std": f(xf.std()) if x.numel() >= 2 else None,
        }
    except Exception:  # noqa: BLE001 - statistics are optional
        return None


def describe_graph(index: int, g: CapturedGraph, with_stats: bool) -> dict:
    """Canonicalise one captured graph into the JSON record the worker stores.

    The record holds hashes, counts, the canonical node list (see
    :class:`passnet_common.canonical.CanonicalGraph`), readable code and placeholder metadata,
    never tensor values.
    """
    canon = canonicalize(g.gm, g.kinds)
    phs = [n for n in g.gm.graph.nodes if n.op == "placeholder"]
    placeholders = []
    param_bytes = 0
    for pos, (node, kind) in enumerate(zip(phs, g.kinds)):
        t = g.example_inputs[pos] if pos < len(g.example_inputs) else None
        entry = {"position": pos, "name": node.name, "kind": kind}
        if isinstance(t, torch.Tensor):
            entry["shape"] = list(t.shape)
            entry["dtype"] = str(t.dtype).replace("torch.", "")
            if kind != "input":
                param_bytes += t.numel() * t.element_size()
            if with_stats:
                entry["stats"] = tensor_stats(t)
        else:
            entry["python_type"] = type(t).__name__
        placeholders.append(entry)
    ops = sum(1 for n in canon.nodes if n["op"].startswith("call_"))
    return {
        "graph_index": index,
        "graph_hash": canon.graph_hash,
        "structure_hash": canon.structure_hash,
        "wl_hash": canon.wl_hash,
        "canonical_version": CANONICAL_VERSION,
        "num_nodes": len(canon.nodes),
        "num_ops": ops,
        "num_inputs": sum(1 for k in g.kinds if k == "input"),
        "num_params": sum(1 for k in g.kinds if k != "input"),
        "param_bytes": int(param_bytes),
        "break_reason": g.break_reason,
        "nodes": canon.nodes,
        "subgraphs": canon.subgraph_json(),
        "placeholder_permutation": canon.placeholder_order,
        "code": g.gm.print_readable(print_output=False),
        "placeholders": placeholders,
    }
