"""The GraphNet import failure kinds of the seeded subset (extract/sources/graphnet.py,
extract/sources/graphnet_source.py): tensors read as Python values vs small buffers used in ops
(yolo12n-cls, mbart: "Tensor device mismatch"), an autocast region's device-type literal
(gemma-3: "unsupported scalarType"), a Python list index on a meta tensor (falcon: "Please
convert all Tensors to FakeTensors first")."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch

from extract.sources.graphnet import _forward_args, _kind_by_name, capture_sample, read_sample
from extract.sources.graphnet_source import device_literals_to_meta, value_read_args

# GraphNet's layout (model.py is Dynamo's code; weight_meta.py one class per forward argument).
MODEL_PY = '''import torch
from torch import device


class GraphModule(torch.nn.Module):
    def forward(self, L_x_, L_self_modules_bn_buffers_running_mean_, L_self_modules_bn_buffers_running_var_,
                L_self_modules_bn_momentum, L_self_modules_bn_eps, L_self_modules_head_stride):
        l_x_ = L_x_
        l_self_modules_bn_momentum = L_self_modules_bn_momentum
        item = l_self_modules_bn_momentum.item()
        item_1 = L_self_modules_bn_eps.item()
        h = torch.nn.functional.batch_norm(l_x_, L_self_modules_bn_buffers_running_mean_,
                                           L_self_modules_bn_buffers_running_var_, None, None, False, item, item_1)
        x_31 = L_self_modules_head_stride[0]
        _local_scalar_dense = torch.ops.aten._local_scalar_dense(x_31)
        _enter_autocast = torch.amp.autocast_mode._enter_autocast("cpu", None, False, None)
        f = h.float()
        _exit_autocast = torch.amp.autocast_mode._exit_autocast(_enter_autocast)
        k = f[(Ellipsis, [-2], slice(None, None, None))]
        ones = torch.ones(1, device=device(type="cuda", index=0))
        return (k * _local_scalar_dense + ones,)
'''


def _meta(name, shape, dtype="float32", device="cuda:0", mean=None, data=None) -> str:
    return (f'class Program_weight_tensor_meta_{name}:\n    name = "{name}"\n    shape = {shape}\n'
            f'    dtype = "torch.{dtype}"\n    device = "{device}"\n    mean = {mean}\n    std = None\n    data = {data}\n')


WEIGHT_META = "\n\n".join([
    _meta("L_x_", [2, 8, 4], mean=0.0),
    _meta("L_self_modules_bn_buffers_running_mean_", [8], mean=0.0),  # 8 elements, on the device: stays meta
    _meta("L_self_modules_bn_buffers_running_var_", [8], mean=1.0),
    _meta("L_self_modules_bn_momentum", [], "float64", "cpu", mean=0.1),  # lifted scalars without stored values
    _meta("L_self_modules_bn_eps", [], "float64", "cpu", mean=0.001),
    _meta("L_self_modules_head_stride", [3], device="cuda:0", mean=18.667),  # read by _local_scalar_dense
])


def _sample(root: Path, name: str = "s", model_py: str = MODEL_PY) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "model.py").write_text(model_py)
    (d / "weight_meta.py").write_text(WEIGHT_META)
    (d / "input_meta.py").write_text("")
    (d / "graph_net.json").write_text(json.dumps({"framework": "torch", "model_name": name, "source": "test"}))
    return d


def test_value_read_args_follow_aliases_and_indexing_only():
    reads = value_read_args(ast.parse(MODEL_PY))
    # momentum through the alias, eps directly, stride through [0] into _local_scalar_dense;
    # the BatchNorm buffers and the input are used in tensor ops only
    assert reads == {"L_self_modules_bn_momentum", "L_self_modules_bn_eps", "L_self_modules_head_stride"}
    assert value_read_args(ast.parse("import torch\n")) == set()


def test_device_literals_to_meta_keeps_the_autocast_device_type():
    out = ast.unparse(device_literals_to_meta(ast.parse(MODEL_PY)))
    assert "_enter_autocast('cpu', None, False, None)" in out  # names an autocast context, no tensor
    assert "torch.ones(1, device=device(type='meta'))" in out
    out2 = ast.unparse(device_literals_to_meta(ast.parse("y = x.to('cuda:0')\nz = torch.tensor(1.0, device='cuda')\n")))
    assert "x.to('meta')" in out2 and "torch.tensor(1.0)" in out2  # a value constant stays a real CPU tensor


def test_retry_levels_make_value_reads_real_and_keep_device_buffers_meta(tmp_path):
    info = read_sample(_sample(tmp_path))
    reads = value_read_args(ast.parse(MODEL_PY))
    dev = {}
    for level in (0, 1, 2):
        args, spec, n_params = _forward_args(torch, info["tensors"], level, reads)
        dev[level] = [a.device.type for a in args]
    # order: x, running_mean, running_var, momentum, eps, stride
    assert dev[0] == ["meta"] * 6  # no stored values: all meta
    assert dev[1] == ["meta", "meta", "meta", "cpu", "cpu", "cpu"]  # only what the program reads as values
    assert dev[2] == ["meta", "cpu", "cpu", "cpu", "cpu", "cpu"]  # the old rule: every small tensor
    args, _, _ = _forward_args(torch, info["tensors"], 1, reads)
    assert args[3].item() == pytest.approx(0.1) and args[5].tolist() == pytest.approx([18.667] * 3)  # recorded mean


def _real_cpu_hash(sample: Path, buffer_values: bool) -> str:
    """graph_hash of the sample's code traced on real CPU tensors (device literals -> cpu), with
    the placeholder kinds by GraphNet's names. ``buffer_values`` False: the buffers' values unknown
    (meta example values), so every buffer enters by shape and dtype as in an import, whose example
    values are meta tensors (GraphNet records no buffer values here); True: small buffers also enter
    by their bytes (docs/canonical.md)."""
    from extract.capture import dynamo_capture
    from passnet_common.record import describe_graph

    src = (sample / "model.py").read_text().replace('device(type="cuda", index=0)', 'device(type="cpu")')
    ns: dict = {}
    exec(compile(src, "model.py", "exec"), ns)  # noqa: S102 - this test's own program
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(2, 8, 4, generator=g), torch.zeros(8), torch.ones(8), torch.tensor(0.1, dtype=torch.float64),
            torch.tensor(0.001, dtype=torch.float64), torch.tensor([8.0, 16.0, 32.0])]
    graphs = dynamo_capture(ns["GraphModule"](), tuple(args))
    assert len(graphs) == 1
    # the roles the importer reads from GraphNet's names (a running_mean is a buffer)
    graphs[0].kinds = [_kind_by_name(str(n.target)) for n in graphs[0].gm.graph.nodes if n.op == "placeholder"]
    assert "buffer" in graphs[0].kinds
    if not buffer_values:
        graphs[0].example_inputs = [a.to("meta") if k == "buffer" else a for a, k in zip(graphs[0].example_inputs, graphs[0].kinds)]
    return describe_graph(0, graphs[0], with_stats=False)["graph_hash"]


@pytest.mark.slow
def test_the_three_kinds_import_with_the_graph_of_a_real_run(tmp_path):
    """One sample with all three kinds (a device mismatch on the BatchNorm buffers, an autocast
    region's "unsupported scalarType", a list index on a meta tensor) imports with the graph_hash the
    same program gets traced on real CPU tensors whose buffer values are unknown, as in the sample;
    with the buffers' values known it is another graph (small buffers are constants of the
    computation, docs/canonical.md)."""
    s = _sample(tmp_path)
    res = capture_sample(s)
    assert res["status"] == "ok" and len(res["graphs"]) == 1, res
    assert res["graphs"][0]["graph_hash"] == _real_cpu_hash(s, buffer_values=False)
    assert res["graphs"][0]["graph_hash"] != _real_cpu_hash(s, buffer_values=True)


def test_an_unrelated_failure_is_not_retried_away(tmp_path):
    """A shape error is raised as it is (no retry hides it): the row is a failure with its message."""
    bad = MODEL_PY.replace("return (k * _local_scalar_dense + ones,)", "return (k @ torch.ones(3, 3, device=device(type=\"cuda\", index=0)),)")  # noqa: E501
    res = capture_sample(_sample(tmp_path, "bad", bad))
    assert res["status"] == "failed" and res["error_class"] == "exit:1" and "TorchRuntimeError" in res["error_message"], res
