"""GraphNet samples as a source (``graphnet:<sample path>``) and export of our graphs in
GraphNet's layout. Format read from PaddlePaddle/GraphNet (MIT) samples; no code of theirs.

A GraphNet sample folder holds:

* ``graph_net.json``: framework, model name, source, tags (JSON);
* ``model.py``: ``class GraphModule(torch.nn.Module)`` whose ``forward`` takes every weight
  and input as an argument (device literals inside);
* ``weight_meta.py``: one class per tensor (``name``, ``shape``, ``dtype``, ``device``,
  ``mean``/``std``, sometimes ``data``); kinds only by name (``_parameters_``/``_buffers_``);
* ``input_meta.py`` (empty), ``graph_hash.txt`` (their hash), optional
  ``input_tensor_constraints.py`` (sympy symbols with example values), ``_decomposed/``.

Import, safely:

* meta files are parsed as data with :mod:`ast` (class bodies of literal assignments, the
  example-value dict of the constraints file with symbol names as keys); they are never
  imported, so neither is sympy;
* ``model.py`` passes :func:`static_check` (only ``import torch``/``from torch... import``;
  no ``exec``/``eval``/``open``/``__import__``/``compile``/``getattr``/``globals``, no dunder
  attribute access) at catalog time (a refused sample is an error row, never run) and again
  in the process that runs it: only an isolated child (the extract stage's forked worker with
  its timeout and memory cap, or ``python -m extract.sources.graphnet`` for :func:`capture_sample`),
  device literals rewritten to ``meta`` and meta tensors built from the weight meta,
  symbolic dims fixed to their example values (the rewrites of the source live in
  :mod:`extract.sources.graphnet_source`; which tensors are real instead is the retry ladder of
  :func:`capture_graph`);
* the child re-traces ``GraphModule`` with our capture's Dynamo backend
  (:func:`extract.capture.dynamo.dynamo_capture`), as GraphNet re-traces a sample for its own hash
  (``torch.fx.symbolic_trace`` would constant-fold literal-only ops such as
  ``torch.arange(16)`` that Dynamo keeps as nodes), and describes the graph with
  :func:`passnet_common.record.describe_graph`: the canonical form our captures use (v2 orders
  placeholders by use, so Dynamo's lifting order does not matter), so a GraphNet graph and ours
  share ``graph_hash`` when equal (tested end to end through the extract stage, and by an
  export round trip).

In the pipeline: ``catalog.graphnet_dir`` (params) makes :func:`extract.sources.catalog.build_catalog`
list :func:`graphnet_catalog` rows; :func:`extract.runs.scheduler.capture_task` sends rows of library
``graphnet`` to :func:`capture_result`; the rows then take the same path as every other source
(``extractions``/``graphs`` tables, graph store), so ``unique_graphs.members`` names every
source of a shared graph.

Export in GraphNet's layout lives in :mod:`extract.publish.graphnet_export`.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from extract.sources.graphnet_source import UnsafeSample, device_literals_to_meta, rewrite_dunders, value_read_args  # noqa: F401
from passnet_common.io import canonical_json

ALLOWED_IMPORT_ROOTS = {"torch"}


FORBIDDEN_NAMES = {"exec", "eval", "open", "__import__", "compile", "getattr", "setattr", "delattr", "globals",
                   "locals", "vars", "input", "breakpoint", "os", "sys", "subprocess", "importlib", "builtins"}


def _literal_assignments(body) -> dict:
    out = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except ValueError:
                out[stmt.targets[0].id] = None  # not a literal (e.g. a Symbol): kept as unknown
    return out


def read_weight_meta(path: Path) -> list[dict]:
    """Tensor metadata of ``weight_meta.py`` in file order: dicts with ``name``, ``shape``,
    ``dtype`` (``"float32"``...), ``device``, ``mean``, ``std`` and ``data`` (the flat values when the
    file holds all of them and there are at most :data:`MAX_REAL_ELEMENTS`, else None).

    Raises:
        ValueError: the file is not valid Python or a class lacks ``name``/``shape``/``dtype``.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ValueError(f"{path}: not parseable: {exc}") from exc
    metas = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            a = _literal_assignments(node.body)
            if not all(k in a for k in ("name", "shape", "dtype")):
                raise ValueError(f"{path}: class {node.name} lacks name/shape/dtype")
            metas.append({"name": a["name"], "shape": a["shape"], "dtype": str(a["dtype"]).replace("torch.", ""),
                          "device": a.get("device"), "mean": a.get("mean"), "std": a.get("std"),
                          "data": _full_data(a.get("data"), a["shape"])})
    return metas


def _full_data(data, shape) -> list | None:
    """``data`` of a weight meta class when it holds every element of ``shape`` (GraphNet stores
    the values of lifted scalars and small tensors; a shorter list is a preview), else None."""
    if not isinstance(data, (list, tuple)) or not isinstance(shape, (list, tuple)):
        return None
    flat = []
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif isinstance(x, (int, float, bool)):
            flat.append(x)
        else:
            return None
    numel = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        numel *= d
    return flat if len(flat) == numel and numel <= MAX_REAL_ELEMENTS else None


MAX_REAL_ELEMENTS = 4096  # a weight_meta tensor with its full values up to this size is built real, not meta


def read_constraints(path: Path) -> tuple[dict[str, int], dict[str, list]]:
    """(symbol -> example value, input name -> shape with symbol names) of
    ``input_tensor_constraints.py``, parsed from the syntax tree (sympy is never imported).

    Raises:
        ValueError: a symbol has no example value.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    examples: dict[str, int] = {}
    shapes: dict[str, list] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "dynamic_dim_constraint_symbol2example_value" and isinstance(node.value, ast.Dict):
            for k, v in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Name):
                    examples[k.id] = int(ast.literal_eval(v))
        elif name == "dynamic_dim_constraint_input_shapes" and isinstance(node.value, ast.List):
            for elt in node.value.elts:
                if isinstance(elt, ast.Tuple) and len(elt.elts) == 2 and isinstance(elt.elts[0], ast.List):
                    dims = [d.id if isinstance(d, ast.Name) else ast.literal_eval(d) for d in elt.elts[0].elts]
                    shapes[ast.literal_eval(elt.elts[1])] = dims
    for dims in shapes.values():
        for d in dims:
            if isinstance(d, str) and d not in examples:
                raise ValueError(f"{path}: symbol {d} has no example value")
    return examples, shapes


def checked_source(source: str, filename: str = "model.py") -> str:
    """:func:`rewrite_dunders` then :func:`static_check`: the source that may be run.

    Raises:
        UnsafeSample: as :func:`static_check`.
    """
    out = rewrite_dunders(source, filename)
    static_check(out, filename)
    return out


def static_check(source: str, filename: str = "model.py") -> None:
    """Refuse a ``model.py`` that could do more than build a torch graph.

    Raises:
        UnsafeSample: a non-torch import, a forbidden name, a dunder attribute, or no
            ``GraphModule`` class with ``forward``.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise UnsafeSample(f"{filename}: not parseable: {exc}") from exc
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] not in ALLOWED_IMPORT_ROOTS:
                    raise UnsafeSample(f"{filename}:{node.lineno}: import {a.name} (only torch is allowed)")
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in ALLOWED_IMPORT_ROOTS:
                raise UnsafeSample(f"{filename}:{node.lineno}: from {node.module} import (only torch is allowed)")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise UnsafeSample(f"{filename}:{node.lineno}: forbidden name {node.id!r}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr != "__init__":
            raise UnsafeSample(f"{filename}:{node.lineno}: dunder attribute {node.attr!r}")
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GraphModule"]
    if not classes or not any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in classes[0].body):
        raise UnsafeSample(f"{filename}: no class GraphModule with forward")


def read_sample(sample: Path) -> dict:
    """Everything but the code of a sample: ``graph_net`` (dict), ``tensors`` (weight meta with
    shapes fixed to example values), ``examples`` (symbol values), ``graph_hash`` (theirs).

    Raises:
        FileNotFoundError: ``graph_net.json``, ``model.py`` or ``weight_meta.py`` is missing.
        ValueError: a meta file is malformed (the message names it).
    """
    sample = Path(sample)
    for f in ("graph_net.json", "model.py", "weight_meta.py"):
        if not (sample / f).is_file():
            raise FileNotFoundError(f"graphnet sample {sample}: missing {f}")
    try:
        meta = json.loads((sample / "graph_net.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{sample / 'graph_net.json'}: not valid JSON: {exc}") from exc
    tensors = read_weight_meta(sample / "weight_meta.py")
    examples: dict[str, int] = {}
    if (sample / "input_tensor_constraints.py").is_file():
        examples, shapes = read_constraints(sample / "input_tensor_constraints.py")
        for t in tensors:
            if t["name"] in shapes:
                t["shape"] = [examples[d] if isinstance(d, str) else d for d in shapes[t["name"]]]
    for t in tensors:
        if not all(isinstance(d, int) for d in t["shape"]):
            raise ValueError(f"{sample}: tensor {t['name']} has a non-integer shape {t['shape']}")
    gh = (sample / "graph_hash.txt").read_text().strip() if (sample / "graph_hash.txt").is_file() else None
    return {"graph_net": meta, "tensors": tensors, "examples": examples, "graph_hash": gh}


SAMPLE_FILES = ("graph_net.json", "model.py", "weight_meta.py", "input_tensor_constraints.py")


def graphnet_catalog(root: str | Path) -> list[dict]:
    """``models`` rows for every sample folder under ``root`` (a folder with ``graph_net.json``
    and ``model.py``; ``_decomposed`` subgraphs excluded): ``graphnet:<path relative to root>``.

    ``config_json`` holds ``sample_dir`` (``root`` as given joined with the relative path; the
    capture reads the sample there), ``graph_net`` (the parsed ``graph_net.json``) and the
    sha256 of each file of :data:`SAMPLE_FILES` present, so ``config_hash`` (and with it the
    capture attempt key) changes when any file that shapes the graph changes. A sample whose
    ``model.py`` fails :func:`static_check` (``catalog_error_class`` ``unsafe_model_py``) or
    whose meta files cannot be read (``graphnet_meta``) is an error row: the capture records
    it without running anything; the other samples are unaffected.

    Raises:
        FileNotFoundError: ``root`` does not exist.
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"graphnet root {root} does not exist")
    rows = []
    for gj in sorted(root.rglob("graph_net.json")):
        sample = gj.parent
        rel = sample.relative_to(root).as_posix()
        if "_decomposed" in rel.split("/") or not (sample / "model.py").is_file():
            continue
        error_class = error = None
        try:
            meta = json.loads(gj.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError(f"{gj}: expected a JSON object, got {type(meta).__name__}")
        except (ValueError, UnicodeDecodeError) as exc:
            meta, error_class, error = {}, "graphnet_meta", f"{gj}: not valid JSON: {exc}"
        files = {f: hashlib.sha256((sample / f).read_bytes()).hexdigest() for f in SAMPLE_FILES if (sample / f).is_file()}
        if error is None:
            try:
                checked_source((sample / "model.py").read_text(encoding="utf-8"), str(sample / "model.py"))
                read_sample(sample)
            except UnsafeSample as exc:
                error_class, error = "unsafe_model_py", f"{exc}; never executed"
            except (FileNotFoundError, ValueError, UnicodeDecodeError) as exc:
                error_class, error = "graphnet_meta", str(exc)
        conf = {"sample_dir": (root / rel).as_posix(), "graph_net": meta, "files_sha256": files}
        cj = canonical_json(conf).rstrip("\n")
        rows.append({"model_id": f"graphnet:{rel}", "source": "graphnet", "name": str(meta.get("model_name") or rel),
                     "architecture": meta.get("model_name"), "model_type": None, "task": meta.get("heuristic_tag"),
                     "modality": None, "config_json": cj, "config_hash": hashlib.sha256(cj.encode()).hexdigest(),
                     "library": "graphnet", "library_version": "sample", "trust_remote_code": False,
                     "catalog_error_class": error_class, "catalog_error": error[:2000] if error else None,
                     "catalog_note": None})
    return rows


def capture_graph(sample: str | Path):
    """Build and re-trace the graph of a sample IN THIS PROCESS: call it only in an isolated
    child (the extract stage's forked worker, or :func:`capture_sample`'s child).

    ``model.py`` passes :func:`static_check` first; device literals become ``meta``; every
    forward argument is a meta tensor from ``weight_meta.py`` (symbolic dims fixed to their
    example values); kinds by name (``_parameters_`` -> parameter, ``_buffers_`` -> buffer,
    else input), parameters as ``nn.Parameter``; the module is re-traced by
    :func:`extract.capture.dynamo.dynamo_capture` (our capture's backend and Dynamo settings).
    Retries, each once, by the kind of failure: ``.item()`` on a meta tensor or a device
    mismatch -> the next level of real tensors of :func:`_forward_args` (levels 1, 2, 0 when the
    program reads values, :func:`value_read_args`; else 0, 2); a plain meta tensor reaching an op
    (:data:`_NON_FAKE`) -> :func:`_lenient_fake`. Anything else is raised.

    Returns:
        ``(graph, input_spec, param_count, completeness)``: an
        :class:`passnet_common.record.CapturedGraph` (``example_inputs`` the meta tensors), the input
        tensors as input-spec dicts (``name``, ``shape``, ``dtype``, ``kind`` ``graphnet``,
        ``low``/``high`` None: GraphNet keeps no value range), the number of parameter
        elements, and Dynamo's :class:`extract.capture.completeness.Completeness` of the re-trace.

    Raises:
        UnsafeSample: ``model.py`` fails the static check.
        FileNotFoundError / ValueError: a missing file or malformed meta; a forward argument
            without a ``weight_meta`` entry; the re-trace gave more than one graph.
    """
    warnings.filterwarnings("ignore")
    import torch  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)
    sample = Path(sample)
    src = checked_source((sample / "model.py").read_text(encoding="utf-8"), str(sample / "model.py"))
    info = read_sample(sample)
    tree = ast.parse(src)
    reads = value_read_args(tree)  # arguments read as Python values: built real on a retry
    tree = device_literals_to_meta(tree)
    ns: dict = {"__name__": "graphnet_sample", "device": torch.device}  # Dynamo prints device(type=...)
    exec(compile(tree, str(sample / "model.py"), "exec"), ns)  # noqa: S102 - static-checked, isolated child
    model = ns["GraphModule"]()
    names = [p for p in inspect.signature(model.forward).parameters]
    by_name = {t["name"]: t for t in info["tensors"]}
    for n in names:
        if n not in by_name:
            raise ValueError(f"{sample}: forward argument {n} has no weight_meta entry")
    # Re-traced with Dynamo (our capture's own backend), as GraphNet re-traces for its hash:
    # torch.fx.symbolic_trace would constant-fold ops whose inputs are all literals
    # (``torch.arange(16, device=...)``) that Dynamo keeps as nodes. Canonical form v2 orders
    # placeholders by use, so the argument order Dynamo lifts them in does not enter the hash.
    from extract.capture import dynamo_capture  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    metas = [by_name[n] for n in names]
    # Levels of real tensors to try (_forward_args). With value reads, level 0 cannot run them
    # (``.item()`` of a meta tensor when the compiled graph runs, after a whole trace), so the
    # ladder starts at 1; 0 comes last in case value_read_args flagged a tensor used in ops.
    ladder, lenient = ([1, 2, 0] if reads else [0, 2]), False
    while True:  # each step once; a plain meta tensor reaching an op -> _lenient_fake, same level
        args, spec, n_params = _forward_args(torch, metas, ladder[0], reads)
        try:
            with _lenient_fake(lenient):
                graphs = dynamo_capture(model, tuple(args))
            break
        except Exception as exc:  # noqa: BLE001 - a retry for the kinds below, else re-raised
            if len(ladder) > 1 and (_caused_by(exc, "cannot be called on meta tensors")
                                    or _caused_by(exc, "device mismatch")):
                ladder.pop(0)
            elif _caused_by(exc, _NON_FAKE) and not lenient:
                lenient = True
            else:
                raise
    if len(graphs) != 1:
        raise ValueError(f"{sample}: model.py re-traced into {len(graphs)} graphs (expected 1: a flat graph)")
    g = graphs[0]
    # the placeholder names Dynamo gives forward's arguments (L_<argument name>_) carry GraphNet's names
    g.kinds = [_kind_by_name(str(n.target)) for n in g.gm.graph.nodes if n.op == "placeholder"]
    return g, spec, n_params, dynamo_capture.last_completeness


SMALL_REAL_ELEMENTS = 8  # the last retry builds non-parameter tensors up to this size real (CPU)

# Dynamo's fake-tensor check when a plain (non-fake) meta tensor reaches an op: indexing a meta
# tensor with a Python list (``fused_qkv[..., [-2], :]``, falcon) builds the index tensor on
# meta outside the fake mode, in C++ (the same happens to ``torch.tensor(..., device="meta")``).
_NON_FAKE = "Please convert all Tensors to FakeTensors first"


def _caused_by(exc: BaseException, text: str) -> bool:
    """``text`` in the message of ``exc`` or of an exception in its cause/context chain."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if text in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _lenient_fake(on: bool):
    """With ``on``, Dynamo's fake mode converts a plain tensor reaching an op to a fake one
    instead of refusing it (``FakeTensorMode``'s ``allow_non_fake_inputs``, through PyTorch's
    thread-local override, the switch its own ``torch.tensor`` handling uses): the retry after
    :data:`_NON_FAKE`. Only a meta index tensor reaches it here, and only its shape matters.
    The recorded graph is the same (the list stays the ``getitem`` argument)."""
    if not on:
        return contextlib.nullcontext()
    from torch._subclasses.fake_tensor import fake_tensor_tls  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    @contextlib.contextmanager
    def ctx():
        old = fake_tensor_tls.allow_non_fake_inputs_override
        fake_tensor_tls.allow_non_fake_inputs_override = True
        try:
            yield
        finally:
            fake_tensor_tls.allow_non_fake_inputs_override = old
    return ctx()


def _forward_args(torch, metas: list[dict], level: int = 0, reads: set[str] = frozenset()):
    """(args, input spec, parameter elements) for ``forward`` from its weight metas.

    Which tensors are real (CPU) rather than meta, by ``level`` (a step of the retry ladder
    after ``.item()`` reached a meta tensor when the compiled graph ran):

    * 0: a 0-dim tensor whose value GraphNet stored (a lifted scalar), so ``.item()`` works (a
      0-dim CPU tensor mixes with meta tensors; stored values of larger tensors, e.g. input
      ids, stay meta);
    * 1: also every non-parameter argument in ``reads`` (:func:`value_read_args`: the program
      reads its value, BatchNorm's lifted ``momentum.item()``, yolo's ``stride[0]``) with at most
      :data:`MAX_REAL_ELEMENTS` elements; every other tensor stays meta, so a small buffer
      used in tensor ops (a BatchNorm ``running_mean`` of 8) does not meet meta tensors on the CPU;
    * 2: also every non-parameter tensor with stored values and every one of at most
      :data:`SMALL_REAL_ELEMENTS` elements (for a read :func:`value_read_args` does not follow).

    A real tensor holds its stored values, else its recorded ``mean`` (a stand-in: only the
    scalar reads of the compiled graph's run see it; the graph is traced on fake tensors).
    """
    args, spec, n_params = [], [], 0
    for t in metas:
        n, dtype = t["name"], getattr(torch, t["dtype"])
        numel = 1
        for d in t["shape"]:
            numel *= d
        param = "_parameters_" in n
        real = (t.get("data") is not None and t["shape"] == []) or (
            not param and ((level >= 1 and n in reads and numel <= MAX_REAL_ELEMENTS)
                           or (level >= 2 and (t.get("data") is not None or numel <= SMALL_REAL_ELEMENTS))))
        if real and t.get("data") is not None:
            x = torch.tensor(t["data"], dtype=dtype).reshape(t["shape"])
        elif real:
            x = torch.full(t["shape"], float(t["mean"]) if isinstance(t.get("mean"), (int, float)) else 1.0).to(dtype)
        else:
            x = torch.empty(t["shape"], dtype=dtype, device="meta")
        if param:  # a module parameter (kinds only by name in GraphNet), as our capture passes it
            n_params += x.numel()
            x = torch.nn.Parameter(x, requires_grad=x.is_floating_point())
        elif "_buffers_" not in n:
            spec.append({"name": n, "shape": list(t["shape"]), "dtype": t["dtype"], "kind": "graphnet",
                         "low": None, "high": None})
        args.append(x)
    return args, spec, n_params


def _kind_by_name(name: str) -> str:
    """GraphNet names tensors by Dynamo source (``L_self_modules_fc_parameters_weight_``)."""
    return "parameter" if "_parameters_" in name else "buffer" if "_buffers_" in name else "input"


def capture_result(row: dict):
    """Capture of a ``graphnet`` catalog row (its ``config_json`` names ``sample_dir``) as an
    :class:`extract.capture.row.CaptureResult` (mode ``meta``, one graph), the extract stage's
    per-row result; run it only in an isolated child (:func:`capture_graph`).

    Raises:
        UnsafeSample, FileNotFoundError, ValueError: as :func:`capture_graph`.
    """
    from extract.capture import CaptureResult, dynamo_settings  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    conf = json.loads(row["config_json"])
    g, spec, n_params, completeness = capture_graph(conf["sample_dir"])
    return CaptureResult([g], "meta", None, spec, n_params, completeness, dynamo_settings({}))


def _child(sample: str, out: str) -> None:
    """Child-process body of :func:`capture_sample`: capture, describe, write ``out``."""
    from passnet_common.record import describe_graph  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    g, _, _, _ = capture_graph(sample)
    rec = describe_graph(0, g, with_stats=False)
    recs = [{k: rec[k] for k in ("graph_hash", "structure_hash", "num_nodes")}]
    Path(out).write_text(json.dumps({"status": "ok", "graphs": recs}))


def capture_sample(sample: str | Path, timeout_s: float = 300) -> dict:
    """Capture a sample in an isolated child process (static check first, in both processes).

    Returns ``{"status": "ok", "graphs": [{graph_hash, structure_hash, num_nodes}]}`` or
    ``{"status": "failed"|"skipped", "error_class": ..., "error_message": ...}`` (``skipped``
    when the static check refuses ``model.py``; ``timeout`` when the child outlives ``timeout_s``).
    """
    sample = Path(sample)
    try:
        checked_source((sample / "model.py").read_text(encoding="utf-8"), str(sample / "model.py"))
        read_sample(sample)
    except UnsafeSample as exc:
        return {"status": "skipped", "error_class": "unsafe_model_py", "error_message": str(exc), "graphs": []}
    except (FileNotFoundError, ValueError) as exc:
        return {"status": "failed", "error_class": f"exception:{type(exc).__name__}", "error_message": str(exc),
                "graphs": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        try:
            p = subprocess.run([sys.executable, "-m", "extract.sources.graphnet", str(sample), str(out)], capture_output=True,
                               text=True, timeout=timeout_s, env=env)
        except subprocess.TimeoutExpired:
            return {"status": "failed", "error_class": "timeout", "error_message": f"over {timeout_s} s", "graphs": []}
        if p.returncode != 0 or not out.exists():
            lines = (p.stderr or "").strip().splitlines()
            errs = [ln for ln in lines if re.match(r"^[\w.]*(Error|Exception)\b", ln)]  # the raised line
            tail = errs[-1:] or lines[-1:] or [""]
            return {"status": "failed", "error_class": f"exit:{p.returncode}", "error_message": tail[0][:2000],
                    "graphs": []}
        return json.loads(out.read_text())


if __name__ == "__main__":  # the isolated child: python -m extract.sources.graphnet <sample> <out.json>
    _child(sys.argv[1], sys.argv[2])
