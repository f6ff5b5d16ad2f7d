"""Per-process reuse across the GRPO runs of one worker (:func:`proxy_artifacts.rl.run_grpo`), and the
per-step gradient sum of squares of its logger: speed only, no result changes (``tests/test_proxy_grpo_reuse.py``:
runs sharing one process give the same bytes as runs loaded from disk; ``docs/proxies.md``)."""

from __future__ import annotations

import contextlib
import copy
import gc
import math
from pathlib import Path

import torch
import trl.trainer.grpo_trainer as gt


def grad_sq_nonfinite(g: torch.Tensor) -> tuple[float, int, int]:
    """(sum of squares of the finite entries, NaN count, Inf count) of one gradient tensor (any shape).

    The squares are summed in float32 after NaN / Inf are set to 0 (``torch.nan_to_num``). The sum of the
    raw tensor is tried first: when it is finite the tensor holds no NaN / Inf, ``nan_to_num`` would be the
    identity and that sum is already the answer (the same bytes, one pass instead of four).
    """
    gf = g.float()
    s = float((gf * gf).sum())
    if math.isfinite(s):
        return s, 0, 0
    gf = torch.nan_to_num(gf, nan=0.0, posinf=0.0, neginf=0.0)  # a NaN / Inf, or an overflow of the squares
    return float((gf * gf).sum()), int(torch.isnan(g).sum()), int(torch.isinf(g).sum())


# Per-process reuse across the runs of one worker (none changes a result; tests/test_proxy_grpo_reuse.py):
# each model load is a deep copy of the model as loaded from disk (cached per folder, its files' sizes and
# mtimes and the load arguments; the cached one is never handed out), and the cyclic garbage collector is
# settled before each run in a pool worker (gc.collect, then gc.freeze: the survivors of the imports and earlier runs are not
# scanned again by the gc.collect accelerate runs at the end of every train()).
REUSE = True
_LOADED: dict = {}


def _files_stamp(model_dir) -> tuple:
    p = Path(model_dir)
    return tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(p.iterdir()) if f.is_file())


def fresh_load(load, model_id, **kw):
    """``load(model_id, **kw)``, or with :data:`REUSE` a deep copy of this process's first such load (same
    parameters, buffers, tied weights, config and generation config; no torch RNG draws either way)."""
    if not REUSE or not Path(model_id).is_dir():
        return load(model_id, **kw)
    key = (repr(load), str(model_id), Path(model_id).resolve().as_posix(),
           _files_stamp(model_id), tuple(sorted((k, repr(v)) for k, v in kw.items())))
    if key not in _LOADED:
        _LOADED[key] = load(model_id, **kw)

    return copy.deepcopy(_LOADED[key])


@contextlib.contextmanager
def reused_reference():
    """While the GRPOTrainer is built, its reference model (TRL's ``create_model_from_path``) is a fresh
    copy of the cached load (:func:`fresh_load`)."""
    orig = gt.create_model_from_path
    if REUSE:
        gt.create_model_from_path = lambda model_id, **kw: fresh_load(orig, model_id, **kw)
    try:
        yield
    finally:
        gt.create_model_from_path = orig


_IN_WORKER = False
"""Set by :func:`mark_worker` in a process that only runs GRPO runs (a pool worker of
:func:`proxy_artifacts.rl.run_grpo_all`): only there does :func:`settle_gc` freeze the heap."""


def mark_worker() -> None:
    """Pool initializer: this process is a GRPO worker, whose heap :func:`settle_gc` may freeze for good."""
    global _IN_WORKER
    _IN_WORKER = True


def settle_gc() -> None:
    """In a GRPO worker (:func:`mark_worker`) with :data:`REUSE`: collect, then freeze the survivors
    (imports, the load cache), so the collection accelerate runs at the end of every ``train()`` scans
    only what this run allocates. The freeze is never undone: the process is the worker's own. In any
    other process (a caller running ``run_grpo`` itself, the tests) nothing happens: freezing a caller's
    heap would change its garbage collection for good."""
    if REUSE and _IN_WORKER:
        gc.collect()
        gc.freeze()
