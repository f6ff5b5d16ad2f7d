"""Timing of a scoring candidate across the trust boundary, on the parent's clock only.

:func:`measure_boundary` times eager (in the reference sandbox), Dynamo-only (in its own
sandbox, a candidate sandbox loaded with ``backend:eager``) and the candidate (in the candidate
sandbox; :mod:`curate.score.boundary.parent`), every side with the same request
(:func:`trial_request`) through the same steps, each in its own process with its own slots:

1. **A fresh input set per call, delivered when the call starts.** Every trial gets ``inner``
   new input sets, one per call, made by ``make_inputs(seed)`` with seeds drawn from
   :class:`random.SystemRandom` (the same values for every side). Call ``i``'s set is written by
   the parent into that side's slot ``i`` only after call ``i - 1`` returned, just before the
   parent's go byte for call ``i`` (:meth:`curate.score.boundary.parent.Sandbox.stream`): no call
   of a trial repeats another's inputs (but on RNG graphs, below), and no call's inputs exist in the
   side's process before that call (a candidate can neither replay an output it computed for the
   same inputs nor work ahead on inputs it was not yet given). Each input the sandbox hands over is a tensor over its
   own bytes of the slot file only (:class:`curate.score.boundary.sandbox.Slots`). On a graph with
   random ops (``seed_each_call``) every call also has its own RNG seed, drawn with the same
   ``rng`` and written into the set's seed word with its inputs (outside the clock); the sandbox
   re-seeds with it before the call, so eager, Dynamo-only and the candidate draw from the same
   seed call by call and no two calls share one (a mask drawn once and reused is not eager's).
   Where outputs are judged by their statistics (random numbers of the candidate's own), one call
   of each trial repeats an earlier call's input set with its own seed, both kept and checked: an
   RNG output identical on the two while eager's differ, or equal element for element on far more
   positions of two kept calls on different inputs than eager's (:func:`coincident_rng_outputs`:
   dropout's zeros in the same places), reused its random numbers (``seed_ignored``).
2. **Outputs exist when the clock stops.** The sandbox copies each call's outputs into the
   parent's output slots before it writes that call's done byte, and the parent's
   ``perf_counter_ns`` runs from its go byte to that done byte. Nothing the candidate defers can
   land after the clock stops and still be compared.
3. **Timed outputs checked.** ``check_per_trial`` calls, drawn before the trial and never told to the
   sandbox, have their candidate input and output slots copied at each one's done byte with the
   sandbox stopped (:meth:`curate.score.boundary.parent.Sandbox.hold`: ``SIGSTOP`` and the kernel
   reporting it stopped, then ``SIGCONT``; before the next go byte, outside the clock; every other
   call of every side is stopped and copied the same way, into a scratch copy, so neither the
   signals nor the stop's length say which calls are checked; the last
   call's time runs on to the reply line, so work put off past a done byte is timed or leaves stale
   outputs in a checked call, however long the parent's copy takes); after the trial they are compared
   slot by slot with eager's (:func:`curate.score.defenses.compare.fast_min_pass_t`; RNG outputs by distribution and coupling,
   :func:`_slot_min_pass_t`), two of them for input independence, and the candidate's input
   slots with eager's (mutation). The worst level over the checked calls is the sample's
   (``timed_output_mismatch`` in :mod:`curate.score.defenses.checks`).
4. **Interleaved trials, medians, IQR/median gate** as in :mod:`curate.timing`; the order of the
   sides rotates with the trial index. A trial's time is the sum of its calls' go-to-done times.
   ``speedup`` (eager / candidate) and ``speedup_vs_dynamo`` (Dynamo-only / candidate) are ratios
   of medians with paired bootstrap intervals (:func:`median_ratio_ci`). Without a candidate
   (``cand=None``: the ``eager`` candidate, a pass that matched nothing) eager is the candidate,
   ``speedup`` exactly 1.
5. **Process accounting** of the candidate sandbox from ``/proc`` (threads at every trial edge,
   CPU time over the trials' wall time less the parent's deliveries, CPU of anything but its own
   threads over the trials, processes it left outside itself after every trial of every side):
   ``threads_started``, ``cpu_over_wall``, ``transient_threads``, ``processes_started``; a run the
   kernel refused (``EPERM`` / ``EACCES``) raises
   :class:`SandboxDenied`.

The delivery of a call's input set (the parent's copy into the slot) is **outside** the clock:
it costs as much as a memory-bound call (a copy of the inputs' bytes), so inside it would add the
same time to every side and pull every ratio toward 1. What is inside, the same for every side,
is the go / done exchange (a byte each way on the sandbox's socket and pipe, a wake-up each: tens
of microseconds on a loaded machine, ``timed_call_ms_median`` in ``metrics/bench/score_defenses.json``
against ``same_call_in_process_ms_median``; it pulls ratios toward 1 on graphs whose calls take
about as long) and the sandbox's loop around the call (output copy, checks of
the output's type).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from curate.score.boundary.parent import CLK_TCK, SharedSlots, bind, leaf_specs, sched_state
from curate.score.config import ScoreConfig, ScoreTimingConfig
from curate.score.defenses import integrity
from curate.score.defenses.compare import fast_min_pass_t, independence_violations, rng_stats_agree
from curate.timing import iqr_ratio, paired_bootstrap, ratio_of_medians


@dataclass
class AccountableConfig:
    """Knobs. Their defaults are read from :class:`curate.score.config.ScoreTimingConfig` (the
    ``score.timing`` block), where they live; the scorer builds this from the run configuration
    (:mod:`curate.score.defenses.checks`), so the defaults serve callers that set only a few.
    ``max_inner`` and ``ci_level`` are the boundary's own constants (``score.timing`` has no such keys).

    Attributes:
        warmup: untimed calls per side (on fresh inputs too).
        trials: interleaved timed trials per side.
        min_trial_ms: a trial lasts at least this long (ms); sets ``inner``.
        max_inner: cap on calls (and so input sets) per trial.
        max_iqr_ratio, retries: the noise gate (:mod:`curate.timing`).
        check_per_trial: timed calls per trial whose outputs are compared with eager's.
        pool_bytes: cap on the input + output bytes of one trial's sets (one set per call: a trial has
            no more calls than fit).
        seed_each_call: re-seed the RNG before every call with the call's own seed (subgraphs with
            random ops): one fresh seed per call, the same for every side, written with the call's inputs.
    """

    warmup: int = ScoreTimingConfig.warmup
    trials: int = ScoreTimingConfig.trials
    min_trial_ms: float = ScoreTimingConfig.min_trial_ms
    max_inner: int = 1000
    max_iqr_ratio: float = ScoreTimingConfig.max_iqr_ratio
    retries: int = ScoreTimingConfig.retries
    check_per_trial: int = ScoreTimingConfig.check_per_trial
    pool_bytes: int = int(ScoreTimingConfig.pool_mb * (1 << 20))
    seed_each_call: bool = False
    n_boot: int = ScoreTimingConfig.n_boot
    ci_level: float = 0.95


@dataclass
class AccountableTiming:
    """Result of :func:`measure_boundary` (ms per call; the parent's clock).

    ``attempt`` is the kept attempt (its trials are the ones the parent reconciles);
    ``checked_min_pass_t`` the worst level over checked timed calls (None: one failed at every
    level); ``violations`` findings of the checks (``input_independent``). ``dynamo_ms``: the
    Dynamo-only side's per-trial ms (empty without that side); ``speedup_vs_dynamo`` its median
    over the candidate's (None without it); ``speedup_ci`` / ``speedup_vs_dynamo_ci``: paired
    bootstrap intervals ``(low, high)`` of the two ratios (:func:`median_ratio_ci`).
    """

    eager_ms: list[float]
    candidate_ms: list[float]
    speedup: float
    stable: bool
    attempt: int
    inner: int
    n_sets: int
    n_checked: int
    checked_min_pass_t: int | None
    violations: list[str] = field(default_factory=list)
    dynamo_ms: list[float] = field(default_factory=list)
    speedup_vs_dynamo: float | None = None
    speedup_ci: tuple[float, float] | None = None
    speedup_vs_dynamo_ci: tuple[float, float] | None = None


def median_ratio_ci(num_ms: list[float], den_ms: list[float], n_boot: int = ScoreTimingConfig.n_boot, level: float = 0.95,
                    seed: int = 0) -> tuple[float, float]:
    """Paired percentile-bootstrap interval of ``median(num) / median(den)`` (the scorer's speedup):
    :func:`curate.timing.paired_bootstrap` with :func:`curate.timing.ratio_of_medians`.

    Trial indices are resampled with replacement, the same index for both sides (trial k of both
    ran within milliseconds of each other; Efron & Tibshirani, *An Introduction to the
    Bootstrap*, ch. 13). Seeded: the same trials give the same interval. Sides that cost exactly
    the same in every trial give ``(1.0, 1.0)``.

    Returns:
        ``(low, high)`` at ``level`` (two-sided).

    Raises:
        ValueError: empty or unpaired trial lists.
    """
    return paired_bootstrap(num_ms, den_ms, ratio_of_medians, n_boot, level, seed)


def _nbytes(xs: list) -> int:
    return sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))


def _clone(xs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def _ms_fields(acc: dict[str, list[float]], cand: bool, cfg: AccountableConfig) -> dict[str, Any]:
    e_ms = acc["eager"]
    c_ms = acc["candidate"] if cand else list(e_ms)
    d_ms = acc.get("dynamo", [])
    me, mc = statistics.median(e_ms), statistics.median(c_ms)
    out: dict[str, Any] = {"eager_ms": e_ms, "candidate_ms": c_ms, "dynamo_ms": d_ms,
                           "speedup": 1.0 if not cand else (me / mc if mc > 0 else math.inf),
                           "speedup_ci": (1.0, 1.0) if not cand else median_ratio_ci(e_ms, c_ms, cfg.n_boot, cfg.ci_level)}
    if d_ms:
        md = statistics.median(d_ms)
        out["speedup_vs_dynamo"] = md / mc if mc > 0 else math.inf
        out["speedup_vs_dynamo_ci"] = median_ratio_ci(d_ms, c_ms, cfg.n_boot, cfg.ci_level)
    return out


class SandboxDenied(RuntimeError):
    """A side's run was refused by the kernel (``EPERM`` / ``EACCES``): its code reached for what is
    not its own (:mod:`curate.score.defenses.checks` makes it ``sandbox_denied``). ``reply``: the
    sandbox's reply."""

    def __init__(self, reply: dict):
        super().__init__(reply.get("error", "denied"))
        self.reply = reply


SIDE_FN = {"eager": "eager", "dynamo": "candidate", "candidate": "candidate"}
"""The callable each side's sandbox runs (its ``fns`` key): the reference sandbox's eager graph;
the Dynamo-only sandbox and the candidate's are both candidate sandboxes (the Dynamo-only one
loaded with ``backend:eager``, :data:`curate.score.boundary.parent.DYNAMO_CANDIDATE`)."""


def trial_request(side: str, sets: list[int], seed: int | None, alias: tuple) -> dict:
    """The request of one timed trial of ``side``: run its callable once on each input set of
    ``sets``, each delivered when its call starts (``stream``: :meth:`curate.score.boundary.parent.Sandbox.stream`),
    and copy every output into the same-numbered output slots. Identical for the Dynamo-only side
    and the candidate (:data:`SIDE_FN`)."""
    return {"op": "run", "side": SIDE_FN[side], "sets": list(sets), "seed": seed, "out_base": 0, "alias": list(alias),
            "stream": True}


def measure_boundary(ref, cand, make_inputs: Callable[[int], list], out_specs: list, treespec: str,
                     cfg: AccountableConfig | None = None, deadline: float = math.inf, dyn=None,
                     rng: random.Random | None = None, rng_dep: set[int] | None = None, ref_other: list | None = None,
                     alias: tuple = (), cpu_rel_tol: float = ScoreConfig.cpu_rel_tol, cpu_abs_ms: float = ScoreConfig.cpu_abs_ms,
                     check_cpu: bool = True) -> AccountableTiming:
    """Time eager (``ref``, the reference sandbox), Dynamo-only (``dyn``, its own sandbox; None: not
    timed) and the candidate (``cand``, the candidate sandbox; None: eager is the candidate) across
    the trust boundary, on the parent's clock only (:meth:`curate.score.boundary.parent.Sandbox.stream`).

    **One protocol for every side.** Each side has its own sandbox process and its own input and
    output slots of the same sizes; every trial of every side is one :func:`trial_request` through
    the same inner function: the trial's fresh input sets (one per call, seeds from ``rng``,
    default :class:`random.SystemRandom`; the same values for every side) are written into that
    side's input slots **one at a time, each just before its call** (after the previous call's
    outputs were copied), so no call's inputs exist in the side's process before that call and no
    call of a trial repeats another's inputs; the parent's clock runs from its go byte to the
    side's done byte of each call (the delivery is outside it, the same for every side), and the
    trial's time is the sum over its calls. The side's ``/proc`` threads and CPU time are read
    before and after the trial. Sides rotate with the trial index. So the Dynamo-only reference
    and a candidate that is Dynamo-only itself (``backend:eager``) run the same code in the same
    kind of process with the same requests: their ratio is 1 up to noise by construction.

    Calls per trial: ``inner`` = ``ceil(min_trial_ms / t_call)`` (``t_call`` the median per-call
    time of eager on the probe set), at most ``max_inner`` and at most the sets that fit in
    ``pool_bytes`` (input + output slots of every side).

    With ``seed_each_call`` every call (warm-up and calibration included) has its own seed from
    ``rng``, the same for every side, delivered in its set's seed word with its inputs.

    Before each trial ``check_per_trial`` calls are drawn (with ``rng``; their slots copied at their
    done bytes with the sandbox stopped; with ``rng_dep``, a pair of calls too, the second given the
    first's input set with its own seed, ``seed_ignored`` as in the module docstring), and after it compared slot by slot
    with eager's (:func:`fast_min_pass_t`; outputs in ``rng_dep``, of RNG graphs, by distribution:
    :func:`curate.score.defenses.compare.rng_stats_agree` against eager's and ``ref_other``), two of
    them for input independence, and the candidate's input slots with eager's (input mutation).

    Candidate process accounting, from ``/proc`` (the candidate cannot reach the parent): its
    thread ids at the start and end of every candidate trial against the baseline taken before
    the candidate was imported (``threads_started``); its CPU time (all threads, dead ones
    included) from the first candidate trial's start to the last one's end against the
    candidate trials' wall time less the parent's deliveries (the sandbox waits, blocked, while
    the parent writes the next set): above ``(1 + cpu_rel_tol) * wall + cpu_abs_ms`` it worked in
    parallel with, or between, its timed windows (``cpu_over_wall``; only with ``check_cpu``, a
    single-threaded run). Over each candidate trial, that CPU less the CPU of the sandbox's own
    threads (:meth:`curate.score.boundary.parent.Sandbox.own_cpu_ms`: the baseline threads, ns from
    ``schedstat``) is what other threads and processes used, those started and joined inside a call
    included, which no look at the thread list sees: above :func:`other_cpu_limit_ms` over the
    trials it is ``transient_threads`` (with ``check_cpu`` too).

    Returns:
        :class:`AccountableTiming` (per-call ms on the parent's clock; ``violations`` named).

    Raises:
        RuntimeError: a side's run raised (the message of the sandbox); the caller classifies it.
        curate.score.boundary.parent.SandboxFailure: a sandbox died, timed out or passed the memory cap.
    """
    cfg = cfg or AccountableConfig()
    rng = rng or random.SystemRandom()
    rng_dep = rng_dep or set()
    seed = "slot" if cfg.seed_each_call else None  # each call re-seeded with its own seed, from its set's seed word

    def fresh() -> list:
        return make_inputs(rng.randrange(2, 2**31))

    def seeds(n: int) -> list[int] | None:
        """One fresh RNG seed per call (the same for every side, call by call), or None."""
        return [rng.randrange(1, 2**63) for _ in range(n)] if cfg.seed_each_call else None

    probe = fresh()
    boxes = {"eager": ref, "dynamo": dyn, "candidate": cand}
    sides = [s for s in ("eager", "dynamo", "candidate") if boxes[s] is not None]
    n_sets = int(max(2, min(cfg.max_inner, cfg.pool_bytes // max(1, 3 * (_nbytes(probe) + sum(
        _nbytes_spec(s) for s in out_specs))))))
    in_specs = leaf_specs(probe)
    slots: dict[str, tuple] = {}
    try:
        for side in sides:
            slots[side] = (SharedSlots(in_specs, n_sets), SharedSlots(out_specs, n_sets))
            bind(boxes[side], deadline, slots[side][0], slots[side][1], treespec)

        found: dict[str, str] = {}
        watched = cand if cand is not None and getattr(cand, "untrusted", False) else None

        def run(side: str, values: list[list], call_seeds: list[int] | None, seen: dict | None = None
                ) -> tuple[dict, list[float], float, set, float, float, float]:
            """One trial of ``side`` (the same steps for every side), one call per set of ``values``
            (call ``i`` on slot ``i``, written with its seed ``call_seeds[i]`` when the call starts):
            ``(reply, per-call ms, busy ms, threads beyond the baseline at its start or end, CPU ms
            before, CPU ms after, CPU ms of other threads and processes than the sandbox's own)``."""
            proc = boxes[side]
            for other in sides:  # every other side's process stopped, this one continued: the same for every side
                if other != side and hasattr(boxes[other], "freeze"):
                    left = boxes[other].freeze()
                    if left and boxes[other] is watched:
                        found.setdefault("processes_started", f"processes_started: {len(left)} process(es) of the candidate "
                                         f"alive outside its sandbox while the {side} side was timed")
            if hasattr(proc, "thaw"):
                proc.thaw()
            if watched is not None and side != "candidate":
                want = getattr(getattr(proc, "_zygote", None), "sched", None)
                now = sched_state(proc.pid) if want is not None else None
                if now is not None and now != want:
                    found.setdefault("reference_disturbed", f"reference_disturbed: the {side} sandbox's (nice, CPU "
                                     f"affinity) is {now}, not {want} as it started, while the candidate's code was alive")
            slot_in = slots[side][0]

            def deliver(i: int) -> None:
                slot_in.write(i, values[i], None if call_seeds is None else call_seeds[i])

            def collect(i: int, keep: bool) -> None:
                """Every call's slots, copied at its done byte with the sandbox stopped; kept for a
                checked call, dropped (a scratch copy of the same bytes) for the others, on every
                side: the stop's length and the cache the copy leaves do not depend on the check."""
                copy = ([None if t is None else t.clone() for t in slot_in.views[i]],
                        [None if t is None else t.clone() for t in slots[side][1].views[i]])
                if keep and seen is not None:
                    seen[i] = copy

            tasks0, cpu_before = proc.tasks(), proc.cpu_ms()
            own_before = proc.own_cpu_ms() if hasattr(proc, "own_cpu_ms") else None
            rep, per, busy = proc.stream(trial_request(side, range(len(values)), seed, alias), deliver, deadline,
                                         collect, set(seen) if seen else ())
            extra = (tasks0 | proc.tasks()) - proc.baseline_tasks
            cpu_after = proc.cpu_ms()
            other = 0.0 if own_before is None else (cpu_after - cpu_before) - (proc.own_cpu_ms() - own_before)
            strays = proc.strays()  # processes it left outside itself (empty for the trusted sides)
            if strays:
                found.setdefault("processes_started", f"processes_started: {len(strays)} process(es) the {side} process left "
                                 "outside itself alive at a timed trial's end")
            if "error" in rep:
                raise (SandboxDenied(rep) if rep.get("denied") else RuntimeError(rep["error"]))
            return rep, per, busy, extra, cpu_before, cpu_after, other

        for _ in range(cfg.warmup):
            vals, ss = fresh(), seeds(1)
            for side in sides:
                run(side, [vals], ss)
        n_cal = min(n_sets, 8)
        _, per, _, _, _, _, _ = run("eager", [probe] * n_cal, seeds(n_cal))  # the trusted reference: repeats do not matter here
        one_ms = max(statistics.median(per[1:] if len(per) > 1 else per), 1e-4)
        inner = int(min(cfg.max_inner, n_sets, max(1, math.ceil(cfg.min_trial_ms / one_ms))))
        worst: int | None = -10
        n_checked, best = 0, None
        cpu0 = cpu1 = None
        cand_wall = cand_other = 0.0
        for attempt in range(1, cfg.retries + 2):
            acc: dict[str, list[float]] = {s: [] for s in sides}
            for trial in range(cfg.trials):
                vals = [fresh() for _ in range(inner)]
                call_seeds = seeds(inner)
                k = trial % len(sides)
                mismatched: set[int] = set()
                # the checked calls are drawn before the trial (never told to the sandbox) and the candidate's slots
                # of each are copied at that call's done byte: outputs written later are never the ones checked
                picks = rng.sample(range(inner), k=min(cfg.check_per_trial, inner)) if cand is not None else []
                pair = (picks + [j for j in range(inner) if j not in picks])[:2] if inner >= 2 and not rng_dep else []
                # outputs judged by statistics (RNG graphs): one call repeats an earlier call's inputs with its own seed
                # (every side alike); an RNG output identical on the two while eager's differ reused its random numbers
                repeat = sorted(rng.sample(range(inner), 2)) if cand is not None and rng_dep and inner >= 2 else []
                if repeat:
                    vals[repeat[1]] = vals[repeat[0]]
                seen: dict[int, tuple[list, list] | None] = dict.fromkeys(set(picks) | set(pair) | set(repeat))
                for side in sides[k:] + sides[:k]:
                    rep, per, busy, extra, c_before, c_after, other = run(side, vals, call_seeds,
                                                                          seen if side == "candidate" else None)
                    acc[side].append(sum(per) / inner)
                    if side != "candidate":
                        continue
                    cpu0 = c_before if cpu0 is None else cpu0
                    cpu1 = c_after
                    cand_wall += busy
                    cand_other += other if math.isfinite(other) else 0.0
                    if extra:
                        found.setdefault("threads_started", f"threads_started: {len(extra)} thread(s) of the candidate "
                                         f"process alive at a timed trial's start or end (attempt {attempt}, trial {trial})")
                    for f in rep.get("findings", []):
                        found.setdefault(f.split(":")[0], f)
                    mismatched = set(rep.get("mismatched", []))
                if cand is None:
                    continue
                e_in, e_out = slots["eager"]
                for i in picks:
                    n_checked += 1
                    mp = None if i in mismatched else _slot_min_pass_t(seen[i][1], e_out.views[i], rng_dep, ref_other,
                                                                       rng_stats_agree)
                    worst = None if (mp is None or worst is None) else max(worst, mp)
                    changed = integrity.inputs_unchanged(seen[i][0], e_in.views[i])
                    if changed:
                        found.setdefault("input_mutation", f"input_mutation: inputs {changed} differ from eager's after a timed call")
                if repeat:
                    a, b = repeat
                    same = repeated_rng_outputs(seen[a][1], seen[b][1], e_out.views[a], e_out.views[b], rng_dep)
                    if same:
                        found.setdefault("seed_ignored", f"seed_ignored: outputs {same} (nearly) the same on a timed trial's "
                                         "repeated inputs with two RNG seeds; eager's differ (random numbers reused across calls)")
                    # every other pair of kept calls is on two different input sets: shared random numbers coincide
                    kept = sorted(set(picks) | set(repeat))
                    for x, y in [(x, y) for i, x in enumerate(kept) for y in kept[i + 1:] if (x, y) != (a, b)][:RNG_PAIRS]:
                        shared = coincident_rng_outputs(seen[x][1], seen[y][1], e_out.views[x], e_out.views[y], rng_dep)
                        if shared:
                            found.setdefault("seed_ignored", f"seed_ignored: outputs {shared} equal element for element on "
                                             "far more positions of two timed calls on different inputs than eager's "
                                             "(random numbers reused across calls)")
                            break
                if pair:
                    a, b = pair
                    bad = independence_violations(seen[a][1], seen[b][1], e_out.views[a], e_out.views[b])
                    if bad:
                        found.setdefault("input_independent", f"input_independent: outputs {bad} identical on two fresh "
                                         "inputs of a timed trial; eager's differ")
            noise = max(iqr_ratio(v) for v in acc.values())
            if best is None or noise < best[0]:
                best = (noise, attempt, acc)
            if noise <= cfg.max_iqr_ratio:
                break
        if cand is not None and check_cpu and cpu0 is not None and cpu1 is not None:
            cpu = cpu1 - cpu0
            if cpu > (1 + cpu_rel_tol) * cand_wall + cpu_abs_ms:
                found.setdefault("cpu_over_wall", f"cpu_over_wall: the candidate process used {cpu:.0f} ms of CPU (all threads) "
                                 f"while its timed trials took {cand_wall:.0f} ms of wall time, single-threaded")
        if cand is not None and check_cpu and cand_other > other_cpu_limit_ms(cand):
            found.setdefault("transient_threads", f"transient_threads: {cand_other:.1f} ms of CPU in the candidate's timed "
                             "trials by threads or processes other than its sandbox's own threads (a thread started and "
                             "joined inside its calls is seen at no trial's start or end)")
        noise, kept, acc = best
        f = _ms_fields(acc, cand is not None, cfg)
        return AccountableTiming(f["eager_ms"], f["candidate_ms"], f["speedup"], noise <= cfg.max_iqr_ratio, kept, inner,
                                 inner, n_checked, worst, list(found.values()), f["dynamo_ms"], f.get("speedup_vs_dynamo"),
                                 f["speedup_ci"], f.get("speedup_vs_dynamo_ci"))
    finally:
        for box in (ref, dyn, cand):
            if box is not None and hasattr(box, "thaw"):
                box.thaw()
        for pair in slots.values():
            for sl in pair:
                sl.close()


RNG_PAIRS = 6
"""Pairs of a timed trial's kept calls on different inputs compared by :func:`coincident_rng_outputs`
(RNG graphs), at most."""

OTHER_CPU_MS = 2.0
"""CPU (ms) other threads and processes than the candidate sandbox's own may use over its timed
trials when its CPU is read in ns (its cgroup's ``cpuacct.usage``, :func:`other_cpu_limit_ms`)."""


def other_cpu_limit_ms(box) -> float:
    """The most CPU (ms) threads and processes other than the sandbox's own may use over its timed
    trials before it is ``transient_threads``: :data:`OTHER_CPU_MS` where its CPU is read in ns (a
    cgroup), else two clock ticks more (``/proc/<pid>/stat`` counts the process in ticks, each
    reading up to one tick short)."""
    if getattr(box, "cgroup", None) is not None:
        return OTHER_CPU_MS
    return OTHER_CPU_MS + 2 * 1e3 / CLK_TCK


def _nbytes_spec(spec: tuple) -> int:
    if spec[0] != "tensor":
        return 0
    n = 1
    for d in spec[2]:
        n *= int(d)
    return n * torch.empty((), dtype=getattr(torch, spec[1])).element_size()


def repeated_rng_outputs(c_a: list, c_b: list, e_a: list, e_b: list, rng_dep: set[int]) -> list[int]:
    """The outputs of ``rng_dep`` that the candidate gave (nearly) the same on two calls with the same
    inputs and two RNG seeds (``c_a`` / ``c_b``: its output slots of the two calls) where eager's
    (``e_a`` / ``e_b``) differ: random numbers drawn once and reused, whatever stream they came from.
    Nearly: equal within ``rtol`` 1e-4 (``atol`` 1e-6) on far more positions than eager's two seeds
    are (:func:`_far_above`), so a replay scaled by ``1 + 1e-7`` is the replay it is; an output of
    fewer than 64 elements, identical where eager's are not."""
    out = []
    for j in sorted(rng_dep):
        if j >= min(len(c_a), len(c_b), len(e_a), len(e_b)) or any(x is None for x in (c_a[j], c_b[j], e_a[j], e_b[j])):
            continue
        if c_a[j].shape != c_b[j].shape or e_a[j].shape != e_b[j].shape:
            continue
        if c_a[j].numel() < 64:
            if bool(torch.equal(c_a[j], c_b[j])) and not bool(torch.equal(e_a[j], e_b[j])):
                out.append(j)
            continue
        if _far_above(_n_close(c_a[j], c_b[j]), _n_close(e_a[j], e_b[j]), c_a[j].numel()):
            out.append(j)
    return out


def _n_close(u: torch.Tensor, v: torch.Tensor) -> int:
    """Positions where ``u`` and ``v`` are equal within ``rtol`` 1e-4, ``atol`` 1e-6 (exactly, for
    integer and boolean tensors)."""
    if u.is_floating_point() or u.is_complex():
        return int(torch.isclose(u, v, rtol=1e-4, atol=1e-6).sum())
    return int((u == v).sum())


def _far_above(kc: int, ke: int, n: int) -> bool:
    """Whether the candidate's count ``kc`` of ``n`` positions is far above eager's ``ke``: above it
    by six binomial standard deviations of twice eager's rate plus 1% of the positions (an honest
    stream of its own has eager's rate: its count is within a few deviations)."""
    q = max(ke, 1) / n
    return kc > ke + 6 * math.sqrt(2 * n * q * (1 - q)) + 0.01 * n


def coincident_rng_outputs(c_a: list, c_b: list, e_a: list, e_b: list, rng_dep: set[int]) -> list[int]:
    """The outputs of ``rng_dep`` (64 elements or more) that the candidate gave equal element for
    element on far more positions of two calls on *different* inputs (``c_a`` / ``c_b``) than eager
    did on the same two calls (``e_a`` / ``e_b``, two seeds): random numbers reused across calls pin
    the same values wherever they decide the output alone (dropout's zeros, a mask, ``rand_like``),
    where two independent draws coincide only by chance. Far more: above eager's count plus six
    binomial standard deviations of twice eager's rate plus 1% of the elements (an honest stream of
    its own has eager's rate: its count is within a few deviations)."""
    out = []
    for j in sorted(rng_dep):
        if j >= min(len(c_a), len(c_b), len(e_a), len(e_b)) or any(x is None for x in (c_a[j], c_b[j], e_a[j], e_b[j])):
            continue
        if c_a[j].shape != c_b[j].shape or e_a[j].shape != e_b[j].shape or c_a[j].numel() < 64:
            continue
        if _far_above(int((c_a[j] == c_b[j]).sum()), int((e_a[j] == e_b[j]).sum()), c_a[j].numel()):
            out.append(j)
    return out


def coupling(a: torch.Tensor, b: torch.Tensor) -> float:
    """Pearson correlation of two tensors' elements (0 for constant or non-float tensors)."""
    if not (a.is_floating_point() and b.is_floating_point()) or a.numel() < 2:
        return 0.0
    x, y = a.detach().double().reshape(-1), b.detach().double().reshape(-1)
    x, y = x - x.mean(), y - y.mean()
    den = float(x.norm() * y.norm())
    return float((x * y).sum()) / den if den > 0 else 0.0


def _slot_min_pass_t(c_out: list, e_out: list, rng_dep: set[int], ref_other: list | None, stats_agree) -> int | None:
    """The smallest level at which the candidate's slots pass against eager's. An output of
    ``rng_dep`` (RNG graphs) that does not match element-wise passes at every level when its
    distribution agrees (``stats_agree`` against eager's and ``ref_other``, eager's on other
    inputs) *and* it follows eager's output on the same inputs at least half as closely as two
    runs of eager with different seeds do (:func:`coupling`): a stale or input-free output (an
    ``empty_like`` that recycles an earlier call's memory) has the distribution but not the
    coupling. Else it fails."""
    if not rng_dep:
        return fast_min_pass_t([x for x in c_out if x is not None], [x for x in e_out if x is not None])
    worst = -10
    for j, (c, e) in enumerate(zip(c_out, e_out)):
        if c is None:
            continue
        if j in rng_dep:
            if fast_min_pass_t(c, e) == -10:
                continue
            rho_ref = coupling(ref_other[j][0], ref_other[j][1]) if ref_other and ref_other[j] is not None else 0.0
            if not stats_agree(c, e, ref_other[j][1]) or coupling(c, e) < 0.5 * rho_ref:
                return None
            continue
        m = fast_min_pass_t(c, e)
        if m is None:
            return None
        worst = max(worst, m)
    return worst
