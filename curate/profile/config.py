"""``curate.profile``: the knobs of ``python -m curate profile``, every default here.

The timing protocol's knobs are :class:`curate.timing.TimingConfig`'s fields. Each of the three
timing blocks is its own subclass with its own defaults (``timing``: :class:`ProtocolTimingConfig`,
``screen_timing``: :class:`ScreenTimingConfig`, ``cuda_timing``: :class:`CudaTimingConfig`), so a
block that sets only some keys gets that block's defaults for the rest, not TimingConfig's own (the
scorer's); the rules and docs of the fields stay TimingConfig's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from curate.timing import TimingConfig
from passnet_common.config import ParamsConfig, knob
from passnet_common.spec import Choice, ListOf, Optional, interval, non_negative, positive

DTYPES = ("float32", "bfloat16", "float16", "float64")


@dataclass(frozen=True)
class SizesConfig(ParamsConfig):
    """Workload sizes (:mod:`curate.profile.sizes`): text graphs scale the sequence length,
    others the batch; three shapes per subgraph (catalog, mid, workload)."""

    catalog_seq: int = knob(32, rule=positive(int), doc="= extract's seq_len")
    mid_seq: int = knob(128, rule=positive(int), doc="size mid of a text graph (tokens)")
    workload_seq: int = knob(512, rule=positive(int), doc="size workload of a text graph (prefill 1 x 512)")
    catalog_batch: int = knob(1, rule=positive(int), doc="= extract's batch_size")
    mid_batch: int = knob(4, rule=positive(int), doc="size mid of a batch graph")
    workload_batch: int = knob(8, rule=positive(int), doc="size workload of a batch graph")


def _default(name: str, value: Any) -> Any:
    """Field ``name`` of :class:`TimingConfig` with default ``value`` (its rule and doc kept), for a
    block whose defaults are not TimingConfig's own."""
    f = TimingConfig.__dataclass_fields__[name]
    return field(default=value, metadata=f.metadata)


@dataclass(frozen=True)
class ProtocolTimingConfig(TimingConfig):
    """``curate.profile.timing``: the full protocol. A key the block leaves out takes the default
    here (the profile's), else TimingConfig's; only the profile's own values are written here."""

    trials: int = _default("trials", 100)
    retries: int = _default("retries", 1)
    gate: Literal["iqr", "ci"] = _default("gate", "ci")
    stop: Literal["decided", "label"] = _default("stop", "label")
    max_variant_s: float | None = _default("max_variant_s", 10.0)
    clock: Literal["thread_cpu", "wall"] = _default("clock", "thread_cpu")


@dataclass(frozen=True)
class ScreenTimingConfig(ProtocolTimingConfig):
    """``curate.profile.screen_timing``: the full protocol's gate, stop rule and clock with few trials
    and no re-measurement; a key the block leaves out takes the default here."""

    warmup: int = _default("warmup", 1)
    trials: int = _default("trials", 6)
    min_trials: int = _default("min_trials", 6)
    check_every: int = _default("check_every", 1)
    min_trial_ms: float = _default("min_trial_ms", 5.0)
    retries: int = _default("retries", 0)
    n_boot: int = _default("n_boot", 500)
    max_variant_s: float | None = _default("max_variant_s", 2.0)
    cap_min_trials: int = _default("cap_min_trials", 3)


@dataclass(frozen=True)
class CudaTimingConfig(TimingConfig):
    """``curate.profile.cuda_timing``: the CUDA path (PassBench's 25 warm-ups / 100 trials, wall
    clock); a key the block leaves out takes the default here."""

    warmup: int = _default("warmup", 25)
    trials: int = _default("trials", 100)
    min_trials: int = _default("min_trials", 100)
    l2_flush_mb: float = _default("l2_flush_mb", 64.0)


@dataclass(frozen=True)
class ProfileConfig(ParamsConfig):
    """The profile stage (:mod:`curate.profile.run`, :mod:`curate.profile.variant`)."""

    device: Literal["cpu", "cuda"] = knob("cpu", doc="timing device")
    cuda_when_available: bool = knob(True, doc="also profile on CUDA when a GPU is present (CUDA path not verified on a GPU)")
    dtypes: list[str] = knob(factory=lambda: ["float32", "bfloat16"], rule=ListOf(Choice(DTYPES)),
                             doc="dtype variants of every size (floating inputs and weights cast; float16 where a CPU kernel exists)")
    sample_size: int | None = knob(32, rule=Optional(positive(int)), doc="subgraphs in the stratified seeded sample")
    sample_seed: int = knob(0, doc="seed of the sample, the agreement subset and the audit sample")
    all: bool = knob(False, doc="profile every profilable subgraph")
    runs: int = knob(2, rule=positive(int), doc="run 0: the sample; run 1: the agreement subset again")
    stress_run: bool = knob(True, doc="run 2: the agreement subset with a hog pinned to the timing core (and one on the others)")
    stress_confirm: bool = knob(False, doc="run 2 also re-times every subgraph with a run-0 variant that may be slower "
                                        "(its rows feed the agreement figures; membership reads run 0's replicates)")
    replicates: int = knob(4, rule=positive(int),
                           doc="timing children per run-0 full-protocol variant (screen candidates and audit sample), "
                           "one round per replicate; the row pools them (random effects, Hartung-Knapp interval: "
                           "curate/profile/replicates.py); 1: one child, its own interval")
    extra_replicates: int = knob(4, rule=non_negative(int),
                                 doc="more children (further rounds) for a run-0 protocol variant whose pooled "
                                 "speedup_compiler interval still holds the edge 1 - min_effect, pooled with the first "
                                 "(a two-stage sequential design: curate/profile/run.py::undecided); 0: none")
    agreement_sample: int = knob(8, rule=positive(int), doc="subgraphs (all their variants) re-timed in runs 1 and 2")
    screen: bool = knob(True, doc="run 0: screen every variant (screen_timing), the full protocol on its candidates + the audit sample")
    audit_share: float = knob(0.15, rule=interval(float, 0, 1),
                              doc="share of the screen's non-candidates timed with the full protocol (seeded)")
    remeasure_passes: int = knob(1, rule=non_negative(int), doc="re-time a run's unstable rows this many more times")
    compile_workers: int = knob(2, rule=positive(int), doc="compile children at once when overlap_compile is off")
    overlap_compile: bool = knob(True, doc="compile on every core but the timing core, beside timing run 0")
    skip_over_time_cap: bool = knob(True, doc="skip a variant whose eager call (CPU clock) the time cap cannot hold")
    threads: int = knob(1, rule=positive(int), doc="torch threads per child")
    timeout_s: float = knob(300.0, rule=positive(float), doc="seconds per child")
    mem_cap_gb: float = knob(4.0, rule=positive(float), doc="memory cap per child (GiB)")
    seed: int = knob(0, doc="input and RNG seed")
    sizes: SizesConfig = knob(factory=SizesConfig)
    timing: ProtocolTimingConfig = knob(factory=ProtocolTimingConfig, doc="the full protocol")
    screen_timing: ScreenTimingConfig = knob(factory=ScreenTimingConfig, doc="the screen: few trials, no re-measurement")
    cuda_timing: CudaTimingConfig = knob(factory=CudaTimingConfig, doc="CUDA path (PassBench's 25 / 100)")
