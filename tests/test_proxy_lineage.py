"""Proxy correctness leftovers: lineage covers every file, group-limited routing
floors, MTP layers, requested vs effective keep ratio, one-line CLI errors, file modes."""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from proxy_artifacts.adapters import adapter_for, expert_count, moe_blocks
from proxy_artifacts.checkpoint import verify_lineage, write_proxy
from proxy_artifacts.hub import is_pinned, parse_spec, pull
from proxy_artifacts.prune import keep_count, prune_model
from tests.proxy_helpers import random_ids, tiny_model

ROOT = Path(__file__).resolve().parents[1]


def _lineage(k: int, E: int, ratio: float, **extra) -> dict:
    return {"base_model_id": "local:test", "base_revision": "r0", "family": "qwen3_moe", "stats_sha256": "0" * 64,
            "method": "frequency", "keep_ratio_requested": ratio, "keep_ratio_effective": k / E,
            "experts_base": E, "experts_kept": k, "params": {}, **extra}


@pytest.fixture(scope="module")
def proxy_folder(tmp_path_factory):
    from proxy_artifacts.corpus import build_tokenizer

    base = tiny_model("qwen3_moe", vocab_size=259)
    kept = {b.name: [0, 2, 5, 7] for b in moe_blocks(base, adapter_for(base.config))}
    proxy = prune_model(copy.deepcopy(base), kept)
    out = tmp_path_factory.mktemp("lin") / "proxy"
    write_proxy(proxy, build_tokenizer(), out, kept, _lineage(4, 8, 0.5), {"params_proxy": proxy.num_parameters()})
    return out


def _copy(folder: Path, tmp_path: Path) -> Path:
    import shutil

    dst = tmp_path / "copy"
    shutil.copytree(folder, dst)
    return dst


def test_lineage_lists_every_file_of_the_checkpoint(proxy_folder):
    lin = json.loads((proxy_folder / "lineage.json").read_text())
    on_disk = sorted(p.name for p in proxy_folder.iterdir() if p.name != "lineage.json")
    assert sorted(lin["files"]) == on_disk
    for must in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "README.md",
                 "kept_experts.json", "generation_config.json"):
        assert must in lin["files"], must
    assert verify_lineage(proxy_folder)["experts_kept"] == 4


@pytest.mark.parametrize("edit", [
    ("config.json", lambda c: {**c, "num_experts_per_tok": 1}),
    ("config.json", lambda c: {**c, "norm_topk_prob": not c["norm_topk_prob"]}),
    ("tokenizer_config.json", lambda c: {**c, "eos_token": "<pad>"}),
])
def test_verify_lineage_rejects_edited_config_or_tokenizer(proxy_folder, tmp_path, edit):
    name, fn = edit
    f = _copy(proxy_folder, tmp_path) / name
    f.write_text(json.dumps(fn(json.loads(f.read_text()))))
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        verify_lineage(f.parent)


def test_verify_lineage_rejects_added_or_removed_files(proxy_folder, tmp_path):
    d = _copy(proxy_folder, tmp_path)
    (d / "chat_template.jinja").write_text("{{ messages }}")
    with pytest.raises(ValueError, match="not covered.*chat_template"):
        verify_lineage(d)
    (d / "chat_template.jinja").unlink()
    (d / "tokenizer.json").unlink()
    with pytest.raises(ValueError, match="missing.*tokenizer.json"):
        verify_lineage(d)
    d2 = _copy(proxy_folder, tmp_path / "2")
    (d2 / ".gitattributes").write_text("*.safetensors filter=lfs\n")  # the Hub adds this one
    verify_lineage(d2)


def test_usual_file_modes(proxy_folder):
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(proxy_folder.stat().st_mode) == 0o777 & ~mask
    for f in proxy_folder.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~mask, f.name


def test_card_and_lineage_record_requested_and_effective_ratio(tmp_path):
    # 16 experts, n_group=8, top_k=8: ratio 0.01 floors to the top-k/group minimum and keeps all 16
    k = keep_count(16, 0.01, 8, 8, None, topk_group=8)
    assert k == 16
    base = tiny_model("qwen3_moe")
    kept = {b.name: list(range(8)) for b in moe_blocks(base, adapter_for(base.config))}
    out = write_proxy(prune_model(copy.deepcopy(base), kept), None, tmp_path / "p", kept, _lineage(8, 8, 0.01))
    lin = verify_lineage(out)
    assert (lin["keep_ratio_requested"], lin["keep_ratio_effective"]) == (0.01, 1.0)
    card = (out / "README.md").read_text()
    assert "requested 0.01" in card and "effective 1.0" in card
    with pytest.raises(KeyError, match="keep_ratio_effective"):
        bad = _lineage(8, 8, 0.01)
        del bad["keep_ratio_effective"]
        write_proxy(prune_model(copy.deepcopy(base), kept), None, tmp_path / "q", kept, bad)


def test_card_states_calibration_accuracy_licence_and_use():
    from proxy_artifacts.checkpoint import card_text

    cal = {"dataset": "builtin", "categories": ["text", "code"], "stats_windows_per_category": 96, "stats_seq_len": 128,
           "merge_windows_per_category": 32, "corpus_sha256": "ab" * 32}
    built_here = {"model_type": "qwen3_moe", "corpus_sha256": "ab" * 32, "steps": 600, "task": "reverse"}
    card = card_text(_lineage(4, 8, 0.5, calibration=cal, merge="output", base_training=built_here),
                     {"task_acc_base": 0.77, "task_acc_proxy": 0.71})
    assert "calibration data: `builtin` (categories ['text', 'code']; 96 windows of 128 tokens" in card
    assert "32 training-split windows" in card and "ab" * 32 in card
    assert "base 0.77, proxy 0.71" in card
    assert "32 training-split windows" not in card_text(_lineage(4, 8, 0.5, calibration=cal, merge="none"), None)
    assert "licence: the builtin base is trained here on CPython standard-library text" in card and "PSF-2.0" in card
    assert "intended use:" in card
    assert "calibration data: not recorded" in card_text(_lineage(4, 8, 0.5), None)


# ----------------------------------------------------------------- DeepSeek-V3 group-limited routing


@pytest.mark.parametrize("E,ratio,top_k,n_group,topk_group,want", [
    (16, 0.5, 4, 4, 1, 16),   # the case: 2 per group cannot serve top-4 from one group -> 4 per group
    (32, 0.25, 3, 4, 1, 12),  # floor 8 -> 2/group -> ceil(3/1)=3/group
    (32, 0.25, 4, 4, 2, 8),   # ceil(4/2) = 2/group: the old floor suffices
    (64, 0.125, 8, 8, 4, 16),
])
def test_keep_count_group_floor(E, ratio, top_k, n_group, topk_group, want):
    assert keep_count(E, ratio, top_k, n_group, None, topk_group) == want


def test_keep_count_refuses_unservable_groups():
    with pytest.raises(ValueError, match=r"group-limited routing needs >= 5 kept experts in each of 4 groups"):
        keep_count(16, 0.5, 5, 4, None, topk_group=1)


def _route_indices(model, ids):
    got = []
    hooks = [b.router.register_forward_hook(lambda m, i, o: got.append(o[2].clone()))
             for b in moe_blocks(model, adapter_for(model.config))]
    with torch.no_grad():
        model(ids)
    for h in hooks:
        h.remove()
    return got


def test_group_limited_proxy_routes_only_inside_chosen_groups():
    """n_group=4, topk_group=1, top_k=3 on 32 experts: every token's experts lie in ONE group, in the
    base and in the proxy kept at 0.25 (3 per group), and too small a kept set is refused."""
    base = tiny_model("deepseek_v3", n_routed_experts=32, n_group=4, topk_group=1, num_experts_per_tok=3)
    a = adapter_for(base.config)
    k = keep_count(32, 0.25, 3, 4, None, 1)
    assert k == 12
    kept = {b.name: [g * 8 + j for g in range(4) for j in (0, 3, 6)] for b in moe_blocks(base, a)}
    proxy = prune_model(copy.deepcopy(base), kept)
    ids = random_ids(seq=16)
    for model, size in ((base, 8), (proxy, 3)):
        for idx in _route_indices(model, ids):
            groups = idx // size
            assert (groups == groups[:, :1]).all(), "a token was routed outside its chosen group"
    two_per_group = {b.name: [g * 8 + j for g in range(4) for j in (0, 3)] for b in moe_blocks(base, a)}
    with pytest.raises(ValueError, match=r"ceil\(top_k=3 / topk_group=1\)"):
        prune_model(copy.deepcopy(base), two_per_group)


def test_mtp_layers_key_set_to_zero_and_stated_on_card(tmp_path):
    base = tiny_model("deepseek_v3", num_nextn_predict_layers=1)
    assert base.config.num_nextn_predict_layers == 1
    a = adapter_for(base.config)
    kept = {b.name: [g * 4 + j for g in range(4) for j in (0, 2)] for b in moe_blocks(base, a)}
    proxy = prune_model(copy.deepcopy(base), kept)
    assert proxy.config.num_nextn_predict_layers == 0 and proxy.config.num_mtp_layers == 0
    lin = _lineage(8, 16, 0.5, family="deepseek_v3", mtp_layers_base=1)
    out = write_proxy(proxy, None, tmp_path / "p", kept, lin)
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(out).num_nextn_predict_layers == 0
    assert "MTP layers: the base declares 1" in (out / "README.md").read_text()
    assert expert_count(AutoConfig.from_pretrained(out), a) == 8


# ----------------------------------------------------------------- CLI errors, pinned pulls


@pytest.mark.parametrize("args,needle", [
    (["pull", "org/p@@x"], "bad proxy spec"),
    (["pull", "org/p"], "unpinned"),
    (["pull", "org/p@main"], "unpinned"),
    (["pull", "no-such-org/no-such-repo@" + "a" * 40, "--endpoint", "{hub}"], "pull no-such-org/no-such-repo@"),
    (["publish", "{tmp}", "org/p"], "no lineage.json"),
])
def test_cli_errors_are_one_line_exit_2(args, needle, tmp_path, capsys, monkeypatch):
    """In process through the same wrapper as ``python -m proxy_artifacts`` (``run_cli(main)``)."""
    import huggingface_hub.constants as c

    from passnet_common.cli import run_cli
    from passnet_common.hub_standin import HubStandIn
    from proxy_artifacts.__main__ import main

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", False)
    with HubStandIn() as hub:  # a local Hub that answers 404 for unknown repos
        args = [a.replace("{tmp}", str(tmp_path)).replace("{hub}", hub.endpoint) for a in args]
        rc = run_cli(lambda: main(args + (["--cache-dir", str(tmp_path / "c")] if args[0] == "pull" else [])))
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err


def test_cli_entry_point_uses_the_one_line_wrapper(tmp_path):
    r = subprocess.run([sys.executable, "-m", "proxy_artifacts", "pull", "org/p@@x"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.strip() == "error: bad proxy spec 'org/p@@x'; expected owner/name[@revision]"


def test_pull_refuses_unpinned_unless_asked():
    assert is_pinned("0123456789abcdef0123456789abcdef01234567") and not is_pinned("main") and not is_pinned(None)
    with pytest.raises(ValueError, match="unpinned"):
        pull("org/p@main")
    assert parse_spec("org/p@main") == ("org/p", "main")
    # asked: the revision check passes and the (offline) download itself is what fails, as one ValueError
    with pytest.raises(ValueError, match="pull org/p@main"):
        pull("org/p@main", allow_unpinned=True)
