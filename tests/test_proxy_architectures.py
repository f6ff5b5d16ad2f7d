"""The six MoE families end to end (tiny random-init configs, offline Hub stand-in): statistics ->
prune -> publish -> pull -> plain from_pretrained -> one GRPO step, one test per family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from passnet_common.hub_standin import HubStandIn
from passnet_common.params import load_params
from proxy_artifacts import architectures as arch
from proxy_artifacts.adapters import ADAPTERS

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "hf_standin_token"


@pytest.fixture(autouse=True)
def _allow_loopback_hub(monkeypatch):
    """tests/conftest.py sets HF_HUB_OFFLINE=1; these tests talk to the 127.0.0.1 stand-in only."""
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="module")
def hub():
    """One stand-in Hub for every family (as one user's process talks to one Hub: parts of
    huggingface_hub keep the first endpoint they saw for the process)."""
    with HubStandIn() as h:
        yield h


def test_every_adapter_family_has_a_tiny_config():
    assert set(arch.TINY_CONFIGS) == set(ADAPTERS) == set(arch.FAMILY_ORDER)


@pytest.mark.parametrize("family", arch.FAMILY_ORDER)
def test_family_end_to_end(family, tmp_path, hub):
    p = load_params(ROOT / "params.yaml", "proxy")
    r = arch.run_family(family, p, tmp_path, hub.endpoint, TOKEN)
    failed = {s: v for s, v in r["steps"].items() if not v["ok"]}
    assert not failed, failed
    assert r["passed"] and list(r["steps"]) == list(arch.STEPS)
    base, st = r["base"], r["steps"]
    assert base["model_type"] == family
    assert st["prune"]["experts_kept"] == base["experts"] // 2  # keep 0.5 of 8 (DeepSeek-V3: 16, 4 groups of 2)
    assert st["from_pretrained"]["experts"] == st["prune"]["experts_kept"]
    assert st["grpo"]["moe_layers_logged"] == base["moe_layers"]
    # the GRPO step's policy gradient moved the weights (a reward that varies within a group, no aux loss)
    assert st["grpo"]["reward_std"] > 0 and st["grpo"]["grad_norm_total"] > 0 and st["grpo"]["update_norm"] > 0
    assert st["grpo"]["aux_loss_coef"] == 0.0
    # the proxy against the base, tensor by tensor: non-expert (shared experts too), routers, kept experts, refit
    inv = st["invariants"]["tensors_checked"]
    assert inv["non_expert"] > 0 and inv["router"] == len(ADAPTERS[family].router_params) * base["moe_layers"]
    assert (inv["shared_expert"] > 0) == base["shared_experts"]
    if p["prune"]["merge"] == "output":
        assert inv["expert_refit"] == base["moe_layers"] * (2 if family == "gpt_oss" else 1)
        assert st["invariants"]["down_refit_max_rel_diff"] <= 1e-4
    assert 0 < st["invariants"]["kl_base_to_proxy"] < 10
    # the structural facts the card and the table state
    assert base["shared_experts"] == (family in ("qwen2_moe", "deepseek_v3"))
    lin = json.loads((tmp_path / "proxy" / "model" / "lineage.json").read_text())
    assert lin["family"] == family and lin["merge"] == p["prune"]["merge"]
    # the base was loaded by Hub id at a pinned commit, as a user's real MoE is
    repo = f"passnet/tiny-{family.replace('_', '-')}-base"
    assert lin["base_model_id"] == r["base_id"] == f"hf:{repo}@{st['init']['commit']}"
    card = (tmp_path / "proxy" / "model" / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["base_model"] == repo and meta["license"] == arch.BASE_LICENSE  # read from the base's own card
    assert ("the shared experts (never pruned)" in card) == base["shared_experts"]
    assert (f"{family} has no shared experts" in card) == (not base["shared_experts"])


def _sabotage(kind):
    """A wrapper of ``pipeline.prune_model`` that breaks the proxy after an exact prune: ``shared`` zeroes the
    shared experts, ``bias`` zeroes ``e_score_correction_bias``, ``rows`` reverses the router rows."""
    import torch

    from proxy_artifacts import pipeline
    from proxy_artifacts.adapters import adapter_for, moe_blocks

    orig = pipeline.prune_model

    def wrapped(model, kept, *a, **kw):
        m = orig(model, kept, *a, **kw)
        ad = adapter_for(m.config)
        with torch.no_grad():
            for b in moe_blocks(m, ad):
                if kind == "shared":
                    for attr in ad.shared_attrs:
                        for t in getattr(b.block, attr).parameters():
                            t.zero_()
                elif kind == "bias":
                    b.router.e_score_correction_bias.zero_()
                else:
                    b.router.weight.copy_(b.router.weight.flip(0))
        return m

    return wrapped


@pytest.mark.parametrize("family,kind,names", [
    ("qwen2_moe", "shared", "shared_expert"), ("deepseek_v3", "shared", "shared_experts"),
    ("deepseek_v3", "bias", "e_score_correction_bias"), ("deepseek_v3", "rows", "gate.weight is not the base's rows"),
    ("qwen2_moe", "rows", "gate.weight is not the base's rows")])
def test_a_broken_prune_fails_the_family_run(family, kind, names, tmp_path, hub, monkeypatch):
    """Zeroed shared experts, a zeroed correction bias or reversed router rows (each applied after an exact
    prune, by wrapping ``pipeline.prune_model``) pass init / stats / prune but fail ``invariants``, naming
    the tensor; the run stops there (passed false)."""
    from proxy_artifacts import pipeline

    monkeypatch.setattr(pipeline, "prune_model", _sabotage(kind))
    r = arch.run_family(family, load_params(ROOT / "params.yaml", "proxy"), tmp_path, hub.endpoint, TOKEN)
    assert [s for s, v in r["steps"].items() if v["ok"]] == ["init", "stats", "prune"]
    assert not r["passed"] and not r["steps"]["invariants"]["ok"]
    assert names in r["steps"]["invariants"]["error"], r["steps"]["invariants"]["error"]
    assert "publish" not in r["steps"]


def test_markdown_table_marks_failed_steps():
    m = {"command": "python -m proxy_artifacts.architectures", "families": {
        "mixtral": {"name": "Mixtral", "base": {"class": "MixtralForCausalLM", "experts": 8, "top_k": 2,
                                               "shared_experts": False, "router": "softmax"},
                    "merge": "output", "steps": {"init": {"ok": True}, "stats": {"ok": False, "error": "x"}}}}}
    row = arch.markdown(m).splitlines()[2]
    assert "| ok | FAILED | - | - | - | - | - | - | - | - |" in row
