"""The ``proxy`` params block, one typed config per sub-block, with every default in it.

``proxy.base`` (:class:`BaseConfig`, ``python -m proxy_artifacts train-base``), ``proxy.model``,
``proxy.stats``, ``proxy.prune`` (with ``views``, ``usage``, ``calibration``), ``proxy.eval``,
``proxy.compare``, ``proxy.grpo`` (:class:`GrpoConfig`, the GRPO stages) and ``proxy.fidelity``
(with ``cost`` and ``detector``). Importing this module registers the block
(:func:`passnet_common.config.register`), so ``load_params`` validates it; the schema is derived
from the fields (``python -m passnet_common.check_params --families proxy_artifacts``).

Names the block's choices are made of (:data:`METHODS`, :data:`VIEWS`, :data:`CATEGORIES`,
:data:`FAULTS`, :data:`FIXABLE`) live here, their one home, so validating params never imports torch;
``cluster``, ``corpus`` and ``rl`` import them from here.

Stage code takes these blocks as plain mappings (``load_params(..., "proxy")``, validated and, for
the keys a file leaves out, filled with these defaults by :func:`proxy_params`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from passnet_common.config import ParamsConfig, knob, register
from passnet_common.params import load_params
from passnet_common.spec import AnyOf, Block, Choice, ListOf, Optional, interval, non_negative, positive

METHODS = ("cluster", "usage_cluster", "frequency", "reap", "random")
VIEWS = ("act", "router", "weights", "frequency")
CATEGORIES = ("text", "code", "reverse")
FAULTS = ("none", "logprob_bf16", "skip_actor_update", "lr_spike", "fp16_no_loss_scaling", "no_load_balancing",
          "swapped_operator", "fp16_overflow")
FIXABLE = ("logprob_bf16", "fp16_no_loss_scaling", "fp16_overflow", "swapped_operator")

_SHARE = interval(float, 0, 1)
_KEEP_RATIO = interval(float, 0, 1, lo_open=True)
_VIEWS = Block({v: non_negative(float) for v in VIEWS})
# prune merge: false/true (none / frequency) or a merge mode name
_MERGE = AnyOf((bool, Choice(("none", "frequency", "output"))))


@dataclass(frozen=True)
class BaseConfig(ParamsConfig):
    """``proxy.base``: the default tiny Qwen3-MoE base (:func:`proxy_artifacts.base_model.train_base`)."""

    model_type: str = knob("qwen3_moe", doc="transformers model type of the base")
    hidden_size: int = knob(128, rule=positive(int))
    moe_intermediate_size: int = knob(64, rule=positive(int), doc="width of one routed expert")
    num_layers: int = knob(3, rule=positive(int))
    num_heads: int = knob(4, rule=positive(int))
    num_kv_heads: int = knob(2, rule=positive(int))
    num_experts: int = knob(64, rule=positive(int), doc="routed experts per layer (fine-grained regime: >= 64)")
    top_k: int = knob(4, rule=positive(int), doc="experts per token")
    aux_loss_coef: float = knob(0.01, rule=non_negative(float), doc="router load-balancing loss coefficient")
    seq_len: int = knob(128, rule=positive(int), doc="training window, tokens")
    batch_size: int = knob(16, rule=positive(int), doc="windows per optimizer step")
    steps: int = knob(600, rule=positive(int), doc="optimizer steps")
    lr: float = knob(0.003, rule=positive(float), doc="peak learning rate")
    warmup_share: float = knob(0.05, rule=_SHARE, doc="linear warmup over this share of the steps")
    decay_share: float = knob(0.2, rule=_SHARE, doc="linear decay over the last share of the steps (WSD)")
    min_lr_ratio: float = knob(0.1, rule=_SHARE, doc="lr at the end, x lr (never 0)")
    task_answer_loss: bool = knob(True, doc="task windows: loss on the answers only")
    min_task_acc: float = knob(0.8, rule=_SHARE, doc="the stage fails below this held-out in-range exact match")
    train_windows_per_category: int = knob(1500, rule=positive(int))
    edge_weight: float = knob(1.0, rule=non_negative(float),
                              doc="relative weight of the edge word length in the task's training windows "
                                  "(one in-range length = 1): how much of the edge the base learns")
    edge_noise_share: float = knob(0.8, rule=_SHARE,
                                   doc="share of the edge length's training answers with one letter replaced by a "
                                       "random one: the base's edge is partly solved by construction")
    category_mix: dict[str, float] | None = knob(factory=lambda: {"reverse": 6.0},
                                                 rule=Optional(Block({c: non_negative(float) for c in CATEGORIES})),
                                                 doc="x train_windows_per_category per category")
    spec_windows: int = knob(32, rule=positive(int), doc="held-out windows per category for the specialisation summary")
    task_problems: int = knob(128, rule=non_negative(int), doc="problems of each held-out task set (heldout, edge)")
    edge_samples: int = knob(8, rule=positive(int), doc="samples at T=1 per edge problem (task_reward_edge)")
    seed: int = knob(0)
    threads: int = knob(1, rule=positive(int), doc="torch threads")


@dataclass(frozen=True)
class ModelConfig(ParamsConfig):
    """``proxy.model``: the base that stats / prune / compare read."""

    path: str = knob("data/proxy/base", doc="local folder, or a Hub id")
    revision: str | None = knob(None, doc="pinned commit sha (required for Hub ids)")


@dataclass(frozen=True)
class StatsConfig(ParamsConfig):
    """``proxy.stats``: expert statistics per calibration category."""

    dataset: str = knob("builtin", doc="builtin corpus, or a folder with <category>.txt files")
    categories: list[str] = knob(factory=lambda: list(CATEGORIES))
    num_samples: int = knob(96, rule=positive(int), doc="windows per category")
    seq_len: int = knob(128, rule=positive(int))
    batch_size: int = knob(16, rule=positive(int))
    char_tokens_per_batch: int = knob(64, rule=non_negative(int), doc="tokens per pass on which every expert runs; 0 = off")
    seed: int = knob(0)
    threads: int = knob(1, rule=positive(int))


@dataclass(frozen=True)
class UsageConfig(ParamsConfig):
    """``proxy.prune.usage``: usage-aware clustering (:mod:`proxy_artifacts.cluster`)."""

    dead_share: float = knob(0.01, rule=_SHARE, doc="experts below this share of routed slots are dropped first")
    cluster_share: float = knob(0.5, rule=interval(float, 0, 1, lo_open=True), doc="clusters = round(kept x share)")
    slots_by: str = knob("reap_mass", rule=Choice(("frequency", "reap_mass")))
    representative: str = knob("reap", rule=Choice(("reap", "frequency")))


@dataclass(frozen=True)
class CalibrationConfig(ParamsConfig):
    """``proxy.prune.calibration``: windows of the output-space merge."""

    windows_per_category: int = knob(32, rule=positive(int))
    seq_len: int = knob(128, rule=positive(int))
    ridge: float = knob(0.01, rule=non_negative(float), doc="relative ridge towards the pruned weights")


@dataclass(frozen=True)
class PruneConfig(ParamsConfig):
    """``proxy.prune``: expert selection and merge of one proxy."""

    method: str = knob("usage_cluster", rule=Choice(METHODS))
    views: dict[str, float] = knob(factory=lambda: {"act": 1.0, "router": 1.0, "weights": 0.0, "frequency": 0.0},
                                   rule=_VIEWS)
    representative: str = knob("frequency", rule=Choice(("frequency", "medoid")))
    usage: UsageConfig = knob(factory=UsageConfig)
    merge: Any = knob("output", rule=_MERGE, doc="none | frequency | output (or false / true)")
    calibration: CalibrationConfig = knob(factory=CalibrationConfig)
    categories: Any = knob("all", rule=AnyOf((Choice(("all",)), ListOf(str))))
    new_top_k: int | None = knob(None, rule=Optional(positive(int)))
    seed: int = knob(0)
    threads: int = knob(1, rule=positive(int))


@dataclass(frozen=True)
class EvalConfig(ParamsConfig):
    """``proxy.eval``: held-out evaluation of a proxy against its base."""

    windows_per_category: int = knob(32, rule=positive(int))
    seq_len: int = knob(128, rule=positive(int))
    batch_size: int = knob(16, rule=positive(int))
    task_problems: int = knob(64, rule=non_negative(int), doc="problems of the held-out in-range task set")


#: ``merge`` of a ``proxy.compare.methods`` row that names none: that method runs without a merge
#: (the row's own default, not ``proxy.prune.merge``'s)
COMPARE_METHOD_MERGE = "none"
_METHOD = Block({"name": str, "method": Choice(METHODS), "views": _VIEWS, "usage": UsageConfig.spec(), "merge": _MERGE},
                required=("name", "method"))


@dataclass(frozen=True)
class CompareConfig(ParamsConfig):
    """``proxy.compare``: every selection method at every keep ratio."""

    keep_ratios: list[float] = knob(factory=lambda: [0.5, 0.25, 0.125], rule=ListOf(_KEEP_RATIO))
    reference_ratio: float | None = knob(0.5, rule=Optional(_KEEP_RATIO))
    methods: list[dict] = knob(factory=list, rule=ListOf(_METHOD))
    random_seeds: list[int] = knob(factory=lambda: [0, 1, 2])
    workers: int = knob(2, rule=positive(int))


@dataclass(frozen=True)
class GrpoConfig(ParamsConfig):
    """``proxy.grpo``: the GRPO runs of the base and each proxy (:mod:`proxy_artifacts.rl`)."""

    steps: int = knob(10, rule=positive(int), doc="optimizer steps per run")
    healthy_seeds: list[int] = knob(factory=lambda: [0, 1, 2, 3, 4])
    heldout_healthy_seeds: list[int] = knob(factory=lambda: list(range(5, 17)), doc="healthy runs never used to set a threshold")
    fault_seeds: list[int] = knob(factory=lambda: [0, 1, 2])
    reference_fault_seeds: list[int] = knob(factory=lambda: [0, 1, 2, 3, 4, 5],
                                            doc="fault seeds of the reference model (the base, grpo --reference): its "
                                                "seed-to-seed spread sets the fidelity tolerances, so it is sampled on "
                                                "more seeds than a proxy is judged on; must hold every fault_seeds seed")
    eval_fault_runs: bool = knob(False)
    prompts_per_step: int = knob(2, rule=positive(int), doc="prompts per step (x num_generations samples)")
    num_generations: int = knob(8, rule=positive(int),
                                doc="group size G; a group carries a gradient with probability 1 - p^G - (1-p)^G at "
                                    "prompt pass rate p (DAPO, arXiv 2503.14476), so at the edge's low p a larger "
                                    "group of the same 16 samples per step leaves fewer groups without one")
    max_completion_length: int = knob(8, rule=positive(int), doc="tokens (edge answers: 5 letters + newline, 2 spare)")
    lr: float = knob(0.0001, rule=positive(float))
    drop_zero_variance_groups: bool = knob(True, doc="groups whose samples all agree leave the loss (DAPO)")
    beta: float = knob(0.04, rule=non_negative(float), doc="KL coefficient")
    temperature: float = knob(1.0, rule=positive(float))
    max_grad_norm: float = knob(1.0, rule=positive(float))
    aux_loss_coef: float = knob(0.01, rule=non_negative(float))
    eval_problems: int = knob(64, rule=non_negative(int))
    eval_samples: int = knob(8, rule=positive(int), doc="samples at T=1 per edge problem")
    seed: int = knob(0)
    threads: int = knob(1, rule=positive(int))
    workers: int = knob(2, rule=positive(int))
    fault_step: int = knob(4, rule=non_negative(int), doc="first step of the scheduled faults (0-based)")
    lr_spike_factor: float = knob(100.0, rule=positive(float))
    lr_spike_steps: int = knob(2, rule=positive(int))
    fp16_grad_scale: float = knob(1e-5, rule=positive(float), doc="fp16_no_loss_scaling: full-size per-token gradient scale")
    fp16_overflow_scale: float = knob(1e6, rule=positive(float), doc="fp16_overflow: sum-reduced full-size loss scale")
    router_lr_factor: float = knob(10.0, rule=positive(float))
    faults: list[str] = knob(factory=lambda: [f for f in FAULTS if f != "none"], rule=ListOf(Choice(FAULTS)))
    fix_runs: list[str] = knob(factory=lambda: list(FIXABLE), rule=ListOf(Choice(FIXABLE)),
                               doc="faults also run as <fault>+fix")


@dataclass(frozen=True)
class CostConfig(ParamsConfig):
    """``proxy.fidelity.cost``: side-by-side step measurement (:mod:`proxy_artifacts.cost`)."""

    seq_len: int = knob(32, rule=positive(int))
    steps: int = knob(4, rule=positive(int))
    rounds: int = knob(2, rule=positive(int))


@dataclass(frozen=True)
class DetectorConfig(ParamsConfig):
    """``proxy.fidelity.detector``: thresholds of :func:`proxy_artifacts.detector.signature`."""

    grad_spike_factor: float = knob(5.0, rule=positive(float))
    kl_blowup_factor: float = knob(5.0, rule=positive(float))
    kl_blowup_min: float = knob(0.05, rule=non_negative(float))
    reward_window: int = knob(2, rule=positive(int))
    reward_collapse_frac: float = knob(0.25, rule=_SHARE)
    reward_min: float = knob(0.1, rule=non_negative(float))
    expert_collapse_share: float = knob(0.5, rule=_SHARE)
    update_frozen: float = knob(1e-9, rule=non_negative(float))
    grad_collapse_factor: float = knob(0.1, rule=positive(float))
    grad_collapse_steps: int = knob(2, rule=positive(int))
    logprob_mismatch_factor: float = knob(10.0, rule=positive(float))
    logprob_mismatch_min: float = knob(1e-4, rule=non_negative(float))
    router_flip_factor: float = knob(10.0, rule=positive(float))
    router_flip_min: float = knob(0.0, rule=_SHARE, doc="fresh-rollout router flip rate above this (and above factor x "
                                                        "the healthy maximum) is a router_flip")
    divergence_rel: float = knob(1.0, rule=positive(float))
    divergence_factor: float = knob(3.0, rule=positive(float))
    divergence_steps: int = knob(2, rule=positive(int))
    divergence_floor: float = knob(1e-3, rule=non_negative(float))


@dataclass(frozen=True)
class ControlsConfig(ParamsConfig):
    """``proxy.fidelity.controls``: negative controls of a proxy and the magnitude fidelity score
    (:mod:`proxy_artifacts.controls`; the controls built are the ``proxy_control`` stages of ``dvc.yaml``,
    one per kind of ``controls.CONTROL_KINDS``)."""

    keep_ratio: float = knob(0.5, rule=_KEEP_RATIO, doc="the proxy whose controls are built (same expert count)")
    seed: int = knob(0, doc="random expert choice / re-initialisation seed")
    sd_factor: float = knob(3.0, rule=positive(float),
                            doc="tolerance = factor x the base's seed-to-seed standard deviation (controls.tolerance)")
    log_floor: float = knob(0.30103, rule=non_negative(float), doc="least tolerance of a log quantity, decades (x2)")
    abs_floor: float = knob(0.05, rule=non_negative(float), doc="least tolerance of a linear quantity (reward, nats)")
    log_max: float = knob(1.0, rule=positive(float),
                          doc="a log quantity whose tolerance is wider (decades) tells no model apart: left out of the score")
    min_score: float = knob(0.75, rule=_SHARE, doc="a model passes with at least this share of cells within tolerance")
    min_seed_share: float = knob(0.6667, rule=_SHARE, doc="... and its signature reproducing on this share of seeds")
    dist_cap: float = knob(3.0, rule=positive(float),
                           doc="a cell's magnitude distance (|model - base| / tolerance) is at most this (controls.cell_distance)")
    min_effect: float = knob(0.1, rule=non_negative(float),
                             doc="a control is beaten only when the mean run distance difference is at least this (tolerances)")


@dataclass(frozen=True)
class FidelityConfig(ParamsConfig):
    """``proxy.fidelity``: verdicts, accelerator counts and projection."""

    step_tolerance: int = knob(2, rule=non_negative(int))
    device_memory_gb: float = knob(80.0, rule=positive(float))
    usable_share: float = knob(0.8, rule=interval(float, 0, 1, lo_open=True))
    cost: CostConfig = knob(factory=CostConfig)
    detector: DetectorConfig = knob(factory=DetectorConfig)
    controls: ControlsConfig = knob(factory=ControlsConfig)


@dataclass(frozen=True)
class ProxyConfig(ParamsConfig):
    """``proxy``: every sub-block of the proxy stages."""

    base: BaseConfig = knob(factory=BaseConfig)
    model: ModelConfig = knob(factory=ModelConfig)
    stats: StatsConfig = knob(factory=StatsConfig)
    prune: PruneConfig = knob(factory=PruneConfig)
    eval: EvalConfig = knob(factory=EvalConfig)
    compare: CompareConfig = knob(factory=CompareConfig)
    grpo: GrpoConfig = knob(factory=GrpoConfig)
    fidelity: FidelityConfig = knob(factory=FidelityConfig)


register("proxy", ProxyConfig)


def proxy_params(value: dict | None, path: str = "proxy") -> dict:
    """The ``proxy`` block as a plain mapping: validated, every missing key at its default."""
    return ProxyConfig.from_params(value, path).to_params()


def base_params(value: dict | None) -> dict:
    """A ``proxy.base`` mapping with every missing key at its default (tests and benchmarks pass partial
    mappings)."""
    return BaseConfig.from_params(dict(value or {}), "proxy.base").to_params()


def grpo_params(value: dict | GrpoConfig | None) -> dict:
    """A ``proxy.grpo`` mapping (or config) with every missing key at its default (tests and benchmarks
    pass partial mappings)."""
    if isinstance(value, GrpoConfig):
        return value.to_params()
    return GrpoConfig.from_params(dict(value or {}), "proxy.grpo").to_params()


def load_proxy_params(path: str) -> dict:
    """The validated ``proxy`` block of params file ``path``, every key the file leaves out at its default.

    Raises:
        ParamsError: an unknown key or a value of the wrong type (named by its path).
    """
    return proxy_params(load_params(path, "proxy"))
