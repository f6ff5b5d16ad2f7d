"""GraphNet samples (extract/sources/graphnet.py): parse as data, capture in a child, export round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from extract.publish.graphnet_export import export_sample
from extract.sources.graphnet import (
    UnsafeSample,
    capture_sample,
    checked_source,
    graphnet_catalog,
    read_sample,
    rewrite_dunders,
    static_check,
)

MODEL_PY = '''import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_):
        l_x_ = L_x_
        linear = torch._C._nn.linear(l_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_)
        ones = torch.ones(1, device=device(type="cuda", index=0))
        relu = torch.relu(linear + ones.to(linear.device))
        return (relu,)
'''

WEIGHT_META = '''class Program_weight_tensor_meta_L_x_:
    name = "L_x_"
    shape = [2, 8]
    dtype = "torch.float32"
    device = "cuda:0"
    mean = 0.0
    std = 1.0
    data = None


class Program_weight_tensor_meta_L_self_modules_fc_parameters_weight_:
    name = "L_self_modules_fc_parameters_weight_"
    shape = [4, 8]
    dtype = "torch.float32"
    device = "cuda:0"
    mean = 0.010
    std = 0.200
    data = [0.1, 0.2]


class Program_weight_tensor_meta_L_self_modules_fc_parameters_bias_:
    name = "L_self_modules_fc_parameters_bias_"
    shape = [4]
    dtype = "torch.float32"
    device = "cuda:0"
    mean = 0.000
    std = 0.000
    data = None
'''

CONSTRAINTS = '''from sympy import Symbol

S0 = Symbol("S0")

dynamic_dim_constraint_symbols = [S0]

dynamic_dim_constraint_symbol2example_value = {S0: %d}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([S0, 8], "L_x_"),
]
'''


def _sample(root: Path, name: str, model_py: str = MODEL_PY, example: int | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "model.py").write_text(model_py)
    (d / "weight_meta.py").write_text(WEIGHT_META)
    (d / "input_meta.py").write_text("")
    (d / "graph_hash.txt").write_text("0" * 64)
    if example is not None:
        (d / "input_tensor_constraints.py").write_text(CONSTRAINTS % example)
    (d / "graph_net.json").write_text(json.dumps({"framework": "torch", "model_name": name, "source": "test"}))
    return d


def test_meta_files_are_parsed_as_data(tmp_path):
    s = _sample(tmp_path, "a", example=5)
    info = read_sample(s)
    assert [t["name"] for t in info["tensors"]] == ["L_x_", "L_self_modules_fc_parameters_weight_",
                                                    "L_self_modules_fc_parameters_bias_"]
    assert info["tensors"][0]["shape"] == [5, 8]  # symbolic S0 fixed to its example value
    assert info["tensors"][1]["dtype"] == "float32" and info["examples"] == {"S0": 5}


@pytest.mark.slow
def test_capture_in_child_symbolic_shapes_and_hashes(tmp_path):
    a = capture_sample(_sample(tmp_path, "a", example=3))
    a2 = capture_sample(_sample(tmp_path, "a2", example=3))
    b = capture_sample(_sample(tmp_path, "b", example=6))
    assert a["status"] == "ok" and len(a["graphs"]) == 1, a
    assert a["graphs"][0]["graph_hash"] == a2["graphs"][0]["graph_hash"]  # same graph, other folder
    assert a["graphs"][0]["graph_hash"] != b["graphs"][0]["graph_hash"]  # shapes enter the exact hash
    assert a["graphs"][0]["structure_hash"] == b["graphs"][0]["structure_hash"]  # not the structure hash


def test_unsafe_model_py_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "ran.txt"
    evil = "import os\n" + MODEL_PY.replace("        l_x_ = L_x_", f"        os.system('touch {marker}')\n        l_x_ = L_x_")
    s = _sample(tmp_path, "evil", model_py=evil)
    res = capture_sample(s)
    assert res["status"] == "skipped" and res["error_class"] == "unsafe_model_py" and "import os" in res["error_message"]
    assert not marker.exists()
    for bad in ("__import__('os')", "open('/etc/passwd')", "torch.__class__", "eval('1')"):
        with pytest.raises(UnsafeSample):
            static_check(MODEL_PY.replace("l_x_ = L_x_", f"l_x_ = L_x_; z = {bad}"))


def test_tensor_dunder_calls_become_operators_other_dunders_stay_refused():
    src = MODEL_PY.replace("        relu = torch.relu(linear + ones.to(linear.device))",
                           "        m = linear.__eq__(0)\n        k = m.__and__(linear.__gt__(1))\n"
                           "        relu = torch.relu(linear.__add__(ones.to(linear.device))).__mul__(k.__invert__())")
    with pytest.raises(UnsafeSample, match="dunder"):
        static_check(src)  # as GraphNet writes it
    out = checked_source(src)
    assert "m = linear == 0" in out and "k = m & (linear > 1)" in out and "__" not in out.split("class")[1].replace("__init__", "")
    assert "(linear + ones.to(linear.device))" in out and "~k" in out
    for bad in ("linear.__class__", "linear.__getattribute__('x')", "linear.__eq__(0, 1)", "linear.__eq__(other=0)",
                "linear.__reduce_ex__(2)", "linear.__eq__(*a)"):
        with pytest.raises(UnsafeSample, match="dunder"):
            checked_source(MODEL_PY.replace("l_x_ = L_x_", f"l_x_ = L_x_; z = {bad}"))
    assert rewrite_dunders(MODEL_PY) == MODEL_PY  # nothing to rewrite: the file as it is


SCALAR_META = """

class Program_weight_tensor_meta_L_self_modules_up_scale_factor:
    name = "L_self_modules_up_scale_factor"
    shape = []
    dtype = "torch.float64"
    device = "cpu"
    mean = 2.000
    std = 0.000
    data = [2.000000]
"""

LIFTED_MODEL_PY = '''import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_,
                L_self_modules_up_scale_factor):
        l_x_ = L_x_
        linear = torch._C._nn.linear(l_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_)
        item = L_self_modules_up_scale_factor.item()
        big = torch.tensor(-65504.0, device=device(type="cuda", index=0))
        mask = linear.__eq__(0).__and__(linear.__lt__(1))
        out = torch.where(mask, big, linear) * item
        return (out,)
'''


@pytest.mark.slow
def test_lifted_scalar_item_tensor_constant_and_dunders_import(tmp_path):
    """The three kinds that failed on real GraphNet samples (eva02/mbart/.., bloom/xglm/falcon,
    the same-model pair with ``__eq__``/``__and__``) in one sample: captured, one graph."""
    s = _sample(tmp_path, "lifted", model_py=LIFTED_MODEL_PY)
    (s / "weight_meta.py").write_text(WEIGHT_META + SCALAR_META)
    info = read_sample(s)
    assert info["tensors"][-1]["data"] == [2.0] and info["tensors"][1]["data"] is None  # a preview is no value
    res = capture_sample(s)
    assert res["status"] == "ok" and len(res["graphs"]) == 1, res
    ops = _sample(tmp_path, "ops", model_py=LIFTED_MODEL_PY.replace(
        "linear.__eq__(0).__and__(linear.__lt__(1))", "(linear == 0) & (linear < 1)"))
    (ops / "weight_meta.py").write_text(WEIGHT_META + SCALAR_META)
    assert capture_sample(ops)["graphs"][0]["graph_hash"] == res["graphs"][0]["graph_hash"]


def test_catalog_lists_samples_not_decomposed(tmp_path):
    _sample(tmp_path, "timm/m1")
    _sample(tmp_path, "timm/m1/_decomposed/m1_0")
    rows = graphnet_catalog(tmp_path)
    assert [r["model_id"] for r in rows] == ["graphnet:timm/m1"]
    assert rows[0]["source"] == "graphnet" and rows[0]["trust_remote_code"] is False


def test_export_then_import_gives_the_same_graph_hash(tmp_path):
    """Our graph, exported in GraphNet's layout and captured back, deduplicates against itself."""
    from extract.capture import dynamo_capture
    from passnet_common.record import describe_graph

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.relu(self.fc(x)) * 2

    m = M()
    with torch.device("meta"):
        m = M()
    graphs = dynamo_capture(m, (torch.empty(2, 8, device="meta"),))
    rec = describe_graph(0, graphs[0], with_stats=False)
    out = export_sample(rec, tmp_path / "export" / "m", "M")
    assert (out / "graph_net.json").exists() and (out / "graph_hash.txt").read_text() == rec["graph_hash"]
    back = capture_sample(out)
    assert back["status"] == "ok", back
    assert [g["graph_hash"] for g in back["graphs"]] == [rec["graph_hash"]]


# --- the graphnet source in the extract stage -------------------------------------------

def write_graphnet_sample(folder: Path, gm: torch.fx.GraphModule, example_inputs: list, model_name: str) -> Path:
    """A sample folder the way GraphNet's extractor writes one (independent of
    :func:`export_sample`): ``model.py`` is the Dynamo graph's ``gm.code`` as the ``forward``
    of ``class GraphModule`` (device literals as Dynamo prints them), ``weight_meta.py`` one
    class per forward argument with name/shape/dtype/device/mean/std/data, an empty
    ``input_meta.py``, their hash of the code, and ``graph_net.json`` last."""
    import hashlib
    import textwrap

    folder.mkdir(parents=True)
    body = textwrap.indent(gm.code.strip("\n"), "    ").replace("device(type='meta')", "device(type='cuda', index=0)")
    model_py = "import torch\n\n\nclass GraphModule(torch.nn.Module):\n" + body + "\n"
    (folder / "model.py").write_text(model_py)
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    blocks = []
    for name, t in zip(names, example_inputs):
        blocks.append(f"class Program_weight_tensor_meta_{name}:\n    name = \"{name}\"\n    shape = {list(t.shape)}\n"
                      f"    dtype = \"{t.dtype}\"\n    device = \"cuda:0\"\n    mean = None\n    std = None\n    data = None\n")
    (folder / "weight_meta.py").write_text("\n\n".join(blocks))
    (folder / "input_meta.py").write_text("")
    (folder / "graph_hash.txt").write_text(hashlib.sha256(model_py.encode()).hexdigest())
    (folder / "graph_net.json").write_text(json.dumps({"framework": "torch", "num_devices_required": 1,
                                                       "num_nodes_required": 1, "dynamic": False,
                                                       "model_name": model_name, "source": "huggingface_hub"}))
    return folder


@pytest.mark.slow
def test_extract_stage_dedupes_graphnet_against_ours(tmp_path):
    """A local tiny-BERT config and a GraphNet sample of the same model go through the
    extract stage (catalog -> capture in isolated children -> tables + store): one
    ``graph_hash``, one unique graph with both sources; a sample with a forbidden import is
    an error row and never runs; the stage goes on."""
    import duckdb
    import pyarrow.parquet as pq
    from conftest import TINY_CONFIGS, write_config_folder

    from dedupe.group import unique_graphs
    from extract.capture import dynamo_capture
    from extract.capture.build import buffers_to_meta, build_model, params_to_meta
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog

    capture = {"meta": True, "batch_size": 1, "seq_len": 16}
    cfgs = write_config_folder(tmp_path / "configs", {"tiny-bert": TINY_CONFIGS["tiny-bert"]})
    ours = build_catalog({"mode": "default", "default": [], "local_dir": str(cfgs)})
    model, args, kwargs, _ = build_model(ours[0], "meta", capture)  # the same module our capture builds
    params_to_meta(model)
    buffers_to_meta(model)
    graphs = dynamo_capture(model, args, kwargs)
    assert len(graphs) == 1
    gn = tmp_path / "graphnet"
    write_graphnet_sample(gn / "hf" / "tiny-bert", graphs[0].gm, graphs[0].example_inputs, "tiny-bert")
    marker = tmp_path / "ran.txt"
    evil = "import os\n" + MODEL_PY.replace("        l_x_ = L_x_", f"        os.system('touch {marker}')\n        l_x_ = L_x_")
    _sample(gn, "evil", model_py=evil)

    rows = build_catalog({"mode": "default", "default": [], "local_dir": str(cfgs), "graphnet_dir": str(gn)})
    assert sorted(r["model_id"] for r in rows) == sorted([ours[0]["model_id"], "graphnet:evil", "graphnet:hf/tiny-bert"])
    work, out, store = tmp_path / "work", tmp_path / "extract", tmp_path / "store"
    counts = capture_all(rows, capture, work, workers=1, timeout_s=300, mem_cap_gb=None, progress=False)
    assert counts["ran"] == 2 and counts["skipped"] == 1  # evil recorded without running
    assemble(rows, capture, work, out, store)
    assert not marker.exists()

    ext = {r["model_id"]: r for r in pq.read_table(out / "extractions.parquet").to_pylist()}
    assert ext["graphnet:hf/tiny-bert"]["status"] == "ok", ext["graphnet:hf/tiny-bert"]
    assert ext[ours[0]["model_id"]]["status"] == "ok"
    bad = ext["graphnet:evil"]
    assert bad["status"] == "failed" and bad["error_class"] == "unsafe_model_py"
    assert "import os" in bad["error_message"] and "evil/model.py" in bad["error_message"]
    g = pq.read_table(out / "graphs.parquet").to_pylist()
    by_model = {r["model_id"]: r["graph_hash"] for r in g}
    assert by_model["graphnet:hf/tiny-bert"] == by_model[ours[0]["model_id"]]
    uniq = unique_graphs(pq.read_table(out / "graphs.parquet"), str(store))
    assert uniq.height == 1 and uniq["num_models"].to_list() == [2]
    assert len([p for p in store.glob("*/*") if p.is_dir()]) == 1  # one store entry for the shared graph
    # which sources share a graph (the query the database offers over the graphs table)
    shared = duckdb.sql(f"""select graph_hash, list_sort(list(distinct split_part(model_id, ':', 1))) as sources
                            from '{out / "graphs.parquet"}' group by graph_hash""").fetchall()
    assert shared == [(by_model["graphnet:hf/tiny-bert"], ["graphnet", "local"])]


def test_catalog_graphnet_dir_rows_checks_and_params(tmp_path):
    """``catalog.graphnet_dir`` (a registered params key) lists the samples; an unsafe or
    malformed sample is an error row naming its file; the row's hash follows every file that
    shapes the graph."""
    import yaml

    from extract.sources.catalog import build_catalog
    from passnet_common.params import ParamsError, load_params

    gn = tmp_path / "gn"
    good = _sample(gn, "good")
    _sample(gn, "evil", model_py="import subprocess\n" + MODEL_PY)
    broken = _sample(gn, "broken")
    (broken / "weight_meta.py").write_text("class Program_weight_tensor_meta_x:\n    name = 'x'\n")  # no shape/dtype
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump({"catalog": {"mode": "default", "default": [], "graphnet_dir": str(gn)}}))
    rows = {r["model_id"]: r for r in build_catalog(load_params(p, "catalog"))}
    assert sorted(rows) == ["graphnet:broken", "graphnet:evil", "graphnet:good"]
    assert rows["graphnet:good"]["catalog_error_class"] is None
    assert json.loads(rows["graphnet:good"]["config_json"])["sample_dir"] == (gn / "good").as_posix()
    assert rows["graphnet:evil"]["catalog_error_class"] == "unsafe_model_py"
    assert "evil/model.py:1: import subprocess" in rows["graphnet:evil"]["catalog_error"]
    assert rows["graphnet:broken"]["catalog_error_class"] == "graphnet_meta"
    assert "broken/weight_meta.py" in rows["graphnet:broken"]["catalog_error"]
    before = rows["graphnet:good"]["config_hash"]
    (good / "weight_meta.py").write_text(WEIGHT_META.replace("shape = [4, 8]", "shape = [4, 9]"))
    after = {r["model_id"]: r for r in build_catalog({"mode": "default", "default": [], "graphnet_dir": str(gn)})}
    assert after["graphnet:good"]["config_hash"] != before  # a weight shape change re-captures
    p.write_text(yaml.safe_dump({"catalog": {"graphnet_dir": 3}}))
    with pytest.raises(ParamsError, match="catalog.graphnet_dir"):
        load_params(p, "catalog")


def test_export_cli_round_trip_through_the_graphnet_source(tmp_path):
    """``python -m extract export`` writes a stored graph in GraphNet's layout; the
    ``graphnet`` source reads it back through the extract stage with the same graph_hash."""
    import pyarrow.parquet as pq

    from extract.__main__ import main
    from extract.capture import dynamo_capture
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog
    from passnet_common.record import describe_graph
    from passnet_common.store import write_graph

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)
            self.register_buffer("scale", torch.ones(4))

        def forward(self, x):
            pos = torch.arange(4, device=x.device)  # a literal-only op: kept as a node
            return torch.relu(self.fc(x)) * self.scale + pos

    with torch.device("meta"):
        m = M()
    g = dynamo_capture(m, (torch.empty(2, 8, device="meta"),))[0]
    rec = describe_graph(0, g, with_stats=False)
    store = tmp_path / "store"
    write_graph(store, rec, [])
    out = tmp_path / "export"
    assert main(["export", "--store", str(store), "--out", str(out), "--graph-hash", rec["graph_hash"],
                 "--graphs", str(tmp_path / "absent.parquet")]) == 0
    sample = out / rec["graph_hash"]
    assert (sample / "graph_net.json").is_file() and (sample / "weight_meta.py").is_file()
    with pytest.raises(FileNotFoundError, match="has no graph " + "f" * 64):
        main(["export", "--store", str(store), "--out", str(out), "--graph-hash", "f" * 64])

    rows = build_catalog({"mode": "default", "default": [], "graphnet_dir": str(out)})
    assert [r["model_id"] for r in rows] == [f"graphnet:{rec['graph_hash']}"]
    capture_all(rows, {}, tmp_path / "work", workers=1, timeout_s=300, mem_cap_gb=None, progress=False, warm=False)
    assemble(rows, {}, tmp_path / "work", tmp_path / "extract", tmp_path / "store2")
    ext = pq.read_table(tmp_path / "extract" / "extractions.parquet").to_pylist()
    assert ext[0]["status"] == "ok", ext[0]
    graphs = pq.read_table(tmp_path / "extract" / "graphs.parquet").to_pylist()
    assert [r["graph_hash"] for r in graphs] == [rec["graph_hash"]]
    kinds = [p["kind"] for p in json.loads((tmp_path / "store2" / rec["graph_hash"][:2] / rec["graph_hash"]
                                            / "weight_meta.json").read_text())["placeholders"]]
    assert sorted(kinds) == ["buffer", "parameter", "parameter"]


STRIDE_META = """

class Program_weight_tensor_meta_L_self_modules_head_stride:
    name = "L_self_modules_head_stride"
    shape = [3]
    dtype = "torch.float32"
    device = "cuda:0"
    mean = 18.667
    std = 12.220
    data = None
"""

STRIDE_MODEL_PY = '''import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_,
                L_self_modules_head_stride):
        linear = torch._C._nn.linear(L_x_, L_self_modules_fc_parameters_weight_, L_self_modules_fc_parameters_bias_)
        s = L_self_modules_head_stride[0]
        v = torch.ops.aten._local_scalar_dense(s)
        full = torch.full((2, 1), v, dtype=torch.float32, device=device(type="cuda", index=0))
        return (linear * full,)
'''


@pytest.mark.slow
def test_item_of_a_small_tensor_without_stored_values_retries_with_it_real(tmp_path):
    """yolo's ``stride[0].item()``: the stride has no stored values; the all-meta trace fails
    with ``.item()`` on a meta tensor, the retry builds the small tensor real (its mean)."""
    s = _sample(tmp_path, "stride", model_py=STRIDE_MODEL_PY)
    (s / "weight_meta.py").write_text(WEIGHT_META + STRIDE_META)
    res = capture_sample(s)
    assert res["status"] == "ok" and len(res["graphs"]) == 1, res
