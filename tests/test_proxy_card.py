"""The proxy card says only what its records support: licence by the base's identity, not by the
calibration corpus; the Hub base's ``other`` licence carried through; random selection and no-merge
proxies described as they are; every accuracy figure named with its task set and size."""

import json

import yaml

from proxy_artifacts.card import builtin_training_record, card_text, chance_level, license_meta

CORPUS = "c" * 64
LIN = {"base_model_id": "local:abcdef", "base_revision": "r" * 64, "family": "mixtral", "stats_sha256": "0" * 64,
       "method": "usage_cluster", "keep_ratio_requested": 0.5, "keep_ratio_effective": 0.5, "experts_base": 8,
       "experts_kept": 4, "params": {"seed": 0}, "merge": "output", "base_license": None,
       "calibration": {"dataset": "builtin", "categories": ["text"], "stats_windows_per_category": 4,
                       "stats_seq_len": 16, "merge_windows_per_category": 2, "corpus_sha256": CORPUS}}


def _meta(card: str) -> dict:
    return yaml.safe_load(card.split("---")[1])


def test_local_base_calibrated_on_builtin_corpus_is_not_the_builtin_base(tmp_path):
    # a user's local Mixtral, statistics on the builtin corpus: no train_log.json -> licence unknown
    (tmp_path / "config.json").write_text("{}")
    assert builtin_training_record(tmp_path) is None
    lin = dict(LIN, base_training=builtin_training_record(tmp_path))
    assert license_meta(lin) == {"license": "other", "license_name": "unknown"}
    card = card_text(lin, None)
    assert "psf-2.0" not in card and "trained here on CPython" not in card
    # the builtin base: its train_log.json records the training run on the same corpus
    (tmp_path / "train_log.json").write_text(json.dumps({"model_type": "qwen3_moe", "corpus_sha256": CORPUS,
                                                         "steps": 600, "task": "reverse"}))
    lin = dict(LIN, base_training=builtin_training_record(tmp_path))
    assert license_meta(lin)["license_name"] == "psf-2.0"
    assert "trained here on CPython" in card_text(lin, None)
    # a train log on another corpus is not this base
    assert license_meta(dict(lin, base_training=dict(lin["base_training"], corpus_sha256="d" * 64))) == {
        "license": "other", "license_name": "unknown"}


def test_hub_base_other_licence_carries_name_and_link():
    lin = dict(LIN, base_model_id="hf:org/moe@" + "a" * 40,
               base_license={"license": "other", "license_name": "deepseek", "license_link": "https://x/LICENSE"})
    m = _meta(card_text(lin, None))
    assert (m["license"], m["license_name"], m["license_link"]) == ("other", "deepseek", "https://x/LICENSE")
    assert _meta(card_text(dict(lin, base_license={"license": "apache-2.0"}), None))["license"] == "apache-2.0"


def test_hub_card_licence_read_with_name_and_link(tmp_path):
    from huggingface_hub import HfApi

    from passnet_common.hub_standin import HubStandIn
    from proxy_artifacts.architectures import hub_endpoint
    from proxy_artifacts.card import base_license_from_hub

    d = tmp_path / "b"
    d.mkdir()
    (d / "README.md").write_text("---\nlicense: other\nlicense_name: deepseek\nlicense_link: https://x/L\n---\nx\n")
    with HubStandIn() as hub, hub_endpoint(hub.endpoint, tmp_path / "hc"):
        api = HfApi(endpoint=hub.endpoint, token="hf_tok")
        api.create_repo("org/base", exist_ok=True)
        sha = api.upload_folder(repo_id="org/base", folder_path=str(d)).oid
        got = base_license_from_hub(f"hf:org/base@{sha}")
    assert got == {"license": "other", "license_name": "deepseek", "license_link": "https://x/L"}


def test_random_selection_and_no_merge_are_described_as_they_are():
    card = card_text(dict(LIN, method="random", merge="none", params={"seed": 3}), None)
    assert "expert-activation statistics" not in card and "chosen uniformly at random (seed 3)" in card
    assert "output merge" not in card.split("- calibration data")[1].split("\n")[0]
    card = card_text(LIN, None)
    assert "on expert-activation statistics" in card
    assert "2 training-split windows per category for the output merge" in card


def test_accuracy_figures_name_their_set_and_size():
    bm = {"task": "reverse", "task_acc_heldout": 1.0, "task_acc_edge": 0.99, "task_problems": 128,
          "task_lengths": {"heldout": [2, 7], "edge": [8, 8]}}
    pm = {"task_acc_base": 0.11, "task_acc_proxy": 0.08}
    card = card_text(LIN, pm, base_metrics=bm)
    assert "`heldout` set (128 problems, word lengths 2-7" in card and "`edge` set (128 problems, word lengths 8-8" in card
    assert f"chance level {chance_level('reverse', [2, 7]):.2g}" in card
    assert "in-range held-out set, problem count not recorded with the prune metrics" in card
    assert "held-out exact match of the verifiable task" not in card
    # base metrics without lengths: no chance figure invented, the accuracy still named with its set
    card = card_text(LIN, dict(pm, task_problems=64), base_metrics={"task": "reverse", "task_acc_heldout": 0.13,
                                                                     "task_problems": 128})
    assert "`heldout` set (128 problems" in card and "chance level not recorded" in card
    assert "in-range held-out set, 64 problems" in card


def test_chance_level_averages_the_inclusive_length_range():
    assert chance_level("reverse", [2, 3]) == (26 ** -2 + 26 ** -3) / 2
    assert chance_level("reverse", [2, 7]) == sum(26.0 ** -n for n in range(2, 8)) / 6
    assert chance_level("reverse", None) is None and chance_level("other", [2, 3]) is None
