"""Measured per-step cost of the base and its proxies, side by side in one run.

One step here is the compute of a GRPO update at a fixed global batch: a forward + backward
of the policy and an AdamW step, plus a no-grad forward of the frozen reference, on
``batch`` sequences of ``seq_len`` tokens (the RL batch: prompts x generations, prompt +
completion length). Rollout generation is left out (on this scale it is dominated by Python
overhead, not by the model).

Each model runs in its own child process (``python -m proxy_artifacts.cost MODEL ...``), so peak
memory is the child's own: on CUDA ``torch.cuda.max_memory_allocated``; on CPU the peak resident
set (``ru_maxrss``) minus the resident set before the model was loaded (includes the allocator's
slack, so an upper bound on the tensors). The children run in rounds with the model order
rotated each round, so slow drift of a shared machine's load hits every model alike; the
figure per model is the median over all timed steps of all rounds, and ratios are taken
against the base of the same run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Mapping


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def measure_one(model_dir: str, batch: int, seq_len: int, steps: int, warmup: int = 1, threads: int = 1) -> dict:
    """Step times (ms, one per timed step) and peak memory (bytes) of one model in this process."""
    import resource

    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(model_dir))]  # import the modeling code first
    import safetensors.torch  # noqa: F401
    rss0 = _rss_bytes()  # libraries loaded: the delta is the model's weights, reference, optimizer, activations
    policy = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(dev)
    ref = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(dev).eval()
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-6)
    ids = torch.randint(3, 200, (batch, seq_len), device=dev)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(warmup + steps):
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            ref(input_ids=ids)
        out = policy(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1e3)
    if cuda:
        peak = int(torch.cuda.max_memory_allocated())
        kind = "cuda_max_memory_allocated"
    else:
        peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024 - rss0
        kind = "cpu_peak_rss_delta"
    return {"step_ms": [round(t, 3) for t in times], "peak_memory_bytes": peak, "memory_kind": kind,
            "device": torch.cuda.get_device_name(0) if cuda else "cpu",
            "params": sum(p.numel() for p in policy.parameters())}


def measure_side_by_side(models: Mapping[str, str], batch: int = 16, seq_len: int = 32, steps: int = 4,
                         rounds: int = 2, threads: int = 1, base: str = "base") -> dict:
    """Interleaved child-process measurement of every model (see module doc).

    Returns {"step_ms_median": {name: ms}, "peak_memory_bytes": {name: bytes}, "step_time_ratio":
    {name: proxy / base}, "peak_memory_ratio": {name: proxy / base}, "batch", "seq_len", "steps",
    "rounds", "device", "memory_kind"}.

    Raises:
        ValueError: ``base`` is not among ``models``.
        RuntimeError: a child failed (its stderr tail in the message).
    """
    if base not in models:
        raise ValueError(f"cost: models {sorted(models)} lack the base {base!r}")
    names = list(models)
    times: dict[str, list[float]] = {n: [] for n in names}
    peak: dict[str, int] = {}
    info = {}
    for rnd in range(rounds):
        order = names[rnd % len(names):] + names[: rnd % len(names)]
        for n in order:
            cmd = [sys.executable, "-m", "proxy_artifacts.cost", str(models[n]), str(batch), str(seq_len), str(steps),
                   str(threads)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"cost child for {n} ({models[n]}) failed: {p.stderr[-800:]}")
            r = json.loads(p.stdout.strip().splitlines()[-1])
            times[n] += r["step_ms"]
            peak[n] = max(peak.get(n, 0), r["peak_memory_bytes"])
            info = {"device": r["device"], "memory_kind": r["memory_kind"]}
    med = {n: round(statistics.median(v), 3) for n, v in times.items()}
    return {"step_ms_median": med, "peak_memory_bytes": peak,
            "step_time_ratio": {n: round(med[n] / med[base], 4) for n in names if n != base},
            "peak_memory_ratio": {n: round(peak[n] / peak[base], 4) for n in names if n != base},
            "batch": batch, "seq_len": seq_len, "steps": steps, "rounds": rounds, **info}


if __name__ == "__main__":  # child: python -m proxy_artifacts.cost MODEL BATCH SEQ STEPS THREADS
    m, b, s, n, t = sys.argv[1:6]
    if not Path(m).is_dir():
        raise SystemExit(f"error: model folder {m} not found")
    print(json.dumps(measure_one(m, int(b), int(s), int(n), threads=int(t))))
