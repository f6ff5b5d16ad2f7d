"""params.yaml validation: unknown keys and wrong types name the key and what it expects."""

from __future__ import annotations

import pytest
import yaml

import curate.config  # noqa: F401,E402  (registers the curate block: CurateConfig)
import extract.config  # noqa: F401,E402  (registers the catalog, extract and hub blocks)
import passnet_common.summary  # noqa: F401  (registers the summary block)
import proxy_artifacts.config  # noqa: F401,E402  (registers the proxy block: ProxyConfig)
from passnet_common.params import BLOCKS, Block, ParamsError, extend_block, load_params, register_block
from tests.conftest import ROOT


def _write(tmp_path, params):
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump(params))
    return p


def _project():
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def test_project_params_are_valid():
    params = load_params(ROOT / "params.yaml")
    assert params["extract"]["capture"]["dynamo"]["recompile_limit"] == 64
    # every block of the committed file has a schema: none is silently unchecked
    assert set(params) <= set(BLOCKS), sorted(set(params) - set(BLOCKS))
    assert {"curate", "score", "proxy"} <= set(params)


# A typo (unknown key) and a value of the wrong type in every block, at every nesting level
# the stages read (catalog / extract, then curate, score and proxy).
@pytest.mark.parametrize("edit,message", [
    (lambda p: p["extract"]["capture"].update(seqlen=16), "extract.capture.seqlen: unknown key"),
    (lambda p: p["extract"].update(workers="two"), "extract.workers: expected positive int, got str 'two'"),
    (lambda p: p["extract"].update(workers=True), "extract.workers: expected positive int, got bool True"),
    (lambda p: p["extract"].update(timeout_s=-1), "extract.timeout_s: expected positive number, got -1"),
    (lambda p: p["extract"]["capture"]["dynamo"].update(recompile_limit=1.5), "extract.capture.dynamo.recompile_limit"),
    (lambda p: p["catalog"].update(mode="everything"), "catalog.mode: expected one of 'default', 'all'"),
    (lambda p: p["catalog"].update(default="transformers:BertModel"), "catalog.default: expected list of str"),
    (lambda p: p["catalog"].update(sample_per_source={"timm": "ten"}), "catalog.sample_per_source.timm: expected int"),
    (lambda p: p["catalog"].update(limt=3), "catalog.limt: unknown key"),
    (lambda p: p["curate"]["decompose"].update(max_node=64), "curate.decompose.max_node: unknown key"),
    (lambda p: p["curate"]["profile"]["timing"].update(trails=30), "curate.profile.timing.trails: unknown key"),
    (lambda p: p["curate"].update(curation={}), "curate.curation: unknown key"),
    (lambda p: p["curate"]["profile"].update(compile_workers="one"),
     "curate.profile.compile_workers: expected positive int, got str 'one'"),
    (lambda p: p["curate"]["profile"].update(sample_size=0), "curate.profile.sample_size: expected positive int or null, got int 0"),
    (lambda p: p["curate"]["profile"]["timing"].update(ci_level=95), "curate.profile.timing.ci_level: expected number in (0, 1), got 95"),
    (lambda p: p["curate"]["profile"].update(dtypes=["fp32"]), "curate.profile.dtypes[0]: expected one of 'float32'"),
    (lambda p: p["score"].update(retime=10.0), "score.retime: unknown key"),
    (lambda p: p["score"]["timing"].update(max_inner=5), "score.timing.max_inner: unknown key"),
    (lambda p: p["score"].update(b="0.1"), "score.b: expected number in (0, 1], got str '0.1'"),
    (lambda p: p["score"].update(conventions=["paper", "kernelbench"]), "score.conventions[1]: expected one of 'paper', 'graphnet'"),
    (lambda p: p["score"].update(candidates=["eager"]), "score.candidates: expected mapping of str to str"),
    (lambda p: p["proxy"]["prune"].update(metod="frequency"), "proxy.prune.metod: unknown key"),
    (lambda p: p["proxy"]["base"].update(category_mix={"revers": 3.0}), "proxy.base.category_mix.revers: unknown key"),
    (lambda p: p["proxy"]["fidelity"]["detector"].update(window_steps=3), "proxy.fidelity.detector.window_steps: unknown key"),
    (lambda p: p["proxy"]["compare"]["methods"][0].update(view={"act": 1.0}), "proxy.compare.methods[0].view: unknown key"),
    (lambda p: p["proxy"]["compare"]["methods"].insert(0, {"name": "x"}), "proxy.compare.methods[0]: missing required key(s) ['method']"),
    (lambda p: p["proxy"]["grpo"].update(steps=16.5), "proxy.grpo.steps: expected positive int, got float 16.5"),
    (lambda p: p["proxy"]["prune"].update(method="kmeans"), "proxy.prune.method: expected one of 'cluster'"),
    (lambda p: p["proxy"]["prune"].update(categories="text"), "proxy.prune.categories: expected one of 'all' or list of str"),
    (lambda p: p["proxy"]["compare"].update(keep_ratios=[0.5, 0]), "proxy.compare.keep_ratios[1]: expected number in (0, 1], got 0"),
    (lambda p: p["proxy"]["grpo"].update(faults=["lr_spike", "bitflip"]), "proxy.grpo.faults[1]: expected one of 'none'"),
    (lambda p: p["proxy"]["model"].update(revision=123), "proxy.model.revision: expected str or null, got int 123"),
    (lambda p: p["proxy"]["stats"].update(merge=True), "proxy.stats.merge: unknown key"),
    (lambda p: p["proxy"]["prune"].update(merge="average"), "proxy.prune.merge: expected bool or one of 'none'"),
])
def test_bad_params_name_the_key_and_the_expected_type(tmp_path, edit, message):
    params = _project()
    edit(params)
    path = _write(tmp_path, params)
    section = message.split(".")[0]
    with pytest.raises(ParamsError) as err:
        load_params(path, section)
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)
    load_params(path, "score" if section != "score" else "extract")  # other blocks are not affected


def test_other_blocks_register_their_own_schema(tmp_path):
    params = {"other": {"alpha": 1}}
    path = _write(tmp_path, params)
    assert load_params(path, "other") == {"alpha": 1}  # unregistered: not validated
    register_block("other", Block({"beta": int}))
    try:
        with pytest.raises(ParamsError, match="other.alpha: unknown key"):
            load_params(path, "other")
        extend_block("other", {"alpha": int})
        assert load_params(path, "other") == {"alpha": 1}
    finally:
        BLOCKS.pop("other")


def test_values_the_stages_accept_validate(tmp_path):
    """Documented alternatives of the stage code pass: nulls, ``all`` / lists, ints for numbers."""
    params = _project()
    params["curate"]["profile"].update(sample_size=None, all=True)
    params["score"].update(max_subgraphs=None, inductor_cache="data/work/ic", p=0, b=1)
    params["proxy"]["prune"].update(categories=["text", "code"], new_top_k=1, merge=True)
    params["proxy"]["compare"]["methods"].append({"name": "freq_merge", "method": "frequency", "merge": "frequency"})
    params["proxy"]["base"].update(category_mix=None)
    params["proxy"]["compare"].update(reference_ratio=None)
    params["proxy"]["model"].update(path="Qwen/Qwen3-30B-A3B", revision="a" * 40)
    load_params(_write(tmp_path, params))


def test_schema_names_are_the_stage_code_s():
    """The names the proxy schema is made of (in proxy_artifacts.config, to validate without importing
    torch) have one home: the stage modules import them (the same objects, not equal copies)."""
    from proxy_artifacts import config as PC
    from proxy_artifacts.cluster import METHODS, VIEWS
    from proxy_artifacts.corpus import CATEGORIES
    from proxy_artifacts.rl import FAULTS, FIXABLE

    assert PC.METHODS is METHODS and PC.VIEWS is VIEWS
    assert PC.CATEGORIES is CATEGORIES and PC.FAULTS is FAULTS and PC.FIXABLE is FIXABLE


def _bad_params(tmp_path, edit):
    params = _project()
    edit(params)
    return str(_write(tmp_path, params))


@pytest.mark.parametrize("cli,argv,edit,key", [
    ("curate", ["decompose", "--unique", "missing.parquet"],
     lambda p: p["curate"]["decompose"].update(max_node=64), "curate.decompose.max_node: unknown key"),
    ("curate", ["score", "--tasks", "builtin"],
     lambda p: p["score"].update(p="high"), "score.p: expected non-negative number, got str 'high'"),
    ("proxy", ["fidelity", "--runs", "base=missing", "--report", "r.md", "--metrics", "m.json", "--plots", "pl"],
     lambda p: p["proxy"]["fidelity"].update(step_tolerance="2"), "proxy.fidelity.step_tolerance: expected non-negative int, got str '2'"),
])
def test_stage_cli_exits_2_with_one_line(tmp_path, capsys, cli, argv, edit, key):
    from passnet_common.cli import run_cli

    if cli == "curate":
        from curate.__main__ import main
    else:
        from proxy_artifacts.__main__ import main
    path = _bad_params(tmp_path, edit)
    rc = run_cli(lambda: main(argv + ["--params", path]))
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert err.startswith("error: ") and key in err and len(err.splitlines()) == 1
