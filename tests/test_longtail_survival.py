"""benchmarks.longtail_survival: per long-tail variant, frozen weights and the parent graph.

The end-to-end case is a tiny conv2d > batch_norm > relu subgraph whose weight is a runtime input:
Inductor lays that weight out again on every call (a 1.2 MB copy beside a conv on a 4 x 4 image),
which Dynamo-only never does, so the unfrozen code is slower than Dynamo's replay; with the weights
frozen the copy happens once at compile time, so most of the slowdown goes (whether the rest is still
slower than Dynamo-only depends on the CPU). Its parent
(the same block followed by a pooling) is compiled whole in its own child.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from benchmarks.longtail_survival import (
    FrozenWeights,
    counts,
    main,
    placeholder_kinds,
    resolve_variants,
    survival_row,
    survives,
    tensor_bytes,
)
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.store import load_graph, store_path, write_graph


def conv_bn_relu(x, w, rm, rv, g, b):
    return F.relu(F.batch_norm(F.conv2d(x, w, None, 1, 1), rm, rv, g, b, False, 0.1, 1e-5))


def parent_fn(x, w, rm, rv, g, b):
    return F.adaptive_avg_pool2d(conv_bn_relu(x, w, rm, rv, g, b), 1).flatten(1)


KINDS = ["input", "parameter", "buffer", "buffer", "parameter", "parameter"]


def _inputs(c: int = 128, o: int = 256, s: int = 4) -> list:
    g = torch.Generator().manual_seed(0)
    return [torch.randn(1, c, s, s, generator=g), torch.randn(o, c, 3, 3, generator=g) * 0.05, torch.zeros(o), torch.ones(o),
            torch.ones(o), torch.zeros(o)]


def _store(fn, store: Path, inputs: list) -> dict:
    gm = fx.symbolic_trace(fn)
    ShapeProp(gm).propagate(*inputs)
    rec = describe_graph(0, CapturedGraph(gm, KINDS, inputs, None), with_stats=True)
    write_graph(store, rec)
    return rec


def _corpus(root: Path) -> tuple[Path, Path, Path, str]:
    from passnet_common.io import write_parquet
    from passnet_common.schema import to_table

    sub = _store(conv_bn_relu, root / "decompose" / "subgraph_store", _inputs())
    par = _store(parent_fn, root / "graph_store", _inputs())
    h = sub["graph_hash"]
    write_parquet(root / "decompose" / "subgraphs.parquet", to_table("subgraphs", [{
        "subgraph_hash": h, "structure_hash": h, "canonical_version": 4, "decompose_version": 3, "num_nodes": 9, "num_ops": 3,
        "num_inputs": 6, "num_outputs": 1, "num_params": 5, "param_bytes": 0, "anchor": "conv2d",
        "pattern": "conv2d>batch_norm>relu", "status": "ok", "skip_reason": None, "num_instances": 1, "num_parent_graphs": 1,
        "num_models": 1, "model_ids": ["synthetic:parent"],
        "members": [{"graph_hash": par["graph_hash"], "segment_index": 0, "node_start": 6, "node_end": 9}], "store_path": ""}]))
    lt = {"subgraph_hash": h, "size": "catalog", "dtype": "float32", "status": "ok", "pattern": "conv2d>batch_norm>relu",
          "speedup_compiler": 0.55, "speedup_compiler_ci_high": 0.6, "overhead_bound": False, "tolerance_t": -5,
          "rule": "compiler", "correct_at_t": True}
    write_parquet(root / "long_tail.parquet", to_table("long_tail", [
        {**lt, "run": 0, "long_tail": True}, {**lt, "run": 1, "long_tail": True},
        {**lt, "subgraph_hash": "0" * 64, "run": 0, "long_tail": False, "speedup_compiler": 1.1,
         "speedup_compiler_ci_high": 1.2}]))  # not long tail: not measured
    return root / "long_tail.parquet", root / "decompose", root / "graph_store", h


def test_frozen_weights_module_takes_the_real_inputs_and_keeps_the_weights(tmp_path):
    rec = _store(conv_bn_relu, tmp_path / "store", _inputs(8, 16, 4))
    folder = store_path(tmp_path / "store", rec["graph_hash"])
    gm, values = load_graph(folder)
    kinds = placeholder_kinds(folder)
    assert sorted(kinds) == sorted(KINDS)
    m = FrozenWeights(gm, values, kinds)
    real = [v for v, k in zip(values, kinds) if k == "input"]
    assert len(real) == 1 and sum(1 for s in m.slots if s) == 5
    assert {n for n, _ in m.named_parameters()} | {n for n, _ in m.named_buffers()} >= {s for s in m.slots if s}
    assert torch.equal(m(*real), gm(*values))
    assert tensor_bytes(folder) == 4 * (8 * 4 * 4 + 16 * 8 * 9 + 4 * 16)


def test_survives_is_the_stage_rule_and_withholds_unjudged_rows():
    assert survives(0.90, 0.05, True, True) is True
    assert survives(0.96, 0.05, True, True) is False
    assert survives(0.90, 0.05, False, True) is None  # incorrect at t
    assert survives(0.90, 0.05, True, False) is None  # unstable
    assert survives(None, 0.05, True, True) is None
    c = counts([{"survives_freezing": True, "survives_parent": None, "retimed_slower": True},
                {"survives_freezing": False, "survives_parent": False, "retimed_slower": True}])
    assert c["survives_freezing"] == {"true": 1, "false": 1, "not_judged": 0}
    assert c["survives_parent"] == {"true": 0, "false": 1, "not_judged": 1}


def test_freezing_is_judged_only_where_the_slowdown_reproduces():
    v = {"status": "ok", "stable": True, "min_effect": 0.05, "inductor_correct": True, "frozen_correct": True,
         "speedup_compiler": [0.6, 0.55, 0.65], "speedup_compiler_frozen": [0.7, 0.65, 0.75]}
    key, stage = ("h", "catalog", "float32"), {"pattern": "p"}
    r = survival_row(key, stage, v, None, {"why": "not_measured"})
    assert (r["retimed_slower"], r["survives_freezing"], r["survives_parent"]) == (True, True, None)
    gone = survival_row(key, stage, {**v, "speedup_compiler_frozen": [1.2, 1.1, 1.3]}, None, {})
    assert gone["survives_freezing"] is False
    # not slower in this child: whether freezing removes the slowdown is not judged
    moot = survival_row(key, stage, {**v, "speedup_compiler": [1.0, 0.98, 1.03], "speedup_compiler_frozen": [1.2, 1.1, 1.3]}, None, {})
    assert (moot["retimed_slower"], moot["survives_freezing"]) == (False, None)
    parent = {"status": "ok", "stable": True, "inductor_correct": True, "speedup_compiler": [0.9, 0.88, 0.92],
              "eager_median_ms": 4.0, "inductor_median_ms": 5.0, "dynamo_median_ms": 4.5}
    pr = survival_row(key, stage, {**v, "eager_median_ms": 1.0, "inductor_median_ms": 2.0, "dynamo_median_ms": 1.2}, parent,
                      {"graph_hash": "p", "nodes": 10})
    assert pr["survives_parent"] is True and pr["subgraph_share_of_parent"] == 0.25
    assert (pr["subgraph_loss_ms"], pr["parent_loss_ms"]) == (0.8, 0.5)


def test_named_variants_resolve_unique_hash_prefixes():
    hashes = ["ab12" + "0" * 60, "ab34" + "0" * 60, "cd56" + "0" * 60]
    assert resolve_variants("ab1:catalog:float32, cd:mid:bfloat16", hashes) == {
        (hashes[0], "catalog", "float32"), (hashes[2], "mid", "bfloat16")}
    with pytest.raises(ValueError, match="matches 2"):
        resolve_variants("ab:catalog:float32", hashes)
    with pytest.raises(ValueError, match="expected"):
        resolve_variants("ab12:catalog", hashes)


def test_freezing_takes_away_a_weight_relayout_slowdown(tmp_path):
    """Frozen, the weight is laid out once, so the frozen code is much faster than the unfrozen one
    (measured: 1.75-1.88x on a 2-core Intel Xeon with AVX-512). Whether what is left is still slower than
    Dynamo-only is the CPU's: the frozen conv on a 4 x 4 image was faster on the AMD EPYC this test was
    written on, 0.84-0.88x of Dynamo-only on that Xeon; the verdict is the stage's rule on the frozen
    interval either way."""
    lt, dec, gs, h = _corpus(tmp_path)
    out = tmp_path / "survival.json"
    rc = main(["--long-tail", str(lt), "--decompose", str(dec), "--graph-store", str(gs), "--work", str(tmp_path / "work"),
               "--out", str(out), "--timeout-s", "240"])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["variants"] == 1
    (row,) = res["rows"]
    assert row["variant"] == f"{h}:catalog:float32" and row["status"] == "ok", row
    assert row["frozen_weights"] == 5
    assert row["retimed_slower"] is True, row  # the control: the re-layout slowdown reproduces in the child
    assert row["speedup_frozen_vs_inductor"][1] > 1.2, row  # frozen, the weight is laid out once
    assert row["survives_freezing"] is (row["speedup_compiler_frozen"][2] < 1 - 0.05), row  # min_effect 0.05
    assert row["parent"]["status"] == "ok" and row["parent"]["nodes"] > 0, row
    assert row["survives_parent"] in (True, False)
    verdict = "true" if row["survives_freezing"] else "false"
    assert res["survives_freezing"] == {"true": 0, "false": 0, "not_judged": 0, verdict: 1}
    assert res["machine"]["cpu_model"] and res["load_avg_1min"]["start"] is not None


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
