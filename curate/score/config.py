"""The ``score`` params block as a typed config (:class:`ScoreConfig`), every default in it.

``curate/config.py`` registers it (``load_params`` / ``check_params`` validate the block from the
fields). No torch import here: the schema is checked without it. :meth:`ScoreConfig.run_config`
is the flat run configuration the scorer's functions take (:func:`curate.score.evaluate.run_candidate`,
:func:`curate.score.defenses.checks.evaluate_subgraph`); :data:`RUN_DEFAULTS` is that mapping at the
defaults, which callers with a partial mapping (tests, the reward function) are completed from,
so no function repeats a default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from passnet_common.config import ParamsConfig, knob
from passnet_common.spec import Choice, DictOf, ListOf, Optional, interval, non_negative, positive

Convention = Literal["paper", "graphnet"]
"""Score conventions (:data:`curate.score.scoring.CONVENTIONS`; a test checks they agree)."""

Reference = Literal["eager", "dynamo"]
"""References (:data:`curate.score.evaluate.REFERENCES`; a test checks they agree)."""


@dataclass(frozen=True)
class ScoreTimingConfig(ParamsConfig):
    """``score.timing``: the boundary's timing protocol (:func:`curate.score.defenses.clock.measure_boundary`)."""

    warmup: int = knob(3, rule=non_negative(int), doc="untimed calls per side, on fresh inputs")
    trials: int = knob(15, rule=positive(int), doc="interleaved timed trials per side")
    min_trial_ms: float = knob(5.0, rule=non_negative(float),
                               doc="a trial's calls last at least this long (ms; sets inner calls, one fresh input set each)")
    max_iqr_ratio: float = knob(0.2, rule=positive(float), doc="noise gate: IQR / median of every side's trials")
    retries: int = knob(2, rule=non_negative(int), doc="extra attempts when the gate fails (the quietest is kept)")
    fresh_seed: int = knob(1, doc="seed of the fresh inputs of the checked calls before timing")
    check_per_trial: int = knob(2, rule=positive(int), doc="timed calls per trial whose outputs are compared with eager's")
    pool_mb: float = knob(64.0, rule=positive(float),
                          doc="input + output bytes of one trial's sets (MiB; a trial has no more calls than fit)")
    n_boot: int = knob(1000, rule=positive(int), doc="bootstrap resamples of the speedup intervals")


@dataclass(frozen=True)
class ScoreRevalidateConfig(ParamsConfig):
    """``score.revalidate``: top candidates re-checked on held-out shapes and seeds
    (:mod:`curate.score.defenses.revalidate`)."""

    top: int = knob(3, rule=non_negative(int), doc="valid candidates re-validated, best first by `ranking` (eager never; 0: off)")
    tasks: str | None = knob(None, doc="held-out task set (e.g. the release's secret tasks); null: builtin-heldout for "
                                       "builtin, else the task set's subgraphs outside the scored sample")
    max_subgraphs: int = knob(4, rule=positive(int), doc="held-out subgraphs re-run, one task after another, chosen at run time")


@dataclass(frozen=True)
class ScoreConfig(ParamsConfig):
    """``score``: the ``python -m curate score`` stage (:mod:`curate.score.evaluate`)."""

    tasks: str = knob("builtin", doc="task set: builtin, or a folder of the curate stage")
    candidates: dict[str, str] = knob(factory=lambda: {"inductor": "backend:inductor"}, rule=DictOf(str),
                                      doc="name -> eager | backend:<name> | module:<file.py> | pass:<file.py>")
    convention: Convention = knob("paper", doc="default convention (ranking, metrics); both are written")
    conventions: list[Convention] = knob(factory=lambda: ["paper", "graphnet"], rule=ListOf(Choice(("paper", "graphnet"))),
                                         doc="conventions scored")
    p: float = knob(0.1, rule=non_negative(float), doc="slowdown penalty exponent (GraphNet paper)")
    b: float = knob(0.1, rule=interval(float, 0, 1, lo_open=True), doc="failure factor (paper; PassNet 0.001)")
    retime_above: float = knob(10.0, rule=positive(float), doc="speedups above this are re-timed in a fresh sandbox")
    max_subgraphs: int | None = knob(None, rule=Optional(positive(int)), doc="seeded sample of the task set (null: all)")
    sample_seed: int = knob(0, doc="seed of that sample")
    timeout_s: float = knob(300.0, rule=positive(float), doc="per subgraph, wall seconds (timeout = runtime crash)")
    mem_cap_gb: float = knob(8.0, rule=positive(float), doc="resident-memory cap of each sandbox (GiB)")
    threads: int = knob(1, rule=positive(int), doc="torch threads in the sandboxes (1: CPU above wall is a violation)")
    inductor_cache: str | None = knob(None, doc="TORCHINDUCTOR_CACHE_DIR of the trusted sandboxes (null: Inductor's default; "
                                      "an untrusted candidate gets its own)")
    timing: ScoreTimingConfig = knob(factory=ScoreTimingConfig)
    dynamo_reference: bool = knob(True, doc="also time Dynamo-only (torch.compile(backend='eager'))")
    rank_reference: Reference = knob("eager", doc="the reference of `ranking`")
    no_match: Literal["one", "floor"] = knob("one", doc="a pass that matches nothing: speedup 1, or b at every t")
    dispatch_guard: bool = knob(False, doc="PassNet's PoisonDispatchTensor on pass replacements")
    one_replacement_per_task: bool = knob(False, doc="PassNet: one replacement per task across its variants")
    static_check: bool = knob(True, doc="refuse candidate files the static check flags (a speed bump before the boundary)")
    roofline_factor: float = knob(2.0, rule=positive(float),
                                  doc="bytes in + out per call over the candidate's time above this x the host's copy bandwidth: violation")
    cpu_rel_tol: float = knob(0.25, rule=non_negative(float),
                              doc="candidate process CPU (all threads) may exceed its trials' wall time by this share ...")
    cpu_abs_ms: float = knob(50.0, rule=non_negative(float), doc="... plus this many ms (clock-tick granularity)")
    revalidate: ScoreRevalidateConfig = knob(factory=ScoreRevalidateConfig)
    lanes: int = knob(1, rule=positive(int),
                      doc="candidates scored at once, each lane a process pinned to its own core (curate.score.evaluate.lane_plan); "
                          "untrusted candidates share one lane, and lanes > 1 needs uid isolation")

    def run_config(self) -> dict[str, Any]:
        """The flat run configuration: the ``timing`` block's keys beside the others (no
        ``candidates`` / ``conventions`` / ``p`` / ``b``, which the scorer does not run on)."""
        out = {k: v for k, v in self.to_params().items() if k not in ("timing", "candidates", "conventions", "convention",
                                                                      "p", "b", "rank_reference", "lanes")}
        out.update(self.timing.to_params())
        return out


RUN_DEFAULTS: dict[str, Any] = {**ScoreConfig().run_config(), "timing": True, "input_seed": 0}
"""The run configuration at the defaults (``timing`` here is the switch: False skips timing;
``input_seed`` the seed of the checked calls' inputs, ``fresh_seed`` added for the fresh ones:
0 for the scored run, a never-published one for a re-validation)."""


def run_config(cfg: dict | None) -> dict[str, Any]:
    """``cfg`` (a partial run configuration) completed from :data:`RUN_DEFAULTS`."""
    return {**RUN_DEFAULTS, **(cfg or {})}
