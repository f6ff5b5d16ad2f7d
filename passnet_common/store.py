"""The graph store: one folder per unique graph, content-addressed by ``graph_hash``.

Layout of ``<store>/<hash[:2]>/<hash>/``:

================== ===========================================================
``graph.json``     canonical node list (:class:`passnet_common.canonical.CanonicalGraph`),
                   enough to rebuild a runnable GraphModule without executing code,
                   with ``subgraphs`` (bodies of higher-order ops) and
                   ``placeholder_permutation`` (see :func:`canonical_extras`)
``model.py``       readable Python of the FX graph (``GraphModule.print_readable``)
``input_meta.json`` placeholders that are real inputs: shape, dtype, value range
``weight_meta.json`` parameter/buffer placeholders: shape, dtype, summary statistics
                   where values were real -- never the values themselves
================== ===========================================================

Inputs and weights are kept in separate files (GraphNet once mixed them in one metadata
file). A folder appears atomically (written under a temporary name, then renamed).

:func:`load_graph` rebuilds the GraphModule from ``graph.json`` by resolving targets
against an allowlist of modules (torch, operator, math, a few builtins); nothing from the
store is ``exec``-ed, so loading a store received from elsewhere runs no foreign code.
"""

from __future__ import annotations

import builtins
import importlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from passnet_common.io import atomic_replace_dir, canonical_json

ALLOWED_PREFIXES = ("torch.", "_operator.", "operator.", "math.")
ALLOWED_BUILTINS = {"getattr", "len", "max", "min", "abs", "int", "float", "bool", "tuple", "list", "range", "slice", "round", "sum", "all", "any", "isinstance"}  # noqa: E501


class UnsafeTarget(ValueError):
    """A stored graph names a call target outside the allowlist."""


def store_path(store: Path, graph_hash: str) -> Path:
    """Folder of ``graph_hash`` in ``store``."""
    return Path(store) / graph_hash[:2] / graph_hash


def write_graph(store: Path, record: dict, input_spec: list[dict] | None = None) -> bool:
    """Write one graph record (from :func:`passnet_common.record.describe_graph`) to the store.

    Returns True when a new folder was created, False when the hash was already stored.
    """
    final = store_path(store, record["graph_hash"])
    if final.exists():
        return False
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{record['graph_hash'][:12]}.", dir=final.parent))
    try:
        graph = {k: record[k] for k in ("graph_hash", "structure_hash", "wl_hash", "canonical_version", "nodes")}
        graph.update(canonical_extras(record))
        (staging / "graph.json").write_text(canonical_json(graph))
        (staging / "model.py").write_text(record["code"])
        phs = record["placeholders"]
        ints = [s for s in (input_spec or []) if s.get("high") is not None]
        (staging / "input_meta.json").write_text(canonical_json({
            "placeholders": [p for p in phs if p["kind"] == "input"],
            "input_spec": input_spec or [],
            "int_high": max((s["high"] for s in ints), default=None),
        }))
        (staging / "weight_meta.json").write_text(canonical_json({"placeholders": [p for p in phs if p["kind"] != "input"]}))
        return atomic_replace_dir(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def canonical_extras(record: dict) -> dict:
    """The parts of ``graph.json`` that canonical version 2 adds: ``subgraphs`` (bodies of
    higher-order ops such as ``torch.cond`` / checkpoint, each with its node list and own
    sub-graphs; a ``get_attr`` node names one by its ``subgraph`` index) and
    ``placeholder_permutation`` (calling position of each placeholder in canonical order:
    the canonical order sorts placeholders by use, the stored graph keeps the calling
    convention of the instance that was stored)."""
    return {"subgraphs": record.get("subgraphs", []),
            "placeholder_permutation": record.get("placeholder_permutation",
                                                  [n["position"] for n in record["nodes"] if n["op"] == "placeholder"])}


TORCH_OP_NAMESPACES = frozenset({
    "aten", "prims", "prim", "higher_order", "quantized", "rngprims", "inductor", "mkldnn", "mkl", "onednn",
    "_c10d_functional", "c10d_functional", "profiler",
})
"""``torch.ops.<namespace>`` namespaces that torch itself registers (no import needed)."""

OP_NAMESPACE_MODULES: dict[str, tuple[str, ...]] = {
    "torchvision": ("torchvision",),
    "transformers": ("transformers.integrations.moe",),
    "transformers_msa": ("transformers.integrations.msa_attention",),
}
"""Trusted ``torch.ops.<namespace>`` -> the modules whose import registers its operators
(``torch.library.custom_op`` / C++ ``TORCH_LIBRARY`` at import time): ``torchvision::nms``,
``roi_align``...; transformers' MoE ``grouped_mm_fallback`` (``transformers/integrations/moe.py``)
and MSA ``sparse_atten``. Only these modules are ever imported for a stored graph, and only
when one of its targets names their namespace; any other namespace is refused
(:class:`UnsafeTarget`), so a stored graph cannot make the loader import code it names.
Standalone task folders carry a copy (``curate/select/task_runner.py``, kept equal by a test)."""


def op_namespace(name: str) -> str | None:
    """``torch.ops.transformers.grouped_mm_fallback`` -> ``transformers``; None for a name
    outside ``torch.ops``."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[0] == "torch" and parts[1] == "ops" else None


def op_modules(names: Any) -> list[str]:
    """Sorted registering modules (:data:`OP_NAMESPACE_MODULES`) that call targets
    ``names`` need imported (empty for torch's own namespaces)."""
    mods: set[str] = set()
    for n in names:
        mods.update(OP_NAMESPACE_MODULES.get(op_namespace(n) or "", ()))
    return sorted(mods)


def resolve_target(name: str) -> Any:
    """The callable behind a stored qualified name, if it is on the allowlist.

    ``torch.ops.<namespace>.*`` targets are allowed for torch's own namespaces
    (:data:`TORCH_OP_NAMESPACES`) and the trusted table :data:`OP_NAMESPACE_MODULES`, whose
    registering module is imported first (e.g. ``transformers.integrations.moe`` for
    ``torch.ops.transformers.grouped_mm_fallback``).

    Raises:
        UnsafeTarget: the name is outside ``torch.*``, ``operator.*``, ``math.*`` and the
            allowed builtins, names an operator namespace outside both tables (also
            ``torch.ops.load_library`` and the like), the registering module is not
            installed, or the name does not resolve.
    """
    if name.startswith("builtins."):
        short = name.split(".", 1)[1]
        if short not in ALLOWED_BUILTINS:
            raise UnsafeTarget(f"builtin {name!r} is not allowed")
        return getattr(builtins, short)
    if not name.startswith(ALLOWED_PREFIXES):
        raise UnsafeTarget(f"call target {name!r} is outside the allowlist {ALLOWED_PREFIXES}")
    parts = name.split(".")
    if parts[:2] == ["torch", "ops"]:
        ns = op_namespace(name)
        if ns not in TORCH_OP_NAMESPACES and ns not in OP_NAMESPACE_MODULES:
            raise UnsafeTarget(f"call target {name!r}: operator namespace {ns!r} is neither torch's own nor in the "
                               f"trusted table {sorted(OP_NAMESPACE_MODULES)} (passnet_common.store.OP_NAMESPACE_MODULES)")
        for mod in OP_NAMESPACE_MODULES.get(ns, ()):
            try:
                importlib.import_module(mod)
            except ImportError as exc:
                raise UnsafeTarget(f"call target {name!r} needs {mod!r} to register namespace {ns!r}, "
                                   f"which does not import ({exc})") from exc
    root = importlib.import_module(parts[0])
    obj = root
    for p in parts[1:]:
        try:
            obj = getattr(obj, p)
        except AttributeError as exc:
            raise UnsafeTarget(f"call target {name!r} does not resolve ({exc})") from exc
    return obj


def call_target(node: dict) -> Any:
    """The callable of a stored ``call_function`` node: :func:`resolve_target` of its ``target``, or for a
    Dynamo numpy wrapper (``target`` ``torch._dynamo.utils.wrapped_<name>``, which names no attribute) the
    wrapper rebuilt from the node's ``wraps`` (:func:`passnet_common.canonical.stored.dynamo_wraps`):
    ``["numpy_function", name]`` wraps ``torch._numpy``'s function ``name``, ``["numpy_method", name]``
    calls the ``torch._numpy`` ndarray method ``name`` (an identifier without a leading underscore),
    ``["numpy_operator", name]`` wraps the ``operator`` function ``name``. The wrapper classes are
    ``torch._dynamo.utils``'s own; every wrapped callable is torch's or ``operator``'s.

    Raises:
        UnsafeTarget: a target outside the allowlist, or a ``wraps`` of another kind or naming a
            callable outside ``torch._numpy`` / ``operator``.
    """
    wraps = node.get("wraps")
    if wraps is None:
        return resolve_target(node["target"])
    ok = isinstance(wraps, list) and len(wraps) == 2 and isinstance(wraps[1], str)
    kind, name = (wraps[0], wraps[1]) if ok else (None, None)
    dynamo_utils = importlib.import_module("torch._dynamo.utils")  # only here: importing Dynamo costs seconds

    if kind == "numpy_function" and name.startswith("torch._numpy."):
        mod, _, attr = name.rpartition(".")
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            raise UnsafeTarget(f"wrapped numpy function {name!r} does not resolve ({exc})") from exc
        return dynamo_utils.numpy_to_tensor_wrapper(fn)
    if kind == "numpy_method" and name.isidentifier() and not name.startswith("_"):
        return dynamo_utils.numpy_method_wrapper(name)
    if kind == "numpy_operator" and name.startswith(("operator.", "_operator.")):
        return dynamo_utils.numpy_operator_wrapper(resolve_target(name))
    raise UnsafeTarget(f"call target {node.get('target')!r}: wraps {wraps!r} is not a Dynamo numpy wrapper the store "
                       "rebuilds (numpy_function of torch._numpy, numpy_method, numpy_operator of operator)")


def decode_arg(value: Any, nodes: list, device: torch.device) -> Any:
    """A stored argument rebuilt (tags of :func:`passnet_common.canonical.encode_literal`):
    ``["%", i]`` -> ``nodes[i]`` (FX nodes built so far), ``device`` tags -> ``device``,
    ``fn`` -> :func:`resolve_target`. Used by :func:`build_canonical_graph` and by
    :func:`curate.decompose.ranges.build_parent`.

    Raises:
        ValueError: an untagged empty list or an unknown tag.
        UnsafeTarget: an ``fn`` target outside the allowlist.
    """
    if not isinstance(value, list):
        return value
    if not value:
        raise ValueError("untagged empty list in stored graph")
    tag, rest = value[0], value[1:]
    if tag == "%":
        return nodes[rest[0]]
    if tag in ("list", "tuple", "size"):
        items = [decode_arg(v, nodes, device) for v in rest]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {k: decode_arg(v, nodes, device) for k, v in rest}
    if tag == "dtype":
        return getattr(torch, rest[0])
    if tag == "device":
        return device
    if tag in ("memory_format", "layout"):
        return getattr(torch, rest[0])
    if tag == "slice":
        return slice(*[decode_arg(v, nodes, device) for v in rest])
    if tag == "ellipsis":
        return Ellipsis
    if tag == "float":
        return float(rest[0])
    if tag == "complex":
        return complex(decode_arg(rest[0], nodes, device), decode_arg(rest[1], nodes, device))
    if tag == "fn":
        return resolve_target(rest[0])
    raise ValueError(f"stored graph has an argument that cannot be rebuilt: {value!r}")


def replay_recorded_values(stats: dict | None, shape: list, dtype: torch.dtype, device) -> torch.Tensor | None:
    """The exact tensor of a buffer whose values were recorded (integer/bool buffers of at
    most :data:`passnet_common.record.EXACT_VALUES_MAX_NUMEL` elements, e.g. BERT's
    ``position_ids``), None when none were. Recorded ints are exact Python ints."""
    if not stats or stats.get("values") is None:
        return None
    values = stats["values"]
    n = 1
    for d in shape:
        n *= int(d)
    if len(values) != n:
        return None
    return torch.tensor(values, dtype=torch.int64).to(dtype).reshape(shape).to(device)


def exact_int_range(stats: dict | None) -> tuple[int, int] | None:
    """``(min, max)`` of recorded integer statistics as exact ints (an int64 buffer holding
    the int64 maximum round-trips; floats from older stores are truncated)."""
    if not stats or stats.get("min") is None or stats.get("max") is None:
        return None
    return int(stats["min"]), int(stats["max"])


def synth_placeholder(meta: Any, kind: str, int_high: int | None, gen: torch.Generator, device,
                      stats: dict | None = None) -> Any:
    """A value for a placeholder from its metadata (no stored values exist).

    With recorded ``stats`` (graphs captured on real tensors): floats normal with the
    recorded mean and std, clamped to the recorded [min, max]; ints uniform in
    [min, max]. Without: real inputs: int tensors uniform in ``[0, int_high)``, floats
    standard normal; parameters: floats normal with std 0.02; float buffers positive
    (``|N(1, 0.02)|``, so running variances stay valid); int buffers zeros; bools true.
    Data-dependent index inputs (e.g. the batch column of ``roi_align`` boxes) can still
    be out of range: run graphs you did not capture yourself in a subprocess.
    """
    if not (isinstance(meta, list) and meta and meta[0] == "T"):
        raise ValueError(f"placeholder metadata is not a tensor: {meta!r}")
    _, dtype_name, shape = meta
    dtype = getattr(torch, dtype_name)
    recorded = replay_recorded_values(stats, shape, dtype, device)
    if recorded is not None:
        return recorded
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype, device=device)
    lo = stats.get("min") if stats else None
    hi = stats.get("max") if stats else None
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=gen, dtype=torch.float32)
        if stats and stats.get("mean") is not None:
            t = t * float(stats.get("std") or 0.0) + float(stats["mean"])
            if lo is not None and hi is not None:
                t = t.clamp(float(lo), float(hi))
        elif kind == "buffer":
            t = (1.0 + 0.02 * t).abs()
        elif kind == "parameter":
            t = t * 0.02
        return t.to(dtype).to(device)
    if dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=dtype).to(device)
    rng = exact_int_range(stats)
    if rng is not None:
        lo_i, hi_i = rng
        if lo_i == hi_i:
            return torch.full(shape, lo_i, dtype=dtype, device=device)
        info = torch.iinfo(dtype)
        if hi_i >= info.max:  # randint's exclusive bound would overflow: draw below, pin the max
            t = torch.randint(lo_i, hi_i, shape, generator=gen, dtype=dtype)
            return t.to(device)
        return torch.randint(lo_i, hi_i + 1, shape, generator=gen, dtype=dtype).to(device)
    if kind == "input":
        return torch.randint(0, int(int_high or 2), shape, generator=gen, dtype=dtype).to(device)
    return torch.zeros(shape, dtype=dtype, device=device)


def load_graph(folder: str | Path, device: str = "cpu", seed: int = 0) -> tuple[fx.GraphModule, list]:
    """Rebuild a runnable GraphModule from a store folder, with synthesised inputs.

    Returns:
        (gm, inputs): ``gm(*inputs)`` runs the graph on ``device``. Inputs follow the
        placeholder order, synthesised by :func:`synth_placeholder` from the recorded
        metadata and statistics (the store holds no weights and no input values).

    Raises:
        FileNotFoundError: no ``graph.json`` in ``folder``.
        UnsafeTarget: a target outside the allowlist.
        ValueError: ``call_module`` nodes (module state is not stored) or unknown tags.
    """
    folder = Path(folder)
    data = json.loads((folder / "graph.json").read_text())
    imeta_path = folder / "input_meta.json"
    imeta = json.loads(imeta_path.read_text()) if imeta_path.exists() else {}
    int_high = imeta.get("int_high")
    wmeta_path = folder / "weight_meta.json"
    wmeta = json.loads(wmeta_path.read_text()) if wmeta_path.exists() else {}
    stats = {p["position"]: p.get("stats") for p in imeta.get("placeholders", []) + wmeta.get("placeholders", [])}
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    gm, placeholders = build_canonical_graph(data, folder, dev, gen, stats, int_high)
    inputs = [v for _, v in sorted(placeholders, key=lambda pv: pv[0])]
    return gm, inputs


def build_canonical_graph(data: dict, folder: Path, dev: torch.device, gen: torch.Generator | None,
                          stats: dict, int_high: int | None) -> tuple[fx.GraphModule, list[tuple[int, Any]]]:
    """A GraphModule from a stored canonical node list (``data["nodes"]``) and its
    ``subgraphs``, rebuilt recursively (sub-GraphModules become submodules ``_sub<k>``).

    Placeholders are created in calling order (their ``position``), so the module keeps the
    calling convention of the captured graph; the other nodes follow in canonical order
    (which respects data edges, mutations and barriers, so in-place graphs replay in the
    order eager ran them). With ``gen`` each placeholder also gets a synthesised value:
    returns ``(gm, [(position, value)])``.

    Raises:
        UnsafeTarget: a target outside the allowlist.
        ValueError: ``call_module`` nodes (module state is not stored), unknown tags.
    """
    graph = fx.Graph()
    root = torch.nn.Module()
    nodes = data["nodes"]
    built: list = [None] * len(nodes)
    placeholders: list[tuple[int, Any]] = []
    subs = data.get("subgraphs", [])
    for i in sorted((i for i, n in enumerate(nodes) if n["op"] == "placeholder"), key=lambda i: nodes[i]["position"]):
        n = nodes[i]
        built[i] = graph.placeholder(f"arg{n['position']}")
        if gen is not None:
            st = stats.get(n.get("position"))
            placeholders.append((n["position"], synth_placeholder(n["meta"], n.get("kind", "input"), int_high, gen, dev, st)))
    for i, n in enumerate(nodes):
        op = n["op"]
        if op == "placeholder":
            continue
        if op == "get_attr" and "subgraph" in n:
            name = f"_sub{n['subgraph']}"
            if not hasattr(root, name):
                sub_gm, _ = build_canonical_graph(subs[n["subgraph"]], folder, dev, None, {}, None)
                root.add_module(name, sub_gm)
            node = graph.get_attr(name)
        elif op == "get_attr":
            name = f"_const{i}"
            root.register_buffer(name, synth_placeholder(n["meta"], "buffer", None, gen or torch.Generator().manual_seed(i), dev))
            node = graph.get_attr(name)
        elif op == "call_function":
            node = graph.call_function(call_target(n), decode_arg(n["args"], built, dev), decode_arg(n["kwargs"], built, dev))
        elif op == "call_method":
            node = graph.call_method(n["target"], decode_arg(n["args"], built, dev), decode_arg(n["kwargs"], built, dev))
        elif op == "output":
            args = decode_arg(n["args"], built, dev)
            node = graph.output(args[0])
        else:
            raise ValueError(f"{folder}: node {i} has op {op!r}, which the store cannot rebuild")
        built[i] = node
    return fx.GraphModule(root, graph), placeholders
