"""publish / pull round-trip against the local Hub stand-in (no network)."""

from __future__ import annotations

import copy
import json
import os
import shlex
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from passnet_common.hub_standin import HubStandIn
from proxy_artifacts.adapters import adapter_for, moe_blocks
from proxy_artifacts.checkpoint import write_proxy
from proxy_artifacts.hub import parse_spec, publish, pull
from proxy_artifacts.prune import prune_model
from tests.proxy_helpers import random_ids, tiny_model

ROOT = Path(__file__).resolve().parents[1]

TOKEN = "hf_standin_token"


@pytest.fixture(autouse=True)
def _allow_loopback_hub(monkeypatch):
    """tests/conftest.py sets HF_HUB_OFFLINE=1; these tests talk to the 127.0.0.1 stand-in only
    (explicit ``endpoint=``), so lift the switch for their duration."""
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture()
def proxy_dir(tmp_path):
    base = tiny_model("qwen3_moe")
    kept = {b.name: [0, 2, 5, 7] for b in moe_blocks(base, adapter_for(base.config))}
    proxy = prune_model(copy.deepcopy(base), kept)
    lineage = {"base_model_id": "local:test", "base_revision": "r0", "family": "qwen3_moe", "stats_sha256": "0" * 64,
               "method": "frequency", "keep_ratio_requested": 0.5, "keep_ratio_effective": 0.5, "experts_base": 8,
               "experts_kept": 4, "params": {}}
    return write_proxy(proxy, None, tmp_path / "proxy", kept, lineage, {"params_proxy": proxy.num_parameters()}), proxy


@pytest.fixture()
def based_proxy(tmp_path):
    """A tiny base saved as a local folder and its keep-0.5 proxy, whose lineage names the base the way
    ``load_base`` does (``local:<sha256[:16] of the weights>``, revision the full sha256): (proxy folder,
    base folder)."""
    from proxy_artifacts.checkpoint import weights_sha256

    base = tiny_model("qwen3_moe")
    base.save_pretrained(tmp_path / "base")
    rev = weights_sha256(tmp_path / "base")
    kept = {b.name: [0, 2, 5, 7] for b in moe_blocks(base, adapter_for(base.config))}
    proxy = prune_model(copy.deepcopy(base), kept)
    lineage = {"base_model_id": f"local:{rev[:16]}", "base_revision": rev, "family": "qwen3_moe",
               "stats_sha256": "0" * 64, "method": "frequency", "keep_ratio_requested": 0.5,
               "keep_ratio_effective": 0.5, "experts_base": 8, "experts_kept": 4, "params": {}}
    return write_proxy(proxy, None, tmp_path / "proxy", kept, lineage,
                       {"params_proxy": proxy.num_parameters()}), tmp_path / "base"


def test_publish_pull_round_trip(proxy_dir, tmp_path):
    folder, proxy = proxy_dir
    with HubStandIn() as hub:
        sha = publish(folder, "passnet/tiny-proxy", endpoint=hub.endpoint, token=TOKEN)
        got = pull(f"passnet/tiny-proxy@{sha}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "cache",
                   expect_base="local:test")
    assert ("POST", "/api/repos/create") in hub.state.requests
    assert str(got).startswith(str(tmp_path / "cache")) and sha in str(got)  # Hub cache layout: snapshots/<sha>
    for f in folder.iterdir():
        assert (got / f.name).read_bytes() == f.read_bytes(), f.name
    card = (got / "README.md").read_text()
    assert card.startswith("---") and "proxy-model" in card
    model = AutoModelForCausalLM.from_pretrained(got).eval()
    ids = random_ids()
    with torch.no_grad():
        torch.testing.assert_close(model(ids).logits, proxy(ids).logits)


def _sharded_copy(folder, proxy, out):
    """``folder`` with its weights saved in several shards (``max_shard_size``) and its lineage
    rewritten for them: the same proxy as another publish would write it."""
    import shutil

    from proxy_artifacts.checkpoint import folder_file_hashes, verify_lineage, weights_sha256

    shutil.copytree(folder, out)
    (out / "model.safetensors").unlink()
    proxy.save_pretrained(out, max_shard_size="30KB")
    lin = json.loads((out / "lineage.json").read_text())
    lin["proxy_weights_sha256"] = weights_sha256(out)
    lin["files"] = folder_file_hashes(out)
    (out / "lineage.json").write_text(json.dumps(lin))
    verify_lineage(out)
    assert len(list(out.glob("*.safetensors"))) > 1
    return out


def test_republish_with_another_shard_count_leaves_no_stale_file(proxy_dir, tmp_path):
    """Publishing to a repo that holds an earlier proxy replaces its files: sharded after unsharded and
    unsharded after sharded both pull (lineage covers every file) and load."""
    folder, proxy = proxy_dir
    sharded = _sharded_copy(folder, proxy, tmp_path / "sharded")
    ids = random_ids()
    with HubStandIn() as hub:
        for i, (first, second) in enumerate(((folder, sharded), (sharded, folder))):
            repo = f"passnet/republished-{i}"
            publish(first, repo, endpoint=hub.endpoint, token=TOKEN)
            sha = publish(second, repo, endpoint=hub.endpoint, token=TOKEN)
            assert set(hub.files("model", repo)) - {".gitattributes"} == {f.name for f in second.iterdir()}
            got = pull(f"{repo}@{sha}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / f"cache{i}",
                       expect_base="local:test")
            model = AutoModelForCausalLM.from_pretrained(got).eval()
            with torch.no_grad():
                torch.testing.assert_close(model(ids).logits, proxy(ids).logits)


def test_pull_rejects_tampered_weights_and_wrong_base(proxy_dir, tmp_path):
    folder, _ = proxy_dir
    with HubStandIn() as hub:
        publish(folder, "passnet/p", endpoint=hub.endpoint, token=TOKEN)
        with pytest.raises(ValueError, match="base"):
            pull("passnet/p@main", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "c1", expect_base="hf:x/y@1",
                 allow_unpinned=True)
        # a second commit replaces the lineage with one that names other weights
        lin = json.loads((folder / "lineage.json").read_text())
        lin["proxy_weights_sha256"] = "f" * 64
        (folder / "lineage.json").write_text(json.dumps(lin))
        from huggingface_hub import HfApi

        sha2 = HfApi(endpoint=hub.endpoint, token=TOKEN).upload_file(
            path_or_fileobj=str(folder / "lineage.json"), path_in_repo="lineage.json", repo_id="passnet/p").oid
        with pytest.raises(ValueError, match="weights sha256"):
            pull(f"passnet/p@{sha2}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "c2")
        with pytest.raises(ValueError, match="weights sha256"):  # and publish refuses such a folder
            publish(folder, "passnet/p2", endpoint=hub.endpoint, token=TOKEN)


@pytest.mark.parametrize("spec", ["noslash", "a/b/c", "a/b@", "/b"])
def test_parse_spec_rejects_bad_specs(spec):
    with pytest.raises(ValueError, match="bad proxy spec"):
        parse_spec(spec)


def test_parse_spec():
    assert parse_spec("o/n@abc") == ("o/n", "abc")
    assert parse_spec("o/n") == ("o/n", None)


# ----------------------------------------------------------------- the card a puller reads

FIDELITY = {
    "faults": ["lr_spike", "no_load_balancing"], "fault_kinds": {"lr_spike": ["kl_blowup"],
                                                                 "no_load_balancing": ["expert_collapse"]},
    "base": {"task_acc_before_rl": 0.5, "task_acc_after_rl": [0.55, 0.65]},
    "proxies": {"r0.5": {"task_acc_before_rl": 0.25, "task_acc_after_rl": [0.3, 0.3]}},
    "rates": {"models": {"base": {"lr_spike": {"detection": {"k": 3, "n": 3, "rate": 1.0, "ci95": [0.44, 1.0]}}},
                         "r0.5": {"lr_spike": {"detection": {"k": 3, "n": 3, "rate": 1.0},
                                               "reproduction": {"k": 2, "n": 3, "rate": 0.667}}},
                         "control_random_experts": {"lr_spike": {"reproduction": {"k": 1, "n": 3, "rate": 0.333}}}},
              "base_self": {"lr_spike": {"k": 3, "n": 3, "rate": 1.0}}, "no_signature": ["no_load_balancing"]},
    # the record's shape (proxy_artifacts/controls.py): controls measured against r0.5 only, the healthy row `none`
    "controls": {"r0.5": {"controls": ["control_random_experts"], "reproduces": ["lr_spike"], "faults": {
        "none": {"proxy": {"score": {"k": 30, "n": 30}, "passes": True},
                 "controls": {"control_random_experts": {"score": {"k": 20, "n": 30}, "passes": False}},
                 "reproduces": True},
        "lr_spike": {"proxy": {"score": {"k": 17, "n": 18}, "passes": True},
                     "controls": {"control_random_experts": {"score": {"k": 9, "n": 18}, "passes": False}},
                     "reproduces": True}}}},
}


def _meta(card: str) -> dict:
    import yaml

    return yaml.safe_load(card.split("---")[1])


def test_card_metadata_licence_and_base_model():
    from proxy_artifacts.card import card_text

    lin = {"base_model_id": "hf:Qwen/Qwen3-30B-A3B@" + "a" * 40, "base_revision": "a" * 40, "family": "qwen3_moe",
           "stats_sha256": "0" * 64, "method": "reap", "keep_ratio_requested": 0.5, "keep_ratio_effective": 0.5,
           "experts_base": 128, "experts_kept": 64, "params": {}, "base_license": "apache-2.0"}
    m = _meta(card_text(lin, None))
    assert (m["license"], m["base_model"]) == ("apache-2.0", "Qwen/Qwen3-30B-A3B")
    m = _meta(card_text(dict(lin, base_license="qwen-research"), None))
    assert (m["license"], m["license_name"]) == ("other", "qwen-research")
    local = dict(lin, base_model_id="local:abc", base_license=None, calibration={"corpus_sha256": "c" * 64},
                 base_training={"model_type": "qwen3_moe", "corpus_sha256": "c" * 64, "steps": 600, "task": "reverse"})
    m = _meta(card_text(local, None))
    assert (m["license"], m["license_name"]) == ("other", "psf-2.0") and "base_model" not in m
    assert _meta(card_text(local, None, base_model="me/base"))["base_model"] == "me/base"


@pytest.mark.parametrize("family,shared", [("qwen3_moe", False), ("qwen2_moe", True), ("deepseek_v3", True),
                                           ("olmoe", False)])
def test_card_says_shared_experts_only_of_families_that_have_them(family, shared):
    from proxy_artifacts.card import card_text

    lin = {"base_model_id": "local:x", "base_revision": "r", "family": family, "stats_sha256": "0", "method": "reap",
           "keep_ratio_requested": 0.5, "keep_ratio_effective": 0.5, "experts_base": 8, "experts_kept": 4, "params": {}}
    card = card_text(lin, None)
    assert ("the shared experts (never pruned)" in card) == shared
    assert (f"{family} has no shared experts" in card) == (not shared)


def test_publish_with_fidelity_puts_rl_and_fault_figures_with_controls_on_the_card(based_proxy, tmp_path):
    from huggingface_hub import HfApi

    folder, base_dir = based_proxy
    fid = tmp_path / "fidelity.json"
    sha0 = json.loads((folder / "lineage.json").read_text())["proxy_weights_sha256"]
    fid.write_text(json.dumps({**FIDELITY, "proxies": {n: {**v, "proxy_weights_sha256": sha0}
                                                       for n, v in FIDELITY["proxies"].items()}}))
    bm = tmp_path / "proxy_base.json"
    rev = json.loads((folder / "lineage.json").read_text())["base_revision"]
    bm.write_text(json.dumps({"task": "reverse", "task_lengths": {"heldout": [2, 3]}, "task_acc_heldout": 0.8,
                              "weights_sha256": rev}))
    before = (folder / "README.md").read_text()
    assert "Fidelity under RL: not in this card" in before
    with HubStandIn() as hub:
        api = HfApi(endpoint=hub.endpoint, token=TOKEN)
        api.create_repo("passnet/tiny-base")
        api.upload_folder(repo_id="passnet/tiny-base", folder_path=str(base_dir))
        sha = publish(folder, "passnet/carded", endpoint=hub.endpoint, token=TOKEN, fidelity=fid, proxy_name="r0.5",
                      base_metrics=bm, base_model="passnet/tiny-base")
        got = pull(f"passnet/carded@{sha}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "cache")
    card = (got / "README.md").read_text()
    assert _meta(card)["base_model"] == "passnet/tiny-base"
    assert "| base | task_acc_rl | 0.5 | 0.6 (mean of 2 seeds, 0.55-0.65) |" in card
    assert "| r0.5 | task_acc_rl | 0.25 | 0.3 (mean of 2 seeds, 0.3-0.3) |" in card
    assert "control_random_experts reproduction (control)" in card
    assert "| lr_spike (kl_blowup) | 3/3 [0.44, 1.00] | 3/3 | 3/3 | 2/3 | 1/3 | 17/18 pass | 9/18 fail | True |" in card
    assert "| none (healthy runs" in card and "| 30/30 pass | 20/30 fail | True |" in card
    assert "no_load_balancing (expert_collapse) - no signature on the base" in card
    chance = (26 ** -2 + 26 ** -3) / 2
    assert f"chance level {chance:.2g}" in card and "base greedy exact match on the `heldout` set" in card
    assert f"`{bm}`): 0.8" in card  # the card names the base metrics file it was given
    assert (folder / "README.md").read_text() == before  # the local folder is not changed
    for f in ("model.safetensors", "config.json", "kept_experts.json"):
        assert (got / f).read_bytes() == (folder / f).read_bytes(), f


def test_publish_refuses_base_metrics_of_another_base(based_proxy, tmp_path):
    """``--base-metrics`` must be the proxy's base's: metrics without ``weights_sha256`` (e.g. the
    committed ``metrics/bench/proxy_base_seed1.json`` of another seed's base) or with another base's are
    refused before anything is uploaded; the proxy_base stage's record carries the sha of
    ``data/proxy/base``, the base of the committed proxies."""
    from huggingface_hub import HfApi

    from proxy_artifacts.checkpoint import weights_sha256

    folder, base_dir = based_proxy
    rev = json.loads((folder / "lineage.json").read_text())["base_revision"]
    seed1 = ROOT / "metrics" / "bench" / "proxy_base_seed1.json"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"task": "reverse", "weights_sha256": "f" * 64}))
    with HubStandIn() as hub:
        for bm, msg in ((seed1, "record no weights_sha256"), (other, "metrics of another base")):
            with pytest.raises(ValueError, match=msg):
                publish(folder, "passnet/refused", endpoint=hub.endpoint, token=TOKEN, base_metrics=bm)
        assert "passnet/refused" not in [m.id for m in HfApi(endpoint=hub.endpoint, token=TOKEN).list_models()]
    assert weights_sha256(base_dir) == rev


@pytest.mark.skipif(not (ROOT / "data" / "proxy" / "proxies" / "r0.5" / "model" / "lineage.json").is_file(),
                    reason="needs the proxy line's outputs (dvc repro); a fresh clone has none")
def test_the_built_proxies_name_the_base_whose_metrics_are_committed():
    """After ``dvc repro``: ``metrics/proxy_base.json``'s ``weights_sha256`` is the sha of
    ``data/proxy/base`` and the keep-0.5 proxy's ``lineage.json`` names it as its base revision (a
    build on another CPU trains another base: docs/reproducibility.md, "Across machines")."""
    from proxy_artifacts.checkpoint import weights_sha256

    committed = json.loads((ROOT / "metrics" / "proxy_base.json").read_text())
    lin = json.loads((ROOT / "data" / "proxy" / "proxies" / "r0.5" / "model" / "lineage.json").read_text())
    assert committed["weights_sha256"] == lin["base_revision"] == weights_sha256(ROOT / "data" / "proxy" / "base")


def test_card_of_a_local_base_has_base_model_only_for_a_hub_repo_holding_its_weights(based_proxy, tmp_path):
    """The Hub's ``base_model`` must be a Hub repo id. A proxy of a local base: published alone, its
    card has no ``base_model`` and says why in prose; ``--base-model`` of a repo that is not on the Hub,
    or that holds other weights, is refused before anything is uploaded; of the repo holding the base's
    weights, the card carries it. ``license: other`` comes with ``license_link`` where one exists (the
    builtin base's, a Hub base's card) and the card says why a base of unknown origin has none."""
    from huggingface_hub import HfApi, constants

    from proxy_artifacts.card import card_text
    from proxy_artifacts.hub import check_base_model

    folder, base_dir = based_proxy
    base_id = json.loads((folder / "lineage.json").read_text())["base_model_id"]
    with HubStandIn() as hub:
        api = HfApi(endpoint=hub.endpoint, token=TOKEN)
        sha = publish(folder, "passnet/plain", endpoint=hub.endpoint, token=TOKEN)
        plain = (pull(f"passnet/plain@{sha}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "c")
                 / "README.md").read_text()
        with pytest.raises(ValueError, match="is not a model repo with weights on .*publish the base"):
            publish(folder, "passnet/p1", endpoint=hub.endpoint, token=TOKEN, base_model="passnet/absent")
        other = tiny_model("qwen3_moe", seed=1)
        other.save_pretrained(tmp_path / "other")
        api.create_repo("passnet/other-base")
        api.upload_folder(repo_id="passnet/other-base", folder_path=str(tmp_path / "other"))
        with pytest.raises(ValueError, match=f"holds other weights .* than the proxy's base {base_id}"):
            publish(folder, "passnet/p2", endpoint=hub.endpoint, token=TOKEN, base_model="passnet/other-base")
        with pytest.raises(ValueError, match="repo id alone"):
            publish(folder, "passnet/p3", endpoint=hub.endpoint, token=TOKEN, base_model="passnet/other-base@main")
        assert not {("model", f"passnet/p{i}") for i in (1, 2, 3)} & set(hub.state.repos)  # refused before upload
        api.create_repo("passnet/the-base")
        api.upload_folder(repo_id="passnet/the-base", folder_path=str(base_dir))
        sha = publish(folder, "passnet/based", endpoint=hub.endpoint, token=TOKEN, base_model="passnet/the-base")
        based = (pull(f"passnet/based@{sha}", endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "c")
                 / "README.md").read_text()
    assert "base_model" not in _meta(plain)
    assert f"- no `base_model` metadata: the base is a local folder (`{base_id}`" in plain
    assert _meta(based)["base_model"] == "passnet/the-base" and "- base on the Hub: `passnet/the-base`" in based
    assert "no `base_model` metadata" not in based
    # licence links: unknown local origin (no link, said why); a Hub base's unlisted licence (its card's URL)
    lin = json.loads((folder / "lineage.json").read_text())
    m, card = _meta(plain), plain
    assert (m["license"], m["license_name"]) == ("other", "unknown") and "license_link" not in m
    assert "no `license_link`: a local base of unknown origin" in card
    hub_lin = dict(lin, base_model_id="hf:org/moe@" + "b" * 40, base_license="qwen-research")
    m = _meta(card_text(hub_lin, None))
    assert m["license_link"] == f"{constants.ENDPOINT}/org/moe/blob/{'b' * 40}/README.md"
    assert m["base_model"] == "org/moe"
    with pytest.raises(ValueError, match="is not the proxy's base"):
        check_base_model(hub_lin, "org/other", HfApi(endpoint="http://127.0.0.1:9"))


def test_publish_refuses_another_proxys_name(proxy_dir, tmp_path):
    """The keep-0.5 folder published as ``r0.25`` (or under a name whose parameter count in the
    fidelity record is another proxy's, or a name the record lacks) is refused with both named, before
    anything reaches the Hub; its own name passes the checks."""
    from proxy_artifacts.hub import check_proxy_name

    folder, proxy = proxy_dir
    lin = json.loads((folder / "lineage.json").read_text())
    n = proxy.num_parameters()
    sha = lin["proxy_weights_sha256"]
    rec = {"proxies": {"r0.5": {"cost": {"params": n}, "proxy_weights_sha256": sha},
                       "r0.25": {"cost": {"params": n // 2}, "proxy_weights_sha256": "0" * 64}}}
    fid = tmp_path / "fidelity.json"
    fid.write_text(json.dumps(rec))
    with HubStandIn() as hub:
        with pytest.raises(ValueError, match=r"--name r0.25 names the keep-0.25 proxy, but the folder holds the "
                                             r"keep-0.5 proxy"):
            publish(folder, "passnet/wrong", endpoint=hub.endpoint, token=TOKEN, fidelity=fid, proxy_name="r0.25")
        assert ("POST", "/api/repos/create") not in hub.state.requests and not hub.state.repos
    with pytest.raises(ValueError, match=f"--name mine is not a proxy of {fid}"):
        check_proxy_name(lin, "mine", rec, str(fid))
    swapped = {"proxies": {"mine": {"cost": {"params": n // 2}, "proxy_weights_sha256": sha}}}
    with pytest.raises(ValueError, match=f"names a proxy of {n // 2:,} parameters in x.json, but the folder holds "
                                         f"the keep-0.5 proxy \\({n:,} parameters\\)"):
        check_proxy_name(lin, "mine", swapped, "x.json")
    check_proxy_name(lin, "r0.5", rec, str(fid))  # its own name: no error
    check_proxy_name(lin, "mine", {"proxies": {"mine": {"cost": {"params": n}, "proxy_weights_sha256": sha}}})
    # a record of another build (other weights under the same name and size), or one that names no weights
    with pytest.raises(ValueError, match=f"x.json judged r0.5 with weights {'1' * 12}, but the folder holds {sha[:12]}"):
        check_proxy_name(lin, "r0.5", {"proxies": {"r0.5": {"cost": {"params": n}, "proxy_weights_sha256": "1" * 64}}},
                         "x.json")
    with pytest.raises(ValueError, match="does not name the weights of r0.5"):
        check_proxy_name(lin, "r0.5", {"proxies": {"r0.5": {"cost": {"params": n}}}}, "old.json")


def test_committed_fidelity_record_renders_for_every_proxy():
    from pathlib import Path

    from proxy_artifacts.card import fidelity_section

    p = Path(__file__).resolve().parents[1] / "metrics" / "fidelity.json"
    fid = json.loads(p.read_text())
    for name in fid.get("proxies") or {}:
        text = fidelity_section(fid, name)
        for f in fid.get("faults") or []:
            assert f"| {f} (" in text, (name, f)


def test_fidelity_section_reads_the_capability_block_fix_columns_and_controls():
    """The fidelity record's newer shape: per-model ``capability`` (before / after pairs, the RL gain with
    its interval), ``faults`` as a table with the fix and its rate, ``<fault>+fix`` runs beside the faults."""
    from proxy_artifacts.card import fidelity_section

    cap = {"edge_reward_before": 0.3, "edge_reward_after": [0.4, 0.5], "heldout_acc_before": 0.8,
           "heldout_acc_after": [0.8, 0.82], "rl_gain_edge": {"mean": 15.0, "ci95": [5.0, 25.0], "n": 2}}
    fid = {"base": {"capability": cap}, "proxies": {"r0.5": {"capability": dict(cap, edge_reward_before=0.2)}},
           "faults": {"logprob_bf16": {"fix": "fp16 rollouts | replay", "fix_rate": {"k": 0, "n": 3, "rate": 0.0}}},
           "fault_kinds": {"logprob_bf16": ["logprob_mismatch"]},
           "rates": {"models": {"base": {"logprob_bf16": {"detection": {"k": 3, "n": 3}},
                                         "logprob_bf16+fix": {"detection": {"k": 0, "n": 3}}},
                                "r0.5": {"logprob_bf16": {"detection": {"k": 3, "n": 3},
                                                          "reproduction": {"k": 3, "n": 3}}},
                                "r0.5_random_experts": {"logprob_bf16": {"reproduction": {"k": 3, "n": 3}}}},
                     "base_self": {"logprob_bf16": {"k": 3, "n": 3}}}}
    text = fidelity_section(fid, "r0.5")
    assert "| base | edge_reward | 0.3 | 0.45 (mean of 2 seeds, 0.4-0.5) |" in text
    assert "| r0.5 | heldout_acc | 0.8 | 0.81 (mean of 2 seeds, 0.8-0.82) |" in text
    assert "base 15 [5, 25] (n 2)" in text
    assert "r0.5_random_experts reproduction (control)" in text and "logprob_bf16+fix" not in text
    assert "| logprob_bf16 (logprob_mismatch) | 3/3 | 3/3 | 3/3 | 3/3 | 3/3 | fp16 rollouts / replay | 0/3 |" in text


def test_fidelity_section_takes_the_control_columns_from_the_controls_block():
    """With a ``controls`` block for the proxy (metrics/fidelity.json, proxy_artifacts/controls.py), the card
    names its controls, shows every model's magnitude score with pass / fail and whether the proxy reproduces
    the fault beyond its controls."""
    from proxy_artifacts.card import fidelity_section

    def ent(k, n, passes, **kw):
        return {"score": {"k": k, "n": n, "rate": round(k / n, 4), "ci95": [0.1, 0.9]}, "passes": passes, **kw}

    fid = {"faults": {"lr_spike": {"fix": "the scheduled lr"}}, "fault_kinds": {"lr_spike": ["kl_blowup"]},
           "rates": {"models": {"base": {"lr_spike": {"detection": {"k": 3, "n": 3}}},
                                "r0.5": {"lr_spike": {"detection": {"k": 3, "n": 3}, "reproduction": {"k": 3, "n": 3}}},
                                "control_reinit": {"lr_spike": {"reproduction": {"k": 3, "n": 3}}}},
                     "base_self": {"lr_spike": {"k": 3, "n": 3}}},
           "controls": {"r0.5": {"controls": ["control_reinit"], "faults": {"lr_spike": {
               "proxy": ent(15, 15, True), "controls": {"control_reinit": ent(6, 15, False, beaten=True)},
               "reproduces": True}}}}}
    text = fidelity_section(fid, "r0.5")
    assert "r0.5 magnitude score | control_reinit magnitude score (control) | r0.5 reproduces beyond the controls" in text
    assert "| 3/3 | 15/15 [0.10, 0.90] pass | 6/15 [0.10, 0.90] fail | True |" in text
    assert "No control model" not in text
    # the controls are named from the record: only control_reinit is there, so no random-expert control is named
    note = text.split("Magnitude score:")[1]
    assert "`control_reinit` (this proxy's architecture with re-initialised weights)" in note
    assert "random" not in note and "output merge" not in note and "output-space merge" not in note
    fid["controls"]["r0.5"]["controls"] = ["control_my_kind"]
    assert "`control_my_kind`." in fidelity_section(fid, "r0.5").split("Magnitude score:")[1]


def test_fidelity_section_says_when_the_rl_gain_intervals_include_zero():
    """An RL gain whose 95% interval contains 0 is named as no measurable gain; one above 0 is not."""
    from proxy_artifacts.card import fidelity_section

    def fid(base_ci, proxy_ci):
        return {"base": {"capability": {"rl_gain_edge": {"mean": 2.3, "ci95": base_ci, "n": 5}}},
                "proxies": {"r0.5": {"capability": {"rl_gain_edge": {"mean": 2.0, "ci95": proxy_ci, "n": 5}}}}}

    text = fidelity_section(fid([-1.9, 6.6], [-0.9, 4.8]), "r0.5")
    assert "Both intervals include 0" in text and "edge reward of base or r0.5" in text
    text = fidelity_section(fid([0.5, 6.6], [-0.9, 4.8]), "r0.5")
    assert "The interval of r0.5 includes 0" in text and "Both" not in text
    text = fidelity_section(fid([0.5, 6.6], [0.1, 4.8]), "r0.5")
    assert "include" not in text


def test_fidelity_section_names_faults_a_control_reproduces_by_signature():
    """A control whose signature matches the base's on any seed is listed with its rate, beside the magnitude
    verdict; a control at 0/3 is not listed, and without such a match the sentence is absent."""
    from proxy_artifacts.card import fidelity_section

    rep = {"logprob_bf16": {"reproduction": {"k": 3, "n": 3}}, "lr_spike": {"reproduction": {"k": 0, "n": 3}}}
    fid = {"fault_kinds": {"logprob_bf16": ["logprob_mismatch"], "lr_spike": ["kl_blowup"]},
           "rates": {"models": {"base": {"logprob_bf16": {"detection": {"k": 3, "n": 3}},
                                         "lr_spike": {"detection": {"k": 3, "n": 3}}},
                                "r0.5": {"logprob_bf16": {"reproduction": {"k": 3, "n": 3}},
                                         "lr_spike": {"reproduction": {"k": 3, "n": 3}}},
                                "control_reinit": rep}},
           "controls": {"r0.5": {"controls": ["control_reinit"], "faults": {}, "reproduces": ["logprob_bf16"]}}}
    text = fidelity_section(fid, "r0.5")
    assert "Reproduced beyond the controls on magnitudes (`controls.r0.5.reproduces`): `logprob_bf16`." in text
    line = next(x for x in text.splitlines() if x.startswith("By signature alone"))
    assert "`logprob_bf16` (control_reinit 3/3)" in line and "lr_spike" not in line
    rep["logprob_bf16"]["reproduction"]["k"] = 0
    assert "By signature alone" not in fidelity_section(fid, "r0.5")


def test_fidelity_section_names_controls_of_a_record_without_a_block_only_by_proxy_prefix():
    """Without a ``controls`` block a control counts for a proxy only when its name starts with the
    proxy's; a control naming no proxy is not shown as anybody's column."""
    from proxy_artifacts.card import controls_of, fidelity_section

    fid = copy.deepcopy(FIDELITY)
    del fid["controls"]
    fid["rates"]["models"]["r0.25_random_experts"] = {"lr_spike": {"reproduction": {"k": 0, "n": 3}}}
    fid["proxies"]["r0.25"] = {}
    assert controls_of(fid, "r0.5") == ([], {}, ["control_random_experts"])
    assert controls_of(fid, "r0.25") == (["r0.25_random_experts"], {}, ["control_random_experts"])
    text = fidelity_section(fid, "r0.5")
    assert "(control)" not in text and "`control_random_experts` name no proxy" in text


# ----------------------------------------------------------------- the committed record's control columns

CONTROLS_PROXY = "r0.5"  # proxy.fidelity.controls.keep_ratio: 0.5 -> the controls block of metrics/fidelity.json


def _committed(name: str) -> dict:
    return json.loads((ROOT / "metrics" / name).read_text())


def _card_of(proxy: str, fidelity: dict | None = None) -> str:
    """The card of ``proxy`` as ``publish --fidelity metrics/fidelity.json --base-metrics metrics/proxy_base.json``
    renders it from the committed metrics (prune metrics ``metrics/proxy_<proxy>.json``; ``fidelity``: another
    record in place of the committed one)."""
    from proxy_artifacts.card import card_text

    m = _committed(f"proxy_{proxy}.json")
    lin = {"base_model_id": "local:test", "base_revision": "r0", "family": "qwen3_moe", "stats_sha256": "0" * 64,
           "method": m.get("method", "usage_cluster"), "keep_ratio_requested": m["keep_ratio"],
           "keep_ratio_effective": m["keep_ratio_effective"], "experts_base": 64, "experts_kept": 32, "params": {}}
    return card_text(lin, m, fidelity=fidelity or _committed("fidelity.json"), proxy_name=proxy,
                     base_metrics=_committed("proxy_base.json"))


def _faults_table(card: str) -> tuple[list[str], dict[str, list[str]]]:
    """(header cells, {fault name: row cells}) of the card's faults table."""
    lines = [ln for ln in card.splitlines() if ln.startswith("| ")]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| fault (signature) |"))
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for ln in lines[start + 1:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(head):
            break
        rows[cells[0].split(" ")[0]] = cells
    return head, rows


def test_committed_record_control_columns_equal_the_record_for_every_control_and_fault():
    """The card of the keep-0.5 proxy from the committed metrics: one magnitude-score column per control of
    ``controls.r0.5.controls`` (in the record's order), a row for every fault of the record and for the healthy
    row ``none``, and every verdict cell (proxy, each control: pass / fail; reproduces beyond the controls) equal
    to the record's value."""
    fid = _committed("fidelity.json")
    blk = fid["controls"][CONTROLS_PROXY]
    head, rows = _faults_table(_card_of(CONTROLS_PROXY))
    controls = blk["controls"]
    assert controls, "the committed record has no controls of r0.5"
    assert [h[:-len(" magnitude score (control)")] for h in head if h.endswith("magnitude score (control)")] == controls
    faults = sorted({f for f in fid["faults"]} | {f for f in blk["faults"] if "+" not in f})
    assert "none" in faults and set(rows) == set(faults)
    checked = 0
    for f in faults:
        rec, cells = blk["faults"][f], dict(zip(head, rows[f]))
        assert cells[f"{CONTROLS_PROXY} magnitude score"].split()[-1] == ("pass" if rec["proxy"]["passes"] else "fail")
        assert cells[f"{CONTROLS_PROXY} reproduces beyond the controls"] == str(rec["reproduces"])
        for c in controls:
            cell = cells[f"{c} magnitude score (control)"]
            assert cell.split()[-1] == ("pass" if rec["controls"][c]["passes"] else "fail"), (f, c, cell)
            sc = rec["controls"][c]["score"]
            assert cell.startswith(f"{sc['k']}/{sc['n']}"), (f, c, cell)
            checked += 1
    assert checked == len(faults) * len(controls)


def test_committed_record_cards_say_only_what_their_records_hold():
    """Card wording against the committed fidelity record: the fault table's intro mentions a control's column only on
    the card that has control columns (r0.5); swapped_operator's base-with-the-fix rate is its routing-replay
    runs' 0/6 (the base's reference seeds), and a fault whose catalog row says no run applies the fix (the record with swapped_operator's
    ``fix_run_exists`` set False) shows "-", not a rate; lr_spike, whose fix is the healthy run, shows the
    held-out healthy runs' 0/12; the magnitude note says a pass also needs the signature on min_seed_share of
    the seeds; the per-seed cells and the seeds separating r0.5 from each control (on fp16_no_loss_scaling r0.5
    matched 5, 5, 5 of 5 cells, control_random_experts 1, 3, 1: ahead on 3 seeds; control_random_output_merge
    5, 4, 5: ahead on 1 seed; control_reinit and control_dense 1, 1, 1: ahead on all 3) are on the card with the
    caveat; the card lists the faults reproduced beyond the controls (fp16_no_loss_scaling and
    skip_actor_update) and the pooled run distance difference per control; r0.125's intended use counts the
    faults it reproduces; r0.5's card gives its RL gain, and a card points to the longer study exactly when its
    RL-gain interval holds 0 (none of the committed record's does: r0.125 gains 17.8 [9.6, 26.1] points)."""
    r05, r025, r0125 = (_card_of(p) for p in ("r0.5", "r0.25", "r0.125"))
    intro = "a control's match on the same rule is in its column beside it"
    assert intro in r05 and intro not in r025 and intro not in r0125
    for card in (r05, r0125):
        head, rows = _faults_table(card)
        fix = head.index("base with the fix")
        assert rows["swapped_operator"][fix] == "0/6 [0.00, 0.39]"
        assert rows["swapped_operator"][fix - 1].startswith("routing replay (R3")
        assert rows["lr_spike"][fix] == "0/12 [0.00, 0.24]"
    fid = _committed("fidelity.json")
    fid["faults"]["swapped_operator"]["fix_run_exists"] = False
    head, rows = _faults_table(_card_of("r0.5", fid))
    assert rows["swapped_operator"][head.index("base with the fix")] == "-"
    assert ("and, for a fault with a signature, its signature also reproduces the base's on at least "
            "`min_seed_share` (0.6667) of the seeds") in r05
    # columns: r0.5, then random_experts, random_output_merge, reinit, dense; then the seeds r0.5 is ahead on
    assert ("| fp16_no_loss_scaling | 5/5, 5/5, 5/5 | 1/5, 3/5, 1/5 | 5/5, 4/5, 5/5 | 1/5, 1/5, 1/5 | 1/5, 1/5, 1/5 "
            "| 3 of 3 | 1 of 3 | 3 of 3 | 3 of 3 |") in r05
    assert "The (seed, quantity) cells are not independent draws" in r05
    assert ("Reproduced beyond the controls on magnitudes (`controls.r0.5.reproduces`): `fp16_no_loss_scaling` "
            "(seeds where r0.5 matched more cells than the control: control_dense 3 of 3") in r05
    assert ("Pooled over every fault a control ran (`controls.r0.5.overall`), the mean run distance difference, "
            "control minus r0.5 (positive: r0.5 is closer to the base), with its 95% interval over the paired runs: "
            "control_dense +2.562 [+2.420, +2.705]; control_random_experts +1.526 [+1.343, +1.710]; "
            "control_random_output_merge +0.258 [+0.154, +0.362]; control_reinit +2.522 [+2.367, +2.676].") in r05
    assert ("Of the 6 faults the base shows by signature (`metrics/fidelity.json`), this proxy reproduces 5 on every "
            "seed (`fp16_no_loss_scaling`, `logprob_bf16`, `lr_spike`, `skip_actor_update`, `swapped_operator`), 1 on "
            "some seeds (`fp16_overflow` 2/3) and 0 on none (-)") in r0125
    assert "this proxy reproduces 5 on every seed" in r05
    assert "beyond its negative controls on magnitudes: 2 (`fp16_no_loss_scaling`, `skip_actor_update`)" in r05
    assert "RL gain on the edge task set" in r05 and "r0.5 28.91 [26.36, 31.45] (n 5)" in r05
    assert "r0.125 17.81 [9.552, 26.07] (n 5)" in r0125
    gain = _committed("fidelity.json")["rl_gain_edge"]
    for name, card in (("r0.5", r05), ("r0.25", r025), ("r0.125", r0125)):
        holds_zero = any(lo <= 0 <= hi for lo, hi in (gain[name]["ci95"], gain["base"]["ci95"]))
        assert ("did not measurably raise the edge reward" in card) == holds_zero, name


@pytest.mark.parametrize("proxy", ["r0.25", "r0.125"])
def test_committed_record_card_of_another_proxy_does_not_present_r05_controls_as_its_own(proxy):
    """The controls are measured against r0.5 only: the card of r0.25 / r0.125 has no control column, and it
    says where r0.5's controls are."""
    fid = _committed("fidelity.json")
    assert proxy not in fid["controls"], "the record now has controls of this proxy: test the columns instead"
    card = _card_of(proxy)
    head, rows = _faults_table(card)
    assert not [h for h in head if "control" in h] and "none" not in rows
    for c in fid["controls"][CONTROLS_PROXY]["controls"]:
        assert f"`{c}`" in card
    assert "measured against the keep-0.5 proxy `r0.5`" in card and "under `controls.r0.5`" in card
    assert "No negative control was measured against this proxy" in card


def _readme_publish_block() -> list[str]:
    """The README's bash block with ``python -m proxy_artifacts publish``, one command a line
    (backslash continuations joined, comments dropped)."""
    import re

    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "proxy_artifacts publish" in b)
    return [shlex.join(shlex.split(c, comments=True)) for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def test_readme_publish_command_puts_the_control_columns_on_the_card(proxy_dir, tmp_path):
    """The README's publish command (its flags, its repo name, the committed metrics it names), run as a
    user runs it against the stand-in Hub (the README's endpoint replaced by the test server's, the proxy
    folder by a tiny proxy, and in a copy of the committed fidelity record that proxy's parameter count by
    the tiny one's: publish checks that the folder is the named proxy), gives a card with the control
    columns of the committed record."""
    import subprocess
    import sys

    folder, proxy = proxy_dir
    cmds = _readme_publish_block()
    env_line = shlex.split(next(c for c in cmds if c.startswith("export ")))[1:]
    env = dict(kv.split("=", 1) for kv in env_line)
    pub = shlex.split(next(c for c in cmds if " proxy_artifacts publish " in c))
    pull_spec = shlex.split(next(c for c in cmds if " proxy_artifacts pull " in c))[4]
    assert pub[:4] == ["python", "-m", "proxy_artifacts", "publish"] and "HF_ENDPOINT" in env and "HF_TOKEN" in env
    args = pub[4:]
    repo, name = args[1], args[args.index("--name") + 1]
    assert pull_spec == f"{repo}@<sha>"
    i = args.index("--fidelity") + 1
    rec = json.loads((ROOT / args[i]).read_text())
    rec["proxies"][name]["cost"]["params"] = proxy.num_parameters()
    rec["proxies"][name]["proxy_weights_sha256"] = json.loads((folder / "lineage.json").read_text())["proxy_weights_sha256"]
    args[i] = str(tmp_path / "fidelity.json")
    Path(args[i]).write_text(json.dumps(rec))
    # publish checks that the base metrics are of the proxy's base: the tiny proxy's base revision in a copy
    j = args.index("--base-metrics") + 1
    bm = {**json.loads((ROOT / args[j]).read_text()),
          "weights_sha256": json.loads((folder / "lineage.json").read_text())["base_revision"]}
    args[j] = str(tmp_path / "proxy_base.json")
    Path(args[j]).write_text(json.dumps(bm))
    with HubStandIn() as hub:
        run_env = {**os.environ, "HF_TOKEN": env["HF_TOKEN"], "HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0",
                   "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-m", "proxy_artifacts", "publish", str(folder), *args[1:]], cwd=ROOT,
                             env=run_env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        sha = out.stdout.split()[-1]
        got = pull(pull_spec.replace("<sha>", sha), endpoint=hub.endpoint, token=TOKEN, cache_dir=tmp_path / "cache")
    card = (got / "README.md").read_text()
    head, rows = _faults_table(card)
    controls = _committed("fidelity.json")["controls"][name]["controls"]
    assert [h for h in head if h.endswith("magnitude score (control)")] == [
        f"{c} magnitude score (control)" for c in controls]
    assert "none" in rows and "chance level" in card


def test_hub_weights_hash_reads_the_lfs_hashes_the_hub_lists(tmp_path):
    """With the Hub's LFS sha256 per file (what huggingface.co lists; the stand-in lists none, so the
    publish tests take the download path), the repo's weights hash is ``checkpoint.weights_sha256``'s
    rule over the top-level ``*.safetensors`` without downloading anything."""
    import hashlib
    from types import SimpleNamespace

    from huggingface_hub.hf_api import BlobLfsInfo, RepoSibling

    from proxy_artifacts.checkpoint import weights_sha256
    from proxy_artifacts.hub import hub_weights_sha256

    for name, data in (("model-00002.safetensors", b"two"), ("model-00001.safetensors", b"one")):
        (tmp_path / name).write_bytes(data)
    sib = [RepoSibling(rfilename=n, lfs=BlobLfsInfo(size=3, sha256=hashlib.sha256(d).hexdigest(), pointer_size=1))
           for n, d in (("model-00002.safetensors", b"two"), ("model-00001.safetensors", b"one"))]
    sib += [RepoSibling(rfilename="config.json"), RepoSibling(rfilename="sub/x.safetensors")]

    class Api:
        endpoint, token = "http://unused", None

        def model_info(self, repo_id, revision=None, files_metadata=False):
            assert files_metadata
            return SimpleNamespace(siblings=sib, sha="c" * 40)

    assert hub_weights_sha256(Api(), "org/base") == weights_sha256(tmp_path)
