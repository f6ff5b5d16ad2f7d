"""The proxy base rebuilds from the repository alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.slow
def test_base_rebuilds_to_the_committed_metrics(tmp_path, monkeypatch):
    """Train the default base from params.yaml into a temporary folder, with the interpreter's
    stdlib folder pointed at nothing (no environment file may enter), and get the committed
    metrics/proxy_base.json figures exactly (training is deterministic on one CPU build)."""
    import sysconfig

    from passnet_common.params import load_params
    from proxy_artifacts.base_model import train_base

    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: {"stdlib": str(tmp_path / "no-stdlib")})
    want = json.loads((ROOT / "metrics" / "proxy_base.json").read_text())
    got = train_base(load_params(ROOT / "params.yaml", "proxy")["base"], tmp_path / "base")
    assert got["corpus_sha256"] == want["corpus_sha256"]
    assert got["task_acc_heldout"] == want["task_acc_heldout"]
    assert got["final_loss"] == want["final_train_loss"]
