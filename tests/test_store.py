"""Graph store: a stored graph reloads without executing stored code and computes the
same outputs as the captured graph on the same inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torchvision

from extract.capture import capture_row, dynamo_capture
from extract.sources.rows import row_from_hf_config
from passnet_common.record import describe_graph
from passnet_common.store import OP_NAMESPACE_MODULES, UnsafeTarget, load_graph, op_modules, resolve_target, store_path, write_graph
from tests.conftest import TINY_CONFIGS


def _roundtrip(tmp_path, graph, spec=None):
    rec = describe_graph(0, graph, with_stats=True)
    assert write_graph(tmp_path, rec, spec) is True
    assert write_graph(tmp_path, rec, spec) is False  # content-addressed: second write is a no-op
    folder = store_path(tmp_path, rec["graph_hash"])
    assert {p.name for p in folder.iterdir()} == {"graph.json", "model.py", "input_meta.json", "weight_meta.json"}
    return rec, folder


def _flat(out):
    return [t for t in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(t, torch.Tensor)]


def test_resnet_reload_equals_original(tmp_path):
    torch.manual_seed(0)
    g = dynamo_capture(torchvision.models.resnet18().eval(), (torch.randn(1, 3, 64, 64),))[0]
    rec, folder = _roundtrip(tmp_path, g)
    gm, synth = load_graph(folder)
    ref, got = _flat(g.gm(*g.example_inputs)), _flat(gm(*g.example_inputs))
    assert len(ref) == len(got) == 1
    torch.testing.assert_close(got[0], ref[0], rtol=0, atol=0)
    assert got[0].shape == (1, 1000)
    assert gm(*synth)[0].shape == (1, 1000)  # also runs on synthesised inputs
    weights = json.loads((folder / "weight_meta.json").read_text())["placeholders"]
    assert weights and all("stats" in w and "values" not in w for w in weights)
    assert all(p["kind"] == "input" for p in json.loads((folder / "input_meta.json").read_text())["placeholders"])


def test_llama_reload_equals_original(tmp_path):
    torch.manual_seed(0)
    row = row_from_hf_config(TINY_CONFIGS["tiny-llama"], "local:l", "l", "local")
    res = capture_row(row, {"seq_len": 8, "meta": False})
    g = res.graphs[0]
    rec, folder = _roundtrip(tmp_path, g, res.input_spec)
    gm, synth = load_graph(folder)
    ref, got = _flat(g.gm(*g.example_inputs)), _flat(gm(*g.example_inputs))
    for a, b in zip(ref, got):
        torch.testing.assert_close(b, a, rtol=0, atol=0)
    kinds = {n["position"]: n["kind"] for n in rec["nodes"] if n["op"] == "placeholder"}  # synth is in calling order
    ids = [t for p, t in enumerate(synth) if kinds[p] == "input" and t.dtype == torch.long]
    assert ids and all(int(t.max()) < 128 for t in ids)  # token ids within the recorded vocab range
    assert torch.isfinite(_flat(gm(*synth))[0]).all()


def test_loader_refuses_targets_outside_the_allowlist(tmp_path):
    assert resolve_target("torch.relu") is torch.relu
    for bad in ("os.system", "builtins.eval", "subprocess.run", "torch_evil.x"):
        with pytest.raises(UnsafeTarget):
            resolve_target(bad)
    folder = tmp_path / "ab" / "abcd"
    folder.mkdir(parents=True)
    (folder / "graph.json").write_text(json.dumps({"nodes": [
        {"op": "placeholder", "target": "placeholder", "args": ["tuple"], "kwargs": ["dict"], "meta": ["T", "float32", [2]], "inputs": [], "position": 0, "kind": "input"},  # noqa: E501
        {"op": "call_function", "target": "os.system", "args": ["tuple", "echo pwned"], "kwargs": ["dict"], "meta": None, "inputs": []},
        {"op": "output", "target": "output", "args": ["tuple", ["%", 0]], "kwargs": ["dict"], "meta": None, "inputs": [0]},
    ]}))
    with pytest.raises(UnsafeTarget, match="os.system"):
        load_graph(folder)


TINY_MIXTRAL = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "vocab_size": 128, "hidden_size": 32,
                "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 64}

_REPLAY = """
import sys, torch
from passnet_common.store import load_graph
assert "transformers.integrations.moe" not in sys.modules  # the loader must import it itself
folder, ins_path, out_path, threads = sys.argv[1:]
torch.set_num_threads(int(threads))  # the same reduction order as the reference run
gm, _ = load_graph(folder)
assert "transformers.integrations.moe" in sys.modules
out = gm(*torch.load(ins_path, weights_only=True))
torch.save([t for t in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(t, torch.Tensor)], out_path)
"""


def test_transformers_custom_op_graph_loads_and_replays_equal_to_eager(tmp_path):
    """A tiny Mixtral's MoE block calls ``torch.ops.transformers.grouped_mm_fallback``
    (registered by importing ``transformers.integrations.moe``): the stored graph reloads in
    a fresh process, where the loader imports the registering module from its trusted
    table, and replays the captured graph's outputs exactly on the captured inputs."""
    torch.manual_seed(0)
    row = row_from_hf_config(TINY_MIXTRAL, "local:mixtral", "mixtral", "local")
    res = capture_row(row, {"seq_len": 8, "meta": False})
    g = res.graphs[0]
    rec, folder = _roundtrip(tmp_path / "store", g, res.input_spec)
    targets = [n["target"] for n in rec["nodes"] if n["op"] == "call_function"]
    assert "torch.ops.transformers.grouped_mm_fallback" in targets
    assert op_modules(targets) == ["transformers.integrations.moe"]
    torch.save(list(g.example_inputs), tmp_path / "ins.pt")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _REPLAY, str(folder), str(tmp_path / "ins.pt"), str(tmp_path / "out.pt"),
                          str(torch.get_num_threads())],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = torch.load(tmp_path / "out.pt", weights_only=True)
    ref = _flat(g.gm(*g.example_inputs))
    assert len(got) == len(ref) >= 1
    for a, b in zip(ref, got):
        torch.testing.assert_close(b, a, rtol=0, atol=0)


def test_unknown_operator_namespace_is_refused(tmp_path):
    assert resolve_target("torch.ops.aten.add.Tensor") is torch.ops.aten.add.Tensor
    assert resolve_target("torch.ops.transformers.grouped_mm_fallback") is torch.ops.transformers.grouped_mm_fallback
    assert set(OP_NAMESPACE_MODULES) >= {"torchvision", "transformers"}
    if not hasattr(torch.ops.passnet_untrusted, "twice"):
        torch.library.define("passnet_untrusted::twice", "(Tensor x) -> Tensor")  # registered, but not trusted
    for bad in ("torch.ops.passnet_untrusted.twice", "torch.ops.evilns.op", "torch.ops.load_library"):
        with pytest.raises(UnsafeTarget, match="namespace"):
            resolve_target(bad)
    folder = tmp_path / "ab" / "abcd"
    folder.mkdir(parents=True)
    (folder / "graph.json").write_text(json.dumps({"nodes": [
        {"op": "placeholder", "target": "placeholder", "args": ["tuple"], "kwargs": ["dict"], "meta": ["T", "float32", [2]], "inputs": [], "position": 0, "kind": "input"},  # noqa: E501
        {"op": "call_function", "target": "torch.ops.evilns.op", "args": ["tuple", ["%", 0]], "kwargs": ["dict"], "meta": None, "inputs": [0]},  # noqa: E501
        {"op": "output", "target": "output", "args": ["tuple", ["%", 1]], "kwargs": ["dict"], "meta": None, "inputs": [1]},
    ]}))
    with pytest.raises(UnsafeTarget, match="'evilns'"):
        load_graph(folder)


def test_meta_captured_batchnorm_graph_runs_finite_on_synthesised_inputs(tmp_path):
    """Graphs captured on the meta device have no statistics: synthesised running
    variances must still be valid (positive), so batch-norm graphs give finite outputs."""
    from extract.capture import capture_row
    from extract.sources.builtin import torchvision_catalog

    row = next(r for r in torchvision_catalog() if r["model_id"] == "torchvision:resnet18")
    res = capture_row(row, {})
    assert res.mode == "meta"
    rec = describe_graph(0, res.graphs[0], with_stats=False)
    write_graph(tmp_path, rec, res.input_spec)
    gm, synth = load_graph(store_path(tmp_path, rec["graph_hash"]))
    out = _flat(gm(*synth))[0]
    assert out.shape == (1, 1000) and torch.isfinite(out).all()


def test_recorded_statistics_bound_synthesised_values():
    from passnet_common.store import synth_placeholder

    gen = torch.Generator().manual_seed(0)
    boxes = synth_placeholder(["T", "float32", [200, 4]], "input", None, gen, "cpu",
                              {"min": 0.0, "max": 320.0, "mean": 150.0, "std": 90.0})
    assert float(boxes.min()) >= 0.0 and float(boxes.max()) <= 320.0 and 100 < float(boxes.mean()) < 200
    ids = synth_placeholder(["T", "int64", [500]], "input", 1000, gen, "cpu", {"min": 3.0, "max": 7.0, "mean": 5.0, "std": 1.0})
    assert int(ids.min()) >= 3 and int(ids.max()) <= 7
    var = synth_placeholder(["T", "float32", [64]], "buffer", None, gen, "cpu")
    assert float(var.min()) > 0


def _hop_models():
    from torch.utils.checkpoint import checkpoint

    from tests.canonical_corpus import Fn

    def inplace(m, x):
        y = x * 2
        a = y.sum()
        torch.nn.functional.relu(y, inplace=True)
        z = y
        z += 1
        y.mul_(3)
        return a, y, y.sum()

    return {
        "cond": Fn(lambda m, x: torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos() * 2, (x,))),
        "checkpoint": Fn(lambda m, x: checkpoint(lambda t: torch.sigmoid(m.l(t)), x, use_reentrant=False),
                         l=torch.nn.Linear(6, 6)),
        "vmap": Fn(lambda m, x: torch.vmap(lambda r: r.sin() * 2)(x) + 1),
        "grad": Fn(lambda m, x: torch.func.grad(lambda t: t.sin().sum())(x) + 1),
        "inplace": Fn(inplace),
    }


@pytest.mark.parametrize("name", ["cond", "checkpoint", "vmap", "grad", "inplace"])
def test_higher_order_and_inplace_graphs_reload_and_replay_eager(tmp_path, name):
    """Graphs with sub-GraphModules (cond, checkpoint), functorch level switches (vmap,
    grad) and in-place ops are stored, reload, and replay eager's result exactly."""
    torch.manual_seed(0)
    model = _hop_models()[name]
    x = torch.randn(4, 6)
    with torch.no_grad():
        ref = _flat(model(x.clone()))
    g = dynamo_capture(model, (x.clone(),))[0]
    rec, folder = _roundtrip(tmp_path, g)
    data = json.loads((folder / "graph.json").read_text())
    if name in ("cond", "checkpoint"):
        assert data["subgraphs"] and all(s["nodes"] for s in data["subgraphs"])
    assert sorted(data["placeholder_permutation"]) == list(range(len(g.example_inputs)))
    gm, synth = load_graph(folder)
    with torch.no_grad():
        got = _flat(gm(*[t.clone() for t in g.example_inputs]))
    assert len(got) == len(ref)
    for a, b in zip(ref, got):
        torch.testing.assert_close(b, a, rtol=0, atol=0)


class _NumpyForward(torch.nn.Module):
    """A forward through numpy (as some transformers models compute a scale or a mask): Dynamo records
    its wrappers of a numpy function, an ndarray method and an ndarray operator as call targets."""

    def forward(self, x):
        import numpy as np

        a = x.numpy()
        b = np.sqrt(np.abs(a)) + (a // 2) - a.sum(axis=0)
        return torch.from_numpy(b) * x


def test_dynamo_numpy_wrapper_graph_reloads_rehashes_and_replays_eager(tmp_path):
    """Dynamo's numpy wrappers (``torch._dynamo.utils.wrapped_sqrt`` and the like: objects whose dotted
    name resolves to nothing, one name for a wrapped function, method or operator) are stored with what
    they wrap; the stored graph reloads, replays the captured graph's values exactly (eager's to float32
    rounding: eager ran numpy's kernels) and re-hashes to the hash it is
    filed under; the compiled path and the Python definition store the same node list."""
    from curate.decompose.segments import build_parent
    from passnet_common.canonical import canonicalize, compiled
    from passnet_common.canonical.compiled import python_only

    torch.manual_seed(0)
    x = torch.randn(3, 4)
    model = _NumpyForward()
    ref = model(x.clone())
    g = dynamo_capture(model, (x.clone(),))[0]
    rec, folder = _roundtrip(tmp_path, g)
    data = json.loads((folder / "graph.json").read_text())
    wraps = sorted(tuple(n["wraps"]) for n in data["nodes"] if "wraps" in n)
    assert wraps == sorted([("numpy_function", "torch._numpy._ufuncs.absolute"), ("numpy_function", "torch._numpy._ufuncs.sqrt"),
                            ("numpy_operator", "_operator.floordiv"), ("numpy_operator", "_operator.add"),
                            ("numpy_operator", "_operator.sub"), ("numpy_method", "sum")])
    assert all(n["target"].startswith("torch._dynamo.utils.wrapped_") for n in data["nodes"] if "wraps" in n)
    gm, _ = load_graph(folder)
    got = _flat(gm(x.clone()))
    assert len(got) == 1
    torch.testing.assert_close(got[0], _flat(g.gm(x.clone()))[0], rtol=0, atol=0)  # the captured graph exactly
    torch.testing.assert_close(got[0], ref)  # eager ran numpy's float32 kernels, the graph torch._numpy's
    graph, _ = build_parent(data["nodes"])  # with the stored output metadata, as the store check rebuilds
    kinds = [n.get("kind", "input") for n in data["nodes"] if n["op"] == "placeholder"]
    assert canonicalize(torch.fx.GraphModule(torch.nn.Module(), graph), kinds).graph_hash == rec["graph_hash"]
    if compiled.cform is not None:
        with python_only():
            plain = canonicalize(g.gm, g.kinds, placeholder_values=g.example_inputs)
        assert plain.nodes == canonicalize(g.gm, g.kinds, placeholder_values=g.example_inputs).nodes


@pytest.mark.parametrize("wraps", [["numpy_function", "os.system"], ["numpy_function", "torch._numpy.nothing_here"],
                                   ["numpy_method", "__class__"], ["numpy_method", "a.b"],
                                   ["numpy_operator", "builtins.eval"], ["eval", "operator.add"], "torch.add", None])
def test_loader_refuses_wraps_outside_torch_numpy_and_operator(tmp_path, wraps):
    """A stored ``wraps`` rebuilds only Dynamo's own wrapper classes around ``torch._numpy`` functions,
    public ndarray method names and ``operator`` functions; anything else is refused before any call."""
    from passnet_common.store import call_target

    node = {"op": "call_function", "target": "torch._dynamo.utils.wrapped_sqrt", "wraps": wraps}
    with pytest.raises(UnsafeTarget):
        call_target(node)


_PH = {"op": "placeholder", "target": "placeholder", "args": ["tuple"], "kwargs": ["dict"], "meta": ["T", "float32", [2]],
       "inputs": [], "position": 0, "kind": "input"}


def _crafted(tmp_path, calls: list[dict]) -> Path:
    """A store folder whose graph.json holds one placeholder, ``calls`` and an output of the last call."""
    folder = tmp_path / "ab" / "abcd"
    folder.mkdir(parents=True)
    out = {"op": "output", "target": "output", "args": ["tuple", ["%", len(calls)]], "kwargs": ["dict"], "meta": None,
           "inputs": []}
    (folder / "graph.json").write_text(json.dumps({"nodes": [_PH, *calls, out]}))
    return folder


def _call(target, *args, op="call_function"):
    return {"op": op, "target": target, "args": ["tuple", *args], "kwargs": ["dict"], "meta": ["T", "float32", [2]],
            "inputs": []}


@pytest.mark.parametrize("calls, match", [
    ([_call("torch.load", "/tmp/x.pt")], "'load' is refused"),  # unpickles a file
    ([_call("torch.save", ["%", 0], "/tmp/x.pt")], "'save' is refused"),  # writes a file
    ([_call("torch.hub.load", "/tmp/repo", "m")], "'hub' is refused"),  # runs a hubconf.py
    ([_call("torch.serialization.load", "/tmp/x.pt")], "refused"),
    ([_call("torch._C._jit_pass_inline", ["%", 0])], "'_jit_pass_inline' is refused"),
    ([_call("torch.utils.model_zoo.load_url", "http://x")], "refused"),
    ([_call("torch.add", ["fn", "torch.load"], 1)], "'load' is refused"),  # as a function argument too
    ([_call("torch.nn.functional.torch", ["%", 0])], "is a module"),  # a module reached through an import
    # a method called on a stored constant instead of a graph value: torch.relu's module's load
    ([_call("load", ["fn", "torch.relu"], "/tmp/x.pt", op="call_method")], "not on a value of the graph"),
    # a function's globals lead to its module: getattr of a private name
    ([_call("builtins.getattr", ["fn", "torch.nn.functional.relu"], "__globals__")], "only literal public names"),
    ([_call("builtins.getattr", ["%", 0], ["%", 0])], "only literal public names"),
    # modules torch imports, reached by attribute: os, builtins, importlib, ctypes
    ([_call("torch.os.system", "touch /tmp/x")], "is a module"),
    ([_call("torch.builtins.exec", "print(1)")], "is a module"),
    ([_call("torch.importlib.__import__", "os")], "dunder"),
    ([_call("torch._dynamo.utils.os.system", "touch /tmp/x")], "is a module"),
    ([_call("torch.ctypes.CDLL", None)], "is a module"),
    # torch's own helpers that run processes or code, or write files
    ([_call("torch.utils.collect_env.run", "touch /tmp/x")], "is a module"),
    ([_call("torch.fx.graph_module._exec_with_source", "print(1)", ["dict"])], "private or refused"),
    ([_call("torch._C.PyTorchFileWriter", "/tmp/x")], "is a module"),
    ([_call("torch.nn.functional.Optional", ["%", 0])], "outside torch"),  # typing, re-exported
    # operator's callables that reach attributes or call their argument
    ([_call("operator.attrgetter", "__class__")], "only operator's plain functions"),
    ([_call("operator.methodcaller", "system", "x")], "only operator's plain functions"),
    ([_call("operator.call", ["%", 0])], "only operator's plain functions"),
    # methods that reach attributes, storages, files or numpy
    ([_call("__getattribute__", ["%", 0], "__class__", op="call_method")], "not a tensor method"),
    ([_call("untyped_storage", ["%", 0], op="call_method")], "not a tensor method"),
    ([_call("numpy", ["%", 0], op="call_method")], "not a tensor method"),
    ([_call('relu"),exec("1"),getattr(arg0,"relu', ["%", 0], op="call_method")], "not a tensor method"),
    # names FX writes into the source it generates
    ([{**_call("torch.relu", ["%", 0]), "kwargs": ["dict", ["**{})\nimport os\nos.system('x')\ndict(y", 1]]}],
     "not an identifier"),
    ([_call("torch.add", ["%", 0], ["dtype", "os"])], "names no torch dtype"),
    # a second attack: torch-namespace file writers, setters that import by name, HOPs and ops without checks
    ([_call("torch.PyTorchFileWriter", "/tmp/x")], "C\\+\\+ binding class"),
    ([_call("torch.set_default_tensor_type", "this")], "global setters"),  # __import__("this")
    ([_call("torch.get_file_path", "x.pth")], "'get_file_path' is refused"),  # site-packages paths
    ([_call("torch.ops.higher_order.print", "{0.__call__}", ["%", 0])], "'print' is refused"),  # str.format walks
    ([_call("torch.ops.inductor._alloc_from_pool.default", ["%", 0], 1 << 40, ["dtype", "float32"], ["list", 4],
            ["list", 1])], "'inductor' is refused"),  # no bounds check
    ([_call("type", ["%", 0], "this", op="call_method")], "torch imports the module it names"),
    ([_call("builtins.getattr", ["%", 0], "type")], "data attributes"),  # a bound method as a value
])
def test_loader_refuses_calls_that_reach_past_the_allowlist(tmp_path, calls, match):
    """Names under an allowed prefix that read or write files, load code or hand out modules, methods
    called on stored constants and getattr of private names are refused when a stored graph is rebuilt,
    by the loader and by the segment builder the profile uses; nothing of the graph runs."""
    from curate.decompose.segments import build_parent
    from curate.select import task_runner

    folder = _crafted(tmp_path, calls)
    (folder / "input_meta.json").write_text(json.dumps({"placeholders": [], "int_high": None}))
    (folder / "weight_meta.json").write_text(json.dumps({"placeholders": []}))
    with pytest.raises(ValueError, match=match):  # UnsafeTarget is a ValueError
        load_graph(folder)
    with pytest.raises(ValueError, match=match):
        build_parent(json.loads((folder / "graph.json").read_text())["nodes"])
    with pytest.raises(ValueError, match=match):  # the task folders' runner: the same policy
        task_runner.load(folder)


@pytest.mark.parametrize("value", ["0='''\r):pass\rimport os\rdef _f():", -1, True])
def test_loader_refuses_placeholder_positions_that_are_not_ints(tmp_path, value):
    """A placeholder's position becomes the argument name ``arg<position>`` in the source FX generates and
    runs while the module is built: only a non-negative int is taken."""
    folder = _crafted(tmp_path, [_call("torch.relu", ["%", 0])])
    data = json.loads((folder / "graph.json").read_text())
    data["nodes"][0]["position"] = value
    (folder / "graph.json").write_text(json.dumps(data))
    with pytest.raises(UnsafeTarget, match="not a non-negative int"):
        load_graph(folder)


def test_every_target_the_census_calls_passes_the_policy():
    """No false refusal on real graphs: every call target and method name that the committed census
    shards' graphs call (their ``nodes`` tables) passes the loader's policy; Dynamo's numpy wrappers go
    through their ``wraps`` (the wrapper test above)."""
    import duckdb

    from passnet_common.store import tensor_method_ok

    tables = str(Path(__file__).parents[1] / "data_full" / "census" / "*" / "tables" / "nodes.parquet")
    rows = duckdb.connect().execute(
        f"select distinct op, target from '{tables}' where op in ('call_function', 'call_method')").fetchall()
    functions = [t for op, t in rows if op == "call_function" and not t.startswith("torch._dynamo.utils.wrapped_")]
    methods = [t for op, t in rows if op == "call_method"]
    assert len(functions) >= 200 and len(methods) >= 100  # thousands of graphs of the census
    refused = []
    for t in functions:
        try:
            resolve_target(t)
        except UnsafeTarget as exc:
            refused.append(str(exc))
    assert refused == []
    assert [m for m in methods if not tensor_method_ok(m)] == []


def test_loader_keeps_public_getattr_and_methods_on_graph_values(tmp_path):
    """What real graphs call stays loadable: ``getattr(z, "real")`` of a complex value (the census's only
    getattr) and a method on a graph value."""
    folder = _crafted(tmp_path, [_call("reshape", ["%", 0], 1, 2, op="call_method"),
                                 _call("torch.view_as_complex", ["%", 1]), _call("builtins.getattr", ["%", 2], "real")])
    gm, _ = load_graph(folder)
    x = torch.tensor([3.0, 4.0])
    torch.testing.assert_close(gm(x), x[:1])
