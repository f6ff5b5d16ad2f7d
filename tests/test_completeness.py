"""A capture says when it is incomplete and keeps true sizes and real
buffers. Each case is a small program with a known right answer."""

from __future__ import annotations

import pytest
import torch

from extract.capture import DYNAMO_DEFAULTS, CaptureResult, capture_row, dynamo_capture
from extract.capture.build import init_on_device, params_to_meta
from extract.runs.scheduler import completeness_fields
from extract.sources.builtin import torchvision_catalog
from extract.sources.rows import row_from_hf_config
from passnet_common.record import buffer_stats, describe_graph
from tests.conftest import TINY_CONFIGS


def _result(graphs, mode="meta"):
    return CaptureResult(graphs, mode, None, [], 0, dynamo_capture.last_completeness, DYNAMO_DEFAULTS)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, i):
        x = self.lin(x) * i
        torch._dynamo.graph_break()  # each call is its own frame, specialised on the int i
        return x + i


class TwelveCalls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        for i in range(12):
            x = self.block(x, i)
        return x


def test_recompile_limit_is_flagged_and_the_default_captures_whole():
    x = torch.randn(2, 4)
    graphs = dynamo_capture(TwelveCalls(), (x,), settings={"recompile_limit": 8})  # Dynamo's own default
    assert len(graphs) == 16  # 8 frames x 2 pieces; the 4 other calls ran eagerly
    c = dynamo_capture.last_completeness
    assert c.recompile_limit_hits >= 1 and not c.complete and "recompile limit (8)" in c.reason
    fields = completeness_fields(_result(graphs))
    assert fields["status"] == "incomplete" and fields["complete"] is False
    graphs = dynamo_capture(TwelveCalls(), (x,))  # params default: recompile_limit 64
    assert len(graphs) == 24
    assert dynamo_capture.last_completeness.recompile_limit_hits == 0


def test_graph_break_inside_try_is_visible():
    class TryBreak(torch.nn.Module):
        def forward(self, x):
            try:
                x = x + 1
                torch._dynamo.graph_break()
                x = x * 2
            finally:
                pass
            return x

    graphs = dynamo_capture(TryBreak(), (torch.randn(3),))
    c = dynamo_capture.last_completeness
    assert c.eager_frames == 1 and not c.complete
    fields = completeness_fields(_result(graphs))
    assert fields["status"] != "ok" and fields["complete"] is False
    if not graphs:
        assert fields["error_class"] == "no_graph" and "no graph captured" in fields["incomplete_reason"]


def test_module_dynamo_skips_entirely_is_a_failure_not_ok():
    class Sparse(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.register_buffer("adj", torch.eye(4).to_sparse())

        def forward(self, x):
            return torch.sparse.mm(self.adj, self.lin(x))

    graphs = dynamo_capture(Sparse(), (torch.randn(4, 4),))
    assert graphs == []
    fields = completeness_fields(_result(graphs))
    assert (fields["status"], fields["error_class"], fields["complete"]) == ("failed", "no_graph", False)
    assert "1 of 1 frame(s) ran eagerly" in fields["incomplete_reason"] and "sparse" in fields["incomplete_reason"].lower()


def test_placeholder_kinds_come_from_dynamo_sources_not_names():
    class Named(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.input_scale = torch.nn.Parameter(torch.ones(4))  # a parameter with "input" in its name
            self.register_buffer("offset", torch.zeros(4))

        def forward(self, x, extra_buffers_mask):
            return (x * self.input_scale + self.offset) * extra_buffers_mask

    graphs = dynamo_capture(Named(), (torch.randn(2, 4), torch.ones(4)))
    assert len(graphs) == 1
    rec = describe_graph(0, graphs[0], with_stats=False)
    kinds = {p["name"]: p["kind"] for p in rec["placeholders"]}
    mask = next(n for n in kinds if "extra_buffers_mask" in n)
    scale = next(n for n in kinds if "input_scale" in n)
    offset = next(n for n in kinds if "offset" in n)
    assert (kinds[mask], kinds[scale], kinds[offset]) == ("input", "parameter", "buffer")
    assert rec["param_bytes"] == 4 * 4 + 4 * 4  # scale + offset, float32; the mask is not counted
    assert rec["num_inputs"] == 2


def _wrong_fake_op():
    lib = "passnet_test"
    if not hasattr(torch.ops, lib) or not hasattr(getattr(torch.ops, lib), "first_half"):
        @torch.library.custom_op(f"{lib}::first_half", mutates_args=())
        def first_half(x: torch.Tensor) -> torch.Tensor:
            return x[: x.shape[0] // 2].clone()

        @first_half.register_fake
        def _(x):
            return x.new_empty(x.shape)  # wrong: the op returns half the rows

        @torch.library.custom_op(f"{lib}::as_long", mutates_args=())
        def as_long(x: torch.Tensor) -> torch.Tensor:
            return x.long()

        @as_long.register_fake
        def _(x):
            return x.new_empty(x.shape)  # wrong: keeps float32
    return getattr(torch.ops, lib)


def test_recorded_output_metadata_is_checked_against_execution():
    ops = _wrong_fake_op()

    class Uses(torch.nn.Module):
        def forward(self, x):
            return ops.first_half(x) + 1, ops.as_long(x)

    graphs = dynamo_capture(Uses(), (torch.randn(4),), check_outputs=True)
    assert len(graphs) == 1
    bad = graphs[0].output_mismatch
    assert "recorded [4] float32, executed [2] float32" in bad[0]
    assert "recorded [4] float32, executed [4] int64" in bad[1]
    fields = completeness_fields(_result(graphs, mode="real"))
    assert fields["status"] == "incomplete" and fields["output_mismatches"] == 1
    # a correct graph has no mismatch
    graphs = dynamo_capture(torch.nn.Linear(4, 2), (torch.randn(3, 4),), check_outputs=True)
    assert graphs[0].output_mismatch == []


def test_dynamo_settings_are_recorded_with_the_capture():
    row = row_from_hf_config(TINY_CONFIGS["tiny-llama"], "local:l", "l", "local")
    res = capture_row(row, {"seq_len": 8, "dynamo": {"recompile_limit": 32}})
    assert res.dynamo == {**DYNAMO_DEFAULTS, "recompile_limit": 32}
    assert res.completeness.complete and res.mode == "meta"
    with pytest.raises(ValueError, match="recompile_limt"):
        capture_row(row, {"dynamo": {"recompile_limt": 3}})


def test_scalar_outputs_are_traced_not_broken():
    class Item(torch.nn.Module):
        def forward(self, x):
            n = x.sum().item()
            return x * n

    assert len(dynamo_capture(Item(), (torch.randn(3),))) == 1
    assert len(dynamo_capture(Item(), (torch.randn(3),), settings={"capture_scalar_outputs": False})) == 2


def test_regnet_builds_and_captures_on_meta():
    """torchvision's RegNet computes its stage widths with torch ops at build time
    (``torch.arange(...).tolist()``), which fails under a global meta device."""
    import torchvision

    row = next(r for r in torchvision_catalog() if r["model_id"] == "torchvision:regnet_y_400mf")
    res = capture_row(row, {})
    assert res.mode == "meta" and res.fallback_reason is None and res.completeness.complete
    assert res.param_count == sum(p.numel() for p in torchvision.models.regnet_y_400mf().parameters())


def test_legacy_constructor_parameters_go_to_meta():
    class Legacy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.Tensor(256, 256))
            self.b = torch.nn.Parameter(torch.FloatTensor(64).uniform_())
            self.lin = torch.nn.Linear(8, 8)

    with init_on_device("meta"):
        m = Legacy()
    assert all(p.device.type == "meta" for p in m.parameters())
    m.c = torch.nn.Parameter(torch.ones(3))  # assigned after the build
    assert params_to_meta(m) == 1 and m.c.device.type == "meta"


def test_wav2vec2_captures_at_true_size_on_meta():
    """wav2vec2 builds ``masked_spec_embed`` with ``torch.Tensor(hidden).uniform_()``."""
    cfg = {"model_type": "wav2vec2", "architectures": ["Wav2Vec2ForCTC"], "hidden_size": 32, "num_hidden_layers": 3,
           "num_attention_heads": 2, "intermediate_size": 37, "conv_dim": [32, 32], "conv_stride": [4, 4],
           "conv_kernel": [8, 8], "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 2, "vocab_size": 32,
           "mask_time_prob": 0.05}
    row = row_from_hf_config(cfg, "local:w2v", "w2v", "local")
    res = capture_row(row, {"audio_samples": 1600})
    assert res.mode == "meta" and res.fallback_reason is None
    import transformers

    real = transformers.Wav2Vec2ForCTC(transformers.Wav2Vec2Config(**{k: v for k, v in cfg.items() if k != "architectures"}))
    assert res.param_count == sum(p.numel() for p in real.parameters())


def test_buffers_stay_real_on_meta_and_replay_exactly(tmp_path):
    """BERT's ``position_ids`` buffer: stored values, replayed as 0..n-1, not zeros."""
    from passnet_common.store import load_graph, write_graph

    row = row_from_hf_config(TINY_CONFIGS["tiny-bert"], "local:b", "b", "local")
    res = capture_row(row, {"seq_len": 8})
    assert res.mode == "meta"
    rec = describe_graph(0, res.graphs[0], with_stats=False)
    pos = next(p for p in rec["placeholders"] if p.get("buffer") == "embeddings.position_ids")
    assert pos["kind"] == "buffer" and pos["stats"]["values"] == list(range(64))
    write_graph(tmp_path, rec, res.input_spec)
    gm, inputs = load_graph(next(tmp_path.glob("*/*")))
    assert torch.equal(inputs[pos["position"]], torch.arange(64).reshape(1, 64))


def test_integer_statistics_are_exact():
    big = torch.tensor([2**63 - 1, 0, -(2**63)], dtype=torch.int64)
    s = buffer_stats(big)
    assert s["max"] == 2**63 - 1 and s["min"] == -(2**63) and s["values"] == [2**63 - 1, 0, -(2**63)]
    from passnet_common.store import synth_placeholder

    gen = torch.Generator().manual_seed(0)
    t = synth_placeholder(["T", "int64", [3]], "buffer", None, gen, "cpu", s)
    assert t.tolist() == [2**63 - 1, 0, -(2**63)]
    no_values = {k: v for k, v in s.items() if k != "values"}
    t = synth_placeholder(["T", "int64", [1000]], "buffer", None, gen, "cpu", dict(no_values, min=2**63 - 2))
    assert int(t.min()) >= 2**63 - 2
