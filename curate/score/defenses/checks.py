"""One subgraph, one candidate, checked in the parent across the trust boundary.

:func:`evaluate_subgraph` makes one ``score_samples`` row; the candidate runs in its sandbox, the
references in theirs (:mod:`curate.score.boundary.parent`), every check here. Steps and the cheat each
check stops (the static check of the source runs before, in :func:`curate.score.evaluate.run_candidate`):

1. reference outputs on seed-0 inputs, twice (``nondeterministic_reference`` flag when they
   differ), on fresh inputs and on the near repeat; every checked call has its own RNG seed
   (:class:`CallSeeds`, drawn from :class:`random.SystemRandom`; the same for the reference, the
   Dynamo-only side and the candidate, call by call; the determinism re-run shares the first
   call's). For a graph with random ops (``rng`` flag) the third call is the seed-0 inputs again
   with its own seed: outputs that change are *RNG-dependent*; a trivial reference (constant /
   near zero / empty, :func:`curate.tolerance.trivial_reason`) is ``excluded``;
2. the candidate sandbox's threads and child processes against its baseline before the candidate
   was imported, after import + compile, after the checked calls and after timing;
3. candidate built (compile failure: code 3) and called (exception: code 2);
4. checks on the parent's copies of the output slots: inputs unchanged, no output a subclass or a
   new view of the inputs (``output_type`` / ``output_alias``), outputs on fresh inputs written
   into the same slot (seed 1; a cache keyed on data pointers replays stale values) compared again
   (``fresh_input_mismatch``), then the seed-0 inputs with about half their inner elements changed,
   in the same slot again (:func:`near_repeat`; a cache keyed on a few input values replays the first
   call's output: ``near_repeat_mismatch``); an output identical on the two inputs while the reference's differs
   is ``input_independent``, an all-zero output where the reference is not trivial ``zero_output``;
5. RNG-dependent outputs: equal to eager's on all three checked calls (the candidate follows the
   seed: its timed calls are then compared element by element), else compared by statistics
   (:func:`curate.score.defenses.compare.rng_stats_agree`); one identical on the first and third
   calls (the same inputs, two seeds) while eager's differ is ``seed_ignored`` (a mask drawn once
   and reused);
6. the Dynamo-only sandbox given exactly what the candidate's was (:class:`_Side`: slots, the
   graph loaded as ``backend:eager``, the two checked calls), then timing
   (:func:`curate.score.defenses.clock.measure_boundary`: one protocol for every side, fresh inputs
   per trial, outputs copied inside the timed request, checked timed outputs, the parent's clock,
   process accounting), then the roofline's two roofs (:func:`roofline_violations`: bytes over the
   host's bandwidth; :func:`flop_violations`: the reference's FLOPs over its peak). The ``eager``
   candidate and passes that matched nothing keep ``speedup`` exactly 1 and time eager against
   Dynamo-only only.

A violation sets ``status = violation``: the floor b at every level in both conventions
(:func:`curate.score.scoring.sample_state`).
"""

from __future__ import annotations

import hashlib
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils.flop_counter import FlopCounterMode

from curate.score.boundary.parent import (
    DYNAMO_CANDIDATE,
    GUARD,
    SandboxFailure,
    SharedSlots,
    bind,
    candidate_sandbox,
    candidate_started,
    dynamo_sandbox,
    graph_payload,
    harness_found_dead,
    host_copy_bandwidth,
    host_flop_peak,
    leaf_specs,
    reference_sandbox,
)
from curate.score.config import run_config
from curate.score.defenses import integrity
from curate.score.defenses.clock import AccountableConfig, SandboxDenied, measure_boundary, repeated_rng_outputs
from curate.score.defenses.compare import chunked_comparisons, fast_min_pass_t, independence_violations, output_leaves, rng_stats_agree
from curate.score.spec import Candidate, candidate_source, source_hash
from curate.tolerance import ERROR_ACCURACY, ERROR_COMPILE, ERROR_RUNTIME, sample_min_pass_t, trivial_reason

SCORE_CODE_VERSION = 5  # 5: the trust boundary (sandbox processes, parent clock, violations floored)
FRESH_CHECK_LEVEL = -5
"""A candidate correct at this level (assert_close defaults) on the seed-0 inputs ..."""
FRESH_MARGIN = 2
"""... but passing on fresh inputs only above ``FRESH_CHECK_LEVEL + FRESH_MARGIN`` is a violation."""


def timed_mismatch(before: int | None, timed: int | None) -> bool:
    """Whether the checked timed calls (smallest passing level ``timed``; None: fail at every level)
    fall short of the calls checked before timing (``before``) by more than ``FRESH_MARGIN`` levels,
    counted from ``max(before, FRESH_CHECK_LEVEL)``: a level finer than the judging level says nothing
    about correctness, and an honest compiler's bfloat16 output that matches eager exactly (t=-10) on
    the seed-0 inputs can pass from t=-6 on a timed trial's inputs (Inductor did, on one subgraph of
    the default build, and was flagged while the anchor was ``before`` itself)."""
    if before is None:
        return False
    return timed is None or timed > max(before, FRESH_CHECK_LEVEL) + FRESH_MARGIN


RNG_OPS = ("rand", "randn", "randint", "randperm", "bernoulli", "dropout", "normal", "uniform", "multinomial",
           "exponential", "poisson", "rrelu")
"""Substrings of an op name that make a graph an RNG graph (``rng`` flag)."""


ALLOC_FAILURES = ("DefaultCPUAllocator: can't allocate memory", "bad_alloc", "MemoryError", "Cannot allocate memory")
"""Substrings of an error message that make it an allocation failure (error class ``oom``)."""


def error_class_of(message: str | None) -> str:
    """The error class of a failed row from its message: ``oom`` for an allocation failure
    (:data:`ALLOC_FAILURES`: the address-space backstop or the machine refused memory),
    ``exception:<Type>`` for a message ``"<Type>: ..."`` (an exception the row recorded), else
    ``crash``."""
    if message and any(m in message for m in ALLOC_FAILURES):
        return "oom"
    head = (message or "").split(":", 1)[0]
    return f"exception:{head}" if head.isidentifier() and ":" in (message or "") else "crash"


def _timed_fields(pt) -> dict[str, Any]:
    """Row fields of one :class:`curate.score.defenses.clock.AccountableTiming` (ms are per-call medians)."""
    out = {"status": "ok", "speedup": pt.speedup, "eager_ms": statistics.median(pt.eager_ms),
           "candidate_ms": statistics.median(pt.candidate_ms), "stable": pt.stable, "timing_attempt": pt.attempt,
           "inner": pt.inner, "n_checked": pt.n_checked}
    if pt.speedup_ci is not None:
        out["speedup_ci_low"], out["speedup_ci_high"] = pt.speedup_ci
    if pt.dynamo_ms:
        out["dynamo_ms"] = statistics.median(pt.dynamo_ms)
        out["speedup_vs_dynamo"] = pt.speedup_vs_dynamo
        out["speedup_vs_dynamo_ci_low"], out["speedup_vs_dynamo_ci_high"] = pt.speedup_vs_dynamo_ci
    return out


def is_rng_graph(gm) -> bool:
    """Whether any call node of ``gm`` targets a random op (:data:`RNG_OPS`; a training-mode
    ``dropout`` counts, an eval-mode one is not told apart)."""
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method"):
            name = str(getattr(n.target, "__name__", n.target)).lower()
            if any(op in name for op in RNG_OPS):
                if "dropout" in name and n.kwargs.get("training") is False:
                    continue
                return True
    return False


def _timing_config(cfg: dict, seed_each_call: bool):
    """The accountable timing knobs of the run configuration ``cfg``."""
    cfg = run_config(cfg)
    return AccountableConfig(warmup=int(cfg["warmup"]), trials=int(cfg["trials"]), min_trial_ms=float(cfg["min_trial_ms"]),
                             max_iqr_ratio=float(cfg["max_iqr_ratio"]), retries=int(cfg["retries"]),
                             check_per_trial=int(cfg["check_per_trial"]), pool_bytes=int(float(cfg["pool_mb"]) * (1 << 20)),
                             seed_each_call=seed_each_call, n_boot=int(cfg["n_boot"]))


def _output_checks(out1, out_f, ref, ref_f, trivial) -> list[str]:
    """``input_independent`` / ``zero_output`` findings over the two checked calls."""
    found = []
    same = independence_violations(out1, out_f, ref, ref_f)
    if same:
        found.append(f"input_independent: outputs {same} identical on seed-0 and fresh inputs; the reference's differ")
    zeros = [i for i, (o, tr) in enumerate(zip(output_leaves(out1), trivial))
             if tr is None and isinstance(o, torch.Tensor) and o.numel() and (o.is_floating_point() or o.is_complex())
             and not bool(o.any())]
    if zeros:
        found.append(f"zero_output: outputs {zeros} are all zeros; the reference's are not trivial")
    return found




def near_repeat(values: list, other: list, rng: random.Random) -> tuple[list, list[int]]:
    """``values`` (an input set) with about half of each tensor input's elements taken from
    ``other`` (another draw of the same inputs, so every value is one the input can hold): each
    element where the two differ is taken with probability 1/2 (at least one), drawn with ``rng``,
    never an input's first or last element (the cheapest key a cache of outputs reads). Returns
    ``(the set, the inputs changed)``; an input with fewer than 3 elements, or equal to ``other``
    inside, is kept.

    A candidate that replays an earlier call's output for inputs that look the same to a key read
    from a few of their values gets it wrong here (``near_repeat_mismatch``): a key on the ends
    always, a key on ``m`` inner elements of an input with probability ``1 - 2**-m`` on each
    subgraph. An honest candidate computes it like any other set."""
    out, changed = [], []
    for j, (x, y) in enumerate(zip(values, other)):
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.shape != y.shape or x.numel() < 3:
            out.append(x)
            continue
        fx, fy = x.reshape(-1), y.reshape(-1)
        differ = torch.zeros(fx.numel(), dtype=torch.bool)
        differ[1:-1] = fx[1:-1] != fy[1:-1]
        if not bool(differ.any()):
            out.append(x)
            continue
        coin = torch.rand(fx.numel(), generator=torch.Generator().manual_seed(rng.randrange(2**62))) < 0.5
        take = differ & coin
        if not bool(take.any()):
            take[int(differ.nonzero()[0])] = True
        z = x.clone()
        z.view(-1)[take] = fy[take]
        out.append(z)
        changed.append(j)
    return out, changed


def _fail(row: dict, status: str, code: int, message: str) -> dict:
    row.update(status=status, error_code=code, error_message=message[:500])
    return row


def _violate(row: dict) -> dict:
    """A row with violations: ``status = violation``, failed at every level in both conventions
    (:func:`curate.score.scoring.sample_state` floors it: b at every t, never forgiven)."""
    row.update(status="violation", error_code=ERROR_ACCURACY, min_pass_t=None)
    return row


def _leaf_spec(desc: list) -> tuple:
    return ("tensor", desc[1], desc[2]) if desc[0] == "tensor" else ("const", desc[1])


class _Run:
    """The slots of the checked calls of one subgraph (3 input sets, 3 + 3 output sets) in both
    sandboxes, and the requests on them."""

    def __init__(self, ref, deadline: float):
        self.ref, self.cand, self.deadline = ref, None, deadline
        self.slots: dict = {}

    def ask(self, box, msg: dict) -> dict:
        rep = box.request(msg, self.deadline)
        return rep

    def close(self) -> None:
        for s in self.slots.values():
            s.close()


def evaluate_subgraph(sub, cand: Candidate, cfg: dict, tick=None, phase=None) -> dict[str, Any]:
    """Evaluate one subgraph across the trust boundary; returns a ``score_samples`` row.

    The parent (this process) builds the inputs and holds every check; the reference sandbox
    runs eager, the Dynamo-only sandbox Dynamo-only, the candidate sandbox the candidate (untrusted
    for ``module:`` / ``pass:``: :data:`UNTRUSTED_KINDS`; a refusal by the kernel is
    ``sandbox_denied``, processes it left outside itself ``processes_started``)
    (:mod:`curate.score.boundary.parent`; both reused across calls with the same ``threads`` /
    ``mem_cap_gb`` / ``inductor_cache``; a new candidate gets a fresh process).

    ``cfg`` keys: ``warmup``, ``trials``, ``min_trial_ms``, ``max_iqr_ratio``, ``retries``,
    ``check_per_trial``, ``pool_mb``, ``fresh_seed``, ``timing`` (False: skip timing, for tests),
    ``dispatch_guard``, ``no_match`` (``one`` | ``floor``), ``timeout_s`` (per subgraph),
    ``roofline_factor``, ``cpu_rel_tol``, ``cpu_abs_ms``, ``input_seed`` (the checked calls' inputs:
    ``make_inputs(input_seed)`` and ``make_inputs(input_seed + fresh_seed)``; 0 but when
    re-validating). ``phase("reference")`` is called once the
    eager reference outputs exist. ``tick`` is accepted for callers of the earlier in-child API
    and unused (the parent's clock is the only one).

    Raises:
        curate.score.boundary.parent.SandboxFailure: a sandbox died, timed out or passed the memory cap,
            or (an untrusted candidate whose sandbox is started) a trusted sandbox was found dead
            before this subgraph (:func:`curate.score.boundary.child.run_children` makes the row;
            ``role`` says which).
    """
    row: dict[str, Any] = {"candidate": cand.name, "candidate_spec": cand.spec, "task_id": sub.task_id,
                           "subgraph_id": sub.subgraph_id, "violations": [], "flags": [], "retimed": False, "scored": True,
                           "code_version": SCORE_CODE_VERSION}
    cfg = run_config(cfg)
    deadline = time.monotonic() + float(cfg["timeout_s"])
    try:
        gm = sub.build()
        base = int(cfg["input_seed"])  # 0; a never-published seed when re-validating
        inputs0 = sub.make_inputs(base)
        fresh = sub.make_inputs(base + int(cfg["fresh_seed"]))
        secret = random.SystemRandom()
        rng = is_rng_graph(gm)
        # RNG graphs: the third checked call is the first call's inputs with another RNG seed (a candidate
        # whose random outputs ignore the seed repeats itself there); else the near repeat
        near, near_leaves = (inputs0, []) if rng else near_repeat(inputs0, fresh, secret)
        seeds = CallSeeds(*(secret.randrange(1, 2**63) for _ in range(3)))  # every checked call's own RNG seed
        graph = graph_payload(gm)
    except Exception as exc:  # noqa: BLE001 - the harness's reference failed: out of every candidate's scores
        return _reference_failed(row, exc)
    dead = harness_found_dead(cfg) if cand.kind in UNTRUSTED_KINDS else None
    if dead and candidate_started(cfg, candidate_key(cand, cfg)):
        raise SandboxFailure(f"the {dead} sandbox was found dead before this subgraph", "crash", dead)
    ref = reference_sandbox(cfg)
    run = _Run(ref, deadline)
    in_specs = leaf_specs(inputs0)
    try:
        run.slots["ref_in"] = SharedSlots(in_specs, 4)
        for k, (v, sd) in enumerate(zip((inputs0, inputs0, fresh, near), (seeds.first, seeds.first, seeds.fresh, seeds.third))):
            run.slots["ref_in"].write(k, v, sd)
        bind(ref, deadline, inputs=run.slots["ref_in"])
        want_dynamo = bool(cfg["dynamo_reference"]) and bool(cfg["timing"])
        key = f"{sub.subgraph_id}:{hashlib.sha1(graph).hexdigest()}"
        rep = ref.request({"op": "load", "graph": graph, "key": key}, deadline)
        if "error" in rep:
            return _reference_failed(row, RuntimeError(rep["error"]))
        pr = ref.request({"op": "probe", "side": "eager", "set": 0, "seed": 0}, deadline)
        if "error" in pr:
            return _reference_failed(row, RuntimeError(pr["error"]))
        out_specs = [_leaf_spec(d) for d in pr["leaves"]]
        alias = tuple(j for j, d in enumerate(pr["leaves"]) if d[0] == "tensor" and d[3])
        treespec = pr["treespec"]
        run.slots["ref_out"] = SharedSlots(out_specs, 4)
        bind(ref, deadline, outputs=run.slots["ref_out"], treespec=treespec)
        rr = ref.request({"op": "run", "side": "eager", "sets": [0, 1, 2, 3], "seed": "slot", "alias": list(alias)}, deadline)
        if "error" in rr or rr.get("mismatched"):
            return _reference_failed(row, RuntimeError(rr.get("error") or "eager reference changed its output structure"))
        ref_out = [run.slots["ref_out"].read(k) for k in range(4)]
        ref_leaves, ref_again, ref_f, ref_n = ref_out
        ref_other = None
        rng_dep: set[int] = set()
        if rng:  # set 3 is set 0's inputs with another seed: the outputs that change are RNG-dependent
            row["flags"].append("rng")
            ref_other = ref_n
            rng_dep = {i for i, (a, b) in enumerate(zip(ref_leaves, ref_other))
                       if isinstance(a, torch.Tensor) and not bool(torch.equal(a, b))}
        if phase is not None:
            phase("reference")
        if fast_min_pass_t(_t(ref_again), _t(ref_leaves)) != -10:
            row["flags"].append("nondeterministic_reference")
        trivial = [trivial_reason(o) for o in ref_leaves]
        row["out_trivial"] = list(trivial)
        if ref_leaves and all(t is not None for t in trivial):
            row.update(status="excluded", scored=False, error_message=f"trivial reference outputs: {sorted(set(trivial))}")
            return row
        timing = _timing_config(cfg, rng)

        who = candidate_key(cand, cfg)
        guard = str(GUARD) if cfg["dispatch_guard"] else None
        side = _Side(graph, in_specs, out_specs, treespec, inputs0, fresh, near, alias, guard, seeds)
        if cand.kind == "eager":
            cs = chunked_comparisons(_t(ref_leaves), _t(ref_leaves))
            row.update(status="ok", speedup=1.0, min_pass_t=sample_min_pass_t(c.min_pass_t for c in cs),
                       out_dtypes=[c.dtype for c in cs], out_min_pass_t=[c.min_pass_t for c in cs],
                       out_max_abs_diff=[0.0 for _ in cs], stable=True, compile_s=0.0)
            dyn = _dynamo_side(run, row, cfg, who, side) if want_dynamo else None
            try:
                _reference_only(row, ref, sub, out_specs, treespec, alias, cfg, timing, dyn, deadline)
            except SandboxFailure:
                raise  # boundary.child: the eager candidate's failures are the harness's
            except RuntimeError as exc:  # eager is the reference: its failure is the harness's
                return _reference_failed(row, exc)
            return row

        # --- the candidate's side ---------------------------------------------------------
        box = candidate_sandbox(cfg, who, untrusted=cand.kind in UNTRUSTED_KINDS)
        run.cand = box
        row["isolation"] = box.isolation
        target = str(Path(cand.target).resolve()) if cand.kind != "backend" else cand.target
        rep, ms = side.load(box, run, "cand", cand.kind, target, deadline)
        if "error" in rep:
            if rep.get("denied"):
                return _violate_denied(row, rep, box)
            if rep.get("guard"):
                row["violations"].append(f"dispatch_guard: {rep['error']}")
                row["error_message"] = rep["error"][:500]
                return _violate(row)
            code = ERROR_COMPILE if (cand.kind == "pass" or rep.get("code") == 3) else ERROR_RUNTIME
            return _fail(row, "compile_failure" if code == ERROR_COMPILE else "runtime_crash", code, rep["error"])
        matches, used = rep.get("matches"), rep.get("used")
        row["compile_s"], row["matches"], row["replacements_used"] = ms / 1e3, matches, used
        row["violations"] += _process_findings(box, "after import and compile")
        # seed-0 inputs, then fresh values in the *same* slot (a cache keyed on data pointers replays stale outputs),
        # then the seed-0 inputs with half their inner elements changed (a cache keyed on a few values replays them)
        cr, cf, cn, changed, out1, out_f, out_n = side.checked_calls(box, run, "cand", deadline)
        for c in (cr, cf, cn):
            if c.get("denied"):
                return _violate_denied(row, c, box)
        for c in (cr, cf, cn):
            if "error" in c:
                return _fail(row, "runtime_crash", ERROR_RUNTIME, c["error"])
        if changed:
            row["violations"].append(f"input_mutation: inputs {changed} differ from eager's after the call")
        row["violations"] += sorted(set(cr.get("findings", []) + cf.get("findings", []) + cn.get("findings", [])))
        row["violations"] += _process_findings(box, "after the checked calls")
        bad_sets = {0} if cr.get("mismatched") else set()
        bad_sets |= {2} if cf.get("mismatched") else set()
        cs = chunked_comparisons(_t(out1), _t(ref_leaves)) if 0 not in bad_sets else None
        cs_f = chunked_comparisons(_t(out_f), _t(ref_f)) if 2 not in bad_sets else None
        if cs is None or cs_f is None:  # another structure / dtype / shape than the reference's: wrong at every level
            row.update(status="ok", speedup=1.0, stable=True, min_pass_t=None, fresh_min_pass_t=None)
            row["flags"].append("output_mismatch")
            return _violate(row) if row["violations"] else row
        t_idx = [j for j, o in enumerate(ref_leaves) if isinstance(o, torch.Tensor)]
        rng_exact: set[int] = set()  # RNG-dependent outputs equal to eager's on every checked call (the same seed each)
        if rng_dep:  # outputs that change with the seed: statistics, not elements
            cs_n = chunked_comparisons(_t(out_n), _t(ref_n)) if not cn.get("mismatched") else None
            for i, j in enumerate(t_idx):
                if j not in rng_dep:
                    continue
                if cs_n is not None and all(c[i].min_pass_t is not None and c[i].min_pass_t <= FRESH_CHECK_LEVEL
                                            for c in (cs, cs_f, cs_n)):
                    rng_exact.add(j)
                    continue
                ok = rng_stats_agree(out1[j], ref_leaves[j], ref_other[j]) and cs_n is not None \
                    and rng_stats_agree(out_n[j], ref_n[j], ref_leaves[j])
                cs[i].min_pass_t = cs_f[i].min_pass_t = -10 if ok else None
                row["flags"].append(f"rng_stats_{'match' if ok else 'differ'}:{j}")
            same = repeated_rng_outputs(out1, out_n, ref_leaves, ref_n, {j for j in rng_dep if j < len(out1) and j < len(out_n)
                                                                        and isinstance(out1[j], torch.Tensor)
                                                                        and isinstance(out_n[j], torch.Tensor)})
            if same:
                row["violations"].append(f"seed_ignored: outputs {same} (nearly) the same on the same inputs with two RNG "
                                         "seeds; eager's differ")
        else:
            row["violations"] += _output_checks(_t(out1), _t(out_f), _t(ref_leaves), _t(ref_f), [trivial[j] for j in t_idx])
        mp0 = sample_min_pass_t(c.min_pass_t for c in cs)
        mpf = sample_min_pass_t(c.min_pass_t for c in cs_f)
        if mp0 is not None and mp0 <= FRESH_CHECK_LEVEL and (mpf is None or mpf > FRESH_CHECK_LEVEL + FRESH_MARGIN):
            row["violations"].append(f"fresh_input_mismatch: passes from t={mp0} on seed-0 inputs, from t={mpf} on fresh inputs")
        per_out = [None if a is None or b is None else max(a, b) for a, b in zip([c.min_pass_t for c in cs], [c.min_pass_t for c in cs_f])]
        mpn = -10
        if near_leaves and not rng_dep:  # RNG graphs' outputs are judged by their statistics
            cs_n = chunked_comparisons(_t(out_n), _t(ref_n)) if not cn.get("mismatched") else None
            mpn = None if cs_n is None else sample_min_pass_t(c.min_pass_t for c in cs_n)
            if mp0 is not None and mp0 <= FRESH_CHECK_LEVEL and (mpn is None or mpn > FRESH_CHECK_LEVEL + FRESH_MARGIN):
                row["violations"].append(f"near_repeat_mismatch: passes from t={mp0} on seed-0 inputs, from t={mpn} on the "
                                         f"same inputs with half the inner elements of inputs {near_leaves} changed (an "
                                         "earlier call's output replayed)")
            if cs_n is not None:
                per_out = [None if a is None or b.min_pass_t is None else max(a, b.min_pass_t) for a, b in zip(per_out, cs_n)]
        row.update(out_dtypes=[c.dtype for c in cs], out_min_pass_t=per_out,
                   out_max_abs_diff=[max(a.max_abs_diff, b.max_abs_diff) for a, b in zip(cs, cs_f)],
                   min_pass_t=None if mp0 is None or mpf is None or mpn is None else max(mp0, mpf, mpn), fresh_min_pass_t=mpf)
        if cand.kind == "pass" and matches == 0:
            row.update(status="ok", speedup=1.0, stable=True)
            row["flags"].append("no_match")
            if cfg["no_match"] == "floor":
                row["floor"] = True
                row["flags"].append("no_match_floor")
            _reference_only(row, ref, sub, out_specs, treespec, alias, cfg, timing,
                            _dynamo_side(run, row, cfg, who, side) if want_dynamo else None, deadline)
        elif cfg["timing"]:
            # an output equal to eager's on every checked call follows the seed: its timed calls are compared element by element
            stats_dep = rng_dep - rng_exact
            pairs = [(ref_leaves[j], ref_other[j]) if j in stats_dep else None for j in range(len(ref_leaves))] if stats_dep else None
            dyn = _dynamo_side(run, row, cfg, who, side) if want_dynamo else None
            try:
                pt = measure_boundary(ref, box, sub.make_inputs, out_specs, treespec, timing, deadline, dyn,
                                      rng_dep=stats_dep, ref_other=pairs, alias=alias,
                                      cpu_rel_tol=float(cfg["cpu_rel_tol"]), cpu_abs_ms=float(cfg["cpu_abs_ms"]),
                                      check_cpu=int(cfg["threads"]) == 1)
            except SandboxFailure:
                raise  # a dead / timed-out / over-cap sandbox: boundary.child charges it by the sandbox's role
            except SandboxDenied as exc:
                return _violate_denied(row, exc.reply, box)
            except RuntimeError as exc:
                return _fail(row, "runtime_crash", ERROR_RUNTIME, str(exc))
            row["violations"] += pt.violations
            before, timed = row["min_pass_t"], pt.checked_min_pass_t
            if timed_mismatch(before, timed):
                row["violations"].append(f"timed_output_mismatch: checked calls pass from t={before} before timing, "
                                         f"the worst of {pt.n_checked} checked timed calls from t={timed}")
            row["min_pass_t"] = None if before is None or timed is None else max(before, timed)
            row.update(_timed_fields(pt))
            row["flags"].append("clock_parent")
            row["violations"] += roofline_violations(inputs0, ref_leaves, row["candidate_ms"], float(cfg["roofline_factor"]))
            row["violations"] += flop_violations(graph_flops(gm, inputs0, key), row["candidate_ms"], float(cfg["roofline_factor"]),
                                                 int(cfg["threads"]))
        else:
            row.update(status="ok", speedup=1.0, stable=True)
            if cfg["dynamo_reference"]:
                row["speedup_vs_dynamo"] = 1.0
        row["violations"] += _process_findings(box, "after timing")
    finally:
        run.close()
        if run.cand is not None and (row["violations"] or row.get("status") in ("runtime_crash", "compile_failure")):
            run.cand.tainted = True  # a shared candidate sandbox is not reused after this
    row["peak_rss_bytes"] = max(ref.peak_rss, run.cand.peak_rss if run.cand else 0) or None
    if row["violations"]:
        _violate(row)
    return row


@dataclass(frozen=True)
class CallSeeds:
    """The RNG seeds of the three checked calls before timing (drawn by the parent from
    :class:`random.SystemRandom` for every subgraph; the same for eager, Dynamo-only and the
    candidate, call by call): ``first`` (the seed-0 inputs; eager's determinism re-run too),
    ``fresh`` (the fresh inputs), ``third`` (the near repeat; on an RNG graph, the first call's
    inputs again)."""

    first: int
    fresh: int
    third: int


class _Side:
    """What the candidate sandbox and the Dynamo-only sandbox are given before timing, the same for
    both (:meth:`load`, :meth:`checked_calls`), so that a candidate which is Dynamo-only itself and
    the Dynamo-only reference differ in nothing but the process they run in."""

    def __init__(self, graph: bytes, in_specs, out_specs, treespec, inputs0, fresh, near, alias, guard, seeds: CallSeeds):
        self.graph, self.in_specs, self.out_specs, self.treespec = graph, in_specs, out_specs, treespec
        self.inputs0, self.fresh, self.near, self.alias, self.guard = inputs0, fresh, near, alias, guard
        self.seeds = seeds

    def load(self, box, run, name: str, kind: str, target: str, deadline: float) -> tuple[dict, float]:
        """Slots ``<name>_in`` (seed-0, seed-0, fresh inputs) and ``<name>_out`` (3 sets each) bound
        in ``box``, then the graph loaded as candidate ``kind:target``; ``(reply, ms)``."""
        run.slots[f"{name}_in"], run.slots[f"{name}_out"] = SharedSlots(self.in_specs, 3), SharedSlots(self.out_specs, 3)
        for k, (v, sd) in enumerate(zip((self.inputs0, self.inputs0, self.fresh), (self.seeds.first, self.seeds.first, self.seeds.fresh))):
            run.slots[f"{name}_in"].write(k, v, sd)
        bind(box, run.deadline, run.slots[f"{name}_in"], run.slots[f"{name}_out"], self.treespec)
        source = Path(target).read_text() if kind in ("module", "pass") else None  # the sandbox may not read the parent's files
        return box.timed({"op": "load", "graph": self.graph, "kind": kind, "target": target, "guard_path": self.guard,
                          "source": source}, deadline)

    def checked_calls(self, box, run, name: str, deadline: float) -> tuple[dict, dict, dict, list, list, list, list]:
        """A call on the seed-0 inputs, then on fresh values written into the *same* slot, then on
        the seed-0 inputs with half their inner elements changed (:func:`near_repeat`; an RNG graph:
        the seed-0 inputs themselves), in the same slot again, each with its own RNG seed
        (:class:`CallSeeds`, written with its inputs); ``(reply, reply_fresh, reply_near, inputs
        changed against eager's, outputs, outputs_fresh, outputs_near)``."""
        msg = {"op": "run", "side": "candidate", "sets": [0], "seed": "slot", "alias": list(self.alias)}
        cr = box.request(msg, deadline)
        if "error" in cr:
            return cr, {}, {}, [], [], [], []
        changed = integrity.inputs_unchanged(run.slots[f"{name}_in"].views[0], run.slots["ref_in"].views[0])
        out1 = run.slots[f"{name}_out"].read(0)
        run.slots[f"{name}_in"].write(0, self.fresh, self.seeds.fresh)
        cf = box.request(msg, deadline)
        if "error" in cf:
            return cr, cf, {}, changed, out1, [], []
        out_f = run.slots[f"{name}_out"].read(0)
        run.slots[f"{name}_in"].write(0, self.near, self.seeds.third)
        cn = box.request(msg, deadline)
        return cr, cf, cn, changed, out1, out_f, run.slots[f"{name}_out"].read(0)


def _dynamo_side(run, row: dict, cfg: dict, who: str, side: _Side):
    """The Dynamo-only sandbox of candidate ``who`` (:func:`curate.score.boundary.parent.dynamo_sandbox`)
    given exactly what the candidate's is (:class:`_Side`: its slots, the graph loaded as
    ``backend:eager``, the two checked calls); None, with the flag ``dynamo_reference_failed`` and
    ``dynamo_error`` on ``row``, when Dynamo could not compile or run the graph."""
    box = dynamo_sandbox(cfg, who)
    rep, _ = side.load(box, run, "dyn", *DYNAMO_CANDIDATE, run.deadline)
    if "error" not in rep:
        cr, cf, cn, _, _, _, _ = side.checked_calls(box, run, "dyn", run.deadline)
        rep = next((c for c in (cr, cf, cn) if "error" in c), cn)
    if "error" in rep:
        row["flags"].append("dynamo_reference_failed")
        row["dynamo_error"] = rep["error"][:300]
        return None
    return box


def _t(leaves: list) -> list:
    """The tensor leaves of a slot set (non-tensor leaves are compared by the sandbox)."""
    return [x for x in leaves if x is not None]


UNTRUSTED_KINDS = ("module", "pass")
"""Candidate kinds whose code we did not write: their sandbox drops its privileges
(:func:`curate.score.boundary.parent.isolation_level`). A ``backend:`` candidate runs torch's own
registered backend (nothing of the candidate's), in a trusted sandbox with the shared Inductor cache."""


def candidate_key(cand: Candidate, cfg: dict, mode: str = "eval") -> str:
    """The identity of ``cand``'s sandbox (:func:`curate.score.boundary.parent.candidate_sandbox`):
    its spec and source hash, and whether it re-times (``mode="retime"`` or ``cfg["retime"]``) or
    re-validates (a non-zero ``input_seed``), each of which gets a fresh process; ``shared`` with
    ``share_sandbox`` (tests)."""
    cfg = run_config(cfg)
    if cfg.get("share_sandbox"):
        return "shared"
    tag = (":retime" if cfg.get("retime") or mode == "retime" else "") + (":revalidate" if cfg["input_seed"] else "")
    return f"{cand.spec}:{source_hash(candidate_source(cand))}{tag}"


def _violate_denied(row: dict, rep: dict, box) -> dict:
    """The candidate's code was refused by the kernel (``EPERM`` / ``EACCES``: it reached for a
    process, descriptor or file that is not its own): ``sandbox_denied``, the floor at every t."""
    row["violations"].append(f"sandbox_denied: {rep.get('error', '')[:300]}")
    row["violations"] += _process_findings(box, "when it was refused")
    row["error_message"] = rep.get("error", "")[:500]
    return _violate(row)


def _process_findings(box, when: str) -> list[str]:
    """``threads_started`` / ``processes_started`` of the candidate sandbox at checkpoint ``when``
    (from ``/proc``, against the baseline taken before the candidate was imported): threads beyond
    the baseline, live child processes, and processes it left outside itself
    (:meth:`curate.score.boundary.parent.Sandbox.strays`: orphans adopted by the zygote, other
    processes of its uid)."""
    out = []
    strays = box.strays(full=True)
    if strays:
        out.append(f"processes_started: {len(strays)} process(es) the candidate process left outside itself alive {when}")
    extra = box.tasks() - box.baseline_tasks
    if extra:
        out.append(f"threads_started: {len(extra)} thread(s) of the candidate process alive {when}")
    try:
        kids = [c for c in psutil.Process(box.pid).children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE]
    except Exception:  # noqa: BLE001 - the process ended between the two reads
        kids = []
    if kids:
        out.append(f"processes_started: {len(kids)} child process(es) of the candidate process alive {when}")
    return out


def roofline_violations(inputs: list, outputs: list, candidate_ms: float, factor: float) -> list[str]:
    """``roofline``: the candidate moved at least its inputs' and outputs' bytes per call in
    ``candidate_ms`` ms; a rate above ``factor`` times the host's best measured copy bandwidth
    (:func:`curate.score.boundary.parent.host_copy_bandwidth`) is not computation (KernelBench-Hard's
    peak-fraction check; llm.c#851's L2-resident kernel at 4x the physical peak)."""
    nbytes = sum(x.numel() * x.element_size() for x in list(inputs) + list(outputs) if isinstance(x, torch.Tensor))
    if not candidate_ms or candidate_ms <= 0 or not nbytes:
        return []
    rate, peak = nbytes / (candidate_ms / 1e3), host_copy_bandwidth()
    if peak > 0 and rate > factor * peak:
        return [f"roofline: {nbytes} bytes per call in {candidate_ms * 1e3:.1f} us is {rate / 1e9:.1f} GB/s, above "
                f"{factor:g} x the host's measured {peak / 1e9:.1f} GB/s"]
    return []


_FLOPS: dict[tuple, int | None] = {}


def graph_flops(gm, inputs: list, key: str | None = None) -> int | None:
    """FLOPs of one call of the reference graph ``gm`` on ``inputs``, counted by
    :class:`torch.utils.flop_counter.FlopCounterMode` (matmuls, convolutions, attention: 2 FLOPs
    per multiply-add; element-wise ops count 0) on fake tensors of the inputs' shapes
    (:class:`torch._subclasses.fake_tensor.FakeTensorMode`: nothing is computed). Runs the trusted
    graph in the parent, never candidate code. None when the graph does not run on fake tensors.
    ``key`` (the subgraph id and the hash of its pickled graph): the count is kept per key and
    the inputs' shapes and dtypes, so each candidate's row of a subgraph reuses it."""
    memo = None if key is None else (key, tuple((tuple(x.shape), x.dtype) if isinstance(x, torch.Tensor) else repr(x)
                                                for x in inputs))
    if memo is not None and memo in _FLOPS:
        return _FLOPS[memo]
    flops = _count_flops(gm, inputs)
    if memo is not None:
        _FLOPS[memo] = flops
    return flops


def _count_flops(gm, inputs: list) -> int | None:
    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            fake = [mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
            with FlopCounterMode(display=False) as counter:
                gm(*fake)
        return int(counter.get_total_flops())
    except Exception:  # noqa: BLE001 - no count, no compute roof for this graph (the bytes roof still holds)
        return None


def flop_violations(flops: int | None, candidate_ms: float, factor: float, threads: int,
                    peak: float | None = None) -> list[str]:
    """``roofline_flops``: the reference graph's FLOPs per call (:func:`graph_flops`) over the
    candidate's median time (ms) above ``factor`` x the host's measured peak
    (:func:`curate.score.boundary.parent.host_flop_peak` unless ``peak`` is given, FLOP/s) x
    ``threads`` is work the candidate did not do (the compute side of the roofline; KernelBench-Hard's
    peak-fraction check). No FLOPs (element-wise graphs) or no time: no finding."""
    if not flops or not candidate_ms or candidate_ms <= 0:
        return []
    rate = flops / (candidate_ms / 1e3)
    peak = (host_flop_peak() if peak is None else peak) * max(1, threads)
    if peak > 0 and rate > factor * peak:
        return [f"roofline_flops: {flops} FLOPs per call in {candidate_ms * 1e3:.1f} us is {rate / 1e9:.1f} GFLOP/s, above "
                f"{factor:g} x the host's measured {peak / 1e9:.1f} GFLOP/s"]
    return []


def _reference_only(row: dict, ref, sub, out_specs, treespec, alias, cfg: dict, timing, dyn,
                    deadline: float) -> None:
    """Eager is the candidate (the ``eager`` candidate, a pass that matched nothing): ``speedup``
    stays exactly 1; with the Dynamo-only reference and timing on, eager (reference sandbox) and
    Dynamo-only (``dyn``, its sandbox; None when it failed to compile) are timed on the parent's
    clock for ``speedup_vs_dynamo`` (flag ``reference_timing``); untimed it is exactly 1 too (in place).

    Raises:
        RuntimeError: a reference side raised.
    """
    if not cfg["dynamo_reference"]:
        return
    if not cfg["timing"]:
        row["speedup_vs_dynamo"] = 1.0
        return
    if dyn is None:
        return

    pt = measure_boundary(ref, None, sub.make_inputs, out_specs, treespec, timing, deadline, dyn, alias=alias)
    f = _timed_fields(pt)
    row.update(eager_ms=f["eager_ms"], candidate_ms=f["eager_ms"], dynamo_ms=f["dynamo_ms"], speedup_vs_dynamo=f["speedup_vs_dynamo"],
               speedup_vs_dynamo_ci_low=f["speedup_vs_dynamo_ci_low"], speedup_vs_dynamo_ci_high=f["speedup_vs_dynamo_ci_high"],
               speedup_ci_low=1.0, speedup_ci_high=1.0, stable=pt.stable, inner=pt.inner)
    row["flags"].append("reference_timing")


def _reference_failed(row: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """``row`` as a ``reference_failed`` row (in place): not scored, no error code, the error class
    (``oom`` for an allocation failure, else ``exception:<Type>``) and message kept."""
    msg = f"eager reference failed: {type(exc).__name__}: {exc}"[:500]
    cls = "oom" if isinstance(exc, MemoryError) or error_class_of(msg) == "oom" else f"exception:{type(exc).__name__}"
    row.update(status="reference_failed", scored=False, error_code=None, error_message=msg, error_class=cls)
    row["flags"].append("reference_failed")
    return row


def retime_subgraph(sub, cand: Candidate, cfg: dict, tick=None) -> dict[str, Any]:
    """Speedup of one subgraph measured again in a fresh candidate sandbox, with the same protocol;
    returns ``{"speedup", "violations"}`` plus the vs-Dynamo fields when timed."""
    row = evaluate_subgraph(sub, cand, {**cfg, "timing": True, "retime": True}, tick)
    out = {"speedup": row.get("speedup"), "violations": row.get("violations") or [], "status": row.get("status")}
    out.update({k: row[k] for k in ("speedup_vs_dynamo", "speedup_vs_dynamo_ci_low", "speedup_vs_dynamo_ci_high",
                                    "speedup_ci_low", "speedup_ci_high", "dynamo_ms") if k in row})
    return out
