"""The params blocks the extract family reads, one typed config each, with every default in it.

``catalog`` (:class:`CatalogConfig`, ``python -m extract catalog``), ``extract``
(:class:`ExtractConfig` with its ``capture`` and ``capture.dynamo`` blocks, ``python -m extract
capture`` / ``coverage``) and ``hub`` (:class:`HubConfig`, ``python -m extract crawl``). Importing
this module registers the three blocks (:func:`passnet_common.config.register`), so
``load_params`` validates them. The dedupe family reads no params.

Code that takes one of these blocks accepts the config or a plain mapping (tests, benchmarks):
:func:`catalog_config`, :func:`extract_config`, :func:`capture_config` and :func:`hub_config` turn a
mapping into the config (validated, defaults filled) and hand a config back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from passnet_common.config import ParamsConfig, knob, register
from passnet_common.spec import DictOf, Optional, positive


@dataclass(frozen=True)
class CatalogConfig(ParamsConfig):
    """``catalog``: which models the pipeline captures (:func:`extract.sources.catalog.build_catalog`)."""

    mode: Literal["default", "all"] = knob("default", doc="default: the ids under `default`; all: every model of `all_sources`")
    default: list[str] = knob(factory=list, doc="model ids kept in mode default, e.g. transformers:LlamaForCausalLM")
    all_sources: list[str] = knob(factory=lambda: ["transformers", "timm", "torchvision"],
                                  doc="the library sources listed whole in mode all")
    sample_per_source: dict[str, int] | None = knob(None, rule=Optional(DictOf(int)),
                                                    doc="mode all: a seeded uniform sample of this many models per source")
    sample_seed: int = knob(0, doc="seed of the mode-all samples")
    local_dir: str | None = knob(None, doc="folder of Hugging Face config.json files (local:<path-hash> rows)")
    hub_dir: str | None = knob(None, doc="a finished `python -m extract crawl` work folder (hf: rows)")
    graphnet_dir: str | None = knob(None, doc="a local GraphNet checkout (graphnet:<sample path> rows)")
    module_dir: str | None = knob(None, doc="folder of .py files defining build() -> (module, inputs) (module: rows)")
    limit: int | None = knob(None, rule=Optional(positive(int)), doc="keep the first N rows by model_id (smoke runs)")


@dataclass(frozen=True)
class DynamoConfig(ParamsConfig):
    """``extract.capture.dynamo``: TorchDynamo settings of a capture (recorded per extraction and in
    the attempt key). Chosen for the fewest graph breaks that still capture faithfully."""

    capture_scalar_outputs: bool = knob(True, doc=".item() / tolist() traced as unbacked symbols, not a graph break")
    capture_dynamic_output_shape_ops: bool = knob(True, doc="nonzero & co. traced, not a graph break")
    recompile_limit: int = knob(64, rule=positive(int),
                                doc="recompiles of one frame before it runs eagerly (Dynamo's default is 8): a block "
                                    "called with many Python ints (one frame per value) is captured whole")
    ignore_logging_functions: bool = knob(True, doc="logging.Logger calls in a forward are no-ops to Dynamo, "
                                                    "not frames that run eagerly")


@dataclass(frozen=True)
class CaptureConfig(ParamsConfig):
    """``extract.capture``: how one model is built, fed and captured (:func:`extract.capture.capture_row`)."""

    meta: bool = knob(True, doc="build on the meta device first (no weights allocated)")
    batch_size: int = knob(1, rule=positive(int), doc="batch of every synthesised input")
    seq_len: int = knob(32, rule=positive(int), doc="text inputs: tokens per sequence")
    audio_samples: int = knob(16000, rule=positive(int), doc="waveform inputs: samples per clip")
    fallback_layers: int = knob(2, rule=positive(int), doc="depth of transformers configs in the real-tensor fallback")
    dynamo: DynamoConfig = knob(factory=DynamoConfig, doc="TorchDynamo settings")


@dataclass(frozen=True)
class ExtractConfig(ParamsConfig):
    """``extract``: the capture stage's workers, limits and resume rules (:func:`extract.runs.scheduler.capture_all`)."""

    workers: int = knob(2, rule=positive(int), doc="isolated capture processes running at once")
    timeout_s: float = knob(7200.0, rule=positive(float), doc="wall seconds per child: a backstop")
    cpu_budget_s: float | None = knob(None, rule=Optional(positive(float)),
                                      doc="CPU seconds (user + system) per child: the load-proof limit")
    hang_s: float | None = knob(None, rule=Optional(positive(float)), doc="wall seconds without CPU progress -> hang")
    retries: int = knob(1, doc="in-run retries of timeout / oom / hang, limits x2 each")
    mem_cap_gb: float | None = knob(8.0, rule=Optional(positive(float)), doc="resident memory cap per child (GiB)")
    retry_failed: bool = knob(False, doc="re-run models whose earlier attempt failed (any reason)")
    retry_transient: bool = knob(True, doc="re-run models that hit the timeout, the memory cap or the hang limit")
    executor: Literal["local", "ray"] = knob("local", doc="local forked children or Ray tasks (extract/runs/executor.py)")
    ray: dict[str, Any] = knob(factory=dict, doc="ray.init options, passed through")
    capture: CaptureConfig = knob(factory=CaptureConfig, doc="the capture of one model")


@dataclass(frozen=True)
class HubConfig(ParamsConfig):
    """``hub``: the Hub crawl (:func:`extract.sources.hub_crawl.crawl`; not in ``dvc repro``)."""

    endpoint: str | None = knob(None, doc="Hub endpoint (None: huggingface_hub's, HF_ENDPOINT)")
    filter: str | None = knob(None, doc="library tag of the listing, e.g. transformers")
    pipeline_tag: str | None = knob(None, doc="pipeline tag of the listing")
    sort: str | None = knob("downloads", doc="listing order")
    limit: int | None = knob(None, rule=Optional(positive(int)), doc="models listed at most")
    workers: int = knob(8, rule=positive(int), doc="concurrent config.json downloads")
    chunk: int = knob(256, rule=positive(int), doc="downloads per checkpoint")
    max_retries: int = knob(3, doc="extra tries for timeouts / 5xx after huggingface_hub's own")
    timeout_s: float = knob(10.0, rule=positive(float), doc="seconds per HTTP request")
    listing_restarts: int = knob(5, doc="restarts of the listing from its stored cursor after an error")
    download_wall_s: float = knob(60.0, rule=positive(float), doc="hard wall-clock limit of one config download (s)")
    backoff_s: float = knob(1.0, rule=positive(float),
                            doc="crawl-wide back-off after a 429 / 5xx / timeout (s), doubled per repeat")
    backoff_max_s: float = knob(60.0, rule=positive(float), doc="longest back-off (s)")


register("catalog", CatalogConfig)
register("extract", ExtractConfig)
register("hub", HubConfig)


def catalog_config(value: CatalogConfig | dict | None) -> CatalogConfig:
    """``value`` as a :class:`CatalogConfig` (a mapping validated as params block ``catalog``).

    Raises:
        ParamsError: an unknown key or a wrong type (a ValueError naming the key).
    """
    return value if isinstance(value, CatalogConfig) else CatalogConfig.from_params(value, "catalog")


def extract_config(value: ExtractConfig | dict | None) -> ExtractConfig:
    """``value`` as an :class:`ExtractConfig` (a mapping validated as params block ``extract``)."""
    return value if isinstance(value, ExtractConfig) else ExtractConfig.from_params(value, "extract")


def capture_config(value: CaptureConfig | dict | None) -> CaptureConfig:
    """``value`` as a :class:`CaptureConfig` (a mapping validated as params block ``extract.capture``)."""
    return value if isinstance(value, CaptureConfig) else CaptureConfig.from_params(value, "extract.capture")


def hub_config(value: HubConfig | dict | None) -> HubConfig:
    """``value`` as a :class:`HubConfig` (a mapping validated as params block ``hub``)."""
    return value if isinstance(value, HubConfig) else HubConfig.from_params(value, "hub")
