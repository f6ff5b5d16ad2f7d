"""What each scoring defense of issue 18 costs, measured in one run beside its baseline.

Run: ``PYTHONPATH=$PWD python benchmarks/bench_score_defenses.py [--out metrics/bench/score_defenses.json]``.
In-process (no spawned child), the honest backend (``gm.forward``) and the fusion pass on the
built-in task set's first size of each pattern. Rows (wall seconds summed over the subgraphs, and
the ratio to the row's baseline measured in the same run):

* timing: :func:`curate.timing.measure_pair` (same inputs for every call, outputs never looked
  at) vs :func:`curate.score.clock.measure_accountable` (fresh inputs per call, 2 checked timed
  calls per trial), same warm-up / trials / min_trial_ms;
* parent clock: one ``tick`` (a pipe message) per trial edge, its cost per message;
* threads: one :class:`curate.score.checks.ThreadWatch` baseline + 3 checks;
* reference re-runs (determinism + RNG): one extra reference call, per subgraph;
* dispatch guard: building a pass with its own kernel (``tests/score_candidates/guard_honest_pass.py``,
  on ``gelu_tanh:1``, 5 times) with and without the guard (the fusion pass itself uses ATen ops
  and fails the guard by design).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None, help="write the ratios as flat JSON here")
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    import torch

    from curate.score.checks import ThreadWatch, build_candidate
    from curate.score.clock import AccountableConfig, measure_accountable
    from curate.score.spec import parse_candidate
    from curate.score.synthetic_tasks import builtin_task_set
    from curate.timing import TimingConfig, measure_pair

    torch.set_num_threads(1)
    subs = [s for s in builtin_task_set() if s.subgraph_id.endswith(":1")]
    clock = time.perf_counter
    res = {"old_timing_s": 0.0, "accountable_timing_s": 0.0, "ref_call_s": 0.0, "threadwatch_s": 0.0}
    for sub in subs:
        gm = sub.build()
        fn = gm.forward
        t0 = clock()
        measure_pair(gm, fn, lambda: sub.make_inputs(0), TimingConfig(warmup=3, trials=args.trials, min_trial_ms=5.0, retries=0))
        res["old_timing_s"] += clock() - t0
        t0 = clock()
        measure_accountable(gm, fn, sub.make_inputs, AccountableConfig(warmup=3, trials=args.trials, min_trial_ms=5.0, retries=0))
        res["accountable_timing_s"] += clock() - t0
        ins = sub.make_inputs(0)
        t0 = clock()
        gm(*ins)
        res["ref_call_s"] += clock() - t0
        t0 = clock()
        w = ThreadWatch()
        for k in range(3):
            w.check(str(k))
        res["threadwatch_s"] += clock() - t0
    a, b = mp.Pipe()
    n = 2000
    t0 = clock()
    for i in range(n):
        a.send(("tick", "x", (1, i, "eager", "b", None, 0.0)))
        b.recv()
    res["tick_us"] = (clock() - t0) / n * 1e6
    fp = parse_candidate("gp=pass:tests/score_candidates/guard_honest_pass.py")  # a pass that brings its own kernel
    res["guard_off_s"] = res["guard_on_s"] = 0.0
    for sub in [s for s in subs if s.task_id == "gelu_tanh"]:
        gm = sub.build()
        build_candidate(fp, gm, sub.make_inputs(0), {"dispatch_guard": True})  # untimed: op registration, first trace
        for _ in range(5):
            for key, g in (("guard_off_s", False), ("guard_on_s", True)):
                t0 = clock()
                build_candidate(fp, gm, sub.make_inputs(0), {"dispatch_guard": g})
                res[key] += clock() - t0
    res["timing_ratio"] = res["accountable_timing_s"] / res["old_timing_s"]
    res["guard_ratio"] = res["guard_on_s"] / res["guard_off_s"]
    trial_edges = 2 * 2 * args.trials  # b + e per side per trial
    res["tick_share_of_timing"] = trial_edges * len(subs) * res["tick_us"] / 1e6 / res["accountable_timing_s"]
    res = {k: round(v, 4) for k, v in res.items()}
    import os

    res.update(load_avg_1m=round(os.getloadavg()[0], 1), cpus=os.cpu_count(), subgraphs=[s.subgraph_id for s in subs], trials=args.trials,
               command="PYTHONPATH=$PWD nice -n 10 python benchmarks/bench_score_defenses.py --out metrics/bench/score_defenses.json")
    print(f"{'defense':34s} {'baseline':>10s} {'with':>10s} {'ratio':>7s}")
    print(f"{'timing (fresh inputs, checks)':34s} {res['old_timing_s']:10.3f} {res['accountable_timing_s']:10.3f} {res['timing_ratio']:7.2f}")
    print(f"{'dispatch guard (build the pass)':34s} {res['guard_off_s']:10.3f} {res['guard_on_s']:10.3f} {res['guard_ratio']:7.2f}")
    print(f"parent clock: {res['tick_us']:.1f} us per tick, {100 * res['tick_share_of_timing']:.2f}% of the timing wall")
    print(f"threads: {res['threadwatch_s']:.3f} s over {len(subs)} subgraphs; one extra reference call: {res['ref_call_s']:.4f} s")
    if args.out:
        from passnet_common.io import atomic_write_json

        atomic_write_json(args.out, res, indent=1)


if __name__ == "__main__":
    main()
