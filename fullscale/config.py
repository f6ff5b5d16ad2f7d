"""The ``fullscale`` params block (``params_full.yaml``): how the full-scale build is cut and run.

``params_full.yaml`` is an *override file*: its stage blocks (``catalog``, ``extract``, ``curate``...)
are deep-merged over ``params.yaml`` (:func:`fullscale.params.merged_params`), so the default
``dvc repro`` never reads it and a knob keeps its one home (the stage family's config); only the
orchestrator's own knobs live here. Importing this module registers the block, so
:func:`passnet_common.params.load_params` validates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from passnet_common.config import ParamsConfig, knob, register
from passnet_common.spec import Optional, interval, positive


@dataclass(frozen=True)
class FullScaleConfig(ParamsConfig):
    """``fullscale``: shards, folders and executor of the full-scale build (``python -m fullscale``)."""

    num_shards: int = knob(256, rule=positive(int),
                           doc="shards the catalog is cut into (shard = sha256(model_id) mod num_shards; "
                               "fixed for the life of a build: changing it starts a new build)")
    graphnet_shards: int = knob(128, rule=positive(int),
                                doc="shards the catalog's GraphNet samples are cut into, numbered after the model "
                                    "shards (shard = num_shards + sha256(model_id) mod graphnet_shards); fixed "
                                    "once GraphNet rows are in the committed catalog")
    out: str = knob("data_full", doc="committed folder of the build: catalog.parquet, shards/<id>/, release/")
    work: str = knob("data/work/full", doc="scratch folder (git-ignored): per-shard stage outputs, Inductor cache")
    executor: Literal["local", "ray"] = knob("local", doc="local: shards one after another in this process's "
                                                          "children; ray: one Ray task per shard")
    ray: dict[str, Any] = knob(factory=dict, doc="ray.init options (address, num_cpus, runtime_env)")
    cpus_per_shard: int = knob(2, rule=positive(int), doc="Ray: CPUs one shard task reserves (Ray does not pin "
                                                          "tasks to cores: shard tasks run at once on one node all "
                                                          "time on its highest core; use one task per node there)")
    local_workers: int = knob(1, rule=positive(int),
                              doc="local executor: shards run at once, each pinned to its own share of the usable "
                                  "cores (its profile times on the highest core of the share, compiles on the rest); "
                                  "1: one shard after another on every core")
    order: Literal["cost", "yield", "id"] = knob("cost", doc="which pending shard runs next: cost: the cheapest with "
                                                             "subgraphs left to profile, priced from the census, among "
                                                             "those that fit the time before --deadline; yield: among "
                                                             "those, the most long-tail tasks expected per CPU second "
                                                             "(fullscale.order); id: in id order")
    shard_timeout_s: float | None = knob(None, rule=Optional(positive(float)),
                                         doc="wall seconds one stage command of a shard may run (None: no limit)")
    structure_quota: int | None = knob(1, rule=Optional(positive(int)),
                                       doc="subgraphs timed per structure (structure_hash) over the whole build; the "
                                           "others are recorded skipped / structure_quota_reached (None: every member)")
    rate_floor: float | None = knob(None, rule=Optional(interval(float, 0.0, 1.0, lo_open=True)),
                                    doc="a shard leaves out (skipped / below_rate_floor) each subgraph whose kind's "
                                        "long-tail tasks per profiled structure in the committed full and drain shards is below "
                                        "this (fullscale.order.rate_floor_picks); a later shard judges it again "
                                        "(None: profile every structure)")
    keep_trial_history: bool = knob(False, doc="keep profiles.trial_history in a shard's compact rows "
                                               "(every timed trial: ~10x the table's size)")
    release_task_size: int = knob(10, rule=positive(int), doc="variants per release task (PassBench: ~10)")
    release_max_tasks: int | None = knob(None, rule=Optional(positive(int)), doc="release tasks kept (None: all)")
    secret_share: float = knob(0.2, doc="share of each task's variants (at least one where a task has >= 2) "
                                        "moved to the held-out split")
    secret_dir: str = knob("../passnet-secret", doc="where the held-out split is written: outside the repository, "
                                                    "never committed or published with the public release")
    secret_key_env: str = knob("PASSNET_SECRET_KEY", doc="environment variable holding the held-out split's key")
    stop_after_utc: str | None = knob(None, doc="HH:MM (UTC): no new shard starts after this time of day")


def fullscale_config(value: dict | FullScaleConfig | None) -> FullScaleConfig:
    """The validated config of a ``fullscale`` mapping (defaults filled); a config is handed back as is.

    Raises:
        passnet_common.spec.ParamsError: an unknown key or a value of the wrong type.
    """
    if isinstance(value, FullScaleConfig):
        return value
    return FullScaleConfig.from_params(value, "fullscale")


register("fullscale", FullScaleConfig)
