"""The committed schedule prior (extract/runs/priors.py): a clean clone orders captures by one
full run's measured times; the work folder's own times override it; ordering never enters a key."""

import json

from extract.runs import priors
from extract.runs.attempts import CODE_GLOBS
from extract.runs.priors import schedule_history
from extract.runs.scheduler import estimated_seconds, longest_first


def _row(mid, lib, cfg):
    return {"model_id": mid, "library": lib, "config_json": json.dumps(cfg)}


def test_write_then_load_prior_keeps_the_latest_time_per_model(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "timings.jsonl").write_text(
        json.dumps({"model_id": "b", "seconds": 1.26}) + "\nnot json\n"
        + json.dumps({"model_id": "a", "seconds": 9.0}) + "\n"
        + json.dumps({"model_id": "b", "seconds": 4.04}) + "\n")
    out = tmp_path / "prior.json"
    assert priors.write_prior(work, out, measured_on="test") == {"a": 9.0, "b": 4.0}
    assert priors.load_prior(out) == {"a": 9.0, "b": 4.0}
    assert json.loads(out.read_text())["measured_on"] == "test"


def test_write_prior_refuses_an_empty_work_folder(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="timings.jsonl"):
        priors.write_prior(tmp_path, tmp_path / "p.json")


def test_load_prior_of_a_missing_or_broken_file_is_empty(tmp_path):
    assert priors.load_prior(tmp_path / "absent.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text('{"seconds": [1, 2]}')
    assert priors.load_prior(bad) == {}


def test_clean_work_folder_orders_by_the_committed_prior_and_own_times_override_it(tmp_path):
    committed = priors.load_prior()
    slow_vision = "torchvision:retinanet_resnet50_fpn"
    assert committed[slow_vision] > 3.0 + 0.3 * 32  # slower than its depth prior says (3 s)
    retina = _row(slow_vision, "torchvision", {"name": "retinanet_resnet50_fpn"})
    deep = _row("transformers:NotInPrior", "transformers", {"num_hidden_layers": 32})
    todo = [(r["model_id"], (r, {}), None) for r in (deep, retina)]
    work = tmp_path / "work"
    work.mkdir()
    hist = schedule_history(work)
    assert estimated_seconds(retina, hist) == committed[slow_vision]
    assert estimated_seconds(deep, hist) == 3.0 + 0.3 * 32  # not in the prior: the depth rule
    assert [t[0] for t in longest_first(todo, hist)] == [slow_vision, "transformers:NotInPrior"]
    assert [t[0] for t in longest_first(todo, {})] == ["transformers:NotInPrior", slow_vision]  # the old order
    (work / "timings.jsonl").write_text(json.dumps({"model_id": slow_vision, "seconds": 1.0}) + "\n")
    assert schedule_history(work)[slow_vision] == 1.0


def test_the_prior_file_is_not_part_of_the_code_hash():
    # refreshing the measured times must not re-key (re-capture) any model
    assert not any(g.endswith(".json") or g.endswith("*") for g in CODE_GLOBS)
    assert priors.PRIOR_FILE.suffix == ".json"
