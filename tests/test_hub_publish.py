"""`publish` (extract/publish/dataset.py): staging folder, dataset card, upload to the stand-in Hub."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import yaml

from extract.publish.dataset import build_staging, publish
from extract.sources.hub_configs import Listing
from passnet_common.hub_standin import HubStandIn
from passnet_common.io import write_parquet
from passnet_common.schema import to_table


def _tables(tmp_path):
    d = tmp_path / "tables"
    d.mkdir()
    models = [{"model_id": f"hf:o/m{i}@{'a' * 40}", "source": "hf" if i else "timm", "name": f"m{i}",
               "architecture": "LlamaForCausalLM", "model_type": "llama", "task": "causal-lm", "modality": "text",
               "config_json": "{}", "config_hash": f"{i:064x}", "library": "transformers",
               "library_version": "5.0", "trust_remote_code": False} for i in range(5)]
    write_parquet(d / "models.parquet", to_table("models", models))
    store = tmp_path / "store" / "ab" / ("ab" + "0" * 62)
    store.mkdir(parents=True)
    (store / "graph.py").write_text("# graph code\n")
    return d, tmp_path / "store", models


def test_staging_card_and_load_dataset(tmp_path):
    tables, store, models = _tables(tmp_path)
    res = build_staging("org/passnet", [tables], store, tmp_path / "out")
    assert res["tables"] == {"models": 5} and res["sources"] == {"hf": 4, "timm": 1} and res["graph_folders"] == 1
    card = (tmp_path / "out" / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["configs"] == [{"config_name": "models", "data_files": [{"split": "train", "path": "data/models.parquet"}]}]
    assert "hf://datasets/org/passnet/data/graphs.parquet" in card and "| hf | 4 |" in card
    f = pq.ParquetFile(tmp_path / "out" / "data" / "models.parquet")
    col = f.metadata.row_group(0).column(0)
    assert col.compression == "ZSTD"
    if res["parquet_options"].get("write_page_index"):
        assert col.has_offset_index and col.has_column_index
    from datasets import load_dataset

    ds = load_dataset("parquet", data_files=str(tmp_path / "out" / "data" / "models.parquet"), split="train",
                      cache_dir=str(tmp_path / "hfds"))
    assert ds.num_rows == 5 and ds["model_id"] == [m["model_id"] for m in models]


def test_publish_uploads_to_the_standin(tmp_path):
    tables, store, _ = _tables(tmp_path)
    with HubStandIn(listing=Listing(1)) as hub:
        res = publish("org/passnet", [tables], store, tmp_path / "out", endpoint=hub.endpoint, token="hf_x")
        files = hub.files("dataset", "org/passnet")
    local = {p.relative_to(tmp_path / "out").as_posix(): p.read_bytes()
             for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert files == local and len(res["commit"]) == 40
    assert "graph_store/ab/ab" + "0" * 62 + "/graph.py" in files


def test_missing_table_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no \\*.parquet"):
        build_staging("org/x", [tmp_path / "nope"], None, tmp_path / "out")
