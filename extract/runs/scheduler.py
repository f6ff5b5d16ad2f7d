"""Running every capture: isolated children, longest first, resumable.

:func:`capture_all` hands every row whose attempt key has no finished work folder to the
executor (:mod:`extract.runs.executor`: forked children with a timeout and a memory cap,
:func:`passnet_common.worker.run_isolated`, or Ray tasks running the same child), longest
expected first; each child runs :func:`capture_task`. Failures caused by the machine rather
than the model (``timeout``, ``oom``) are retried on a re-run by default. The parent warms
the imports children share (:func:`preload_libraries`, :func:`warm_up`) before forking.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import time
import warnings
from pathlib import Path

import torch
import tqdm as tqdm_mod
from tqdm import tqdm

from extract.capture import capture_row, config_reads, dynamo_capture
from extract.capture.build import DEPTH_KEYS, init_on_device
from extract.config import CaptureConfig, ExtractConfig, capture_config
from extract.runs.attempts import TRANSIENT_ERRORS, attempt_key, portable_text, work_dir
from extract.runs.executor import get_executor
from extract.runs.priors import schedule_history
from extract.runs.reads_dedupe import READS_FILE, ReadsDedupe, clear_merge, recorded_reads, write_merge
from extract.sources.graphnet import capture_result
from extract.sources.modules import capture_module
from extract.sources.rows import remote_code_reason
from passnet_common.io import atomic_write_json
from passnet_common.record import describe_graph


def capture_task(arg: tuple[dict, dict], out_dir: Path) -> None:
    """Child-process body: capture one row, write ``graphs/<i>.json``, for a transformers row the
    config attributes its capture read (``config_reads.json``, :mod:`extract.runs.reads_dedupe`),
    then ``result.json``."""
    warnings.filterwarnings("ignore")  # Python warnings only: Dynamo's log records are collected by the capture
    try:
        import transformers  # noqa: PLC0415  (fork: preloaded by the parent or imported in the child; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

        transformers.logging.set_verbosity_error()
    except ImportError:
        pass

    row, capture = arg
    if row.get("library") == "graphnet":  # a GraphNet sample: its model.py, static-checked, in this child

        res = capture_result(row)
    elif row.get("library") == "module":  # an own program: its build() runs only here, in the child

        res = capture_module(row, capture)
    else:
        with config_reads.recording() as rec:  # the config attributes the capture reads (extract/runs/reads_dedupe.py)
            res = capture_row(row, capture)
        if row.get("library") == "transformers":
            atomic_write_json(out_dir / READS_FILE, {"reads": sorted(rec.reads), "forward_runs": rec.forward_runs})
    gdir = out_dir / "graphs"
    if gdir.exists():
        shutil.rmtree(gdir)
    gdir.mkdir(parents=True)
    with_stats = res.mode != "meta"
    records = []
    for i, g in enumerate(res.graphs):
        rec = describe_graph(i, g, with_stats)
        rec["code"] = portable_text(rec["code"])
        rec["break_reason"] = portable_text(rec.get("break_reason"))
        atomic_write_json(gdir / f"{i}.json", rec)
        records.append({k: rec[k] for k in ("graph_hash", "num_nodes", "break_reason")})
    atomic_write_json(out_dir / "result.json", {
        "mode": res.mode, "fallback_reason": portable_text(res.fallback_reason), "input_spec": res.input_spec,
        "param_count": int(res.param_count), "num_graphs": len(res.graphs),
        "num_graph_breaks": sum(1 for g in res.graphs if g.break_reason), "graphs": records,
        "dynamo": res.dynamo, **completeness_fields(res),
    })
    if res.completeness is not None and res.completeness.ops_outside:
        atomic_write_json(out_dir / "ops_outside.json", res.completeness.ops_outside)


def completeness_fields(res) -> dict:
    """status / error / completeness columns of a finished capture (a
    :class:`extract.capture.row.CaptureResult`): ``ok`` only when every frame became a graph and
    (real mode) every recorded output matched its execution; 0 graphs is a failure."""
    c = res.completeness
    mismatched = [i for i, g in enumerate(res.graphs) if g.output_mismatch]
    reasons = [c.reason] if c is not None and c.reason else []
    if mismatched:
        first = res.graphs[mismatched[0]].output_mismatch[0]
        reasons.append(f"recorded output metadata differs from execution in {len(mismatched)} graph(s) "
                       f"(graph {mismatched[0]}: {first})")
    complete = not reasons and bool(res.graphs)
    if not res.graphs:
        status, err = "failed", "no_graph"
    elif complete:
        status, err = "ok", None
    else:
        status, err = "incomplete", ("output_mismatch" if mismatched and not (c and c.reason) else "incomplete")
    why = portable_text("; ".join(reasons)) or None
    return {
        "status": status, "error_class": err, "error_message": why,
        "complete": complete, "incomplete_reason": why,
        "eager_frames": int(c.eager_frames) if c else 0, "recompile_limit_hits": int(c.recompile_limit_hits) if c else 0,
        "output_mismatches": len(mismatched),
    }


def failure_result(status: str, error_class: str, message: str | None, attempts: int = 1) -> dict:
    """The ``result.json`` of an attempt that captured nothing (``status`` ``failed`` / ``skipped``)."""
    return {"status": status, "error_class": error_class, "error_message": portable_text(message or "")[:4000],
            "mode": None, "fallback_reason": None, "input_spec": [], "param_count": None,
            "num_graphs": 0, "num_graph_breaks": 0, "graphs": [], "complete": False,
            "incomplete_reason": f"{error_class}: nothing captured", "eager_frames": 0, "recompile_limit_hits": 0,
            "output_mismatches": 0, "dynamo": None, "attempts": attempts}


class _WarmUp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(16, 8)
        self.lin = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, ids, img):
        h = self.norm(self.lin(self.emb(ids)))
        q = h.view(1, 1, -1, 8)
        a = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return a.softmax(-1), torch.relu(self.bn(self.conv(img))).mean((2, 3))


def warm_up() -> float:
    """One capture of a small module on the meta device in the parent, so that every
    forked child starts with Dynamo's lazily imported modules and first-call caches
    already in place (measured: ~2 s of a child's first capture). Meta tensors run no
    CPU kernel, so no OpenMP pool exists when the parent forks. Then Dynamo's source index
    of the files most traces share (:func:`_warm_source_index`). Returns seconds spent."""
    start = time.perf_counter()
    with init_on_device("meta"):
        mod = _WarmUp()
    mod = mod.to("meta").eval()
    dynamo_capture(mod, (torch.empty(1, 4, dtype=torch.long, device="meta"), torch.empty(1, 3, 8, 8, device="meta")))
    _warm_source_index()
    return time.perf_counter() - start


# Source files that most children's traces pass through (profiled on the default catalog).
SHARED_SOURCES = (
    "torch.nn.modules.module", "torch.nn.modules.activation", "torch.nn.modules.dropout",
    "torch.nn.modules.pooling", "torch.nn.modules.flatten", "torch.nn.modules.container",
    "transformers.modeling_utils", "transformers.masking_utils", "transformers.activations",
    "transformers.integrations.sdpa_attention", "transformers.modeling_layers", "transformers.pytorch_utils",
)


def _warm_source_index() -> None:
    """Fill Dynamo's line -> function-name index (``torch._dynamo.funcname_cache``, built by
    tokenizing a whole source file the first time a trace logs a line of it) for
    :data:`SHARED_SOURCES` that are imported, so children do not each re-tokenize them
    (measured: ``transformers/modeling_utils.py`` alone ~0.2-0.4 s CPU per child). The index
    feeds only Dynamo's trace log text, never a graph."""
    try:
        from torch._dynamo.funcname_cache import get_funcname  # noqa: PLC0415  (optional: a torch internal that may be absent)
    except ImportError:
        return
    for name in SHARED_SOURCES:
        f = getattr(sys.modules.get(name), "__file__", None)
        if f:
            try:
                get_funcname(f, 1)
            except Exception:  # noqa: BLE001 - an optional cache
                pass


def estimated_seconds(row: dict, history: dict[str, float]) -> float:
    """Expected capture time of a row (s), used only to order the work: its ``model_id`` in
    ``history`` (:func:`extract.runs.priors.schedule_history`: the work folder's last recorded time, else the
    committed prior of :mod:`extract.runs.priors`), else a rough depth prior from the
    quiet-machine default run (Dynamo's trace time grows with depth: transformers ~3 s + 0.3 s
    per layer counted in the config, timm/torchvision ~3 s)."""
    if row["model_id"] in history:
        return history[row["model_id"]]
    if row.get("library") != "transformers":
        return 3.0

    try:
        cfg = json.loads(row.get("config_json") or "{}")
    except ValueError:
        return 3.0
    layers = 0
    stack = [cfg] if isinstance(cfg, dict) else []
    while stack:
        d = stack.pop()
        for k, v in d.items():
            if isinstance(v, dict):
                stack.append(v)
            elif k in DEPTH_KEYS and isinstance(v, int) and not isinstance(v, bool):
                layers += v
    return 3.0 + 0.3 * layers


def longest_first(todo: list, history: dict[str, float]) -> list:
    """``todo`` (``(key, (row, capture), work_dir)`` items) sorted by
    :func:`estimated_seconds`, longest first (ties: model_id): the longest-processing-time
    rule, so that a long capture does not start last and leave one worker idle at the end."""
    return sorted(todo, key=lambda t: (-estimated_seconds(t[1][0], history), t[1][0]["model_id"]))


def preload_libraries(rows: list[dict]) -> float:
    """Import, in the parent, the model code the ``rows`` will run: transformers' shared
    modules and each row's architecture class (transformers' own modeling files, resolved
    by name; never a repository's custom code), ``timm``, ``torchvision.models``. A forked
    child then finds them in ``sys.modules`` instead of importing them itself (measured on
    the stage's parent, which only reads the catalog file: a BertModel child imported 846
    modules, 8.2 -> 5.1 s CPU with the preload; timm resnet18 2.5 -> 1.5 s). Imports run no
    CPU kernel, so no OpenMP pool exists at fork. A name that fails to import is left to the
    child (which records the error). Returns seconds spent."""
    start = time.perf_counter()
    libs = {r.get("library") for r in rows}
    names = []
    if "transformers" in libs:
        names += ["transformers.modeling_utils", "transformers.masking_utils", "transformers.generation"]
    if "timm" in libs:
        names.append("timm")
    if "torchvision" in libs:
        names.append("torchvision.models")
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the child reports it
            pass
    if "transformers" in libs:
        import transformers  # noqa: PLC0415  (fork: preloaded by the parent or imported in the child; env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

        for r in rows:
            if r.get("library") == "transformers" and r.get("architecture") and not r.get("trust_remote_code"):
                try:
                    getattr(transformers, r["architecture"])
                except Exception:  # noqa: BLE001 - the child reports it
                    pass
    return time.perf_counter() - start


def capture_all(rows: list[dict], capture: CaptureConfig | dict, work: Path, workers: int, timeout_s: float,
                mem_cap_gb: float | None, warm: bool = True, preload: bool = True, **wave_options) -> dict:
    """Capture every row not already done, in waves that merge configs by what their
    architecture's capture read (:class:`extract.runs.reads_dedupe.ReadsDedupe`): a row that
    agrees with a captured row of its architecture on every config attribute that capture read
    is not captured; ``counts["duplicate_of"]`` maps it to that row (give the rows to
    :func:`extract.runs.reads_dedupe.with_duplicates`, which :func:`extract.runs.assemble.assemble`
    applies, reads the merges back from the work folder). Each wave is one
    :func:`capture_wave` with the same arguments (``wave_options``: its keyword arguments;
    ``warm`` and ``preload`` apply to the first wave only); a catalog with one row per
    architecture (the default catalog) is one wave.

    Returns:
        counts of :func:`capture_wave` summed over the waves, plus ``waves``,
        ``duplicates_by_reads`` (also counted in ``duplicates``) and ``duplicate_of``.
    """
    capture = capture_config(capture)
    dd = ReadsDedupe(rows)
    wave = dd.first_wave()
    total: dict = {}
    while wave:
        c = capture_wave(wave, capture, work, workers, timeout_s, mem_cap_gb, warm=warm and not total,
                         preload=preload and not total, **wave_options)
        total = {k: total.get(k, 0) + c.get(k, 0) for k in sorted(total.keys() | c.keys())} if total else c
        wave = dd.next_wave(lambda r: recorded_reads(work_dir(work, attempt_key(r, capture))))
        for r in wave:
            clear_merge(work_dir(work, attempt_key(r, capture)))
    by_id = {r["model_id"]: r for r in rows}
    for mid, rep in dd.duplicate_of.items():
        write_merge(work_dir(work, attempt_key(by_id[mid], capture)), rep, attempt_key(by_id[rep], capture))
    total["duplicates"] = total.get("duplicates", 0) + len(dd.duplicate_of)
    total.update(waves=dd.waves, duplicates_by_reads=len(dd.duplicate_of), duplicate_of=dict(dd.duplicate_of))
    return total


def capture_wave(rows: list[dict], capture: CaptureConfig | dict, work: Path, workers: int, timeout_s: float,
                 mem_cap_gb: float | None, retry_failed: bool = ExtractConfig.retry_failed, progress: bool = True,
                 retry_transient: bool = ExtractConfig.retry_transient, warm: bool = True,
                 executor: str = ExtractConfig.executor, ray_params: dict | None = None, schedule: str = "longest_first",
                 worker_options: dict | None = None, preload: bool = True,
                 cpu_budget_s: float | None = ExtractConfig.cpu_budget_s, hang_s: float | None = ExtractConfig.hang_s,
                 retries: int = ExtractConfig.retries, retry_scale: float = 2.0) -> dict:
    """Capture every row of ``rows`` not already done (one wave of :func:`capture_all`).

    A row whose previous attempt ended ``ok``/``incomplete`` or failed for a reason of the
    model is kept; ``timeout``/``oom``/``hang`` failures (:data:`TRANSIENT_ERRORS`) are retried
    when ``retry_transient`` (default), every failure when ``retry_failed``. Rows the catalog
    could not read (``catalog_error_class``) and rows needing custom code are recorded without
    running anything; a row with ``duplicate_of`` (same graph config as another row,
    :func:`extract.sources.catalog.dedupe_configs`) is not captured (the tables give it the
    other row's graphs).

    Limits (:func:`passnet_common.worker.run_isolated`): ``cpu_budget_s`` CPU seconds per
    child, ``hang_s`` wall seconds without CPU progress, ``timeout_s`` wall seconds (a
    backstop when a CPU budget is set). A transient failure is retried within this run up to
    ``retries`` times, each retry with the limits times ``retry_scale`` (CPU time grows a
    little with contention on a loaded machine; the headroom keeps a model near the limit
    from flipping with load). Attempts and seconds are bookkeeping: ``result.json`` and
    ``timings.jsonl`` of the work folder (wall and CPU seconds), never the tables.

    The keyword defaults are those of :class:`extract.config.ExtractConfig` (the ``extract`` params).
    ``executor``: ``local`` or ``ray`` (:mod:`extract.runs.executor`; same isolation and resume).
    ``schedule``: ``longest_first`` (default, :func:`longest_first`) or ``catalog`` (the
    order of ``rows``); it changes only when each model runs, never what is captured.
    ``worker_options``: extra keyword arguments of the executor (e.g. ``freeze_gc``,
    ``wake_on_exit`` of :func:`passnet_common.worker.run_isolated`). ``preload``: import the model
    code in the parent before forking (:func:`preload_libraries`; local executor only).

    Returns:
        counts ``{done_before, ran, failed, skipped, retried, duplicates, retried_in_run}``.
    """
    tqdm_mod.tqdm.monitor_interval = 0  # no monitor thread in a parent that forks
    todo = []
    done_before = skipped = retried = duplicates = 0
    attempts: dict[str, int] = {}
    for row in rows:
        if row.get("duplicate_of"):
            duplicates += 1
            continue
        key = attempt_key(row, capture)
        wd = work_dir(work, key)
        res = wd / "result.json"
        prev_attempts = 0
        if res.exists():
            prev = json.loads(res.read_text())
            prev_attempts = int(prev.get("attempts") or 1)
            transient = prev["status"] == "failed" and prev.get("error_class") in TRANSIENT_ERRORS
            if prev["status"] in ("ok", "incomplete", "skipped") or not (retry_failed or (retry_transient and transient)):
                done_before += 1
                continue
            res.unlink()
            retried += 1
        if row.get("catalog_error_class"):
            wd.mkdir(parents=True, exist_ok=True)
            atomic_write_json(res, failure_result("failed", row["catalog_error_class"], row.get("catalog_error")))
            skipped += 1
            continue
        if row.get("trust_remote_code"):
            wd.mkdir(parents=True, exist_ok=True)
            atomic_write_json(res, failure_result("skipped", "trust_remote_code", remote_code_reason(row) + "; never executed"))
            skipped += 1
            continue
        attempts[key] = prev_attempts + 1
        todo.append((key, (row, capture), wd))
    counts = {"done_before": done_before, "ran": len(todo), "failed": 0, "skipped": skipped, "retried": retried,
              "duplicates": duplicates, "retried_in_run": 0}
    if not todo:
        return counts
    if schedule == "longest_first":
        todo = longest_first(todo, schedule_history(work))
    elif schedule != "catalog":
        raise ValueError(f"schedule must be 'longest_first' or 'catalog', got {schedule!r}")
    bar = tqdm(total=len(todo), desc="capture", unit="model", disable=not progress, dynamic_ncols=True)
    log = work / "timings.jsonl"
    ids = {key: arg[0]["model_id"] for key, arg, _ in todo}
    # failures of local / Hub configs name the file they came from
    where = {key: arg[0]["name"] for key, arg, _ in todo
             if arg[0].get("source") in ("local", "hf", "module") and arg[0].get("name")}
    transient_now: list[str] = []

    def on_done(o):
        wd = work_dir(work, o.key)
        n = attempts[o.key]
        if not o.ok:
            status = "skipped" if o.error_class == "exception:TrustRemoteCodeRefused" else "failed"
            msg = f"{where[o.key]}: {o.error_message}" if o.key in where else o.error_message
            atomic_write_json(wd / "result.json", failure_result(status, o.error_class, msg, n))
            if o.error_class in TRANSIENT_ERRORS:
                transient_now.append(o.key)
        elif not (wd / "result.json").exists():
            atomic_write_json(wd / "result.json", failure_result("failed", "exit:0", "child exited without a result", n))
        else:
            res = json.loads((wd / "result.json").read_text())
            res["attempts"] = n
            atomic_write_json(wd / "result.json", res)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"model_id": ids[o.key], "key": o.key, "ok": o.ok, "error_class": o.error_class,
                                 "seconds": round(o.seconds, 3), "cpu_s": round(getattr(o, "cpu_s", 0.0), 3),
                                 "peak_rss_bytes": o.peak_rss_bytes,
                                 "attempt": n, "time": time.time()}) + "\n")
        bar.set_postfix_str(f"{ids[o.key][:40]} {'ok' if o.ok else o.error_class}")
        bar.update(1)

    work.mkdir(parents=True, exist_ok=True)
    if preload and executor == "local":
        counts["preload_s"] = round(preload_libraries([arg[0] for _, arg, _ in todo]), 3)
    if warm:
        counts["warm_up_s"] = round(warm_up(), 3)
    mem_cap = int(mem_cap_gb * 2**30) if mem_cap_gb else None

    run = get_executor(executor, ray_params)
    scale = 1.0
    for round_ in range(1 + max(0, int(retries))):
        limits = {"cpu_budget_s": cpu_budget_s * scale if cpu_budget_s else None,
                  "hang_s": hang_s * scale if hang_s else None}
        run(todo, capture_task, workers=workers, timeout_s=timeout_s * scale, mem_cap_bytes=mem_cap,
            on_done=on_done, **limits, **(worker_options or {}))
        if not transient_now or round_ == max(0, int(retries)):
            break
        again = set(transient_now)
        transient_now.clear()
        todo = [t for t in todo if t[0] in again]
        for key in again:
            attempts[key] += 1
        counts["retried_in_run"] += len(todo)
        bar.total += len(todo)
        scale *= retry_scale
    counts["failed"] = sum(1 for key, _, wd in _all_keys(rows, capture, work)
                           if key in attempts and json.loads((wd / "result.json").read_text())["status"] == "failed")
    bar.close()
    return counts


def _all_keys(rows, capture, work):
    for row in rows:
        if row.get("duplicate_of"):
            continue
        key = attempt_key(row, capture)
        wd = work_dir(work, key)
        if (wd / "result.json").exists():
            yield key, row, wd
