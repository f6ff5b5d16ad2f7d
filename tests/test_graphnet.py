"""GraphNet samples (extract/graphnet.py): parse as data, capture in a child, export round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from extract.graphnet import (UnsafeSample, capture_sample, export_sample, graphnet_catalog, read_sample,
                              static_check)

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


def test_catalog_lists_samples_not_decomposed(tmp_path):
    _sample(tmp_path, "timm/m1")
    _sample(tmp_path, "timm/m1/_decomposed/m1_0")
    rows = graphnet_catalog(tmp_path)
    assert [r["model_id"] for r in rows] == ["graphnet:timm/m1"]
    assert rows[0]["source"] == "graphnet" and rows[0]["trust_remote_code"] is False


def test_export_then_import_gives_the_same_graph_hash(tmp_path):
    """Our graph, exported in GraphNet's layout and captured back, deduplicates against itself."""
    from extract.capture import describe_graph, dynamo_capture

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
