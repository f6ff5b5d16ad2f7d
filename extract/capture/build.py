"""Building a model at its true size without weights.

Models are built on the meta device first (``with torch.device("meta")``), so a full-size
config (e.g. 70B parameters) is traced without allocating weights; tensors made by
constructors that ignore the device context are caught by :class:`_LargeOnMeta` and
:func:`meta_tensor_constants`. The real-tensor fallback builds transformers configs with their
depth reduced (:func:`reduce_depth`, ``capture.fallback_layers`` layers) and timm/torchvision
models at their true size. ``trust_remote_code`` is never used (:class:`TrustRemoteCodeRefused`).
"""

from __future__ import annotations

import inspect
import json
import math
from contextlib import contextmanager

import torch

from extract.capture import config_reads
from extract.capture.inputs import hf_inputs, vision_inputs
from extract.config import CaptureConfig, capture_config
from passnet_common.record import buffer_stats

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


def hf_config(config: dict):
    """A transformers ``PretrainedConfig`` of a catalog config dict (its ``model_type``'s config
    class; ``_config_error*`` keys dropped; ``use_cache`` off on the config, its text config and
    its decoder)."""
    from transformers import AutoConfig  # noqa: PLC0415  (fork: the parent preloads only its rows' libraries before forking (preload_libraries))

    cfg_cls = type(AutoConfig.for_model(config["model_type"]))
    clean = {k: v for k, v in config.items() if not k.startswith("_config_error")}
    cfg = cfg_cls.from_dict(clean)
    for sub in (cfg, getattr(cfg, "text_config", None), getattr(cfg, "decoder", None)):
        if sub is not None and hasattr(sub, "use_cache"):
            sub.use_cache = False
    return cfg


def build_model(row: dict, device: str, capture: CaptureConfig | dict, reduced: bool = False):
    """Build the model of a catalog row on ``device`` and synthesise its inputs.

    Returns:
        (model, args, kwargs, spec).

    Raises:
        TrustRemoteCodeRefused: the row needs custom code.
        ValueError: the config could not be built (its error is in the message).
        extract.capture.synth.UnsupportedInput: no rule for a required input.
    """
    config = json.loads(row["config_json"]) if row.get("config_json") else {}
    lib = row["library"]
    if row.get("trust_remote_code"):
        raise TrustRemoteCodeRefused(f"{row['model_id']}: config requires trust_remote_code; not executed")
    if lib == "transformers":
        import transformers  # noqa: PLC0415  (fork: the parent preloads only its rows' libraries before forking (preload_libraries))

        if "_config_error" in config:
            raise ValueError(f"{row['model_id']}: default config cannot be built: {config['_config_error']}")
        if reduced:
            config = reduce_depth(config, capture_config(capture).fallback_layers)
        cfg = hf_config(config)
        config_reads.track(cfg)  # what building the model and its inputs read (when a recorder is current)
        arch = row.get("architecture")
        with config_reads.active():
            with init_on_device(device):
                if arch:
                    model = getattr(transformers, arch)._from_config(cfg)
                else:
                    model = transformers.AutoModel.from_config(cfg)
            model.eval()
            kwargs, spec = hf_inputs(model, cfg, capture, device)
        return model, (), kwargs, spec
    if lib == "timm":
        import timm  # noqa: PLC0415  (fork: the parent preloads only its rows' libraries before forking (preload_libraries))

        with init_on_device(device):
            model = timm.create_model(config["name"], pretrained=False)
        model.eval()
        args, spec = vision_inputs(config, capture, device)
        return model, args, {}, spec
    if lib == "torchvision":
        import torchvision  # noqa: PLC0415  (fork: the parent preloads only its rows' libraries before forking (preload_libraries))


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
