"""Grouping by graph_hash, dataset metrics and the nodes table."""

from __future__ import annotations

import operator

import polars as pl
import pytest
import torch
import torch.fx as fx
from torch.fx.passes.shape_prop import ShapeProp

from dedupe.group import dataset_metrics, unique_graphs
from dedupe.nodes import node_rows
from passnet_common.canonical import canonicalize


def _graphs(rows):
    cols = ["model_id", "graph_index", "graph_hash", "structure_hash", "wl_hash", "canonical_version", "num_nodes"]
    return pl.DataFrame([dict(zip(cols, r)) for r in rows])


def test_unique_graphs_members_and_counts():
    g = _graphs([
        ("timm:a", 0, "h1", "s1", "w1", 1, 10),
        ("timm:b", 0, "h1", "s1", "w1", 1, 10),
        ("timm:b", 1, "h1", "s1", "w1", 1, 10),  # same model, second graph with the same hash
        ("timm:c", 0, "h2", "s1", "w2", 1, 12),
    ])
    u = unique_graphs(g, "store").sort("graph_hash").to_dicts()
    assert [r["graph_hash"] for r in u] == ["h1", "h2"]
    assert (u[0]["num_instances"], u[0]["num_models"]) == (3, 2)
    assert u[0]["members"] == [{"model_id": "timm:a", "graph_index": 0}, {"model_id": "timm:b", "graph_index": 0},
                               {"model_id": "timm:b", "graph_index": 1}]
    assert u[1]["store_path"] == "store/h2/h2"
    ex = pl.DataFrame({"model_id": ["timm:a", "timm:b", "timm:c", "torchvision:d"], "status": ["ok", "ok", "ok", "failed"],
                       "error_class": [None, None, None, "timeout"], "mode": ["meta"] * 3 + [None], "num_graph_breaks": [0, 1, 0, 0]})
    m = dataset_metrics(ex, g, unique_graphs(g))
    assert (m["models_attempted"], m["models_captured"], m["graphs"], m["unique_graphs"], m["unique_structures"]) == (4, 3, 4, 2, 1)
    assert m["dedup_ratio"] == 2.0 and m["graph_breaks"] == 1
    assert m["failures_by_class"] == {"timeout": 1}
    assert m["by_source"]["torchvision"] == {"attempted": 1, "captured": 0, "share": 0.0}


def test_hashes_of_different_canonical_versions_are_never_grouped():
    g = _graphs([("timm:a", 0, "h1", "s", "w", 1, 1), ("timm:b", 0, "h1", "s", "w", 2, 1)])
    with pytest.raises(ValueError, match="canonical versions"):
        unique_graphs(g)


def test_node_rows_carry_shapes_dtypes_and_wiring():
    g = fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    s = g.call_function(operator.add, (x, y))
    m = g.call_function(torch.matmul, (s, y))
    g.output(m)
    gm = fx.GraphModule(torch.nn.Module(), g)
    ShapeProp(gm).propagate(torch.randn(3, 3), torch.randn(3, 3))
    c = canonicalize(gm)
    rows = node_rows(c.graph_hash, c.nodes)
    assert [r["op"] for r in rows] == ["placeholder", "placeholder", "call_function", "call_function", "output"]
    mm = next(r for r in rows if "matmul" in r["target"])
    add = next(r for r in rows if r["target"] == "_operator.add")
    y_index = next(i for i, n in enumerate(c.nodes) if n["op"] == "placeholder" and n["position"] == 1)
    assert mm["input_nodes"] == [add["node_index"], y_index]
    assert mm["in_shapes"] == [[3, 3], [3, 3]] and mm["out_shapes"] == [[3, 3]] and mm["out_dtypes"] == ["float32"]
    assert rows[0]["placeholder_kind"] == "input"
