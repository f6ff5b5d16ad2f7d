"""Benchmark: expert-statistics collection vs a plain forward pass of the same model.

Prints peak memory (process RSS high-water mark above the model's resting RSS, sampled by a
thread, and the allocator-independent tracemalloc peak is not used because torch allocates
outside Python) and throughput (tokens/s) for: the plain forward pass (eval, no grad), the
collector without characteristic activations, and with ``char_tokens_per_batch`` tokens.
Targets (issue): <= 1.5x memory, >= 0.7x throughput of the plain pass. Nothing is asserted.

Usage: ``python -m benchmarks.bench_proxy_stats [--base data/proxy/base] [--batches 12]``
(without ``--base`` a random Qwen3-MoE of the default base's size is built).
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import psutil
import torch


def _model(base: str | None):
    from transformers import AutoModelForCausalLM

    if base and os.path.exists(os.path.join(base, "config.json")):
        return AutoModelForCausalLM.from_pretrained(base).eval()
    from passnet_common.params import load_params
    from proxy_artifacts.base_model import make_config

    p = load_params("params.yaml", "proxy")["base"]
    cfg = make_config(p, 259, dict(pad_token_id=0, bos_token_id=1, eos_token_id=2))
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg).eval()


class PeakRSS:
    """Samples this process's RSS every 2 ms; ``peak`` in bytes."""

    def __init__(self):
        self.proc, self.peak, self._stop = psutil.Process(), 0, False

    def __enter__(self):
        self.peak = self.proc.memory_info().rss
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()
        return self

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.002)

    def __exit__(self, *a):
        self._stop = True
        self.t.join()


def run(kind: str, model, data: torch.Tensor, bs: int, char: int) -> tuple[float, int]:
    import contextlib

    from proxy_artifacts.stats import ExpertStatsCollector

    ctx = ExpertStatsCollector(model, char, 0) if kind != "plain" else contextlib.nullcontext()
    rest = psutil.Process().memory_info().rss
    with torch.no_grad(), ctx, PeakRSS() as mem:
        t0 = time.perf_counter()
        for i in range(0, len(data), bs):
            model(input_ids=data[i: i + bs], use_cache=False)
        dt = time.perf_counter() - t0
    return data.numel() / dt, max(mem.peak - rest, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="data/proxy/base")
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--char-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model = _model(a.base)
    g = torch.Generator().manual_seed(0)
    data = torch.randint(3, model.config.vocab_size, (a.batches * a.batch_size, a.seq_len), generator=g)
    run("plain", model, data[: a.batch_size], a.batch_size, 0)  # untimed warm-up
    kinds = [("plain", 0), ("stats", 0), ("stats+char", a.char_tokens)]
    res = {k: [] for k, _ in kinds}
    for _ in range(a.repeats):  # interleaved so that drift hits every variant
        for k, c in kinds:
            res[k].append(run(k, model, data, a.batch_size, c))
    med = {k: (sorted(t for t, _ in v)[len(v) // 2], max(m for _, m in v)) for k, v in res.items()}
    tp0, m0 = med["plain"]
    resting = psutil.Process().memory_info().rss
    print(f"model params {model.num_parameters():,}; tokens per pass {data.numel():,}; "
          f"threads {a.threads}; resting RSS {resting / 2**20:.0f} MiB; median of {a.repeats}")
    print(f"{'variant':<12} {'tokens/s':>10} {'x plain':>8} {'peak extra MiB':>15} {'peak total x plain':>19}")
    for k, _ in kinds:
        tp, m = med[k]
        print(f"{k:<12} {tp:>10.0f} {tp / tp0:>8.2f} {m / 2**20:>15.1f} {(resting + m) / (resting + m0):>19.3f}")
    print("targets: throughput >= 0.70x plain, peak memory <= 1.5x plain")


if __name__ == "__main__":
    main()
