"""Config dedupe keyed by what the model reads: the recorder, the key, the waves,
the catalog key, and (slow) the held-out CLIP eos_token_id case end to end."""

from __future__ import annotations

import json

import pytest
import torch

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 64, "hidden_size": 16,
         "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
         "max_position_embeddings": 32, "tokenizer_class": "LlamaTokenizerFast"}
# the held-out text config of openai/clip-vit-large-patch14 (eos_token_id 2 is the legacy value it ships)
CLIP_TEXT = {"model_type": "clip_text_model", "architectures": ["CLIPTextModel"], "vocab_size": 49408,
             "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12,
             "max_position_embeddings": 77, "projection_dim": 768, "hidden_act": "quick_gelu",
             "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1}


def _build(cfg_dict):
    from extract.capture.build import hf_config

    return hf_config(json.loads(json.dumps(cfg_dict)))


def _reads_of_build(cfg_dict, arch, ids):
    """What building ``arch`` from ``cfg_dict`` through ``_from_config`` and one forward read."""
    import transformers

    from extract.capture.config_reads import Recorder

    cfg = _build(cfg_dict)
    rec = Recorder()
    rec.track(cfg)
    with rec.active():
        model = getattr(transformers, arch)._from_config(cfg).eval()
        with torch.no_grad():
            model(input_ids=ids)
    return cfg, model, rec.reads


def test_recorder_sees_forward_reads_and_restores_the_classes():
    tiny = dict(CLIP_TEXT, vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=16)
    cfg, model, reads = _reads_of_build(tiny, "CLIPTextModel", torch.tensor([[0, 7, 5, 9]]))
    assert {"eos_token_id", "hidden_size", "vocab_size", "dtype"} <= reads  # _from_config builds in config.dtype
    assert "tokenizer_class" not in reads and "bos_token_id" not in reads
    assert not getattr(type(cfg), "_passnet_recording", False)  # the class is the config's own again
    assert not getattr(type(model.config), "_passnet_recording", False)


def test_generation_config_reads_are_not_model_reads_and_absent_lookups_are():
    from extract.capture.config_reads import Recorder

    cfg, _, reads = _reads_of_build(LLAMA, "LlamaForCausalLM", torch.tensor([[1, 2, 3]]))
    # GenerationConfig.from_model_config(config) in PreTrainedModel.__init__ reads the whole
    # config (to_dict) and its token ids: used by generate() only, not recorded
    assert "*" not in reads and "eos_token_id" not in reads
    assert {"rope_parameters", "num_key_value_heads", "tie_word_embeddings"} <= reads
    rec = Recorder()
    rec.track(cfg)
    with rec.active():
        hasattr(cfg, "no_such_field")
        cfg.to_dict()
    assert {"no_such_field", "*"} <= rec.reads  # an absent attribute and the whole object are reads
    with pytest.raises(TypeError, match="PretrainedConfig"):
        rec.track({"eos_token_id": 2})


def test_reads_key_separates_read_values_only():
    from extract.capture.config_reads import reads_key

    _, _, reads = _reads_of_build(LLAMA, "LlamaForCausalLM", torch.tensor([[1, 2, 3]]))
    base = reads_key(_build(LLAMA), reads)
    assert reads_key(_build(dict(LLAMA, tokenizer_class="Other", _name_or_path="me/x")), reads) == base  # unread
    assert reads_key(_build(dict(LLAMA, rope_theta=5.0)), reads) != base  # read through rope_parameters
    assert reads_key(_build(dict(LLAMA, dtype="bfloat16")), reads) != base  # the model is built in config.dtype
    assert reads_key(_build(dict(LLAMA, hidden_act="gelu")), reads) != base


def _row(mid, cfg):
    from extract.sources.rows import row_from_hf_config

    return {**row_from_hf_config(cfg, mid, mid, "local"), "catalog_error_class": None, "catalog_error": None}


def test_waves_merge_on_the_representatives_reads():
    from extract.runs.reads_dedupe import ReadsDedupe

    _, _, reads = _reads_of_build(LLAMA, "LlamaForCausalLM", torch.tensor([[1, 2, 3]]))
    rows = [_row("local:a", LLAMA), _row("local:b", dict(LLAMA, tokenizer_class="Other")),
            _row("local:c", dict(LLAMA, hidden_size=32)), _row("local:d", dict(LLAMA, hidden_size=32, bos_token_id=7)),
            _row("local:e", dict(LLAMA, model_type="mistral", architectures=["MistralForCausalLM"]))]
    dd = ReadsDedupe(rows)
    assert [r["model_id"] for r in dd.first_wave()] == ["local:a", "local:e"]  # one per architecture
    captured = []

    def reads_of(r):
        captured.append(r["model_id"])
        return reads

    assert [r["model_id"] for r in dd.next_wave(reads_of)] == ["local:c"]  # d waits: same values as c
    assert dd.duplicate_of == {"local:b": "local:a"}
    assert dd.next_wave(reads_of) == [] and dd.duplicate_of == {"local:b": "local:a", "local:d": "local:c"}
    assert dd.waves == 2
    # without a record (the capture failed or timed out) nothing is merged: every config is captured
    dd = ReadsDedupe(rows)
    dd.first_wave()
    assert [r["model_id"] for r in dd.next_wave(lambda r: None)] == ["local:b", "local:c", "local:d"]
    assert dd.duplicate_of == {}


def test_merge_records_apply_only_while_the_representative_is_unchanged(tmp_path):
    from extract.runs.attempts import attempt_key, work_dir
    from extract.runs.reads_dedupe import recorded_reads, with_duplicates, write_merge

    a, b = _row("local:a", LLAMA), _row("local:b", dict(LLAMA, tokenizer_class="Other"))
    write_merge(work_dir(tmp_path, attempt_key(b, {})), "local:a", attempt_key(a, {}))
    assert [r.get("duplicate_of") for r in with_duplicates([a, b], {}, tmp_path)] == [None, "local:a"]
    a2 = _row("local:a", dict(LLAMA, hidden_size=64))  # the representative's config changed: stale record
    assert [r.get("duplicate_of") for r in with_duplicates([a2, b], {}, tmp_path)] == [None, None]
    wd = work_dir(tmp_path, attempt_key(a, {}))
    wd.mkdir(parents=True)
    (wd / "config_reads.json").write_text(json.dumps({"reads": ["hidden_size"], "forward_runs": 0}))
    (wd / "result.json").write_text(json.dumps({"status": "ok"}))
    assert recorded_reads(wd) is None  # the eager forward did not finish: represents nothing
    (wd / "config_reads.json").write_text(json.dumps({"reads": ["hidden_size"], "forward_runs": 1}))
    assert recorded_reads(wd) == ["hidden_size"]
    (wd / "result.json").write_text(json.dumps({"status": "failed"}))
    assert recorded_reads(wd) is None


def test_catalog_key_is_the_whole_config_without_provenance(tmp_path):
    from extract.sources.catalog import build_catalog

    d = tmp_path / "cfgs"
    d.mkdir()
    for name, cfg in {"a": LLAMA, "b": dict(LLAMA, _name_or_path="org/b", transformers_version="4.57.1"),
                      "c": dict(LLAMA, tokenizer_class="Other"), "d": LLAMA}.items():
        (d / f"{name}.json").write_text(json.dumps(cfg))
    rows = {r["name"]: r for r in build_catalog({"mode": "default", "default": [], "local_dir": str(d)})}
    first = min(rows.values(), key=lambda r: r["model_id"])["model_id"]
    dups = {n: r["duplicate_of"] for n, r in rows.items()}
    # a, b, d are one config (provenance aside); c differs in a field only the capture stage can judge
    assert dups["c.json"] is None and len({n for n, v in dups.items() if v is None}) == 2
    assert {dups[n] or rows[n]["model_id"] for n in ("a.json", "b.json", "d.json")} == {first}


@pytest.mark.slow  # three captures in forked children (CLIP text at its true size on meta): ~1-2 min on 2 busy cores
def test_capture_stage_dedupes_on_reads_and_keeps_clip_eos_apart(tmp_path):
    """Held-out: CLIP text with eos_token_id 2 vs 49407 are two captures with different graphs; two
    local Llama configs that differ only in a field the model never reads are one capture."""
    import pyarrow.parquet as pq

    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog

    d = tmp_path / "cfgs"
    d.mkdir()
    for name, cfg in {"llama_a": LLAMA, "llama_b": dict(LLAMA, tokenizer_class="Other"),
                      "clip_eos2": CLIP_TEXT, "clip_eos49407": dict(CLIP_TEXT, eos_token_id=49407)}.items():
        (d / f"{name}.json").write_text(json.dumps(cfg))
    rows = build_catalog({"mode": "default", "default": [], "local_dir": str(d)})
    assert all(r["duplicate_of"] is None for r in rows)  # the catalog merges none of them
    capture = {"seq_len": 8}
    counts = capture_all(rows, capture, tmp_path / "work", workers=1, timeout_s=600, mem_cap_gb=None, progress=False)
    assert counts["ran"] == 3 and counts["duplicates_by_reads"] == 1 and counts["waves"] == 2
    assemble(rows, capture, tmp_path / "work", tmp_path / "out", tmp_path / "store")
    models = {r["name"]: r for r in pq.read_table(tmp_path / "out" / "models.parquet").to_pylist()}
    a, b = sorted((models["llama_a.json"], models["llama_b.json"]), key=lambda r: r["model_id"])
    assert (a["duplicate_of"], b["duplicate_of"]) == (None, a["model_id"])  # the later model_id reuses the first
    assert models["clip_eos2.json"]["duplicate_of"] is None and models["clip_eos49407.json"]["duplicate_of"] is None
    graphs = pq.read_table(tmp_path / "out" / "graphs.parquet").to_pylist()
    by = {}
    for g in graphs:
        by.setdefault(g["model_id"], []).append((g["graph_hash"], g["num_nodes"]))
    name = {r["model_id"]: r["name"] for r in models.values()}
    got = {name[m]: v for m, v in by.items()}
    assert got["llama_a.json"] == got["llama_b.json"]
    assert got["clip_eos2.json"] != got["clip_eos49407.json"]
    assert [n for _, n in got["clip_eos2.json"]] != [n for _, n in got["clip_eos49407.json"]]
    ext = {name[r["model_id"]]: r for r in pq.read_table(tmp_path / "out" / "extractions.parquet").to_pylist()}
    assert all(ext[n]["status"] == "ok" for n in ext)
