"""``publish``: the tables and the graph store as a Hugging Face Hub dataset repo.

    publish("org/passnet-graphs", [Path("data/extract")], Path("data/graph_store"), Path("data/publish"))

Builds a staging folder (the dataset exactly as uploaded), then ``create_repo(repo_type=
"dataset", exist_ok=True)`` and ``upload_folder`` (one commit). Layout::

    README.md                 dataset card: YAML ``configs:`` one per table (so ``datasets`` and
                              the Hub viewer find them), how it was built, counts, dedup, licenses
    data/<table>.parquet      every ``*.parquet`` of the table folders, rewritten zstd with
                              content-defined chunking and a page index where pyarrow supports
                              them (the Hub's advice for large datasets: Xet deduplicates CDC
                              pages across versions; the page index lets readers skip pages)
    graph_store/...           the content-addressed graph store, copied as is

Not part of ``dvc repro`` (it writes to a remote); the CLI is ``python -m extract publish``.
Readers: ``duckdb``/``polars`` read ``hf://datasets/<repo>/data/<table>.parquet`` directly.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import yaml

SOURCE_LICENSES = {
    "transformers": "Apache-2.0 (architectures built from transformers' default configs)",
    "timm": "Apache-2.0 (timm model definitions)",
    "torchvision": "BSD-3-Clause (torchvision model definitions)",
    "hf": "per model repository on the Hugging Face Hub (only config.json is read; no weights)",
    "local": "as given by the local config files' owners",
    "graphnet": "MIT (PaddlePaddle/GraphNet samples)",
}


def _parquet_options() -> dict:
    """Writer options the installed pyarrow supports (feature-detected, never assumed)."""
    params = inspect.signature(pq.ParquetWriter.__init__).parameters
    opts = {"compression": "zstd"}
    if "use_content_defined_chunking" in params:
        opts["use_content_defined_chunking"] = True
    if "write_page_index" in params:
        opts["write_page_index"] = True
    return opts


def _card(repo_id: str, tables: dict[str, int], sources: dict[str, int], store_graphs: int, opts: dict) -> str:
    header = {
        "license": "other",
        "pretty_name": "PassNet FX graphs",
        "tags": ["pytorch", "torch.fx", "compilers", "graphs", "inductor"],
        "configs": [{"config_name": name, "data_files": [{"split": "train", "path": f"data/{name}.parquet"}]}
                    for name in sorted(tables)],
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
             f"# PassNet FX graphs ({repo_id})", "",
             "PyTorch FX graphs captured with TorchDynamo from real model architectures, deduplicated by a "
             "canonical graph hash, with one row per model, capture attempt and graph.", "",
             "## How it was built", "",
             "A DVC pipeline (`python -m extract catalog|capture`, `python -m dedupe ...`): models come from "
             "transformers/timm/torchvision registries, local config folders, a Hugging Face Hub crawl "
             "(`config.json` only, pinned to a commit) and GraphNet samples; each is built from its config "
             "without weights (meta device where possible) and captured in an isolated child process.", "",
             "## Dedup procedure", "",
             "1. Before capture: Hub configs that differ only in keys that cannot change the graph (names, "
             "versions, generation settings, label names; see `extract/sources/hub_configs.py`) are captured once; "
             "`hub_repos.captured_as` keeps the many-to-one mapping.",
             "2. After capture: `graph_hash` is the sha256 of the canonical form (ops, wiring, literals, shapes, "
             "dtypes); `structure_hash` abstracts shapes; graphs with equal hashes are one unique graph.", "",
             "## Tables", "", "| config | rows |", "|---|---|"]
    lines += [f"| `{t}` | {n} |" for t, n in sorted(tables.items())]
    lines += ["", f"Graph store: {store_graphs} graph folders under `graph_store/`.", "",
              "Parquet options: " + ", ".join(f"`{k}={v}`" for k, v in opts.items()) + ".", "",
              "## Sources and licenses", "", "| source | models | license |", "|---|---|---|"]
    lines += [f"| {s} | {n} | {SOURCE_LICENSES.get(s, 'see source')} |" for s, n in sorted(sources.items())]
    lines += ["", "## Reading", "", "```python",
              "import duckdb",
              f"duckdb.sql(\"SELECT * FROM 'hf://datasets/{repo_id}/data/graphs.parquet' LIMIT 5\")",
              "import polars as pl",
              f"pl.read_parquet('hf://datasets/{repo_id}/data/models.parquet')",
              "from datasets import load_dataset",
              f"load_dataset('{repo_id}', 'models')", "```", ""]
    return "\n".join(lines)


def build_staging(repo_id: str, table_dirs: list[Path], store: Path | None, out: Path) -> dict:
    """Write the dataset folder ``out`` (replaced); returns ``{"tables": {name: rows}, ...}``.

    Raises:
        FileNotFoundError: a table folder does not exist or holds no ``*.parquet``.
        ValueError: two folders hold a table of the same name.
    """
    if out.exists():
        shutil.rmtree(out)
    (out / "data").mkdir(parents=True)
    opts = _parquet_options()
    tables: dict[str, int] = {}
    sources: dict[str, int] = {}
    for d in table_dirs:
        files = sorted(Path(d).glob("*.parquet")) if Path(d).is_dir() else []
        if not files:
            raise FileNotFoundError(f"publish: no *.parquet in table folder {d}")
        for f in files:
            name = f.stem
            if name in tables:
                raise ValueError(f"publish: table {name!r} found twice (second in {f})")
            t = pq.read_table(f)
            pq.write_table(t, out / "data" / f"{name}.parquet", **opts)
            tables[name] = t.num_rows
            if name == "models" and "source" in t.column_names:
                for s in t.column("source").to_pylist():
                    sources[s] = sources.get(s, 0) + 1
    graphs = 0
    if store is not None and Path(store).is_dir():
        shutil.copytree(store, out / "graph_store")
        graphs = sum(1 for p in (out / "graph_store").rglob("*") if p.is_dir() and not any(c.is_dir() for c in p.iterdir()))
    (out / "README.md").write_text(_card(repo_id, tables, sources, graphs, opts), encoding="utf-8")
    return {"tables": tables, "sources": sources, "graph_folders": graphs, "parquet_options": opts}


def publish(repo_id: str, table_dirs: list[Path], store: Path | None, out: Path, endpoint: str | None = None,
            token: str | None = None, private: bool = False, upload: bool = True) -> dict:
    """Stage (:func:`build_staging`) and upload to the dataset repo ``repo_id``.

    ``token`` defaults to huggingface_hub's (``HF_TOKEN`` / login). Returns the staging summary
    plus ``commit`` (the commit oid) when uploaded.

    Raises:
        huggingface_hub.errors.HfHubHTTPError: the Hub refused the repo or the commit.
    """
    res = build_staging(repo_id, table_dirs, store, out)
    if upload:
        from huggingface_hub import HfApi, constants  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import, set by python -m extract)

        saved = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = False  # publishing is an explicit online action
        try:
            api = HfApi(endpoint=endpoint, token=token)
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            info = api.upload_folder(folder_path=str(out), repo_id=repo_id, repo_type="dataset",
                                     commit_message=f"publish {len(res['tables'])} tables")
        finally:
            constants.HF_HUB_OFFLINE = saved
        res["commit"] = info.oid
    return json.loads(json.dumps(res))
