"""curate.tolerance.compare_output on large float32 outputs: whole tensor vs per chunk
(``chunk=CHUNK``, the default since the profile's compile-phase check spent about 111 s of
its 507 s on workload-size outputs). Same fields by construction (tests/test_tolerance.py);
this prints CPU seconds per comparison (best of 3, same run) and their ratio, and writes
``metrics/bench/compare_outputs.json``.

    nice -n 10 taskset -c 0 python -m benchmarks.bench_compare_outputs
"""

from __future__ import annotations

import os
import time

import torch

from curate.tolerance import CHUNK, compare_output
from passnet_common.io import atomic_write_json


def best(fn, reps: int = 3) -> float:
    out = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        out = min(out, time.process_time() - t0)
    return out


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    load0 = os.getloadavg()[0]
    for n in (1 << 20, 8_388_608):
        g = torch.Generator().manual_seed(0)
        e = torch.randn(n, generator=g)
        a = e + 1e-6 * torch.randn(n, generator=g)
        whole = best(lambda: compare_output(a, e, chunk=None))
        chunked = best(lambda: compare_output(a, e))
        rows.append({"elements": n, "whole_cpu_s": round(whole, 3), "chunked_cpu_s": round(chunked, 3),
                     "ratio": round(whole / chunked, 2)})
    print(f"{'elements':>10s} {'whole s':>8s} {'chunked s':>9s} {'ratio':>6s}")
    for r in rows:
        print(f"{r['elements']:10d} {r['whole_cpu_s']:8.3f} {r['chunked_cpu_s']:9.3f} {r['ratio']:6.2f}")
    atomic_write_json("metrics/bench/compare_outputs.json",
                      {"rows": rows, "chunk": CHUNK, "load_average_start": load0, "load_average_end": os.getloadavg()[0],
                       "threads": 1, "command": "nice -n 10 taskset -c 0 python -m benchmarks.bench_compare_outputs"})


if __name__ == "__main__":
    main()
