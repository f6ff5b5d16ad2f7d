"""End-to-end: resume after a kill, and `dvc repro` on a tiny params set (idempotent,
byte-identical rebuild, DuckDB views queryable)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import yaml

from tests.conftest import ROOT, TINY_CONFIGS, write_config_folder

MORE = {  # a few more tiny real architectures so a kill lands mid-run
    "tiny-qwen3-moe": {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "vocab_size": 128,
                       "hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2,
                       "head_dim": 8},
    "tiny-t5": {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "vocab_size": 100, "d_model": 32,
                "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4},
    "tiny-llama-copy": TINY_CONFIGS["tiny-llama"],  # same config under another path: dedupes
}


def _env():
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT)
    env["HF_HUB_OFFLINE"] = "1"
    return env


def _params(tmp: Path, configs: Path) -> Path:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["catalog"].update({"mode": "default", "default": [], "local_dir": str(configs), "limit": None})
    params["extract"].update({"workers": 2, "timeout_s": 120})
    params["extract"]["capture"]["seq_len"] = 8
    p = tmp / "params.yaml"
    p.write_text(yaml.safe_dump(params))
    return p


def test_capture_resumes_after_kill(tmp_path):
    configs = write_config_folder(tmp_path / "configs", {**TINY_CONFIGS, **MORE})
    params = _params(tmp_path, configs)
    env = _env()
    cat = tmp_path / "models.parquet"
    subprocess.run([sys.executable, "-m", "extract", "catalog", "--params", str(params), "--out", str(cat)],
                   check=True, env=env, cwd=ROOT, capture_output=True)
    cmd = [sys.executable, "-m", "extract", "capture", "--params", str(params), "--catalog", str(cat),
           "--out", str(tmp_path / "extract"), "--store", str(tmp_path / "store"), "--work", str(tmp_path / "work"),
           "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and not list((tmp_path / "work").glob("*/*/result.json")):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.parent.name for p in (tmp_path / "work").glob("*/*/result.json")}
    assert 1 <= len(finished) < 6, "the kill should land mid-run"
    assert not (tmp_path / "extract" / "graphs.parquet").exists()
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert f"{len(finished)} done before" in out.stdout
    log = [json.loads(line) for line in (tmp_path / "work" / "timings.jsonl").read_text().splitlines()]
    rerun = [e["key"] for e in log]
    assert len(rerun) == len(set(rerun)), "no model ran twice to completion"
    ex = pq.read_table(tmp_path / "extract" / "extractions.parquet").to_pylist()
    assert len(ex) == 6 and all(r["status"] == "ok" for r in ex), [(r["model_id"], r["error_message"]) for r in ex]
    graphs = pq.read_table(tmp_path / "extract" / "graphs.parquet").to_pylist()
    by_name = {}
    names = {r["model_id"]: r["name"] for r in pq.read_table(cat).to_pylist()}
    for g in graphs:
        by_name.setdefault(names[g["model_id"]], []).append(g["graph_hash"])
    assert by_name["tiny-llama/config.json"] == by_name["tiny-llama-copy/config.json"]
    assert len({h for hs in by_name.values() for h in hs}) == 5


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_dvc_repro_tiny_params(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for item in ("extract", "dedupe", "curate", "proxy_artifacts", "passnet_common", "dvc.yaml", ".dvcignore", "pyproject.toml"):
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, repo / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, repo / item)
    configs = write_config_folder(tmp_path / "configs", {"tiny-bert": TINY_CONFIGS["tiny-bert"], "tiny-gpt2": TINY_CONFIGS["tiny-gpt2"],
                                                         "tiny-gpt2-again": TINY_CONFIGS["tiny-gpt2"]})
    shutil.copy(_params(tmp_path, configs), repo / "params.yaml")
    env = _env()
    dvc = [sys.executable, "-m", "dvc"]

    def run(*args):
        return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True, check=True)

    run("git", "init", "-q")
    run(*dvc, "init", "-q")
    first = run(*dvc, "repro", "database")
    assert "Running stage 'extract'" in first.stdout
    db = repo / "data" / "passnet.duckdb"
    con = duckdb.connect(str(db), read_only=True)
    os.chdir(repo)
    try:
        n_models, n_graphs = con.execute("SELECT count(*), sum(num_graphs) FROM extractions WHERE status = 'ok'").fetchone()
        shared = con.execute("SELECT num_models FROM unique_graphs ORDER BY num_models DESC LIMIT 1").fetchone()[0]
        sdpa = con.execute("SELECT count(DISTINCT graph_hash) FROM nodes WHERE target LIKE '%scaled_dot_product_attention%'").fetchone()[0]
    finally:
        con.close()
        os.chdir(ROOT)
    assert (n_models, n_graphs) == (3, 3)
    assert shared == 2  # the two identical gpt2 configs share one graph
    assert sdpa >= 1
    metrics = json.loads((repo / "metrics" / "dataset.json").read_text())
    assert metrics["models_captured"] == 3 and metrics["unique_graphs"] == 2 and metrics["dedup_ratio"] == 1.5
    meta = pq.read_schema(repo / "data" / "extract" / "graphs.parquet").metadata
    assert meta[b"passnet.networkx_version"].decode() == __import__("networkx").__version__

    second = run(*dvc, "repro", "database")
    assert "Running stage" not in second.stdout  # nothing to do

    tables = ["data/extract/models.parquet", "data/extract/extractions.parquet", "data/extract/graphs.parquet",
              "data/dedupe/unique_graphs.parquet", "data/dedupe/nodes.parquet"]
    before = {t: _sha(repo / t) for t in tables}
    store_before = sorted(str(p.relative_to(repo)) + _sha(p) for p in (repo / "data" / "graph_store").rglob("*") if p.is_file())
    shutil.rmtree(repo / "data")
    run(*dvc, "repro", "-f", "database")  # rebuild from scratch
    assert {t: _sha(repo / t) for t in tables} == before
    assert sorted(str(p.relative_to(repo)) + _sha(p) for p in (repo / "data" / "graph_store").rglob("*") if p.is_file()) == store_before
