"""Coverage of the seeded transformers sample: config repairs stated
in the row, input rules, and the retry rule for failed runtime assertions on
data-dependent sizes (the ``torchvision:retinanet_resnet50_fpn`` regression). Each case
is a small offline program or a default config built on the meta device."""

from __future__ import annotations

import json

import pytest
import torch

from extract.capture import DYNAMO_DEFAULTS
from extract.capture.build import build_model
from extract.capture.retry import capture_with_retry, is_runtime_assert_failure
from extract.sources.repairs import repair_config
from tests.hf_rows import default_row

# --- runtime assertions on data-dependent sizes ---------------------------------------

class KeepAfterNms(torch.nn.Module):
    """The tail of a detection head: the boxes NMS keeps (a data-dependent count)."""

    def forward(self, boxes, scores):
        import torchvision

        keep = torchvision.ops.nms(boxes, scores, 0.5)
        return boxes[keep] * 2.0


def test_failed_runtime_assert_retries_without_dynamic_output_shape_ops():
    # two identical boxes and a near copy: NMS keeps one box, fewer than the traced graph asserts
    boxes = torch.tensor([[0., 0., 10., 10.], [0., 0., 10., 10.], [1., 1., 10., 10.]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    eager = KeepAfterNms()(boxes, scores)
    assert eager.shape == (1, 4)
    from extract.capture import dynamo_capture

    with pytest.raises(RuntimeError) as info:
        dynamo_capture(KeepAfterNms(), (boxes, scores))  # the default settings fail on this input
    assert is_runtime_assert_failure(info.value)
    graphs, used = capture_with_retry(KeepAfterNms(), (boxes, scores), {}, dict(DYNAMO_DEFAULTS))
    assert used["capture_dynamic_output_shape_ops"] is False
    assert used["retry"]["changed"] == {"capture_dynamic_output_shape_ops": False}
    assert "Runtime assertion failed" in used["retry"]["reason"]
    assert {k: used[k] for k in DYNAMO_DEFAULTS} == {**DYNAMO_DEFAULTS, "capture_dynamic_output_shape_ops": False}
    assert len(graphs) >= 1


def test_no_retry_when_the_capture_succeeds_or_fails_otherwise():
    boxes = torch.tensor([[0., 0., 10., 10.], [20., 20., 30., 30.], [40., 40., 50., 50.]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    graphs, used = capture_with_retry(KeepAfterNms(), (boxes, scores), {}, dict(DYNAMO_DEFAULTS))
    assert used == DYNAMO_DEFAULTS and graphs  # three disjoint boxes are all kept: no retry

    class Broken(torch.nn.Module):
        def forward(self, x):
            raise ValueError("not a runtime assertion")

    with pytest.raises(ValueError):
        capture_with_retry(Broken(), (torch.ones(2),), {}, dict(DYNAMO_DEFAULTS))
    assert not is_runtime_assert_failure(ValueError("x"))
    assert is_runtime_assert_failure(RuntimeError("Runtime assertion failed for expression u0 >= 2 on node 'ge'"))


def test_retry_is_recorded_in_the_capture_result(monkeypatch):
    from extract.capture import capture_row
    from extract.capture import dynamo as cap

    calls = []

    def fake(model, args=(), kwargs=None, settings=None, **kw):
        calls.append(dict(settings))
        if settings["capture_dynamic_output_shape_ops"]:
            raise RuntimeError("Runtime assertion failed for expression u0 >= 2 on node 'ge'")
        return []

    fake.last_completeness = None
    monkeypatch.setattr(cap, "dynamo_capture", fake)
    res = capture_row({"model_id": "local:tiny", "library": "transformers", "architecture": "LlamaForCausalLM",
                           "config_json": json.dumps({"model_type": "llama", "vocab_size": 64, "hidden_size": 16,
                                                      "intermediate_size": 32, "num_hidden_layers": 1,
                                                      "num_attention_heads": 2, "max_position_embeddings": 32})},
                          {"seq_len": 4})
    assert res.mode == "meta" and [c["capture_dynamic_output_shape_ops"] for c in calls] == [True, False]
    assert res.dynamo["retry"]["changed"] == {"capture_dynamic_output_shape_ops": False}


class ReshapeByGrid(torch.nn.Module):
    """A size read from an input tensor's values (``grid.tolist()``, as Qwen2/3-VL's M-RoPE
    position ids are computed from ``image_grid_thw``) that Python control flow then needs."""

    def forward(self, x, grid):
        rows = grid.tolist()[0]
        if rows % 2:  # a branch on the value: Dynamo cannot guard on an unbacked symbol
            return x.reshape(rows, -1).sum(1)
        return x.reshape(-1, rows).sum(0)


def test_data_dependent_guard_steps_down_the_retry_ladder():
    from extract.capture import dynamo_capture
    from extract.capture.retry import is_data_dependent_failure

    x, grid = torch.arange(12.0), torch.tensor([3])
    assert torch.equal(ReshapeByGrid()(x, grid), torch.tensor([6.0, 22.0, 38.0]))
    with pytest.raises(Exception) as info:
        dynamo_capture(ReshapeByGrid(), (x, grid))  # tolist() traced as symbols: the reshape cannot guard
    assert is_data_dependent_failure(info.value) and not is_runtime_assert_failure(info.value)
    graphs, used = capture_with_retry(ReshapeByGrid(), (x, grid), {}, dict(DYNAMO_DEFAULTS))
    # the first step (dynamic-output ops off) does not help; the second breaks at tolist()
    assert used["retry"]["changed"] == {"capture_dynamic_output_shape_ops": False, "capture_scalar_outputs": False}
    assert len(used["retry"]["reasons"]) == 2
    assert {k: used[k] for k in DYNAMO_DEFAULTS} == {**DYNAMO_DEFAULTS, "capture_dynamic_output_shape_ops": False,
                                                     "capture_scalar_outputs": False}
    # tolist() runs eagerly; the graph after the break takes x alone (rows is a constant)
    assert len(graphs) == 1 and graphs[0].kinds == ["input"]
    assert torch.equal(graphs[0].gm(x)[0], torch.tensor([6.0, 22.0, 38.0]))
    assert not is_data_dependent_failure(ValueError("x"))


class MergeSizeConstant(torch.nn.Module):
    """``torch.tensor([...], device=x.device)`` combined with an input (the vision towers of
    Qwen3.5 / Cosmos3 build ``torch.tensor([merge_size], device=grid.device)``)."""

    def forward(self, x):
        return x * torch.tensor([2.0], device=x.device).expand(x.shape[0])


def test_meta_tensor_constants_make_torch_tensor_on_meta_traceable():
    from extract.capture import dynamo_capture
    from extract.capture.build import meta_tensor_constants

    x = torch.empty(4, device="meta")
    orig = torch.tensor
    with pytest.raises(Exception, match="convert all Tensors to FakeTensors"):
        dynamo_capture(MergeSizeConstant(), (x,))  # PyTorch: torch.tensor(device=meta) is not fake
    with meta_tensor_constants():
        assert torch.tensor is not orig
        graphs = dynamo_capture(MergeSizeConstant(), (x,))
    assert len(graphs) == 1
    assert torch.tensor is orig  # the patch is undone
    real = dynamo_capture(MergeSizeConstant(), (torch.ones(4),))
    assert len(real) == 1 and torch.equal(real[0].gm(torch.ones(4))[0], torch.full((4,), 2.0))


class PositiveEntries(torch.nn.Module):
    """A data-dependent ``nonzero`` inside the graph (MoE expert dispatch, X-MOD's adapters)."""

    def forward(self, x):
        return x[x > 0] * 2.0


def test_meta_capture_runs_a_graph_with_nonzero_on_meta_inputs():
    from extract.capture import dynamo_capture
    from extract.capture.retry import meta_capture

    x = torch.empty(6, device="meta")
    with pytest.raises(Exception, match="meta_nonzero_assume_all_nonzero"):
        dynamo_capture(PositiveEntries(), (x,))  # the traced graph runs on the meta input
    graphs, used = meta_capture(PositiveEntries(), (x,), {}, dict(DYNAMO_DEFAULTS))
    assert len(graphs) == 1 and "retry" not in used
    # the boolean mask select is traced (its size an unbacked symbol), not broken out
    ops = [str(n.target) for n in graphs[0].gm.graph.nodes if n.op == "call_function"]
    assert "<built-in function getitem>" in ops and "aten.sym_size.int" in ops
    import torch.fx.experimental._config as fx_config

    assert fx_config.meta_nonzero_assume_all_nonzero is False  # restored


def test_meta_capture_retries_once_with_transformers_checks_off(monkeypatch):
    import os

    from extract.capture import retry as cap

    seen = []

    def fake(model, args, kwargs, settings, **kw):
        seen.append(os.environ.get("TRANSFORMERS_DISABLE_TORCH_CHECK"))
        if seen[-1] != "1":  # a check formats a meta tensor into its message after a graph break
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return [], dict(settings)

    monkeypatch.delenv("TRANSFORMERS_DISABLE_TORCH_CHECK", raising=False)
    monkeypatch.setattr(cap, "capture_with_retry", fake)
    graphs, used = cap.meta_capture(None, (), {}, dict(DYNAMO_DEFAULTS))
    assert seen == [None, "1"]
    assert used["meta_retry"] == {"transformers_torch_checks": False,
                                  "reason": "Tensor.item() cannot be called on meta tensors"}
    assert "TRANSFORMERS_DISABLE_TORCH_CHECK" not in os.environ  # only for the retry

    def other(model, args, kwargs, settings, **kw):
        raise ValueError("another fault")

    monkeypatch.setattr(cap, "capture_with_retry", other)
    with pytest.raises(ValueError):
        cap.meta_capture(None, (), {}, dict(DYNAMO_DEFAULTS))  # not a meta-value failure: no retry


# --- config repairs -------------------------------------------------------------------

def test_vision_tower_heads_repair_uses_nearest_divisor_and_is_stated():
    cfg = {"model_type": "aya_vision", "vision_config": {"hidden_size": 1152, "num_attention_heads": 14},
           "text_config": {"hidden_size": 4096, "num_attention_heads": 96}}
    fixed, notes = repair_config(cfg)
    assert fixed["vision_config"]["num_attention_heads"] == 16  # 1152 = 16 x 72 (SigLIP-so400m)
    assert fixed["text_config"]["num_attention_heads"] == 96  # text heads may be sized on their own
    assert cfg["vision_config"]["num_attention_heads"] == 14  # the input is not modified
    assert len(notes) == 1 and "vision_config.num_attention_heads 14 -> 16" in notes[0]
    # a tower with an explicit head_dim is left alone
    keep = {"vision_config": {"hidden_size": 1152, "num_attention_heads": 14, "head_dim": 64}}
    assert repair_config(keep) == (keep, [])


def test_none_sizes_are_filled_and_stated():
    fixed, notes = repair_config({"model_type": "x", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": None,
                                  "num_key_value_heads": None, "languages": ["en_XX", "de_DE"],
                                  "default_language": None})
    assert (fixed["head_dim"], fixed["num_key_value_heads"], fixed["default_language"]) == (128, 32, "en_XX")
    assert len(notes) == 3
    fixed, notes = repair_config({"model_type": "dbrx", "rope_parameters": {"rope_theta": 500000.0},
                                  "attn_config": {"kv_n_heads": 8}})
    assert fixed["attn_config"]["rope_theta"] == 500000.0 and "attn_config.rope_theta" in notes[0]
    fixed, notes = repair_config({"model_type": "esm", "vocab_size": None, "pad_token_id": None})
    assert (fixed["vocab_size"], fixed["pad_token_id"]) == (33, 1) and "facebook/esm2_t6_8M_UR50D" in notes[0]
    assert "mask_token_id" not in fixed  # only keys the config has are filled
    # set values are never replaced
    assert repair_config({"model_type": "esm", "vocab_size": 64}) == ({"model_type": "esm", "vocab_size": 64}, [])


@pytest.mark.parametrize("model_type,arch", [
    ("dbrx", "DbrxForCausalLM"),             # attn_config.rope_theta
    ("esm", "EsmForSequenceClassification"),  # vocab_size None
    ("hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM"),  # head_dim None
    ("nemotron", "NemotronForQuestionAnswering"),  # num_key_value_heads None
])
def test_repaired_default_configs_build_on_meta(model_type, arch):
    row = default_row(model_type, arch)
    assert row["catalog_note"]
    model, _, kwargs, _ = build_model(row, "meta", {"seq_len": 8})
    assert sum(p.numel() for p in model.parameters()) > 0 and "input_ids" in kwargs


# --- input rules ----------------------------------------------------------------------

def test_pix2struct_flattened_patches_carry_row_and_column_ids():
    _, _, kwargs, spec = build_model(default_row("pix2struct", "Pix2StructForConditionalGeneration"), "meta",
                                     {"seq_len": 8})
    shapes = {s["name"]: s["shape"] for s in spec}
    assert shapes["flattened_patches"] == [1, 256, 2 + 768] and shapes["decoder_input_ids"] == [1, 8]
    from transformers import Pix2StructConfig

    from extract.capture.inputs import hf_inputs

    cfg = Pix2StructConfig(vision_config={"hidden_size": 32, "patch_embed_hidden_size": 12, "num_hidden_layers": 1,
                                          "num_attention_heads": 2, "d_ff": 16, "d_kv": 16},
                           text_config={"hidden_size": 32, "num_layers": 1, "num_heads": 2, "d_ff": 16, "d_kv": 16,
                                        "vocab_size": 50})
    import transformers

    model = transformers.Pix2StructForConditionalGeneration(cfg).eval()
    kw, _ = hf_inputs(model, cfg, {"seq_len": 4}, "cpu")
    fp = kw["flattened_patches"]
    assert fp[0, :3, 0].tolist() == [1.0, 1.0, 1.0] and fp[0, :3, 1].tolist() == [1.0, 2.0, 3.0]
    assert fp[0, 16, 0].item() == 2.0 and fp[0, 16, 1].item() == 1.0
    with torch.no_grad():
        out = model(**kw)
    assert out.logits.shape == (1, 4, 50)


def test_longformer_qa_gets_a_global_first_token():
    import transformers

    from extract.capture.inputs import hf_inputs

    cfg = transformers.LongformerConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                        intermediate_size=32, attention_window=[4], max_position_embeddings=64)
    model = transformers.LongformerForQuestionAnswering(cfg).eval()
    kw, spec = hf_inputs(model, cfg, {"seq_len": 8}, "cpu")
    assert kw["global_attention_mask"].tolist() == [[1, 0, 0, 0, 0, 0, 0, 0]]
    with torch.no_grad():
        out = model(**kw)  # without it the head looks for question separators and asserts
    assert out.start_logits.shape == (1, 8)
    base = transformers.LongformerModel(cfg).eval()
    assert "global_attention_mask" not in hf_inputs(base, cfg, {"seq_len": 8}, "cpu")[0]


@pytest.mark.parametrize("model_type,arch,expect", [
    ("dac", "DacModel", {"input_values": [1, 1, 15872]}),  # 16000 samples rounded to hop 512
    ("vibevoice_acoustic_tokenizer", "VibeVoiceAcousticTokenizerEncoderModel", {"hidden_states": [1, 1, 16000]}),
    ("seamless_m4t", "SeamlessM4TForSpeechToText", {"input_features": [1, 32, 160], "attention_mask": None}),
    ("owlvit", "OwlViTForObjectDetection", {"input_ids": [1, 16], "pixel_values": [1, 3, 768, 768],
                                            "attention_mask": [1, 16]}),
])
def test_audio_codec_stacked_features_and_short_text_tower_rules(model_type, arch, expect):
    _, _, kwargs, spec = build_model(default_row(model_type, arch), "meta", {"seq_len": 8 if model_type == "seamless_m4t" else 32})
    shapes = {s["name"]: s["shape"] for s in spec}
    for k, v in expect.items():
        if v is not None:
            assert shapes[k] == v, (k, shapes)


def test_qwen2_vl_style_grid_inputs_and_image_tokens():
    import transformers

    from extract.capture.inputs import hf_inputs
    from extract.capture.multimodal import GRID_THW

    cfg = transformers.Qwen2VLConfig(
        text_config={"vocab_size": 300, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "rope_parameters": {
                         "rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "patch_size": 4,
                       "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3},
        image_token_id=299, video_token_id=298, vision_start_token_id=297)
    model = transformers.Qwen2VLForConditionalGeneration(cfg).eval()
    kw, spec = hf_inputs(model, cfg, {"seq_len": 8}, "cpu")
    t, h, w = GRID_THW
    assert kw["image_grid_thw"].tolist() == [[t, h, w]]
    assert list(kw["pixel_values"].shape) == [t * h * w, 3 * 2 * 4 * 4]
    n_img = t * h * w // 4
    assert int((kw["input_ids"] == 299).sum()) == n_img and kw["input_ids"].shape == (1, n_img + 8)
    if "mm_token_type_ids" in kw:
        assert kw["mm_token_type_ids"].sum().item() == n_img
    with torch.no_grad():
        out = model(**kw)
    assert out.logits.shape == (1, n_img + 8, 300)


# --- Dynamo settings ------------------------------------------------------------------

def test_logger_calls_in_forward_do_not_break_the_graph():
    import logging

    from extract.capture import dynamo_capture

    log = logging.getLogger("passnet.test.forward")

    class Notice(torch.nn.Module):
        def forward(self, x):
            x = x * 2
            log.warning("falling back to full attention")  # as BigBird does for short inputs
            return x + 1

    x = torch.ones(3)
    graphs = dynamo_capture(Notice(), (x,))
    assert len(graphs) == 1 and dynamo_capture.last_completeness.complete
    assert torch.equal(graphs[0].gm(*[t for t, k in zip(graphs[0].example_inputs, graphs[0].kinds)])[0], x * 2 + 1)
    broken = dynamo_capture(Notice(), (x,), settings={"ignore_logging_functions": False})
    assert len(broken) == 2  # the call splits the graph when the setting is off


def test_reduced_depth_keeps_gpt_neo_attention_layers_consistent():
    from transformers import AutoConfig

    from extract.capture.build import hf_config, reduce_depth

    cfg = AutoConfig.for_model("gpt_neo").to_dict()
    assert len(cfg["attention_layers"]) == cfg["num_layers"] == 24
    small = reduce_depth(cfg, 2)
    assert small["attention_layers"] == cfg["attention_layers"][:2] and small["num_layers"] == 2
    assert hf_config(small).attention_layers == ["global", "local"]  # the config validator accepts it


class LazyHooks(torch.nn.Module):
    """Initialisation under a lock on the first call only (transformers installs its
    output-capturing hooks this way): Dynamo cannot enter the lock and runs that frame eagerly."""

    def __init__(self):
        super().__init__()
        import threading

        self.lock, self.ready = threading.Lock(), False

    def install(self):
        with self.lock:
            self.ready = True

    def forward(self, x):
        x = x.cos()
        if not self.ready:
            self.install()
        return x.sin() * 2.0


def test_an_incomplete_first_call_is_captured_once_more_and_kept_when_complete():
    from extract.capture import dynamo_capture

    first = dynamo_capture(LazyHooks(), (torch.ones(3),))
    assert not dynamo_capture.last_completeness.complete and len(first) == 2  # broken around install()
    graphs, used = capture_with_retry(LazyHooks(), (torch.ones(3),), {}, dict(DYNAMO_DEFAULTS))
    assert dynamo_capture.last_completeness.complete
    assert "ran eagerly" in used["second_call"]["reason"]
    assert len(graphs) == 1  # the second call is one graph, cos then sin
    assert torch.allclose(graphs[0].gm(torch.ones(3))[0], torch.ones(3).cos().sin() * 2.0)
