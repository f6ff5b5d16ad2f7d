"""Measured per-step cost of the base and its proxies, side by side in one run: the ``proxy_cost`` stage.

Everything here is a measurement and differs on every run (machine, load): its outputs
(``metrics/proxy_cost.json``, ``plots/proxy_cost_report.md``) are kept apart from the deterministic
fidelity outputs and carry the load average and machine fingerprint of the measurement.

One step here is the compute of a GRPO update at a fixed global batch: a forward + backward
of the policy and an AdamW step, plus a no-grad forward of the frozen reference, on
``batch`` sequences of ``seq_len`` tokens (the RL batch: prompts x generations, prompt +
completion length). Rollout generation is left out (on this scale it is dominated by Python
overhead, not by the model).

Each model runs in its own child process, so peak memory is the child's own: on CUDA
``torch.cuda.max_memory_allocated``; on CPU the peak resident set minus the resident set just before
the model was loaded (torch, transformers and the model's modeling code already imported; includes
the allocator's slack, so an upper bound on the tensors). The peak is the kernel's high-water mark
``VmHWM`` (``/proc/self/status``), reset to the current resident set at that point by writing ``5``
to ``/proc/self/clear_refs`` (Linux >= 4.0, ``proc(5)``), so nothing the process did before (a parent's
peak, the imports) can count; where the reset is refused, ``ru_maxrss`` (on Linux a forked child's
starts at its resident set at the fork, a fresh interpreter's at zero). By default the parent imports
torch, transformers and each model's modeling code once and forks one child per (round, model)
(:func:`passnet_common.worker.run_isolated`: a crash, hang or exception ends only that child); a
child no longer pays ~10 s of interpreter start-up and imports. Linux does not copy the parent's
page-table entries of file-backed mappings into a forked child, so before its baseline the child
maps back the library pages the parent had resident (:func:`resident_file_runs`, :func:`populate`):
its resident set then holds what a fresh interpreter's holds after the same imports, and library
code first touched by the measurement counts in both alike (``benchmarks/bench_proxy_cost.py``
compares it with ``isolation="exec"``, a fresh ``python -m proxy_artifacts.cost MODEL ...`` per child,
the previous path). The parent runs no tensor kernel before forking (no OpenMP pool to break).
The children run one at a time in rounds with the model order rotated each round, so slow drift of a
shared machine's load hits every model alike; the figure per model is the median over all timed
steps of all rounds (peak memory: the largest of its rounds), and ratios are taken against the base
of the same run.

Beside it, :func:`write_cost` summarises the per-step wall times the GRPO stages measured in
separate runs (``data/proxy/grpo_timing/<name>.json``, :func:`rl.run_grpo_all`).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import safetensors.torch  # noqa: F401  (loaded before a measurement's memory baseline, as from_pretrained loads it)
import torch
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

from passnet_common.io import atomic_write_json, atomic_write_text
from passnet_common.worker import run_isolated

from .adapters import adapter_for, expert_count, moe_blocks
from .projection import assumptions
from .timing import load_average, machine


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _reset_peak_rss() -> bool:
    """Reset this process's resident high-water mark (``VmHWM``) to its current resident set
    (``echo 5 > /proc/self/clear_refs``, Linux >= 4.0). False where refused or absent."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes(reset: bool) -> int:
    """Peak resident set of this process (bytes): ``VmHWM`` after a :func:`_reset_peak_rss`, else
    ``ru_maxrss``."""
    if reset:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def resident_file_runs() -> list[tuple[int, int]]:
    """(address, bytes) runs of this process's resident pages in file-backed mappings (the shared
    libraries' code and data the imports touched), from ``/proc/self/maps`` and the present bit of
    ``/proc/self/pagemap`` (``proc(5)``). A forked child does not inherit these page-table entries
    (Linux copies them lazily), so it would count every library page it touches again as its own
    resident growth; :func:`populate` maps them back before the memory baseline. [] where pagemap
    is unreadable."""
    page = os.sysconf("SC_PAGE_SIZE")
    runs = []
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
        pm = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return []
    try:
        for line in maps:
            f = line.split(maxsplit=5)
            if len(f) < 6 or not f[5].startswith("/") or "r" not in f[1]:
                continue  # anonymous, [heap]/[stack]/[vvar], or unreadable
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            raw = os.pread(pm, (hi - lo) // page * 8, lo // page * 8)
            present = (np.frombuffer(raw, dtype=np.uint64) >> np.uint64(63)).astype(bool)
            if not present.any():
                continue
            edges = np.flatnonzero(np.diff(np.concatenate(([False], present, [False])).astype(np.int8)))
            runs += [(lo + int(a) * page, int(b - a) * page) for a, b in zip(edges[::2], edges[1::2])]
    except OSError:
        return []
    finally:
        os.close(pm)
    return runs


MADV_POPULATE_READ = 22  # Linux >= 5.14: fault in page-table entries of a range without writing it


def populate(runs: list[tuple[int, int]]) -> bool:
    """Map the ``runs`` of :func:`resident_file_runs` into this process's page tables
    (``madvise(MADV_POPULATE_READ)``); False where refused (older kernels). Page-cache hits: no I/O."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    ok = True
    for addr, n in runs:
        ok &= libc.madvise(addr, n, MADV_POPULATE_READ) == 0
    return ok


def preimport(models: Mapping[str, str] | None = None) -> None:
    """Import what a measurement imports before its memory baseline: the modeling code of each
    model folder's config (torch, transformers' ``AutoModelForCausalLM`` and safetensors are
    imported with this module; a folder whose config cannot be read is left to its child, which
    reports it). Runs no
    tensor kernel, so the process can still fork safely."""
    for d in (models or {}).values():
        try:
            MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(d))]
        except Exception:  # noqa: BLE001 - the child measuring this model raises it, naming the model
            pass


def measure_one(model_dir: str, batch: int, seq_len: int, steps: int, *, threads: int, warmup: int = 1,
                experts_implementation: str | None = None) -> dict:
    """Step times (ms, one per timed step) and peak memory (bytes) of one model in this process.

    ``experts_implementation``: transformers' routed-experts forward (``"eager"``: the modeling
    code's loop, one Python iteration per expert that got a token; ``"grouped_mm"``: one grouped GEMM
    call per projection, ``torch.nn.functional.grouped_mm``; None: what ``from_pretrained`` picks,
    ``grouped_mm`` where it can dispatch).

    Returns {"step_ms": [ms per timed step], "optimizer_ms": [ms of each timed step's ``opt.step()`` +
    ``opt.zero_grad()``, inside its step time: AdamW's update of every parameter, routed experts included,
    whether or not a token reached them], "peak_memory_bytes": bytes (see module doc),
    "memory_kind", "device", "params" (policy parameter count), "experts_implementation" (the one
    used), "experts_hit_per_layer" (mean over the timed steps' policy forwards and MoE layers of the
    number of distinct experts that got at least one token)}. Meant for a child process of its own
    (the resident peak is the process's).

    Raises:
        OSError / ValueError: ``model_dir`` is not a loadable checkpoint (from transformers).
    """
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"

    MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(model_dir))]  # import the modeling code first
    reset = _reset_peak_rss()
    rss0 = _rss_bytes()  # libraries loaded: the delta is the model's weights, reference, optimizer, activations
    kw = {} if experts_implementation is None else {"experts_implementation": experts_implementation}
    policy = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, **kw).to(dev)
    ref = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, **kw).to(dev).eval()
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-6)
    ids = torch.randint(3, 200, (batch, seq_len), device=dev)

    hit, timed = [], [False]

    def count_hit(mod, inp, out):
        if timed[0]:
            hit.append(int(out[2].unique().numel()))

    hooks = [b.router.register_forward_hook(count_hit) for b in moe_blocks(policy, adapter_for(policy.config))]
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times, opt_times = [], []
    for i in range(warmup + steps):
        if cuda:
            torch.cuda.synchronize()
        timed[0] = i >= warmup
        t = time.perf_counter()
        with torch.no_grad():
            ref(input_ids=ids)
        out = policy(input_ids=ids, labels=ids)
        out.loss.backward()
        if cuda:
            torch.cuda.synchronize()
        t_opt = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        t_end = time.perf_counter()
        if i >= warmup:
            times.append((t_end - t) * 1e3)
            opt_times.append((t_end - t_opt) * 1e3)
    for h in hooks:
        h.remove()
    if cuda:
        peak = int(torch.cuda.max_memory_allocated())
        kind = "cuda_max_memory_allocated"
    else:
        peak = _peak_rss_bytes(reset) - rss0
        kind = "cpu_peak_rss_delta"
    return {"step_ms": [round(t, 3) for t in times], "optimizer_ms": [round(t, 3) for t in opt_times],
            "peak_memory_bytes": peak, "memory_kind": kind,
            "device": torch.cuda.get_device_name(0) if cuda else "cpu",
            "params": sum(p.numel() for p in policy.parameters()),
            "experts_implementation": policy.config._experts_implementation,
            "experts_hit_per_layer": round(sum(hit) / len(hit), 3) if hit else None}


def _child_task(arg, out_dir: Path) -> None:
    """Forked child (:func:`passnet_common.worker.run_isolated`): measure one model, write ``result.json``."""
    model_dir, batch, seq_len, steps, threads, runs, impl = arg
    populate(runs)  # the libraries' pages resident as in a fresh interpreter after its imports
    if not Path(model_dir).is_dir():
        raise FileNotFoundError(f"model folder {model_dir} not found")
    atomic_write_json(Path(out_dir) / "result.json", measure_one(model_dir, batch, seq_len, steps, threads=threads,
                                                                 experts_implementation=impl))


def _run_exec(model_dir: str, batch: int, seq_len: int, steps: int, threads: int, name: str,
              impl: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "proxy_artifacts.cost", str(model_dir), str(batch), str(seq_len), str(steps), str(threads)]
    cmd += [impl] if impl else []
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"cost child for {name} ({model_dir}) failed: {p.stderr[-800:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _run_fork(model_dir: str, batch: int, seq_len: int, steps: int, threads: int, name: str, work: Path,
              runs: list, impl: str | None = None) -> dict:
    out = work / name
    (o,) = run_isolated([(name, (str(model_dir), batch, seq_len, steps, threads, runs, impl), out)], _child_task,
                        workers=1,
                        timeout_s=CHILD_TIMEOUT_S, mem_cap_bytes=None, threads_per_worker=threads, poll_s=0.5)
    if not o.ok:
        raise RuntimeError(f"cost child for {name} ({model_dir}) failed: {o.error_class}: {(o.error_message or '')[-800:]}")
    r = json.loads((out / "result.json").read_text())
    (out / "result.json").unlink()
    return r


CHILD_TIMEOUT_S = 3600.0
"""Wall-clock backstop per child (s): a hung measurement is killed and reported (``timeout``)."""


def layer_windows(cfg, layers: int) -> list[int | None]:
    """The sliding window of each attention layer (None: full causal attention): ``layer_types``
    when the config has it (``sliding_attention`` layers get ``sliding_window``), else
    ``sliding_window`` on every layer unless ``use_sliding_window`` is false; a window of 0 / None is
    full attention."""
    w = getattr(cfg, "sliding_window", None) or None
    types = getattr(cfg, "layer_types", None)
    if types:
        return [w if t == "sliding_attention" else None for t in list(types)[:layers]]
    if getattr(cfg, "use_sliding_window", None) is False:
        return [None] * layers
    return [w] * layers


def mean_context(seq_len: int, window: int | None) -> float:
    """Mean keys a query attends to in a causal sequence of ``seq_len`` tokens: mean of min(i, window)
    over positions i = 1..seq_len ((seq_len + 1) / 2 without a window)."""
    if not window:
        return (seq_len + 1) / 2
    return sum(min(i, int(window)) for i in range(1, seq_len + 1)) / seq_len


def flops_per_token(model_dir: str | Path, seq_len: int) -> dict:
    """Analytic FLOPs per token of one model (a deterministic function of its ``config.json``).

    The model is built on the meta device (no weights read). Forward FLOPs per token =
    2 x (every parameter a token multiplies: all but the input embedding, the routed experts counted
    ``top_k / E`` of theirs, the output head counted again when tied) + attention scores and values,
    2 x 2 x layers x heads x (qk_head_dim + v_head_dim) / 2 x mean causal context (seq_len + 1) / 2.
    The usual 2-FLOPs-per-multiply-add count (Kaplan et al. 2020, Sec. 2.1); norm scales and biases
    are over-counted as multiply-adds (well under 1% here). A layer with a sliding window ``w``
    (``layer_types[i] == "sliding_attention"``; without ``layer_types``, ``sliding_window`` unless
    ``use_sliding_window`` is false) attends to min(position, w) keys, so its mean context is the mean
    of min(i, w) over positions i = 1..seq_len instead of (seq_len + 1) / 2. A training step is 3 x forward for the policy (forward +
    backward) + 1 x forward for the frozen reference = 4 x forward.

    Returns {"forward", "step", "routed_active_params", "dense_params", "top_k", "experts"}.
    """
    cfg = AutoConfig.from_pretrained(model_dir)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg)
    a = adapter_for(cfg)
    E, k = expert_count(cfg, a), int(cfg.num_experts_per_tok)
    routed = sum(getattr(b.experts, p).numel() for b in moe_blocks(m, a) for p in a.expert_params)
    params = {id(p): p.numel() for p in m.parameters()}
    emb = m.get_input_embeddings().weight
    total = sum(params.values())
    dense = total - emb.numel() - routed
    out = m.get_output_embeddings()
    if out is not None and out.weight is emb:  # tied: the head's matmul uses the embedding matrix
        dense += emb.numel()
    heads = int(cfg.num_attention_heads)
    hd = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
    qk = int((getattr(cfg, "qk_nope_head_dim", 0) or 0) + (getattr(cfg, "qk_rope_head_dim", 0) or 0)) or hd
    v = int(getattr(cfg, "v_head_dim", None) or hd)
    L = int(cfg.num_hidden_layers)
    attn = 2 * heads * (qk + v) * sum(mean_context(seq_len, w) for w in layer_windows(cfg, L))
    active = routed * k / E
    fwd = 2 * (dense + active) + attn
    return {"forward": int(round(fwd)), "step": int(round(4 * fwd)), "routed_active_params": int(round(active)),
            "dense_params": int(dense), "top_k": k, "experts": E}


def measure_models(models: Mapping[str, str], params: Mapping) -> dict:
    """:func:`measure_side_by_side` of ``models`` with the settings of the ``proxy`` params block:
    the GRPO global batch (``grpo.prompts_per_step`` x ``grpo.num_generations`` sequences),
    ``fidelity.cost`` (``seq_len`` tokens, ``steps``, ``rounds``) and ``grpo.threads``."""
    gp, cp = params["grpo"], params["fidelity"]["cost"]
    return measure_side_by_side(models, batch=int(gp["prompts_per_step"]) * int(gp["num_generations"]),
                                seq_len=int(cp["seq_len"]), steps=int(cp["steps"]), rounds=int(cp["rounds"]),
                                threads=int(gp["threads"]))


def measure_side_by_side(models: Mapping[str, str], *, batch: int, seq_len: int, steps: int,
                         rounds: int, threads: int, base: str = "base", isolation: str = "fork",
                         experts_implementations: Sequence[str | None] = (None, "eager")) -> dict:
    """Interleaved child-process measurement of every model (see module doc).

    Args:
        models: {name: checkpoint folder}; ``base`` among them.
        batch, seq_len: sequences and tokens per sequence of one step (the GRPO global batch).
        steps: timed steps per child (after 1 warm-up step); rounds: children per model.
        isolation: ``"fork"`` (children forked from this process after :func:`preimport`) or
            ``"exec"`` (a fresh ``python -m proxy_artifacts.cost`` per child; ~10 s more per child).
        experts_implementations: transformers' routed-experts forwards to time, each in every round
            (:func:`measure_one`); the first is the headline (None: ``from_pretrained``'s choice, the
            one the GRPO stages run), ``"eager"`` is the modeling code's per-expert Python loop.

    Returns the headline implementation's {"step_ms_median": {name: ms}, "peak_memory_bytes": {name:
    bytes}, "step_time_ratio": {name: proxy / base}, "peak_memory_ratio": {name: proxy / base},
    "experts_implementation", "experts_hit_per_layer": {name: mean distinct experts with a token per
    layer and forward}, "step_ms_rel_iqr": {name: :func:`rel_iqr` of its step times}, "optimizer_ms_median"
    {name: ms of ``opt.step()`` + ``opt.zero_grad()`` per step} with "optimizer_time_ratio",
    "step_without_optimizer_ms_median" (median over steps of step - optimizer) with
    "step_without_optimizer_ratio"}, "params" {name: parameter count}, "params_ratio",
    "by_experts_implementation": {impl: the same figures}, "batch",
    "seq_len", "steps", "rounds", "device", "memory_kind", "load_average_start", "load_average_end"
    (1/5/15 min), "machine" (:func:`timing.machine` of the parent)}.

    Raises:
        ValueError: ``base`` is not among ``models``, an unknown ``isolation``, no implementation.
        RuntimeError: a child failed (names the model; the child's error or stderr tail in the message).
    """
    if base not in models:
        raise ValueError(f"cost: models {sorted(models)} lack the base {base!r}")
    if isolation not in ("fork", "exec"):
        raise ValueError(f"cost: isolation {isolation!r} is neither 'fork' nor 'exec'")
    if not experts_implementations:
        raise ValueError("cost: no experts implementation to time")
    names = list(models)
    impls = list(experts_implementations)
    times = {i: {n: [] for n in names} for i in range(len(impls))}
    opt_ms = {i: {n: [] for n in names} for i in range(len(impls))}
    nparams: dict[str, int] = {}
    peak: dict[int, dict[str, int]] = {i: {} for i in range(len(impls))}
    hit: dict[int, dict[str, list]] = {i: {n: [] for n in names} for i in range(len(impls))}
    used: dict[int, str] = {}
    info = {}
    load0 = load_average()
    frozen, runs = False, []
    if isolation == "fork":
        preimport(models)
        runs = resident_file_runs()
        if gc.get_freeze_count() == 0:  # children neither walk nor copy-on-write the imported heap
            gc.collect()
            gc.freeze()
            frozen = True
    try:
        with tempfile.TemporaryDirectory(prefix="proxy_cost_") as work:
            for rnd in range(rounds):
                order = names[rnd % len(names):] + names[: rnd % len(names)]
                for ii, impl in enumerate(impls):
                    for n in order:
                        args = (models[n], batch, seq_len, steps, threads, n)
                        r = _run_fork(*args, Path(work), runs, impl) if isolation == "fork" else _run_exec(*args, impl)
                        times[ii][n] += r["step_ms"]
                        opt_ms[ii][n] += r.get("optimizer_ms") or []
                        nparams[n] = int(r["params"])
                        peak[ii][n] = max(peak[ii].get(n, 0), r["peak_memory_bytes"])
                        if r.get("experts_hit_per_layer") is not None:
                            hit[ii][n].append(r["experts_hit_per_layer"])
                        used[ii] = r.get("experts_implementation") or str(impl)
                        info = {"device": r["device"], "memory_kind": r["memory_kind"]}
    finally:
        if frozen:
            gc.unfreeze()
    by = {}
    for ii in range(len(impls)):
        med = {n: round(statistics.median(v), 3) for n, v in times[ii].items()}
        by[used[ii]] = {"step_ms_median": med, "step_ms_rel_iqr": {n: rel_iqr(v) for n, v in times[ii].items()},
                        "peak_memory_bytes": peak[ii],
                        "step_time_ratio": {n: round(med[n] / med[base], 4) for n in names if n != base},
                        "peak_memory_ratio": {n: round(peak[ii][n] / peak[ii][base], 4) for n in names if n != base},
                        "experts_hit_per_layer": {n: round(sum(v) / len(v), 3) if v else None
                                                  for n, v in hit[ii].items()}}
        if all(len(opt_ms[ii][n]) == len(times[ii][n]) > 0 for n in names):
            om = {n: round(statistics.median(v), 3) for n, v in opt_ms[ii].items()}
            rest = {n: round(statistics.median(a - b for a, b in zip(times[ii][n], opt_ms[ii][n])), 3) for n in names}
            by[used[ii]].update({
                "optimizer_ms_median": om,
                "optimizer_time_ratio": {n: round(om[n] / om[base], 4) for n in names if n != base},
                "step_without_optimizer_ms_median": rest,
                "step_without_optimizer_ratio": {n: round(rest[n] / rest[base], 4) for n in names if n != base}})
    head = by[used[0]]
    fl = {n: flops_per_token(d, seq_len) for n, d in models.items()}
    return {**head, "experts_implementation": used[0], "by_experts_implementation": by, "flops_per_token": fl,
            "params": nparams, "params_ratio": {n: round(nparams[n] / nparams[base], 4) for n in names if n != base},
            "batch": batch, "seq_len": seq_len, "steps": steps, "rounds": rounds, **info,
            "load_average_start": load0, "load_average_end": load_average(), "machine": machine()}


def grpo_step_ms(timing_file) -> dict:
    """Median measured GRPO step time (ms) of one model's healthy runs from its timing file
    (``data/proxy/grpo_timing/<name>.json``): the first step of each run is left out (warm-up).

    Returns {"step_time_ms_median": ms or None, "steps": n, "workers" (runs timed side by side in that
    stage; 1 in files without the key), "load_average_start", "load_average_end"}.

    Raises:
        FileNotFoundError: ``timing_file`` is absent.
    """
    d = json.loads(Path(timing_file).read_text())
    ms = [r["step_time_ms"] for k, run in d["runs"].items() if k.startswith("none.")
          for r in run["steps"][1:] if isinstance(r.get("step_time_ms"), (int, float))]
    return {"step_time_ms_median": round(statistics.median(ms), 2) if ms else None, "steps": len(ms),
            "workers": int(d.get("workers", 1)), "load_average_start": d.get("load_average_start"),
            "load_average_end": d.get("load_average_end")}


def rel_iqr(values: Sequence[float]) -> float | None:
    """Interquartile range over median of a model's timed steps (``statistics.quantiles``, method
    ``inclusive``): the run's own spread, unitless; None with fewer than 2 values."""
    v = [float(x) for x in values]
    if len(v) < 2:
        return None
    q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
    med = statistics.median(v)
    return round((q3 - q1) / med, 4) if med else None


def ratio_margin(by_impl: Mapping, name: str, base: str = "base") -> float | None:
    """Noise margin of one implementation's step-time ratio ``name`` / ``base``: the sum of the two
    models' relative interquartile ranges (:func:`rel_iqr`, ``step_ms_rel_iqr``): to first order the
    relative spread of a ratio is at most the sum of its terms'. None when the run recorded no spread."""
    sp = by_impl.get("step_ms_rel_iqr") or {}
    a, b = sp.get(name), sp.get(base)
    return None if a is None or b is None else round(a + b, 4)


def cpu_cause(c: Mapping, base: str = "base") -> list[str]:
    """Sentences that say, from a :func:`measure_side_by_side` result, what the measured step-time
    ratios follow: the FLOPs ratio (and whether top-k is the base's), the experts each layer runs, and
    each experts implementation's ratio. Only figures of ``c`` are stated.

    Per proxy and implementation, where the record times the optimizer (``optimizer_ms_median``), the
    AdamW step + zero_grad of both models (work over every parameter, so it scales with the total, not
    the active, parameter count), its share of the step-time difference and the step ratio without it.
    The per-expert loop is named as the cause of the difference between the ``eager`` ratio r and every
    other implementation's ratio o only when r is below both o and the FLOPs ratio by more than the run's
    own noise margin: r x (1 + m_eager) < o / (1 + m_o) and r x (1 + m_eager) < FLOPs ratio, m being
    :func:`ratio_margin` (the two models' relative interquartile ranges of step time); the gap between o
    and the FLOPs ratio is never put on the loop (those forwards have none). A record without the
    spread gets no cause stated.
    """
    fl = c.get("flops_per_token") or {}
    by = c.get("by_experts_implementation") or {}
    if not fl or base not in fl or not by:
        return []
    out = []
    fr = {n: round(v["forward"] / fl[base]["forward"], 4) for n, v in fl.items() if n != base}
    kb = fl[base].get("top_k")
    changed = {n: v.get("top_k") for n, v in fl.items() if n != base and v.get("top_k") != kb}
    if kb is None or any(v.get("top_k") is None for v in fl.values()):
        why = "top-k is not recorded for every model"
    elif not changed:
        why = f"top-k {kb} is the base's, so only the router rows of the dropped experts are gone"
    else:
        why = (f"top-k changes from the base's {kb} to {changed}, so each token runs that many routed experts; "
               "the other proxies keep top-k and lose only the router rows of the dropped experts"
               if len(changed) < len(fr) else
               f"top-k changes from the base's {kb} to {changed}, so each token runs that many routed experts")
    out.append(f"FLOPs per token, proxy / base: {fr} ({why})")
    for impl, v in by.items():
        out.append(f"experts implementation `{impl}`: measured step time proxy / base {v['step_time_ratio']}; "
                   f"distinct experts run per layer and forward {v['experts_hit_per_layer']}")
    out.append("transformers' `eager` experts forward runs one Python loop iteration (index, gather, three small "
               "GEMMs, index_add) per expert that got a token (`for expert_idx in expert_hit` in the families' "
               "modeling code); `grouped_mm` sorts the tokens by expert and makes one "
               "`torch.nn.functional.grouped_mm` call per projection for all experts")
    pr = c.get("params_ratio") or {}
    for n in fr:
        for impl, v in by.items():
            om, rest = v.get("optimizer_ms_median") or {}, v.get("step_without_optimizer_ratio") or {}
            sm = v.get("step_ms_median") or {}
            if n not in om or base not in om or n not in sm or base not in sm:
                continue
            d_step, d_opt = sm[base] - sm[n], om[base] - om[n]
            share = f"{100 * d_opt / d_step:.0f}%" if d_step > 0 else "not defined (the proxy's step is not shorter)"
            out.append(f"{n}, `{impl}`: the AdamW step + zero_grad, whose work scales with the total parameter count "
                       f"(every expert's weights, routed to or not; parameters proxy / base {pr.get(n)}), takes "
                       f"{om[n]} ms of the proxy's {sm[n]} ms step and {om[base]} ms of the base's {sm[base]} ms "
                       f"(medians; ratio {v['optimizer_time_ratio'][n]}); its difference is {share} of the step-time "
                       f"difference, and the step without it has ratio {rest.get(n)} (whole step "
                       f"{v['step_time_ratio'].get(n)}, FLOPs {fr[n]})")
    eager = by.get("eager", {}).get("step_time_ratio") or {}
    for n, r in eager.items():
        if n not in fr:
            continue
        others = {i: v["step_time_ratio"].get(n) for i, v in by.items() if i != "eager"}
        me = ratio_margin(by["eager"], n, base)
        mo = {i: ratio_margin(v, n, base) for i, v in by.items() if i != "eager"}
        if me is None or any(m is None for m in mo.values()) or any(o is None for o in others.values()):
            out.append(f"{n}: `eager` ratio {r}, other forward(s) {others}, FLOPs ratio {fr[n]}: this record has no "
                       "spread of the step times, so no cause is stated")
            continue
        hi = r * (1 + me)
        if others and hi < fr[n] and all(hi < o / (1 + mo[i]) for i, o in others.items()):
            out.append(f"{n}: with the per-expert loop (`eager`) the step takes {r} of the base's (noise margin "
                       f"{me}), below {others} (margins {mo}) with the other forward(s) in the same run: the loop "
                       "over experts accounts for that difference. It does not account for the gap between "
                       f"{others} and the FLOPs ratio {fr[n]}: those forwards run no per-expert Python loop, so "
                       "that gap comes from other work that shrinks with the dropped experts (the optimizer lines "
                       "above measure one such part where the record has them)")
        else:
            out.append(f"{n}: `eager` ratio {r} (noise margin {me}), other forward(s) {others} (margins {mo}), "
                       f"FLOPs ratio {fr[n]}: the gaps between the forwards are within this run's noise margins, so "
                       "the run does not single out the per-expert loop")
    return out


def write_cost(side_by_side: Mapping | None, grpo_timing: Mapping[str, str], metrics_path, report_path=None,
               command: str | None = None, base: str = "base", fidelity_params: Mapping | None = None) -> dict:
    """Write ``metrics_path`` (``metrics/proxy_cost.json``) and the markdown ``report_path``.

    Args:
        side_by_side: the result of :func:`measure_side_by_side` (None: not measured).
        grpo_timing: {model name: timing file of its GRPO stage}.
        command: the command line that measured it (recorded beside the figures).
        fidelity_params: the ``proxy.fidelity`` block (``device_memory_gb``, ``usable_share``) of the
            accelerator projection whose assumptions are listed (None: named by their keys).

    Flat headline keys: ``step_time_ratio_measured`` and ``peak_memory_ratio_measured`` ({proxy:
    proxy / base}, side by side, the headline experts implementation), ``step_ms_median`` (ms) and
    ``peak_memory_bytes`` (bytes) per model, ``flops_per_token`` (analytic forward FLOPs per token,
    :func:`flops_per_token`) and ``flops_ratio`` ({proxy: proxy / base}), ``step_time_ratio_by_experts_implementation``,
    ``cpu_step_time_cause`` (:func:`cpu_cause`), ``projection_assumptions``
    (:func:`projection.assumptions`), ``accelerator_step_measured`` (false: no accelerator step),
    ``load_average_start`` / ``_end``, ``machine``; then ``side_by_side`` (the whole measurement) and
    ``grpo_separate_runs`` (per model :func:`grpo_step_ms`, and the ratio to the base's median:
    separate runs, at whatever load each ran). The FLOPs are a function of the configs; every other
    figure is a measurement.
    """
    c = dict(side_by_side or {})
    g = {n: grpo_step_ms(p) for n, p in grpo_timing.items()}
    b = (g.get(base) or {}).get("step_time_ms_median")
    for n, v in g.items():
        if n != base:
            v["step_time_ratio_to_base"] = round(v["step_time_ms_median"] / b, 4) \
                if b and v["step_time_ms_median"] is not None else None
    fl = c.get("flops_per_token") or {}
    out = {"measured": True, "command": command,
           "step_time_ratio_measured": c.get("step_time_ratio", {}), "peak_memory_ratio_measured": c.get("peak_memory_ratio", {}),
           "step_ms_median": c.get("step_ms_median", {}), "peak_memory_bytes": c.get("peak_memory_bytes", {}),
           "experts_implementation": c.get("experts_implementation"),
           "flops_per_token": {n: v["forward"] for n, v in fl.items()},
           "flops_ratio": {n: round(v["forward"] / fl[base]["forward"], 4) for n, v in fl.items() if n != base}
           if base in fl else {},
           "step_time_ratio_by_experts_implementation": {i: v["step_time_ratio"] for i, v in
                                                         (c.get("by_experts_implementation") or {}).items()},
           "cpu_step_time_cause": cpu_cause(c, base),
           "accelerator_step_measured": bool(c.get("device") not in (None, "cpu")),
           "projection_assumptions": assumptions((fidelity_params or {}).get("device_memory_gb"),
                                                 (fidelity_params or {}).get("usable_share")),
           "load_average_start": c.get("load_average_start"), "load_average_end": c.get("load_average_end"),
           "machine": c.get("machine") or machine(), "side_by_side": c or None, "grpo_separate_runs": g}
    atomic_write_json(metrics_path, out, indent=1)
    if report_path is not None:
        atomic_write_text(report_path, cost_markdown(out))
    return out


def cost_markdown(m: Mapping) -> str:
    """Markdown cost report (``plots/proxy_cost_report.md``) from :func:`write_cost`'s dict: FLOPs (from the
    configs), measured CPU step time and memory, what the CPU ratio follows, the projection's assumptions."""
    c = m.get("side_by_side") or {}
    mach = m.get("machine") or {}
    L = ["# Proxy cost", "",
         "FLOPs per token are computed from the configs; step times and memory are measurements that differ on "
         "every run (machine, load) and are not part of the deterministic fidelity report "
         "(`plots/fidelity_report.md`).", "",
         f"Machine: {mach.get('cpu_model')}, {mach.get('cpu_usable_cores')} usable cores, torch "
         f"{mach.get('torch_version')}{', ' + mach['cuda_device'] if mach.get('cuda_device') else ''}; "
         f"load average (1/5/15 min) {m.get('load_average_start')} -> {m.get('load_average_end')}; "
         f"command: `{m.get('command')}`.", "", "## Side by side in one run", ""]
    if c:
        fl = c.get("flops_per_token") or {}
        L += [f"Device {c['device']}; step = policy forward + backward + AdamW (timed separately too: "
              "`opt.step()` + `opt.zero_grad()`) + reference forward at a global batch "
              f"of {c['batch']} x {c['seq_len']} tokens; {c['rounds']} rounds x {c['steps']} timed steps, model order "
              f"rotated; memory: {c['memory_kind']}. FLOPs: analytic forward FLOPs per token "
              "(`cost.flops_per_token`; a step is 4 x forward).", ""]
        by = c.get("by_experts_implementation") or {c.get("experts_implementation", "?"): c}
        impls = list(by)
        head = ["model", "FLOPs / token (forward)", "FLOPs ratio"]
        for i in impls:
            head += [f"step ms ({i})", f"step time ratio ({i})", f"experts run per layer ({i})"]
            if by[i].get("optimizer_ms_median"):
                head += [f"AdamW + zero_grad ms ({i})", f"step ratio without them ({i})"]
        head += ["peak memory (MB)", "peak memory ratio"]
        L += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
        b = next(iter(c["step_ms_median"]))
        for n, ms in c["step_ms_median"].items():
            f = (fl.get(n) or {}).get("forward")
            fr = (m.get("flops_ratio") or {}).get(n, 1.0 if n == b else None)
            row = [f, fr]
            for i in impls:
                v = by[i]
                row += [v["step_ms_median"].get(n), v["step_time_ratio"].get(n, 1.0),
                        (v.get("experts_hit_per_layer") or {}).get(n)]
                if v.get("optimizer_ms_median"):
                    row += [v["optimizer_ms_median"].get(n), (v.get("step_without_optimizer_ratio") or {}).get(n, 1.0)]
            row += [f"{c['peak_memory_bytes'][n] / 1e6:.1f}", c["peak_memory_ratio"].get(n, 1.0)]
            L.append(f"| {n} | " + " | ".join("-" if x is None else str(x) for x in row) + " |")
        L += ["", "## What the CPU step-time ratio follows", ""] + [f"- {x}" for x in m.get("cpu_step_time_cause") or []]
    else:
        L.append("not measured in this run")
    L += ["", "## GRPO steps, separate runs (healthy seeds, first step left out)", "",
          "| model | step ms (median) | steps | ratio to base | load average start -> end |", "|---|---|---|---|---|"]
    for n, v in (m.get("grpo_separate_runs") or {}).items():
        L.append(f"| {n} | {v['step_time_ms_median']} | {v['steps']} | {v.get('step_time_ratio_to_base', 1.0)} | "
                 f"{v['load_average_start']} -> {v['load_average_end']} |")
    L += ["", "## Accelerator projection: assumptions (none of it measured)", "",
          f"Accelerator step measured: {'yes' if m.get('accelerator_step_measured') else 'no'}.", ""]
    L += [f"- {x}" for x in m.get("projection_assumptions") or []]
    return "\n".join(L) + "\n"


if __name__ == "__main__":  # child: python -m proxy_artifacts.cost MODEL BATCH SEQ STEPS THREADS [EXPERTS_IMPL]
    m, b, s, n, t = sys.argv[1:6]
    if not Path(m).is_dir():
        raise SystemExit(f"error: model folder {m} not found")
    print(json.dumps(measure_one(m, int(b), int(s), int(n), threads=int(t),
                                 experts_implementation=sys.argv[6] if len(sys.argv) > 6 else None)))
