"""Completeness you can prove: the op account catches what Dynamo's frame counters
miss, and the held-out programs go through the ``module:`` source and the isolated worker.

Each program in tests/fixtures/modules has a known right verdict: the control (an MLP) is
``ok``; an nn.LSTM / nn.GRU between Linears, a graph break inside try/except after some ops, a
submodule under ``@torch.compiler.disable`` and ``torch.manual_seed`` first in forward are not
``ok`` and name what ran outside the graphs; meta captures of ops whose fake kernel is known to
disagree (convolution_backward, quantize_per_tensor) are not trusted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from extract.capture import dynamo_capture
from extract.capture.completeness import OpCounter

FIXTURES = Path(__file__).parent / "fixtures" / "modules"


def _fixture(name):
    sys.path.insert(0, str(FIXTURES))
    try:
        return __import__(name).build()
    finally:
        sys.path.remove(str(FIXTURES))


@pytest.mark.parametrize("name,outside", [
    ("break_in_try", {"aten.mul", "aten.addmm", "aten.tanh", "aten._softmax"}),  # ops after x = a(x).relu()
    ("disabled_a", {"aten.addmm", "aten.sigmoid"}),  # the disabled submodule's Linear + sigmoid
])
def test_dynamo_counters_say_complete_the_op_account_does_not(name, outside):
    net, inputs = _fixture(name)
    graphs = dynamo_capture(net.eval(), inputs, account=False)
    assert graphs and dynamo_capture.last_completeness.complete  # what the frame counters alone say
    assert dynamo_capture.last_completeness.eager_frames == 0
    graphs = dynamo_capture(net.eval(), inputs)
    c = dynamo_capture.last_completeness
    assert not c.complete and set(c.ops_outside) == outside
    assert c.ops_eager - c.ops_in_graphs == sum(c.ops_outside.values())
    assert "ran outside every graph" in c.reason and "aten.addmm: 1" in c.reason


def test_the_account_balances_on_a_complete_model():
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    dynamo_capture(net, (torch.randn(3, 4),))
    c = dynamo_capture.last_completeness
    assert c.complete and c.ops_outside == {}
    assert c.ops_eager == c.ops_in_graphs == 3  # addmm, relu, addmm (the weights' t() are views, not counted)
    x = torch.randn(3, 4)
    counter = OpCounter()
    with counter, torch.no_grad():
        net(x)
    assert sum(counter.counts.values()) == c.ops_eager  # the same count as an independent eager run


def test_a_graph_run_many_times_counts_each_run():
    class Loop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            for _ in range(3):
                x = self._step(x)
            return x

        def _step(self, x):
            torch._dynamo.graph_break()
            return self.lin(x).relu()

    graphs = dynamo_capture(Loop(), (torch.randn(2, 4),))
    c = dynamo_capture.last_completeness
    # one graph of _step's ops, run 3 times: 3 x (addmm, relu) in the eager run and in the graphs
    assert len(graphs) == 1 and c.ops_outside == {} and c.ops_eager == c.ops_in_graphs == 6


@pytest.fixture(scope="module")
def module_tables(tmp_path_factory):
    """Every fixture program through catalog -> capture_all (forked children) -> assemble."""
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog

    tmp = tmp_path_factory.mktemp("modules")
    rows = build_catalog({"mode": "default", "default": [], "module_dir": str(FIXTURES)})
    counts = capture_all(rows, {}, tmp / "work", workers=2, timeout_s=600, mem_cap_gb=None, progress=False,
                         cpu_budget_s=300, hang_s=120)
    assemble(rows, {}, tmp / "work", tmp / "out", tmp / "store")
    ext = {r["model_id"]: r for r in pq.read_table(tmp / "out" / "extractions.parquet").to_pylist()}
    graphs: dict = {}
    for g in pq.read_table(tmp / "out" / "graphs.parquet").to_pylist():
        graphs.setdefault(g["model_id"], []).append(g["graph_hash"])
    return rows, counts, ext, graphs


def test_module_rows_are_one_per_file_and_captured_in_children(module_tables):
    rows, counts, ext, _ = module_tables
    stems = sorted(p.stem for p in FIXTURES.glob("*.py") if not p.name.startswith("_"))
    assert [r["model_id"] for r in rows] == [f"module:{s}" for s in stems]
    assert counts["ran"] == len(stems) and counts["duplicates"] == 0
    assert ext["module:plain_mlp"]["status"] == "ok" and ext["module:plain_mlp"]["complete"]
    assert ext["module:plain_mlp_meta"]["status"] == "ok" and ext["module:plain_mlp_meta"]["mode"] == "meta"


@pytest.mark.parametrize("model,needle", [
    ("lstm_between_linears", "aten."),
    ("gru_between_linears", "aten."),
    ("lstm_meta", "aten."),
    ("break_in_try", "aten.tanh: 1"),
    ("disabled_a", "aten.sigmoid: 1"),
    ("disabled_b", "aten.tanh: 1"),
    ("seed_first", "torch.manual_seed"),
    ("conv_backward_meta", "aten.convolution_backward"),
    ("quantize_meta", "aten.quantize_per_tensor"),
])
def test_held_out_programs_are_not_ok(module_tables, model, needle):
    ext = module_tables[2][f"module:{model}"]
    assert ext["status"] != "ok" and ext["complete"] is False
    assert needle in ext["incomplete_reason"]


def test_programs_whose_hidden_parts_differ_are_not_one_clean_model(module_tables):
    """disabled_a / disabled_b differ only inside the disabled submodule: the graph lists
    are identical (the ops are in no graph), so the rows must say what is missing."""
    ext, graphs = module_tables[2], module_tables[3]
    assert graphs["module:disabled_a"] == graphs["module:disabled_b"]
    assert "aten.sigmoid" in ext["module:disabled_a"]["incomplete_reason"]
    assert "aten.tanh" in ext["module:disabled_b"]["incomplete_reason"]
    assert "aten.sigmoid" not in ext["module:disabled_b"]["incomplete_reason"]


def test_module_file_hash_is_in_the_attempt_key(tmp_path):
    from extract.runs.attempts import attempt_key
    from extract.sources.modules import module_catalog

    (tmp_path / "m.py").write_text("import torch\ndef build():\n    return torch.nn.ReLU(), (torch.randn(2),)\n")
    k1 = attempt_key(module_catalog(tmp_path)[0], {})
    (tmp_path / "m.py").write_text("import torch\ndef build():\n    return torch.nn.GELU(), (torch.randn(2),)\n")
    row = module_catalog(tmp_path)[0]
    assert row["model_id"] == "module:m" and attempt_key(row, {}) != k1
    assert json.loads(row["config_json"])["file"] == "m.py"


def test_module_files_are_not_imported_by_the_catalog(tmp_path):
    from extract.sources.catalog import build_catalog

    (tmp_path / "boom.py").write_text("raise SystemExit('imported in the parent')\n")
    rows = build_catalog({"mode": "default", "default": [], "module_dir": str(tmp_path)})
    assert [r["model_id"] for r in rows] == ["module:boom"]


def test_config_level_dedupe_applies_to_local_configs(tmp_path):
    """Two local configs that differ only in provenance keys are captured once."""
    from extract.sources.catalog import build_catalog
    from tests.conftest import TINY_CONFIGS

    a = dict(TINY_CONFIGS["tiny-llama"], _name_or_path="/home/a/llama")
    b = dict(TINY_CONFIGS["tiny-llama"], _name_or_path="/home/b/llama", transformers_version="9")
    c = dict(TINY_CONFIGS["tiny-llama"], hidden_size=TINY_CONFIGS["tiny-llama"].get("hidden_size", 32) * 2)
    for name, cfg in (("a", a), ("b", b), ("c", c)):
        (tmp_path / f"{name}.json").write_text(json.dumps(cfg))
    rows = build_catalog({"mode": "default", "default": [], "local_dir": str(tmp_path)})
    dups = [r for r in rows if r["duplicate_of"]]
    assert len(rows) == 3 and len(dups) == 1
    first = next(r for r in rows if r["model_id"] == dups[0]["duplicate_of"])
    assert {first["name"], dups[0]["name"]} == {"a.json", "b.json"}


def test_break_reasons_hold_no_machine_path_nor_address(module_tables, tmp_path):
    import pyarrow.parquet as pq  # noqa: F401

    from extract.runs.attempts import ROOT, portable_text

    text = ("Skip inlining <function Hidden.forward at 0x7fa89b8d7d80>; function `manual_seed` in file "
            f"`/opt/venv/lib/python3.11/site-packages/torch/_compile.py`; {ROOT}/extract/capture/row.py")
    assert portable_text(text) == ("Skip inlining <function Hidden.forward>; function `manual_seed` in file "
                                   "`torch/_compile.py`; extract/capture/row.py")
    # our own files' line numbers go (an edit elsewhere must not change stored code); a model's stay
    code = (f"# File: {ROOT}/extract/capture/build.py:171 in tensor, code: return orig(data)\n"
            "# File: /opt/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py:88 in forward")
    assert portable_text(code) == ("# File: extract/capture/build.py in tensor, code: return orig(data)\n"
                                   "# File: transformers/models/llama/modeling_llama.py:88 in forward")
    ext = module_tables[2]
    reasons = [r["incomplete_reason"] or "" for r in ext.values()]
    assert any("disable" in r.lower() or "outside" in r for r in reasons)
    assert not any(" at 0x" in r or "/site-packages/" in r or str(ROOT) in r for r in reasons)


def test_identical_module_files_are_captured_once_and_both_get_the_graphs(tmp_path):
    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog

    src = (FIXTURES / "plain_mlp.py").read_text()
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "first.py").write_text(src)
    (mods / "second.py").write_text(src)
    rows = build_catalog({"mode": "default", "default": [], "module_dir": str(mods)})
    assert [r["duplicate_of"] for r in rows] == [None, "module:first"]
    counts = capture_all(rows, {}, tmp_path / "work", workers=1, timeout_s=600, mem_cap_gb=None, progress=False)
    assert (counts["ran"], counts["duplicates"]) == (1, 1)
    assemble(rows, {}, tmp_path / "work", tmp_path / "out", tmp_path / "store")
    ext = {r["model_id"]: r for r in pq.read_table(tmp_path / "out" / "extractions.parquet").to_pylist()}
    assert ext["module:second"]["status"] == ext["module:first"]["status"] == "ok"
    g = pq.read_table(tmp_path / "out" / "graphs.parquet").to_pylist()
    by = {m: [r["graph_hash"] for r in g if r["model_id"] == m] for m in ("module:first", "module:second")}
    assert by["module:first"] and by["module:first"] == by["module:second"]
