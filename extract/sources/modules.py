"""The ``module`` source: your own programs, one Python file each -> ``module:<file stem>``.

A file of ``catalog.module_dir`` defines ``build() -> (module, example_inputs)``: an
``nn.Module`` and the tuple of positional inputs of its ``forward`` (a dict is taken as keyword
inputs; a single tensor as one input). The catalog only reads and hashes the files
(:func:`module_catalog`: ``config_hash`` is the sha256 of the file's bytes, so it enters the
capture's attempt key); a file is imported and run only in the capture's isolated child
(:func:`capture_module`), never in the parent. A module built on the meta device is captured on
meta (mode ``meta``); otherwise on the tensors it gives, with each graph's recorded output
metadata checked against its execution (mode ``real``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

from extract.config import CaptureConfig


def _portable(path: Path) -> str:
    """``path`` relative to the working directory when below it (tables hold no machine path)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def module_catalog(folder: str | Path) -> list[dict]:
    """One ``models`` row per ``*.py`` file of ``folder`` (sorted; files starting with ``_``
    are helpers and skipped). Nothing is imported.

    Row: ``model_id`` ``module:<stem>``, ``name`` the file name, ``library`` ``module``,
    ``config_json`` ``{"file": <file name>, "sha256": ...}``, ``config_hash`` the file's sha256.

    Raises:
        FileNotFoundError: ``folder`` does not exist (the message names it).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"catalog.module_dir: folder {folder} does not exist")
    rows = []
    for f in sorted(folder.glob("*.py")):
        if f.name.startswith("_"):
            continue
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        rows.append({
            "model_id": f"module:{f.stem}", "source": "module", "name": f.name, "architecture": None,
            "model_type": None, "task": None, "modality": None,
            "config_json": json.dumps({"dir": _portable(folder), "file": f.name, "sha256": digest}, sort_keys=True),
            "config_hash": digest, "library": "module", "library_version": "1", "trust_remote_code": False,
            "catalog_note": None,
        })
    return rows


def load_build(row: dict):
    """The ``build`` function of a module row's file (imports the file: child process only).

    Raises:
        FileNotFoundError: the file is gone; ValueError: it changed since the catalog was
        built (hash differs) or defines no callable ``build``.
    """
    cfg = json.loads(row["config_json"])
    path = Path(cfg["dir"]) / cfg["file"]
    if not path.is_file():
        raise FileNotFoundError(f"{row['model_id']}: file {cfg['file']} not found in {cfg['dir']}")
    if hashlib.sha256(path.read_bytes()).hexdigest() != row["config_hash"]:
        raise ValueError(f"{row['model_id']}: {cfg['file']} changed since the catalog was built; rebuild the catalog")
    spec = importlib.util.spec_from_file_location(f"passnet_module_{Path(cfg['file']).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    build = getattr(mod, "build", None)
    if not callable(build):
        raise ValueError(f"{row['model_id']}: {cfg['file']} defines no build() -> (module, example_inputs)")
    return build


def capture_module(row: dict, capture: CaptureConfig | dict):
    """Build a module row and capture it (child process only): an
    :class:`extract.capture.row.CaptureResult`.

    Raises:
        ValueError: ``build()`` did not return ``(nn.Module, inputs)``; whatever the build or
        the capture raises.
    """
    import torch  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    from extract.capture import dynamo as backend  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)
    from extract.capture import retry  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)
    from extract.capture.row import CaptureResult  # noqa: PLC0415  (fork: child only; the catalog imports this module without torch)

    os.environ.setdefault("PYTHONHASHSEED", "0")
    torch.manual_seed(0)
    out = load_build(row)()
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], torch.nn.Module)):
        raise ValueError(f"{row['model_id']}: build() must return (nn.Module, example_inputs)")
    model, inputs = out
    model.eval()
    args, kwargs = (((), dict(inputs)) if isinstance(inputs, dict)
                    else ((inputs,), {}) if isinstance(inputs, torch.Tensor) else (tuple(inputs), {}))
    tensors = [t for t in list(args) + list(kwargs.values()) + list(model.parameters()) if isinstance(t, torch.Tensor)]
    meta = any(t.device.type == "meta" for t in tensors)
    settings = backend.dynamo_settings(capture)
    spec = [{"name": f"arg{i}", "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
            for i, t in enumerate(list(args) + list(kwargs.values())) if isinstance(t, torch.Tensor)]
    if meta:
        graphs, used = retry.meta_capture(model, args, kwargs, settings)
    else:
        graphs, used = retry.capture_with_retry(model, args, kwargs, settings, check_outputs=True)
    n_params = sum(p.numel() for p in model.parameters())
    return CaptureResult(graphs, "meta" if meta else "real", None, spec, n_params,
                         backend.dynamo_capture.last_completeness, used)
