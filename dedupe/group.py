"""Grouping captured graph instances by canonical hash, and the dataset metrics.

Works on Arrow/Polars columns only (no per-row Python), so 100K graph rows group in well
under a second. :func:`group_stage` is the ``dedupe`` stage (``python -m dedupe group``).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa
from tqdm import tqdm

from dedupe.nodes import node_rows
from passnet_common.canonical import hash_metadata
from passnet_common.io import atomic_write_json, atomic_write_text, write_parquet
from passnet_common.schema import to_table


def unique_graphs(graphs: pa.Table | pl.DataFrame, store_prefix: str = "data/graph_store") -> pl.DataFrame:
    """One row per ``graph_hash``: members (model_id, graph_index), counts, store path.

    Args:
        graphs: the ``graphs`` table (columns graph_hash, structure_hash, wl_hash,
            canonical_version, num_nodes, model_id, graph_index).
        store_prefix: folder of the graph store, used to build ``store_path``.

    Raises:
        ValueError: rows of several canonical versions are mixed (hashes of different
            versions are never compared).
    """
    df = graphs if isinstance(graphs, pl.DataFrame) else pl.from_arrow(graphs)
    versions = df.get_column("canonical_version").unique().to_list() if df.height else []
    if len(versions) > 1:
        raise ValueError(f"graphs of several canonical versions {sorted(versions)} cannot be grouped together")
    out = (
        df.sort(["graph_hash", "model_id", "graph_index"])
        .group_by("graph_hash", maintain_order=True)
        .agg(
            pl.col("structure_hash").first(),
            pl.col("wl_hash").first(),
            pl.col("canonical_version").first(),
            pl.col("num_nodes").first(),
            pl.len().cast(pl.Int32).alias("num_instances"),
            pl.col("model_id").n_unique().cast(pl.Int32).alias("num_models"),
            pl.struct(["model_id", "graph_index"]).alias("members"),
        )
        .with_columns(
            (pl.lit(store_prefix.rstrip("/") + "/") + pl.col("graph_hash").str.slice(0, 2) + pl.lit("/")
             + pl.col("graph_hash")).alias("store_path")
        )
        .sort("graph_hash")
    )
    return out


def dataset_metrics(extractions: pl.DataFrame, graphs: pl.DataFrame, uniq: pl.DataFrame) -> dict:
    """DVC metrics of the dataset: attempted, captured, graphs, unique graphs/structures,
    dedup ratio (graph instances per unique graph), failures by error class, and capture
    share per source."""
    ok = extractions.filter(pl.col("status") == "ok")
    by_class = (
        extractions.filter(pl.col("status") != "ok")
        .group_by("error_class").len().sort("error_class")
    )
    src = extractions.with_columns(pl.col("model_id").str.split(":").list.first().alias("source"))
    per_source = {}
    for s in sorted(src.get_column("source").unique().to_list()):
        part = src.filter(pl.col("source") == s)
        n_ok = part.filter(pl.col("status") == "ok").height
        per_source[s] = {"attempted": part.height, "captured": n_ok, "share": round(n_ok / part.height, 4) if part.height else None}
    n_graphs = graphs.height
    n_unique = uniq.height
    return {
        "models_attempted": extractions.height,
        "models_captured": ok.height,
        "models_meta_mode": ok.filter(pl.col("mode") == "meta").height,
        "graphs": n_graphs,
        "graph_breaks": int(extractions.get_column("num_graph_breaks").fill_null(0).sum()) if extractions.height else 0,
        "unique_graphs": n_unique,
        "unique_structures": uniq.get_column("structure_hash").n_unique() if n_unique else 0,
        "wl_buckets": uniq.get_column("wl_hash").n_unique() if n_unique else 0,
        "dedup_ratio": round(n_graphs / n_unique, 4) if n_unique else None,
        "failures_by_class": {r["error_class"]: r["len"] for r in by_class.to_dicts()},
        "by_source": per_source,
    }


def write_plot_data(folder, node_rows: list[dict], graphs: pl.DataFrame, top: int = 30) -> None:
    """CSV data for DVC plots: the ``top`` call targets by number of unique graphs that use
    them (``dataset_top_ops.csv``) and FX nodes per model, summed over all its graphs (graph
    breaks included), with the number of graphs (``dataset_graph_sizes.csv``: one row per model,
    largest first, so a multi-graph model is one bar, not several bars under one label)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    calls = pl.DataFrame(
        {"graph_hash": [r["graph_hash"] for r in node_rows], "op": [r["op"] for r in node_rows],
         "target": [r["target"] for r in node_rows]},
        schema={"graph_hash": pl.String, "op": pl.String, "target": pl.String},
    ).filter(pl.col("op").str.starts_with("call_"))
    top_ops = (
        calls.group_by("target").agg(pl.col("graph_hash").n_unique().alias("unique_graphs"), pl.len().alias("nodes"))
        .sort(["unique_graphs", "nodes", "target"], descending=[True, True, False]).head(top)
    )
    atomic_write_text(folder / "dataset_top_ops.csv", top_ops.write_csv())
    sizes = (
        graphs.group_by("model_id").agg(pl.col("num_nodes").sum(), pl.len().alias("num_graphs"))
        .select("model_id", "num_graphs", "num_nodes").sort(["num_nodes", "model_id"], descending=[True, False])
    )
    atomic_write_text(folder / "dataset_graph_sizes.csv", sizes.write_csv())


def group_stage(extract: Path, store: str | Path, out: Path, metrics: Path, plots: Path) -> dict:
    """The ``dedupe`` stage: from the extract stage's ``graphs`` / ``extractions`` tables in
    ``extract`` and the graph store ``store`` (its path as given is the prefix of ``store_path``), write ``out/unique_graphs.parquet``
    (:func:`unique_graphs`, with the canonical form's hash metadata), ``out/nodes.parquet`` (one row
    per FX node of every unique graph, :func:`dedupe.nodes.node_rows`), the plot data in ``plots``
    (:func:`write_plot_data`) and :func:`dataset_metrics` to ``metrics``.

    Returns:
        the metrics, plus ``node_rows`` (the nodes table's row count).

    Raises:
        FileNotFoundError: a unique graph has no ``graph.json`` in the store (store and graphs
            table out of step).
    """
    ex = Path(extract)
    graphs = pl.read_parquet(ex / "graphs.parquet")
    extractions = pl.read_parquet(ex / "extractions.parquet")
    uniq = unique_graphs(graphs, str(store))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(out / "unique_graphs.parquet", to_table("unique_graphs", uniq.to_dicts(), metadata=hash_metadata()))
    rows = []
    for h in tqdm(uniq.get_column("graph_hash").to_list(), desc="nodes", unit="graph"):
        gpath = Path(store) / h[:2] / h / "graph.json"
        if not gpath.exists():
            raise FileNotFoundError(f"graph store has no {gpath} (store and graphs table out of step)")
        rows.extend(node_rows(h, json.loads(gpath.read_text())["nodes"]))
    write_parquet(out / "nodes.parquet", to_table("nodes", rows))
    write_plot_data(Path(plots), rows, graphs)
    result = dataset_metrics(extractions, graphs, uniq)
    atomic_write_json(metrics, result, indent=2)
    return {**result, "node_rows": len(rows)}
