"""Capture of real architectures with the Dynamo backend: graph breaks, meta device,
fallback, input synthesis."""

from __future__ import annotations

import json

import pytest
import torch

from extract.capture import capture_row, dynamo_capture
from extract.capture.build import reduce_depth
from extract.sources.builtin import torchvision_catalog
from extract.sources.local import local_catalog
from extract.sources.rows import row_from_hf_config
from passnet_common.record import describe_graph
from tests.conftest import TINY_CONFIGS


def _targets(gm):
    return {str(n.target) for n in gm.graph.nodes if n.op in ("call_function", "call_method")}


def _row(name):
    return row_from_hf_config(TINY_CONFIGS[name], f"local:{name}", name, "local")


CAPTURE = {"batch_size": 1, "seq_len": 8}


def test_graph_break_keeps_every_piece():
    class Breaks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x):
            x = torch.relu(self.a(x))
            torch._dynamo.graph_break()
            return torch.sigmoid(self.b(x))

    graphs = dynamo_capture(Breaks(), (torch.randn(2, 4),))
    assert len(graphs) == 2
    first, second = (_targets(g.gm) for g in graphs)
    assert any("relu" in t for t in first) and not any("sigmoid" in t for t in first)
    assert any("sigmoid" in t for t in second)
    assert graphs[0].break_reason is not None and graphs[1].break_reason is None
    assert graphs[0].kinds.count("parameter") == 2 and graphs[1].kinds.count("parameter") == 2


def test_llama_captures_on_meta_device_with_sdpa_and_true_parameter_count():
    row = _row("tiny-llama")
    res = capture_row(row, CAPTURE)
    assert res.mode == "meta" and res.fallback_reason is None
    assert len(res.graphs) == 1
    g = res.graphs[0]
    assert any("scaled_dot_product_attention" in t for t in _targets(g.gm))
    assert all(t.device.type == "meta" for t in g.example_inputs if isinstance(t, torch.Tensor))
    cfg = TINY_CONFIGS["tiny-llama"]
    h, i, v, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    kv = h // cfg["num_attention_heads"] * cfg["num_key_value_heads"]
    per_layer = h * h * 2 + h * kv * 2 + 3 * h * i + 2 * h
    assert res.param_count == v * h * 2 + layers * per_layer + h  # embed + lm_head + layers + final norm
    assert {s["name"] for s in res.input_spec} == {"input_ids", "attention_mask"}
    ids = next(s for s in res.input_spec if s["name"] == "input_ids")
    assert ids["shape"] == [1, 8] and ids["high"] == 128


@pytest.mark.parametrize("name,expect", [("tiny-bert", "embedding"), ("tiny-gpt2", "addmm")])
def test_other_text_architectures_capture(name, expect):
    res = capture_row(_row(name), CAPTURE)
    rec = describe_graph(0, res.graphs[0], with_stats=False)
    assert any(expect in n["target"] for n in rec["nodes"])
    assert rec["num_params"] > 0 and rec["num_inputs"] >= 1
    def nbytes(p):
        n = 1
        for d in p["shape"]:
            n *= d
        return n * torch.empty(0, dtype=getattr(torch, p["dtype"])).element_size()

    assert rec["param_bytes"] == sum(nbytes(p) for p in rec["placeholders"] if p["kind"] != "input")


def test_torchvision_resnet18_on_meta_matches_real_param_count():
    row = next(r for r in torchvision_catalog() if r["model_id"] == "torchvision:resnet18")
    res = capture_row(row, CAPTURE)
    assert res.mode == "meta"
    import torchvision

    assert res.param_count == sum(p.numel() for p in torchvision.models.resnet18().parameters())
    assert any("conv2d" in t for t in _targets(res.graphs[0].gm))


def test_full_size_config_traces_without_allocating_weights():
    """A 7B-class llama width (hidden 4096, vocab 32000) at 2 layers: all on meta."""
    cfg = dict(TINY_CONFIGS["tiny-llama"], hidden_size=4096, intermediate_size=11008, vocab_size=32000,
               num_attention_heads=32, num_key_value_heads=32, num_hidden_layers=2)
    res = capture_row(row_from_hf_config(cfg, "local:big", "big", "local"), CAPTURE)
    assert res.mode == "meta"
    assert res.param_count > 600_000_000
    assert all(t.device.type == "meta" for t in res.graphs[0].example_inputs if isinstance(t, torch.Tensor))


def test_meta_failure_falls_back_to_reduced_depth_real_tensors(monkeypatch):
    import extract.capture.dynamo as cap  # the backend that every capture path calls

    real = cap.dynamo_capture

    def meta_fails(model, args=(), kwargs=None, **kw):
        if any(p.device.type == "meta" for p in model.parameters()):
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return real(model, args, kwargs, **kw)

    monkeypatch.setattr(cap, "dynamo_capture", meta_fails)
    cfg = dict(TINY_CONFIGS["tiny-llama"], num_hidden_layers=6)
    res = capture_row(row_from_hf_config(cfg, "local:deep", "deep", "local"), dict(CAPTURE, fallback_layers=2))
    assert res.mode == "real_reduced"
    assert "item() cannot be called on meta" in res.fallback_reason
    layer_norms = [n for n in res.graphs[0].gm.graph.nodes if n.op == "placeholder" and "post_attention_layernorm" in n.name]
    assert len(layer_norms) == 2  # depth reduced from 6 to 2
    rec = describe_graph(0, res.graphs[0], with_stats=True)
    ids = next(p for p in rec["placeholders"] if p["kind"] == "input" and p["dtype"] == "int64")
    assert ids["stats"] is not None and 0 <= ids["stats"]["min"] <= ids["stats"]["max"] < 128


def test_reduce_depth_caps_nested_counts_and_per_layer_lists():
    cfg = {"num_hidden_layers": 24, "layer_types": ["a"] * 24, "text_config": {"num_hidden_layers": 12}, "encoder_layers": 1}
    out = reduce_depth(cfg, 2)
    assert out["num_hidden_layers"] == 2 and out["layer_types"] == ["a", "a"]
    assert out["text_config"]["num_hidden_layers"] == 2 and out["encoder_layers"] == 1
    assert cfg["num_hidden_layers"] == 24  # input untouched


def test_trust_remote_code_configs_are_refused(tmp_path):
    (tmp_path / "custom").mkdir()
    (tmp_path / "custom" / "config.json").write_text(json.dumps(
        {"model_type": "llama", "auto_map": {"AutoModel": "modeling_evil.Evil"}}))
    row = local_catalog(tmp_path)[0]
    assert row["trust_remote_code"] is True
    from extract.capture.build import TrustRemoteCodeRefused

    with pytest.raises(TrustRemoteCodeRefused):
        capture_row(row, CAPTURE)


@pytest.mark.slow
def test_full_size_default_configs_capture_on_meta():
    """transformers' default Mixtral (8x7B) and Llama configs, full size, on meta: the
    parameter count equals the published figure / the analytical count of the config."""
    from extract.sources.builtin import transformers_catalog

    rows = {r["model_id"]: r for r in transformers_catalog()}
    mixtral = capture_row(rows["transformers:MixtralForCausalLM"], {"seq_len": 32})
    assert mixtral.mode == "meta" and mixtral.param_count == 46_702_792_704  # Mixtral-8x7B: 46.7B
    row = rows["transformers:LlamaForCausalLM"]
    llama = capture_row(row, {"seq_len": 32})
    c = json.loads(row["config_json"])
    h, i, v, n = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_hidden_layers"]
    kv = h // c["num_attention_heads"] * c["num_key_value_heads"]
    expected = v * h * (1 if c.get("tie_word_embeddings") else 2) + n * (2 * h * h + 2 * h * kv + 3 * h * i + 2 * h) + h
    assert llama.mode == "meta" and llama.param_count == expected
    assert all(len(r.graphs[0].gm.graph.nodes) > 2000 for r in (mixtral, llama))
