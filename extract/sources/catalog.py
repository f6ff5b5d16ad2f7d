"""Model catalogs: every source produces rows of the ``models`` table.

Sources (their model_id prefixes, docs/tables.md):
  * ``transformers``: every architecture class in transformers' auto-model mappings
    (``MODEL_*_MAPPING_NAMES``), its config built from the library's defaults
    (``AutoConfig.for_model(model_type)``) -> ``transformers:<ClassName>``;
  * ``timm``: every name in ``timm.list_models()`` -> ``timm:<name>``;
  * ``torchvision``: every name in ``torchvision.models.list_models()`` -> ``torchvision:<name>``;
  * ``local``: a folder of Hugging Face style ``config.json`` files -> ``local:<path-hash>``;
  * ``hub`` (``hub_dir``): a finished Hub crawl (:mod:`extract.sources.hub_crawl`), one row per
    distinct graph config -> ``hf:org/name@<sha>``;
  * ``graphnet`` (``graphnet_dir``): samples of a GraphNet checkout (:mod:`extract.sources.graphnet`),
    their ``model.py`` static-checked and run only in the capture's isolated child ->
    ``graphnet:<sample path>``;
  * ``module`` (``module_dir``): Python files defining ``build() -> (module, example_inputs)``
    (:mod:`extract.sources.modules`), imported only in the capture's isolated child ->
    ``module:<file stem>``.

Config-level dedupe before capture, for every source (:func:`dedupe_configs`): rows that
would build the same model (same library, architecture and config, provenance strings left
out; a module file by its bytes) are captured once; the others name it in ``duplicate_of`` and
receive its graphs when the tables are assembled. Configs of one architecture that differ only
in attributes its model never reads are merged in the capture stage, from the attributes that
architecture's first capture read (:mod:`extract.runs.reads_dedupe`).

A config dict from any origin (a local file, a Hub download, the library defaults) goes
through :func:`row_from_hf_config`, the single code path that later also serves the Hub
crawler (``hf:org/name@<sha>``).

:func:`build_catalog` assembles the rows of the sources that params switch on.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from extract.config import CatalogConfig, catalog_config
from extract.sources.builtin import timm_catalog, torchvision_catalog, transformers_catalog
from extract.sources.graphnet import graphnet_catalog
from extract.sources.hub_crawl import hub_catalog
from extract.sources.local import local_catalog
from extract.sources.modules import module_catalog
from extract.sources.rows import PROVENANCE
from passnet_common.io import write_parquet
from passnet_common.schema import to_table

SOURCES = {
    "transformers": transformers_catalog,
    "timm": timm_catalog,
    "torchvision": torchvision_catalog,
}


def build_catalog(params: CatalogConfig | dict) -> list[dict]:
    """The catalog the pipeline captures, from the ``catalog`` params block
    (:class:`extract.config.CatalogConfig` or its mapping).

    ``mode: default`` keeps the model ids listed under ``default``; ``mode: all`` keeps
    every model of the ``all_sources`` (``sample_per_source: {timm: 100}`` keeps a seeded
    uniform sample of a source instead). ``local_dir`` adds a local config folder;
    ``graphnet_dir`` the samples of a local GraphNet checkout (:mod:`extract.sources.graphnet`);
    ``module_dir`` a folder of ``build()`` files (:mod:`extract.sources.modules`);
    ``limit`` keeps the first N rows (sorted by model_id) for smoke runs. Duplicate configs
    are marked (:func:`dedupe_configs`).

    Raises:
        ValueError: an unknown key or a value of the wrong type (``ParamsError``), unknown mode
            or source, or a default id absent from its source (the message lists the unknown ids).
    """
    cfg = catalog_config(params)
    mode = cfg.mode
    rows: list[dict] = []
    if mode == "all":
        sample = cfg.sample_per_source or {}
        for src in cfg.all_sources:
            if src not in SOURCES:
                raise ValueError(f"catalog.all_sources: unknown source {src!r}; known: {sorted(SOURCES)}")
            src_rows = SOURCES[src]()
            if sample.get(src):
                # A reproducible uniform sample (for estimating capture shares cheaply).
                rng = random.Random(cfg.sample_seed)
                src_rows = rng.sample(src_rows, min(int(sample[src]), len(src_rows)))
            rows.extend(src_rows)
    elif mode == "default":
        wanted = list(cfg.default)
        by_source: dict[str, list[str]] = {}
        for mid in wanted:
            src = mid.split(":", 1)[0]
            if src not in SOURCES:
                raise ValueError(f"catalog.default: {mid!r} has unknown source {src!r}; known: {sorted(SOURCES)}")
            by_source.setdefault(src, []).append(mid)
        missing = []
        for src, ids in by_source.items():
            if src == "transformers":  # only the listed classes: their rows equal those of the whole catalog
                src_rows = transformers_catalog(only={m.split(":", 1)[1] for m in ids})
            else:
                src_rows = SOURCES[src]()
            available = {r["model_id"]: r for r in src_rows}
            missing += [m for m in ids if m not in available]
            rows.extend(available[m] for m in ids if m in available)
        if missing:
            raise ValueError(f"catalog.default: not found in their sources: {missing}")
    else:
        raise ValueError(f"catalog.mode must be 'default' or 'all', got {mode!r}")
    if cfg.local_dir:
        rows.extend(local_catalog(cfg.local_dir))
    if cfg.hub_dir:  # a finished `python -m extract crawl` (extract/sources/hub_crawl.py)
        rows.extend(hub_catalog(cfg.hub_dir))
    if cfg.graphnet_dir:  # a local GraphNet checkout: graphnet:<sample path> (extract/sources/graphnet.py)
        rows.extend(graphnet_catalog(cfg.graphnet_dir))
    if cfg.module_dir:  # own programs: module:<file stem> (extract/sources/modules.py)
        rows.extend(module_catalog(cfg.module_dir))
    rows = sorted({r["model_id"]: r for r in rows}.values(), key=lambda r: r["model_id"])
    if cfg.limit:
        rows = rows[: cfg.limit]
    return dedupe_configs(rows)


def write_catalog(params: CatalogConfig | dict, out: Path) -> list[dict]:
    """Build the catalog (:func:`build_catalog`) and write it as the ``models`` table at ``out``
    (Parquet); returns the rows."""
    rows = build_catalog(params)
    write_parquet(Path(out), to_table("models", rows))
    return rows


def dedupe_key(row: dict) -> str:
    """What decides the model a row builds, before anything is captured: library, architecture
    and the whole config (``config_hash``; for a transformers config, the config without the
    provenance strings ``save_pretrained`` writes, :data:`extract.sources.rows.PROVENANCE`:
    ``_name_or_path``, ``transformers_version``, ``_commit_hash``; a module file: its bytes;
    timm / torchvision: name and arguments). Configs that differ in anything else are merged,
    if at all, by the capture stage from what their architecture's capture read
    (:mod:`extract.runs.reads_dedupe`), not by a list of keys assumed unread. A row the catalog
    could not read keys on its own id (never merged)."""
    if row.get("catalog_error_class") or not row.get("config_json"):
        return f"{row.get('library')}|{row['model_id']}|{row['config_hash']}"
    h = row["config_hash"]
    if row.get("library") == "transformers":
        cfg = json.loads(row["config_json"])
        if isinstance(cfg, dict):
            cfg = {k: v for k, v in cfg.items() if k not in PROVENANCE}
            h = hashlib.sha256(json.dumps(cfg, sort_keys=True, separators=(",", ":"), allow_nan=True, default=str,
                                          ensure_ascii=False).encode()).hexdigest()
    return f"{row.get('library')}|{row.get('architecture')}|{h}"


def dedupe_configs(rows: list[dict]) -> list[dict]:
    """``rows`` (sorted by model_id) with ``duplicate_of`` set on every row whose
    :func:`dedupe_key` an earlier row has (the first model_id is captured, the others reuse
    its graphs); None on the others. Returns new dicts; order kept."""
    first: dict[str, str] = {}
    out = []
    for r in rows:
        k = dedupe_key(r)
        out.append({**r, "duplicate_of": first.get(k)})
        first.setdefault(k, r["model_id"])
    return out
