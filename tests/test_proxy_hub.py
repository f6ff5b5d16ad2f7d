"""publish / pull round-trip against the local Hub stand-in (no network)."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from transformers import AutoModelForCausalLM

from passnet_common.hub_standin import HubStandIn
from proxy_artifacts.adapters import adapter_for, moe_blocks
from proxy_artifacts.checkpoint import write_proxy
from proxy_artifacts.hub import parse_spec, publish, pull
from proxy_artifacts.prune import prune_model
from tests.proxy_helpers import random_ids, tiny_model

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
               "method": "frequency", "keep_ratio_requested": 0.5, "keep_ratio_effective": 0.5, "experts_base": 8, "experts_kept": 4, "params": {}}
    return write_proxy(proxy, None, tmp_path / "proxy", kept, lineage, {"params_proxy": proxy.num_parameters()}), proxy


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
