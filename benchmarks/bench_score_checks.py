"""What one checked timed call of the scorer costs on a workload-size output, old check vs new.

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_checks.py [--out metrics/bench/score_checks.json]``.
One float32 output of ``--shape`` (default 8 x 21 x 224 x 224 = 8.4 M elements, the output of the
committed task set's ``674a4153...:workload`` variant) and a candidate output 1e-6 relative off:
``sample_min_pass_t(compare_outputs(...))`` (the check before this change) vs
:func:`curate.score.defenses.compare.fast_min_pass_t` (per chunk, same level; asserted), one torch thread,
``--repeat`` runs each, interleaved; the medians and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None, help="write the figures as flat JSON here")
    ap.add_argument("--shape", default="8,21,224,224")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import torch

    from curate.score.defenses.compare import fast_min_pass_t
    from curate.tolerance import compare_outputs, sample_min_pass_t

    torch.set_num_threads(1)
    shape = tuple(int(x) for x in args.shape.split(","))
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(shape, generator=g)
    out = ref * (1 + 1e-6 * torch.randn(shape, generator=g))
    old_s, new_s = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        want = sample_min_pass_t(c.min_pass_t for c in compare_outputs(out, ref))
        old_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = fast_min_pass_t(out, ref)
        new_s.append(time.perf_counter() - t0)
        assert got == want, (got, want)
    res = {"elements": ref.numel(), "min_pass_t": want, "compare_outputs_s": round(statistics.median(old_s), 3),
           "fast_min_pass_t_s": round(statistics.median(new_s), 3),
           "ratio": round(statistics.median(old_s) / statistics.median(new_s), 2), "repeat": args.repeat,
           "load_avg_1m": round(os.getloadavg()[0], 2), "cpu_count": os.cpu_count()}
    print(f"{'check':20s} {'median s':>9s}")
    print(f"{'compare_outputs':20s} {res['compare_outputs_s']:9.3f}")
    print(f"{'fast_min_pass_t':20s} {res['fast_min_pass_t_s']:9.3f}   ratio {res['ratio']:.1f}x  (load {res['load_avg_1m']})")
    if args.out:
        from passnet_common.io import atomic_write_json

        atomic_write_json(args.out, res, indent=1)


if __name__ == "__main__":
    main()
