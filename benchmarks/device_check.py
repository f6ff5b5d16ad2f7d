"""One prepared run on a lent GPU machine: the proxy cost step, GRPO steps and the profile stage's CUDA path.

Four parts, each in its own child process with its own timeout (a crash or a hang of one loses nothing
else), run one after the other by ``run`` inside a global budget (``--budget-s``, default 420 s), each
writing one JSON file under ``--out`` as soon as it ends:

``env.json``
    What ran: Python, torch / CUDA / cuDNN / Triton versions, the device's name, compute capability and
    memory (``torch.cuda.get_device_properties``), the driver (``nvidia-smi``), the version and import
    path of every package the parts use (carried wheels show ``/tmp/site``), the host fingerprint
    (:func:`passnet_common.machine.host_fingerprint`) and whether our Cython extensions
    (``passnet_common/canonical/_cform``, ``_cmerkle``) import here (the parts below never import them:
    the profile reads stored graphs with :func:`passnet_common.store.load_graph`; each part records
    ``cython_extensions_loaded``).
``cost.json``
    The ``proxy_cost`` stage's measurement (:func:`proxy_artifacts.cost.measure_models` with the
    ``proxy`` params block: global batch ``grpo.prompts_per_step`` x ``grpo.num_generations`` sequences of
    ``fidelity.cost.seq_len`` tokens, ``steps`` timed steps after one warm-up, ``rounds`` rounds, both
    routed-experts forwards, one forked child per (round, model)) of the base and the keep-0.5 / 0.25 /
    0.125 proxies; on CUDA one step is the policy forward + backward + AdamW step + the reference's
    forward, timed in ms with ``torch.cuda.synchronize`` around it, peak memory in bytes from
    ``torch.cuda.max_memory_allocated``. ``record`` is what :func:`proxy_artifacts.cost.write_cost` writes
    (``accelerator_step_measured`` true on CUDA), ``report_md`` its markdown report. The part's own process
    makes no CUDA runtime call before the stage forks its children (the device check runs in a fresh
    interpreter); ``parent_cuda_runtime_device_count_calls_during_stage_attempt`` counts the stage's own
    (1: ``timing.machine()`` after the children). When the stage's measurement raises, ``attempts`` keeps
    its error, then the same measurement is tried with ``isolation="exec"`` (a fresh interpreter per child,
    1 round; only when the error names the fork), then one experts implementation at a time.
``grpo_<model>.json`` (``base``, ``r0.5``)
    One GRPO run (healthy, seed 0) of :func:`proxy_artifacts.rl.run_grpo` with the ``proxy.grpo`` params
    except ``steps`` (``--grpo-steps``, default 3) and no capability after RL (``eval_after`` false); the
    run's own clock is given ``torch.cuda.synchronize`` before each reading, so ``timing.steps`` holds the
    wall ms of each optimizer step (rollout + two-pass update as TRL schedules it) and the peak allocated
    bytes of that step. ``steps`` holds the run's rows (reward, KL, loss, gradient norms, log-prob
    mismatch; per-expert loads summarised), ``devices`` where the trainer's model and args were after
    ``train()``. ``capability_after_on_device`` calls :func:`proxy_artifacts.metrics.task_accuracy` on the
    model moved to the device and records what happens (the helper builds its inputs on the CPU).
``profile.json``
    The profile stage's CUDA path (``curate.profile``: ``cuda_timing`` block, dtypes, sizes, compile
    phase beside the timing core, re-measurement) through :func:`curate.profile.run.profile_all`, as
    ``python -m curate profile`` calls it for its ``cuda`` device (no screen, no stress run; ``--profile-runs``
    runs, default 1), on the subgraphs under ``<data>/decompose``, a few at a time (``--group``; rows kept
    after each group). First a probe: one subgraph at the first dtype with the stage as it is (mode
    ``asis``: the parent asks ``torch.cuda.is_available()`` and fingerprints the device before it forks
    the compile and timing children), the next one (up to 3) while every variant is skipped before a
    child runs. A probe ``works`` when a variant is timed or a child got past loading its graph on the
    device with no child failing, ``fails`` when a child failed (``isolation_failed``) and none was timed.
    Where it fails, the whole sample runs in mode
    ``nvml`` (``PYTORCH_NVML_BASED_CUDA_CHECK=1`` and a parent fingerprint read from ``nvidia-smi``: the
    parent initialises no CUDA before it forks) or, when a child under the stage's address-space cap
    (``RLIMIT_AS``, :func:`passnet_common.worker.cap_address_space`) cannot initialise CUDA, ``nvml_nocap``
    (no per-child memory cap); if that times nothing either, ``inproc`` (no fork:
    :func:`curate.profile.variant.profile_subgraph` per variant in one process). ``attempts`` keeps every
    try with its rows; ``chosen_mode`` is the one whose rows are the result. Per variant (subgraph, size,
    dtype): status, ``error_class``, ``speedup_e2e`` (eager / Inductor), ``speedup_compiler`` (Dynamo-only /
    Inductor), ``speedup_dynamo`` (eager / Dynamo-only) with their intervals, the three medians in ms
    (CUDA events) and compile seconds; ``per_subgraph`` groups them. Each group line records how often the
    parent called the CUDA runtime's device count (``parent_cuda_runtime_device_count_calls``: each call
    poisons CUDA in children forked later) and the first call's stack. ``env.json``'s ``cuda_probes`` test
    the causes on their own in fresh interpreters: a child forked after ``torch.cuda.is_available()`` and
    after the profile's parent warm-up (:func:`curate.profile.run.preimport`), each with and without the
    NVML check, and a child under the cap, each initialising CUDA; ``cuda_vms`` is the address space a
    CUDA context maps.

``summary.json`` lists each part's exit code, wall seconds and whether it was stopped at its timeout;
``device_check.log`` holds every part's output.

Run on the GPU machine (wheels and data carried, ``benchmarks/device_check.sh``)::

    bash benchmarks/device_check.sh            # = python3 -m benchmarks.device_check run --data device_data --out $OUT

Locally, on CPU, a labelled dry run of the same parts at tiny sizes (its files say ``dry_run: true`` and
``ingest`` refuses them; ``--device cpu`` hides any GPU from the parts, ``--tiny``: cost at 8 tokens, 1
step, 1 round; GRPO capability before RL on 4 problems x 2 samples; profile timing 1 warm-up, 5 trials)::

    python -m benchmarks.device_check run --device cpu --tiny --subgraphs 2 --dtypes float32 --out /tmp/device_check_dry

``prepare`` copies what the device run reads from a finished build into ``device_data/`` (model files
of the base and proxies, a stratified sample of the decompose stage's subgraphs: the stage's own
``select_sample``); ``ingest DIR`` turns the files that came back into the committed records
``metrics/bench/{device_check,proxy_cost_cuda,grpo_cuda,profile_cuda}.json`` and
``metrics/bench/proxy_cost_cuda_report.md``, each with ``machine`` = the device's ``env.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("base", "r0.5", "r0.25", "r0.125")
GRPO_MODELS = ("base", "r0.5")
PACKAGES = ("torch", "triton", "transformers", "trl", "datasets", "accelerate", "huggingface_hub", "tokenizers",
            "safetensors", "pyarrow", "numpy", "pandas", "dill", "multiprocess", "xxhash", "psutil", "PyYAML",
            "scipy", "scikit-learn", "fsspec", "Cython", "polars", "nvidia-ml-py")
IMPORTS = ("torch", "triton", "transformers", "trl", "datasets", "accelerate", "huggingface_hub", "tokenizers",
           "safetensors", "pyarrow", "numpy", "psutil", "yaml", "dill", "multiprocess")
PART_TIMEOUT_S = {"env": 120, "cost": 150, "grpo": 90, "profile": 600}
"""Wall seconds each part may take at most (the global budget may leave less)."""
RESERVE_S = 8.0
"""Seconds of the budget kept back after the last part (the summary, the log)."""


# ---------------------------------------------------------------------------------------------- helpers


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def _meta(args) -> dict:
    """The label every output carries: which device the parts were asked to use and whether this is a dry run."""
    return {"device": args.device, "tiny": bool(args.tiny), "dry_run": args.device != "cuda" or bool(args.tiny),
            "data": str(args.data)}


def _cython_loaded() -> list[str]:
    return sorted(m for m in sys.modules if m.endswith(("._cform", "._cmerkle")))


def _model_dirs(data: Path, names) -> dict[str, str]:
    return {n: str(data / "proxy" / n) for n in names if (data / "proxy" / n / "config.json").is_file()}


def _nvidia_smi(fields: str) -> list[str] | None:
    try:
        p = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [x.strip() for x in p.stdout.strip().splitlines()[0].split(",")] if p.returncode == 0 and p.stdout.strip() else None


def _error(exc: BaseException) -> dict:
    return {"error_class": type(exc).__name__, "error_message": str(exc)[-1500:]}


def _count_device_count_calls() -> dict:
    """Count this process's calls of the CUDA runtime's device count (``torch._C._cuda_getDeviceCount``: what
    ``torch.cuda.is_available()`` calls without the NVML check, and ``device_count()`` where NVML fails). Each
    poisons the CUDA of children forked later. Returns the live counter {"n", "first_stack"}."""
    import torch  # noqa: PLC0415  (per part)

    calls: dict = {"n": 0, "first_stack": None}
    orig = torch._C._cuda_getDeviceCount

    def counted(*a):
        calls["n"] += 1
        if calls["first_stack"] is None:
            import traceback  # noqa: PLC0415  (only when called)

            calls["first_stack"] = "".join(traceback.format_stack(limit=10)[:-1])[-2000:]
        return orig(*a)

    torch._C._cuda_getDeviceCount = counted
    return calls


def _checkpoint(args, res: dict) -> None:
    """Write a part's result so far (``partial``: true) to its result file: a part stopped at its timeout keeps it."""
    if getattr(args, "result", None):
        _write_json(Path(args.result), {"device_check": _meta(args), "part": getattr(args, "part", None), "ok": False,
                                        "partial": True, **res})


def _require_device(args, fork_safe: bool = False) -> dict:
    """Check that the asked device is there; returns {"cuda_available"}. ``fork_safe``: ask a fresh interpreter,
    so this process makes no CUDA runtime call before it forks (``torch.cuda.is_available()`` would poison its
    forked children's CUDA: the cost stage forks one child per measurement)."""
    if fork_safe:
        p = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True,
                           text=True, timeout=120)
        ok = p.stdout.strip().endswith("True")
    else:
        import torch  # noqa: PLC0415  (each part imports torch itself, after its environment is set)

        ok = torch.cuda.is_available()
    if args.device == "cuda" and not ok:
        raise SystemExit("device_check: --device cuda but torch.cuda.is_available() is false")
    return {"cuda_available": ok}


# CUDA in forked / capped children: each probe is a fresh interpreter that prints one JSON line.
PROBES = {
    # the parent asks torch.cuda.is_available() (what Dynamo does while it compiles, and the profile CLI), then forks
    "fork_after_is_available": """
import json, os, torch
torch.cuda.is_available()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        torch.zeros(1, device="cuda")
        msg = "ok"
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"[:600]
    os.write(w, msg.encode()); os._exit(0)
os.close(w); os.waitpid(pid, 0)
print(json.dumps({"child": os.read(r, 4096).decode()}))
""",
    # the profile's parent: Dynamo / Inductor imported and warmed by a tiny CPU compile (curate.profile.run.preimport), then a fork
    "fork_after_profile_preimport": """
import json, os, torch
from curate.profile.run import preimport
preimport()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        torch.zeros(1, device="cuda")
        msg = "ok"
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"[:600]
    os.write(w, msg.encode()); os._exit(0)
os.close(w); os.waitpid(pid, 0)
print(json.dumps({"child": os.read(r, 4096).decode(), "parent_cuda_initialized": torch.cuda.is_initialized()}))
""",
    # a child under the profile's address-space cap (passnet_common.worker.cap_address_space, mem_cap_gb 4) initialises CUDA
    "cuda_under_rlimit_as": """
import json, psutil, torch
from passnet_common.worker import cap_address_space
lim = cap_address_space(4 << 30)
try:
    torch.zeros(1, device="cuda"); msg = "ok"
except Exception as exc:
    msg = f"{type(exc).__name__}: {exc}"[:600]
print(json.dumps({"child": msg, "rlimit_as_bytes": lim}))
""",
    # the address space a CUDA context maps (what the cap above has to hold)
    "cuda_vms": """
import json, psutil, torch
v0 = psutil.Process().memory_info().vms
torch.zeros(1, device="cuda")
m = psutil.Process().memory_info()
print(json.dumps({"vms_before_bytes": v0, "vms_after_bytes": m.vms, "rss_after_bytes": m.rss}))
""",
}


def _probe(name: str, env_extra: dict | None = None, timeout: float = 90.0) -> dict:
    env = dict(os.environ, **(env_extra or {}))
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", PROBES[name]], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"probe": name, "timed_out": True}
    out = {"probe": name, "rc": p.returncode, "seconds": round(time.perf_counter() - t0, 1), **(env_extra or {})}
    try:
        out.update(json.loads(p.stdout.strip().splitlines()[-1]))
    except (IndexError, json.JSONDecodeError):
        out["stderr_tail"] = p.stderr[-800:]
    return out


# ---------------------------------------------------------------------------------------------- part: env


def part_env(args) -> dict:
    import importlib  # noqa: PLC0415  (per part)
    import importlib.metadata as md  # noqa: PLC0415  (per part)

    out: dict = {"python": sys.version, "executable": sys.executable, "platform": platform.platform(),
                 "pythonpath": os.environ.get("PYTHONPATH"), "packages": {}, "imports": {}}
    for name in PACKAGES:
        try:
            out["packages"][name] = md.version(name)
        except md.PackageNotFoundError:
            out["packages"][name] = None
    for mod in IMPORTS:
        t0 = time.perf_counter()
        try:
            m = importlib.import_module(mod)
            out["imports"][mod] = {"ok": True, "version": getattr(m, "__version__", None), "file": getattr(m, "__file__", None),
                                   "seconds": round(time.perf_counter() - t0, 2)}
        except Exception as exc:  # noqa: BLE001 - recorded
            out["imports"][mod] = {"ok": False, **_error(exc)}
    import torch  # noqa: PLC0415  (per part)

    from passnet_common.machine import host_fingerprint  # noqa: PLC0415  (per part)

    out["host"] = host_fingerprint()
    out["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda, "git": getattr(torch.version, "git_version", None),
                    "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
                    "cuda_available": torch.cuda.is_available(),
                    "nvml_device_count": torch.cuda._device_count_nvml() if hasattr(torch.cuda, "_device_count_nvml") else None}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        out["cuda_device"] = {"name": p.name, "capability": f"{p.major}.{p.minor}", "total_memory_bytes": int(p.total_memory),
                              "multiprocessors": p.multi_processor_count, "count": torch.cuda.device_count(),
                              "bf16_supported": torch.cuda.is_bf16_supported()}
        x = torch.ones(1024, 1024, device="cuda")
        out["cuda_device"]["smoke_matmul_ok"] = bool(torch.isfinite(x @ x).all())
    smi = _nvidia_smi("name,driver_version,memory.total,compute_cap,clocks.max.sm")
    out["nvidia_smi"] = dict(zip(("name", "driver_version", "memory_total", "compute_cap", "clocks_max_sm"), smi)) if smi else None
    try:
        from passnet_common.canonical import _cform, _cmerkle  # noqa: F401, PLC0415  (optional compiled extensions: recorded whether they import)

        out["cython_extensions_import"] = "ok"
    except ImportError as exc:
        out["cython_extensions_import"] = f"ImportError: {exc}"
    out["grouped_mm_available"] = {"torch.nn.functional.grouped_mm": hasattr(torch.nn.functional, "grouped_mm"),
                                   "torch._grouped_mm": hasattr(torch, "_grouped_mm")}
    if torch.cuda.is_available():
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415  (per part)

        nvml = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
        todo = [("fork_after_is_available", None), ("fork_after_is_available", nvml), ("fork_after_profile_preimport", None),
                ("fork_after_profile_preimport", nvml), ("cuda_under_rlimit_as", None), ("cuda_vms", None)]
        with ThreadPoolExecutor(len(todo)) as pool:  # independent fresh interpreters, at once
            out["cuda_probes"] = list(pool.map(lambda t: _probe(*t), todo))
    out["compilers"] = {c: shutil.which(c) for c in ("cc", "gcc", "g++", "nvcc")}
    out["data_manifest"] = json.loads((args.data / "manifest.json").read_text()) if (args.data / "manifest.json").is_file() else None
    return out


# ---------------------------------------------------------------------------------------------- part: cost


def part_cost(args) -> dict:
    dev = _require_device(args, fork_safe=True)
    calls = _count_device_count_calls()
    from proxy_artifacts.config import load_proxy_params  # noqa: PLC0415  (per part)
    from proxy_artifacts.cost import measure_models, measure_side_by_side, write_cost  # noqa: PLC0415  (per part)

    prm = load_proxy_params(str(ROOT / "params.yaml"))
    if args.tiny:
        prm = {**prm, "fidelity": {**prm["fidelity"], "cost": {"seq_len": 8, "steps": 1, "rounds": 1}}}
    names = [n for n in args.models.split(",") if n]
    models = _model_dirs(args.data, names)
    if "base" not in models:
        raise SystemExit(f"device_check cost: no base model under {args.data}/proxy")
    gp, cp = prm["grpo"], prm["fidelity"]["cost"]
    kw = dict(batch=int(gp["prompts_per_step"]) * int(gp["num_generations"]), seq_len=int(cp["seq_len"]),
              steps=int(cp["steps"]), rounds=int(cp["rounds"]), threads=int(gp["threads"]))
    res = {"models": models, "settings": kw, "attempts": [], **dev}
    deadline = float(args.deadline) if args.deadline else time.time() + PART_TIMEOUT_S["cost"]

    def attempt(label: str, fn):
        t0 = time.perf_counter()
        try:
            side = fn()
            res["attempts"].append({"attempt": label, "ok": True, "seconds": round(time.perf_counter() - t0, 2)})
            return side
        except Exception as exc:  # noqa: BLE001 - recorded, next attempt
            res["attempts"].append({"attempt": label, "ok": False, "seconds": round(time.perf_counter() - t0, 2), **_error(exc)})
            print(f"device_check cost: {label} failed: {type(exc).__name__}: {str(exc)[-600:]}", flush=True)
            _checkpoint(args, res)
            return None

    side = attempt("stage: measure_models (fork, from_pretrained's forward + eager)", lambda: measure_models(models, prm))
    res["parent_cuda_runtime_device_count_calls_during_stage_attempt"] = calls["n"]  # 1 when it ends: machine() after the children
    res["parent_first_device_count_stack"] = calls["first_stack"]
    if side is None:
        msg = res["attempts"][-1].get("error_message", "")
        # a child that cannot use CUDA after the fork: the stage's other isolation (a fresh interpreter per child)
        fallbacks = [("isolation exec, both forwards, 1 round",
                      lambda: measure_side_by_side(models, isolation="exec", **{**kw, "rounds": 1}))] \
            if "fork" in msg.lower() or "re-initialize" in msg.lower() else []
        fallbacks += [("fork, from_pretrained's forward only", lambda: measure_side_by_side(models, experts_implementations=(None,), **kw)),
                      ("fork, eager forward only", lambda: measure_side_by_side(models, experts_implementations=("eager",), **kw))]
        for label, fn in fallbacks:
            if deadline - time.time() < 20:
                res["attempts"].append({"attempt": label, "ok": False, "skipped": "out of time"})
                continue
            side = attempt(label, fn)
            if side is not None:
                break
    if side is not None:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = "python -m benchmarks.device_check part cost (proxy_artifacts.cost.measure_models, params.yaml proxy block" + \
                (", tiny sizes)" if args.tiny else ")")
            rec = write_cost(side, {}, Path(tmp) / "cost.json", Path(tmp) / "report.md", command=cmd,
                             fidelity_params=prm["fidelity"])
            res["record"] = rec
            res["report_md"] = (Path(tmp) / "report.md").read_text()
    res["cython_extensions_loaded"] = _cython_loaded()
    return res


# ---------------------------------------------------------------------------------------------- part: grpo


def _slim_row(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k != "expert_load"}
    loads = r.get("expert_load") or []
    out["expert_load_max_share"] = [x.get("max_share") for x in loads]
    out["expert_load_entropy_norm"] = [x.get("entropy_norm") for x in loads]
    return out


def part_grpo(args) -> dict:
    dev = _require_device(args)
    import torch  # noqa: PLC0415  (per part)

    from proxy_artifacts import rl  # noqa: PLC0415  (per part: TRL and datasets come with it)
    from proxy_artifacts.config import load_proxy_params  # noqa: PLC0415  (per part)

    name = args.model
    model_dir = _model_dirs(args.data, [name]).get(name)
    if model_dir is None:
        raise SystemExit(f"device_check grpo: no model {name} under {args.data}/proxy")
    gp = dict(load_proxy_params(str(ROOT / "params.yaml"))["grpo"], steps=int(args.grpo_steps), eval_after=False)
    if args.tiny:
        gp.update(eval_problems=4, eval_samples=2)
    cuda = torch.cuda.is_available()
    seen: dict = {}

    class RecordingTrainer(rl.GRPOTrainer):
        """The project's trainer, recording where the model and args are once ``train()`` returns."""

        def train(self, *a, **kw):
            seen["args_device"] = str(self.args.device)
            try:
                return super().train(*a, **kw)
            finally:
                seen["model_device_after_train"] = str(next(self.model.parameters()).device)
                seen["ref_model_device"] = str(next(self.ref_model.parameters()).device) \
                    if getattr(self, "ref_model", None) is not None else None

    rl.GRPOTrainer = RecordingTrainer

    def clock() -> float:
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    t0 = time.perf_counter()
    res = rl.run_grpo(model_dir, "none", gp, out_dir=None, clock=clock)
    wall = time.perf_counter() - t0
    out = {"model": name, "model_dir": model_dir, "grpo_params": {k: v for k, v in gp.items()}, "wall_s": round(wall, 2),
           "devices": seen, **dev,
           "summary": {k: v for k, v in res.items() if k not in ("steps", "timing")},
           "steps": [_slim_row(r) for r in res["steps"]], "timing": res["timing"]}
    if cuda:
        out["cuda_max_memory_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        out["cuda_allocations"] = int(torch.cuda.memory_stats().get("allocation.all.allocated", 0))
    st = [s["step_time_ms"] for s in res["timing"]["steps"]]
    out["step_time_ms"] = st
    out["step_time_ms_after_first"] = sorted(st[1:])[len(st[1:]) // 2] if len(st) > 1 else None
    out["peak_memory_bytes_max"] = max((s["peak_memory_bytes"] for s in res["timing"]["steps"]), default=None)
    out["reward"] = [r.get("reward") for r in res["steps"]]
    out["capability_after_on_device"] = _capability_on_device(model_dir, "cuda" if cuda else "cpu")
    out["cython_extensions_loaded"] = _cython_loaded()
    return out


def _capability_on_device(model_dir: str, device: str) -> dict:
    """:func:`proxy_artifacts.metrics.task_accuracy` on 2 held-out problems with the model on ``device``."""
    import torch  # noqa: PLC0415  (per part)
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415  (per part)

    from proxy_artifacts.metrics import task_accuracy  # noqa: PLC0415  (per part)

    tok = AutoTokenizer.from_pretrained(model_dir)
    m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
    try:
        return {"device": device, "ok": True, "heldout_acc_2": task_accuracy(m, tok, 2, "heldout")}
    except Exception as exc:  # noqa: BLE001 - recorded
        return {"device": device, "ok": False, **_error(exc)}


# ---------------------------------------------------------------------------------------------- part: profile

PROFILE_MODES = ("asis", "nvml", "nvml_nocap", "inproc")


def _sample_rows(data: Path, n: int) -> list[dict]:
    """The subgraph rows under ``data/decompose`` (prepared by ``prepare`` from the stage's ``select_sample``):
    the profilable ones, sorted by hash, the first ``n``. Read with pyarrow (polars may be absent)."""
    import pyarrow.parquet as pq  # noqa: PLC0415  (per part)

    rows = pq.read_table(data / "decompose" / "subgraphs.parquet").to_pylist()
    ok = sorted((r for r in rows if r.get("status") == "ok"), key=lambda r: r["subgraph_hash"])
    store = data / "decompose" / "subgraph_store"
    ok = [r for r in ok if (store / r["subgraph_hash"][:2] / r["subgraph_hash"] / "graph.json").is_file()]
    return ok[:n]


ROW_KEYS = ("subgraph_hash", "size", "size_kind", "dtype", "run", "device", "status", "error_code", "error_class",
            "error_message", "skip_reason", "deterministic", "min_pass_t", "speedup_e2e", "speedup_e2e_ci_low",
            "speedup_e2e_ci_high", "speedup_compiler", "speedup_compiler_ci_low", "speedup_compiler_ci_high",
            "speedup_dynamo", "speedup_dynamo_ci_low", "speedup_dynamo_ci_high", "overhead_bound", "eager_median_ms",
            "dynamo_median_ms", "inductor_median_ms", "eager_wall_median_ms", "dynamo_wall_median_ms",
            "inductor_wall_median_ms", "stable", "trials", "timing_attempts", "remeasure_pass", "compile_s",
            "compile_s_dynamo", "compile_s_warm", "eager_check_ms", "device_name", "cuda_version", "cuda_capability",
            "torch_version", "time_seconds", "check_seconds", "clock")


def _slim_profile_row(r: dict) -> dict:
    out = {k: r.get(k) for k in ROW_KEYS if k in r}
    if isinstance(out.get("error_message"), str):
        out["error_message"] = out["error_message"][:400]
    return out


def _nvml_fingerprint(device: str = "cpu") -> dict:
    """:func:`curate.profile.variant.fingerprint` without initialising CUDA in the calling process: the
    device's name and capability from ``nvidia-smi`` (the timing children fingerprint themselves)."""
    import torch  # noqa: PLC0415  (per part)

    from passnet_common.machine import host_fingerprint  # noqa: PLC0415  (per part)

    fp = host_fingerprint()
    fp["device_name"] = fp["cpu_model"]
    if device.startswith("cuda"):
        smi = _nvidia_smi("name,compute_cap")
        if smi:
            fp.update(device_name=smi[0], cuda_version=torch.version.cuda, cuda_capability=smi[1])
    return fp


def profile_attempt(args) -> int:
    """One mode of the profile part on ``--hashes`` (child process; rows appended to ``--rows-out`` per group)."""
    mode = args.mode
    cache = Path(args.work) / "inductor_cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)  # as the stage's CLI: before Dynamo / Inductor load
    if mode in ("nvml", "nvml_nocap", "inproc"):
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    import torch  # noqa: PLC0415  (after the environment above)

    calls = _count_device_count_calls()
    from curate.profile import run as prun  # noqa: PLC0415  (after the environment above)
    from curate.profile.config import ProfileConfig  # noqa: PLC0415  (after the environment above)
    from curate.profile.sizes import write_variants  # noqa: PLC0415  (after the environment above)
    from curate.profile.variant import _setup_child, profile_subgraph  # noqa: PLC0415  (after the environment above)
    from passnet_common.params import load_params  # noqa: PLC0415  (after the environment above)
    from passnet_common.store import store_path  # noqa: PLC0415  (after the environment above)

    cfg = ProfileConfig.from_params(load_params(str(ROOT / "params.yaml"), "curate").get("profile"), "curate.profile")
    device = args.device
    if mode == "asis" and device == "cuda":
        # python -m curate profile: `if cfg.cuda_when_available: if torch.cuda.is_available(): devices.append("cuda")`
        if not (cfg.cuda_when_available and torch.cuda.is_available()):
            raise SystemExit("device_check profile: the stage would not profile on cuda here")
    if mode in ("nvml", "nvml_nocap"):
        prun.fingerprint = _nvml_fingerprint
    timing = cfg.cuda_timing.to_params()
    if args.tiny:
        timing.update(warmup=1, trials=5, min_trials=5)
    dtypes = [d for d in args.dtypes.split(",") if d] or list(cfg.dtypes)
    pcfg = {"device": device, "dtypes": dtypes, "dtype": dtypes[0], "seed": cfg.seed, "threads": cfg.threads,
            "timing": timing, "cache_dir": str(cache), "candidate": "inductor"}
    rows_by_hash = {r["subgraph_hash"]: r for r in _sample_rows(args.data, 10**9)}
    hashes = [h for h in args.hashes.split(",") if h]
    store = args.data / "decompose" / "subgraph_store"
    out = Path(args.work) / "profile"
    mem_cap = None if mode == "nvml_nocap" else int(cfg.mem_cap_gb * 2**30)
    rows_out = Path(args.rows_out)
    info = {"mode": mode, "dtypes": dtypes, "timing": timing, "mem_cap_bytes": mem_cap, "runs": args.profile_runs,
            "compile_workers": cfg.compile_workers, "overlap_compile": cfg.overlap_compile, "timeout_s": cfg.timeout_s,
            "remeasure_passes": cfg.remeasure_passes, "sizes": cfg.sizes.to_params(),
            "nvml_check": os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK")}
    with open(rows_out, "a") as f:
        f.write(json.dumps({"info": info}) + "\n")
    group = max(1, int(args.group))
    for i in range(0, len(hashes), group):
        part = hashes[i:i + group]
        t0 = time.perf_counter()
        if mode == "inproc":
            _setup_child(pcfg)
            rows = []
            for h in part:
                shapes = write_variants(store_path(store, h), out / "variants" / h[:2] / h, cfg.sizes.to_params())
                for v in shapes:
                    for dt in dtypes:
                        base = {"subgraph_hash": h, "size": v["size"], "size_kind": v.get("size_kind"), "dtype": dt, "run": 0,
                                "device": device}
                        if not v["folder"]:
                            rows.append({**base, "status": "skipped", "skip_reason": v.get("skip_reason")})
                            continue
                        try:
                            rows.append({**base, **profile_subgraph(Path(v["folder"]), {**pcfg, "dtype": dt}, "inductor")})
                        except Exception as exc:  # noqa: BLE001 - recorded
                            rows.append({**base, "status": "isolation_failed", **_error(exc)})
            stats = {}
        else:
            plan = prun.run_plan(part, args.profile_runs, cfg.agreement_sample, False, cfg.sample_seed)
            rows, stats = prun.profile_all([rows_by_hash[h] for h in part], store, pcfg, out, plan, cfg.sizes.to_params(),
                                           compile_workers=cfg.compile_workers, timeout_s=cfg.timeout_s,
                                           mem_cap_bytes=mem_cap, remeasure_passes=cfg.remeasure_passes,
                                           overlap_compile=cfg.overlap_compile, skip_over_cap=cfg.skip_over_time_cap,
                                           screen=None, stress_confirm=cfg.stress_confirm, replicates=cfg.replicates,
                                           extra_replicates=cfg.extra_replicates)
        with open(rows_out, "a") as f:
            f.write(json.dumps({"group": part, "seconds": round(time.perf_counter() - t0, 2), "stats": stats,
                                "cuda_initialized_in_parent": bool(torch.cuda.is_initialized()),
                                "parent_cuda_runtime_device_count_calls": calls["n"],
                                "parent_first_device_count_stack": calls["first_stack"],
                                "cython_extensions_loaded": _cython_loaded(),
                                "rows": [_slim_profile_row(r) for r in rows]}, default=str) + "\n")
    return 0


def _read_attempt(path: Path) -> dict:
    info, groups, rows = None, [], []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "info" in d:
                info = d["info"]
            else:
                groups.append({k: v for k, v in d.items() if k != "rows"})
                rows += d["rows"]
    return {"info": info, "groups": groups, "rows": rows}


def _timed(rows: list[dict]) -> int:
    return sum(1 for r in rows if r.get("speedup_e2e") is not None)


REACHED = ("ok", "unstable", "accuracy_error", "compile_failure", "runtime_crash", "eager_failed")


def _verdict(rows: list[dict]) -> str:
    """``works``: a variant was timed, or a compile / timing child got past loading its graph on the device
    (a check's status or skip reason) with no child failing (``isolation_failed``: the way a child that cannot
    initialise CUDA ends); ``fails``: a child failed and nothing was timed; else ``inconclusive`` (every
    variant skipped before a child ran)."""
    failed = sum(1 for r in rows if r.get("status") == "isolation_failed")
    checked = ("size_inconsistent", "over_time_cap", "no_cpu_kernel")
    reached = sum(1 for r in rows if r.get("status") in REACHED or (
        r.get("status") == "skipped" and (r.get("skip_reason") in checked or str(r.get("skip_reason")).startswith("degenerate"))))
    if _timed(rows) or (reached and not failed):
        return "works"
    return "fails" if failed else "inconclusive"


def _status_counts(rows: list[dict]) -> dict:
    c: dict = {}
    for r in rows:
        k = f"{r.get('status')}" + (f"/{r.get('error_class')}" if r.get("error_class") else "") + \
            (f"/{r.get('skip_reason')}" if r.get("skip_reason") else "")
        c[k] = c.get(k, 0) + 1
    return dict(sorted(c.items()))


def _per_subgraph(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        d = out.setdefault(r["subgraph_hash"], {"variants": 0, "timed": 0, "statuses": {}, "speedup_e2e": {},
                                                 "speedup_compiler": {}, "errors": {}})
        key = f"{r.get('size')}/{r.get('dtype')}"
        d["variants"] += 1
        d["statuses"][key] = r.get("status")
        if r.get("speedup_e2e") is not None:
            d["timed"] += 1
            d["speedup_e2e"][key] = r.get("speedup_e2e")
            d["speedup_compiler"][key] = r.get("speedup_compiler")
        if r.get("error_class"):
            d["errors"][key] = r.get("error_class")
    return out


def part_profile(args) -> dict:
    """The stage as it is on a probe subgraph; where it times nothing, the whole sample in the mode the
    CUDA probes point to (``nvml``, or ``nvml_nocap`` when a capped child cannot initialise CUDA), then
    ``inproc`` for what is left if that mode timed nothing either."""
    deadline = float(args.deadline) if args.deadline else time.time() + PART_TIMEOUT_S["profile"]
    sample = _sample_rows(args.data, int(args.subgraphs))
    if not sample:
        raise SystemExit(f"device_check profile: no subgraphs under {args.data}/decompose")
    hashes = [r["subgraph_hash"] for r in sample]
    forced = [m for m in args.profile_modes.split(",") if m]
    first_dtype = (args.dtypes.split(",")[0] if args.dtypes else "") or "float32"
    work = Path(tempfile.mkdtemp(prefix="device_check_profile_"))
    res: dict = {"sample": hashes, "probe": hashes[:1], "attempts": [], "chosen_mode": None}

    def attempt(mode: str, hs: list[str], dtypes: str, timeout: float, tag: str) -> dict:
        rows_out = work / f"{mode}_{tag}.jsonl"
        cmd = [sys.executable, "-m", "benchmarks.device_check", "profile-attempt", "--mode", mode, "--hashes", ",".join(hs),
               "--dtypes", dtypes, "--rows-out", str(rows_out), "--work", str(work / mode), "--data", str(args.data),
               "--device", args.device, "--group", str(args.group), "--profile-runs", str(args.profile_runs)]
        cmd += ["--tiny"] if args.tiny else []
        print(f"device_check profile: {mode} {tag} on {len(hs)} subgraph(s), timeout {timeout:.0f} s", flush=True)
        rc, secs, timed_out = _run_child(cmd, timeout, None)
        a = _read_attempt(rows_out)
        out = {"mode": mode, "tag": tag, "rc": rc, "seconds": round(secs, 1), "timed_out": timed_out, "subgraphs": hs,
               "dtypes": dtypes or "params", "info": a["info"], "groups": a["groups"], "status_counts": _status_counts(a["rows"]),
               "timed": _timed(a["rows"]), "rows": a["rows"]}
        res["attempts"].append(out)
        _checkpoint(args, res)
        return out

    def left() -> float:
        return deadline - time.time() - 10

    rows: list[dict] = []
    if forced:
        for mode in forced:
            if left() < 30:
                break
            full = attempt(mode, hashes, args.dtypes, left(), "full")
            if _verdict(full["rows"]) == "works":
                res["chosen_mode"], rows = mode, full["rows"]
                break
    else:
        probe = None
        for h in hashes[:3]:  # the stage as it is, one subgraph at a time until one says whether CUDA works in its children
            probe = attempt("asis", [h], first_dtype, min(150.0, left()), "probe")
            if _verdict(probe["rows"]) != "inconclusive" or left() < 60:
                break
        res["probe_verdict"] = _verdict(probe["rows"])
        if res["probe_verdict"] == "works":
            res["chosen_mode"] = "asis"
            full = attempt("asis", hashes, args.dtypes, left(), "full") if left() >= 30 else probe
            rows = full["rows"] or probe["rows"]
        elif args.device == "cuda":
            cap = _probe("cuda_under_rlimit_as", {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}, timeout=60)
            res["rlimit_probe"] = cap
            mode = "nvml" if cap.get("child") == "ok" else "nvml_nocap"
            if left() >= 30:
                full = attempt(mode, hashes, args.dtypes, left(), "full")
                if _verdict(full["rows"]) == "works":
                    res["chosen_mode"], rows = mode, full["rows"]
                elif left() >= 30:  # no fork at all, on the subgraphs that mode did not reach
                    done = {r["subgraph_hash"] for r in full["rows"] if r.get("status") not in ("isolation_failed",)}
                    rest = [h for h in hashes if h not in done] or hashes
                    inp = attempt("inproc", rest, args.dtypes, left(), "full")
                    if _verdict(inp["rows"]) == "works":
                        res["chosen_mode"], rows = "inproc", inp["rows"]
    res["rows"] = rows
    res["per_subgraph"] = _per_subgraph(rows)
    res["status_counts"] = _status_counts(rows)
    res["timed_variants"] = _timed(rows)
    res["subgraphs_timed"] = sum(1 for v in res["per_subgraph"].values() if v["timed"])
    shutil.rmtree(work, ignore_errors=True)
    return res


# ---------------------------------------------------------------------------------------------- orchestration


def _run_child(cmd: list[str], timeout: float, log, env: dict | None = None) -> tuple[int | None, float, bool]:
    """Run ``cmd`` in its own session with ``timeout`` wall seconds (the whole group killed at the limit);
    output to ``log`` (an open file) or inherited. Returns (exit code or None, seconds, timed out)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT if log else None, start_new_session=True,
                         env=env)
    try:
        rc = p.wait(timeout=max(1.0, timeout))
        return rc, time.perf_counter() - t0, False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        return None, time.perf_counter() - t0, True


def run_parts(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    deadline = t_start + float(args.budget_s)
    parts = [p for p in args.parts.split(",") if p]
    plan = []
    for p in parts:
        if p == "grpo":
            plan += [(f"grpo_{m}", "grpo", ["--model", m]) for m in args.grpo_models.split(",") if m]
        else:
            plan.append((p, p, []))
    summary = {"device_check": _meta(args), "budget_s": args.budget_s, "started_unix": round(t_start, 1),
               "argv": sys.argv, "parts": {}}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # a CPU dry run stays on the CPU even where a GPU is visible
    base = ["--data", str(args.data), "--device", args.device, "--models", args.models, "--grpo-steps", str(args.grpo_steps),
            "--subgraphs", str(args.subgraphs), "--dtypes", args.dtypes, "--group", str(args.group),
            "--profile-runs", str(args.profile_runs), "--profile-modes", args.profile_modes]
    base += ["--tiny"] if args.tiny else []
    with open(out / "device_check.log", "a", buffering=1) as log:
        for name, kind, extra in plan:
            left = deadline - time.time() - RESERVE_S
            if left < 20:
                summary["parts"][name] = {"skipped": f"budget left {left:.0f} s"}
                log.write(f"\n===== {name}: skipped, budget left {left:.0f} s\n")
                continue
            timeout = min(PART_TIMEOUT_S[kind], left)
            cmd = [sys.executable, "-m", "benchmarks.device_check", "part", kind, "--result", str(out / f"{name}.json"),
                   "--deadline", str(time.time() + timeout - 5), *base, *extra]
            log.write(f"\n===== {name}: {' '.join(cmd)} (timeout {timeout:.0f} s)\n")
            log.flush()
            rc, secs, timed_out = _run_child(cmd, timeout, log, env)
            summary["parts"][name] = {"rc": rc, "seconds": round(secs, 1), "timed_out": timed_out, "timeout_s": round(timeout),
                                      "result": (out / f"{name}.json").is_file()}
            log.write(f"===== {name}: rc {rc}, {secs:.1f} s{', TIMED OUT' if timed_out else ''}\n")
            summary["wall_s"] = round(time.time() - t_start, 1)
            _write_json(out / "summary.json", summary)
    summary["wall_s"] = round(time.time() - t_start, 1)
    _write_json(out / "summary.json", summary)
    print(json.dumps(summary["parts"], indent=1))
    return 0


PARTS = {"env": part_env, "cost": part_cost, "grpo": part_grpo, "profile": part_profile}


def run_part(args) -> int:
    t0 = time.perf_counter()
    result = Path(args.result)
    try:
        res = PARTS[args.part](args)
        ok = True
    except BaseException as exc:  # noqa: BLE001 - recorded, then re-raised for the exit code
        import traceback  # noqa: PLC0415  (only on failure)

        traceback.print_exc()
        res, ok = {**_error(exc), "traceback": traceback.format_exc()[-4000:]}, False
    res = {"device_check": _meta(args), "part": args.part, "ok": ok, "seconds": round(time.perf_counter() - t0, 2), **res}
    _write_json(result, res)
    return 0 if ok else 1


# ---------------------------------------------------------------------------------------------- prepare / ingest

MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
               "special_tokens_map.json")


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def prepare(args) -> int:
    """Copy the model files and a subgraph sample of a finished build ``--build`` into ``--dest``."""
    build, dest = Path(args.build), Path(args.dest)
    src = {"base": build / "data/proxy/base", **{n: build / f"data/proxy/proxies/{n}/model" for n in MODELS[1:]}}
    files = {}
    for n in [m for m in args.models.split(",") if m]:
        d = src[n]
        if not (d / "config.json").is_file():
            print(f"prepare: {d} not there yet, left out")
            continue
        (dest / "proxy" / n).mkdir(parents=True, exist_ok=True)
        for f in MODEL_FILES:
            if (d / f).is_file():
                shutil.copy2(d / f, dest / "proxy" / n / f)
                files[f"proxy/{n}/{f}"] = {"bytes": (d / f).stat().st_size, "sha256": _sha256(d / f)}
    dec = Path(args.decompose) if args.decompose else build / "data/decompose"
    if (dec / "subgraphs.parquet").is_file() and args.subgraphs > 0:
        import pyarrow as pa  # noqa: PLC0415  (prepare only)
        import pyarrow.parquet as pq  # noqa: PLC0415  (prepare only)

        from curate.profile.cli import select_sample  # noqa: PLC0415  (prepare only: imports polars)
        from curate.profile.config import ProfileConfig  # noqa: PLC0415  (prepare only)
        from passnet_common.params import load_params  # noqa: PLC0415  (prepare only)

        cfg = ProfileConfig.from_params(load_params(str(ROOT / "params.yaml"), "curate").get("profile"), "curate.profile")
        table = pq.read_table(dec / "subgraphs.parquet")
        sample = select_sample(table.to_pylist(), int(args.subgraphs), cfg.sample_seed)
        keep = {r["subgraph_hash"] for r in sample}
        (dest / "decompose").mkdir(parents=True, exist_ok=True)
        mask = pa.array([h in keep for h in table.column("subgraph_hash").to_pylist()])
        pq.write_table(table.filter(mask), dest / "decompose" / "subgraphs.parquet")
        for h in sorted(keep):
            s = dec / "subgraph_store" / h[:2] / h
            t = dest / "decompose" / "subgraph_store" / h[:2] / h
            if t.exists():
                shutil.rmtree(t)
            shutil.copytree(s, t)
        files["decompose/subgraphs.parquet"] = {"rows": len(keep), "sample_seed": cfg.sample_seed,
                                                "sample_size": int(args.subgraphs)}
    elif args.subgraphs > 0:
        print(f"prepare: {dec}/subgraphs.parquet not there yet, left out")
    total = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    _write_json(dest / "manifest.json", {"source_build": str(build), "decompose": str(dec), "files": files, "bytes_total": total})
    print(f"prepare: {dest}: {total / 2**20:.1f} MiB")
    return 0


def ingest(args) -> int:
    """Write the committed records from the files of a device run (``DIR``)."""
    d, dest = Path(args.dir), Path(args.dest)
    load = {p.stem: json.loads(p.read_text()) for p in sorted(d.glob("*.json"))}
    env = load.get("env")
    if env is None:
        raise SystemExit(f"ingest: {d}/env.json missing")
    meta = env.get("device_check") or {}
    if meta.get("dry_run") or not (env.get("torch") or {}).get("cuda_available"):
        if not args.allow_dry_run:
            raise SystemExit(f"ingest: {d} is a dry run or saw no CUDA device ({meta}); nothing written")
        if Path(args.dest).resolve() == (ROOT / "metrics" / "bench").resolve():
            raise SystemExit("ingest: a dry run's records never go to metrics/bench: give --dest")
    machine = {k: env.get(k) for k in ("host", "torch", "cuda_device", "nvidia_smi", "python", "packages")}
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    summ = load.get("summary") or {}
    rec = {"what": "benchmarks/device_check.py on a lent GPU machine", "device_check": meta, "machine": machine,
           "env": env, "parts": summ.get("parts"), "wall_s": summ.get("wall_s"), "budget_s": summ.get("budget_s")}
    _write_json(dest / "device_check.json", rec)
    written.append("device_check.json")
    cost = load.get("cost")
    if cost and cost.get("record"):
        r = dict(cost["record"])
        r.update(machine_host=r.get("machine"), machine=machine, device_check=meta, attempts=cost.get("attempts"),
                 settings=cost.get("settings"))
        _write_json(dest / "proxy_cost_cuda.json", r)
        (dest / "proxy_cost_cuda_report.md").write_text(cost.get("report_md") or "")
        written += ["proxy_cost_cuda.json", "proxy_cost_cuda_report.md"]
    grpo = {k[len("grpo_"):]: v for k, v in load.items() if k.startswith("grpo_")}
    if grpo:
        _write_json(dest / "grpo_cuda.json", {"device_check": meta, "machine": machine, "runs": grpo})
        written.append("grpo_cuda.json")
    prof = load.get("profile")
    if prof:
        _write_json(dest / "profile_cuda.json", {"device_check": meta, "machine": machine, **prof})
        written.append("profile_cuda.json")
    print(f"ingest: wrote {', '.join(written)} under {dest}")
    return 0


# ---------------------------------------------------------------------------------------------- CLI


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=ROOT / "device_data", help="prepared inputs (see prepare)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (a dry run: labelled so, never ingested)")
    p.add_argument("--models", default=",".join(MODELS), help="cost part: models to time side by side")
    p.add_argument("--grpo-steps", type=int, default=3)
    p.add_argument("--subgraphs", type=int, default=12, help="profile part: subgraphs of the prepared sample")
    p.add_argument("--dtypes", default="", help="profile part: dtypes (default: curate.profile.dtypes)")
    p.add_argument("--group", type=int, default=4, help="profile part: subgraphs per profile_all call")
    p.add_argument("--profile-runs", type=int, default=1)
    p.add_argument("--profile-modes", default="",
                   help=f"profile part: run the whole sample in these modes ({','.join(PROFILE_MODES)}) in order until one times a "
                        "variant, instead of the probe (default)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.device_check", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="every part, each in its own child with a timeout")
    _common(r)
    r.add_argument("--out", default=os.environ.get("OUT") or "/tmp/device_check_out")
    r.add_argument("--budget-s", type=float, default=420.0)
    r.add_argument("--parts", default="env,cost,grpo,profile")
    r.add_argument("--grpo-models", default=",".join(GRPO_MODELS))
    p = sub.add_parser("part", help="one part in this process (run calls it)")
    p.add_argument("part", choices=sorted(PARTS))
    p.add_argument("--result", required=True)
    p.add_argument("--deadline", default=None)
    p.add_argument("--model", default="base")
    _common(p)
    a = sub.add_parser("profile-attempt", help="one mode of the profile part (part profile calls it)")
    a.add_argument("--mode", choices=PROFILE_MODES, required=True)
    a.add_argument("--hashes", required=True)
    a.add_argument("--rows-out", required=True)
    a.add_argument("--work", required=True)
    _common(a)
    pr = sub.add_parser("prepare", help="copy a finished build's model files and a subgraph sample into --dest")
    pr.add_argument("--build", required=True)
    pr.add_argument("--dest", default=str(ROOT / "device_data"))
    pr.add_argument("--models", default=",".join(MODELS))
    pr.add_argument("--subgraphs", type=int, default=12)
    pr.add_argument("--decompose", default=None, help="the decompose stage's output folder (default: <build>/data/decompose)")
    ig = sub.add_parser("ingest", help="write metrics/bench records from a device run's files")
    ig.add_argument("dir")
    ig.add_argument("--dest", default=str(ROOT / "metrics" / "bench"))
    ig.add_argument("--allow-dry-run", action="store_true", help="write a dry run's records (to a --dest of your choice)")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return run_parts(args)
    if args.cmd == "part":
        return run_part(args)
    if args.cmd == "profile-attempt":
        return profile_attempt(args)
    if args.cmd == "prepare":
        return prepare(args)
    return ingest(args)


if __name__ == "__main__":
    sys.exit(main())
