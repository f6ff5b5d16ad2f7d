"""Results are never stale: the attempt key holds our own code, the
Dynamo settings and everything else that shapes a capture; machine-caused failures are
retried; a clone that pulled the outputs is up to date."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from extract.runs.assemble import assemble
from extract.runs.attempts import attempt_details, attempt_key, code_hash, work_dir
from extract.runs.scheduler import capture_all
from extract.sources.rows import row_from_hf_config
from passnet_common.io import atomic_write_json
from tests.conftest import ROOT, TINY_CONFIGS, write_config_folder


def _row(name="tiny-llama"):
    return row_from_hf_config(TINY_CONFIGS[name], f"local:{name}", name, "local")


def _copy_code(dst: Path) -> Path:
    for item in ("extract", "passnet_common"):
        shutil.copytree(ROOT / item, dst / item, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_attempt_key_holds_code_settings_and_versions(tmp_path):
    row = _row()
    details = attempt_details(row, {"seq_len": 8})
    assert set(details) == {"model_id", "config_hash", "library", "library_version", "torch", "canonical_version",
                            "capture", "dynamo", "code"}
    assert details["code"] == code_hash()
    base = attempt_key(row, {"seq_len": 8})
    assert attempt_key(row, {"seq_len": 8}) == base
    assert attempt_key(row, {"seq_len": 8, "dynamo": {"recompile_limit": 8}}) != base
    assert attempt_key(dict(row, library_version="0.0"), {"seq_len": 8}) != base
    # the code hash follows the content of extract/ and the canonical form, not mtimes
    copy = _copy_code(tmp_path / "repo")
    assert code_hash(copy) == code_hash()
    os.utime(copy / "extract" / "capture" / "row.py", (1, 1))
    assert code_hash(copy) == code_hash()
    with open(copy / "passnet_common" / "canonical" / "form.py", "a") as fh:  # the canonical form's package
        fh.write("\n# changed\n")
    h1 = code_hash(copy)
    assert h1 != code_hash()
    (copy / "passnet_common" / "canonical" / "extra.py").write_text("X = 1\n")  # a new module counts too
    assert code_hash(copy) != h1


def test_timeouts_and_oom_are_retried_with_the_attempt_count(tmp_path):
    rows = [_row("tiny-llama"), _row("tiny-bert")]
    capture = {"seq_len": 8}
    work = tmp_path / "work"
    # previous run: llama timed out (machine load), bert failed for a reason of the model
    for row, err in ((rows[0], "timeout"), (rows[1], "exception:ValueError")):
        wd = work_dir(work, attempt_key(row, capture))
        wd.mkdir(parents=True)
        atomic_write_json(wd / "result.json", {"status": "failed", "error_class": err, "error_message": "x",
                                               "mode": None, "fallback_reason": None, "input_spec": [],
                                               "param_count": None, "num_graphs": 0, "num_graph_breaks": 0,
                                               "graphs": [], "attempts": 1})
    counts = capture_all(rows, capture, work, workers=1, timeout_s=300, mem_cap_gb=None, progress=False)
    assert (counts["ran"], counts["retried"], counts["done_before"]) == (1, 1, 1)
    summary = assemble(rows, capture, work, tmp_path / "out", tmp_path / "store")
    ex = {r["model_id"]: r for r in pq.read_table(tmp_path / "out" / "extractions.parquet").to_pylist()}
    assert ex["local:tiny-llama"]["status"] == "ok"
    # the attempt count is bookkeeping: in the work folder, not in the table
    assert "attempts" not in ex["local:tiny-llama"]
    assert json.loads((work_dir(work, attempt_key(rows[0], capture)) / "result.json").read_text())["attempts"] == 2
    assert ex["local:tiny-llama"]["complete"] and ex["local:tiny-llama"]["code_hash"] == code_hash()
    assert json.loads(ex["local:tiny-llama"]["dynamo_json"])["recompile_limit"] == 64
    assert ex["local:tiny-bert"]["status"] == "failed"
    assert summary["not_ok"] == {"failed": {"exception:ValueError": ["local:tiny-bert"]}}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["not_ok"] == summary["not_ok"]
    # with retry_transient off, a timeout is kept
    wd = work_dir(work, attempt_key(rows[0], capture))
    res = json.loads((wd / "result.json").read_text())
    atomic_write_json(wd / "result.json", dict(res, status="failed", error_class="oom"))
    counts = capture_all(rows, capture, work, workers=1, timeout_s=300, mem_cap_gb=None, progress=False,
                         retry_transient=False)
    assert counts["ran"] == 0


def _env(root: Path):
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(root)
    env["HF_HUB_OFFLINE"] = "1"
    return env


@pytest.mark.slow
def test_code_change_recaptures_and_equals_a_fresh_run(tmp_path):
    repo = _copy_code(tmp_path / "repo")
    configs = write_config_folder(tmp_path / "configs", {k: TINY_CONFIGS[k] for k in ("tiny-llama", "tiny-bert")})
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["catalog"].update({"mode": "default", "default": [], "local_dir": str(configs)})
    params["extract"]["capture"]["seq_len"] = 8
    (repo / "params.yaml").write_text(yaml.safe_dump(params))
    env = _env(repo)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "extract", *args], cwd=repo, env=env, capture_output=True,
                              text=True, check=True).stdout

    run("catalog", "--params", "params.yaml", "--out", "models.parquet")

    def capture(work, out):
        return run("capture", "--params", "params.yaml", "--catalog", "models.parquet", "--out", out,
                   "--store", out + "_store", "--work", work, "--no-progress")

    assert "2 run now" in capture("work", "out1")
    assert "2 done before" in capture("work", "out1")
    with open(repo / "extract" / "capture" / "inputs.py", "a") as fh:
        fh.write("\n# a change to the capture code\n")
    again = capture("work", "out2")
    assert "2 run now" in again and "0 done before" in again
    capture("fresh_work", "out3")
    for table in ("extractions.parquet", "graphs.parquet", "models.parquet"):
        assert pq.read_table(repo / "out2" / table).equals(pq.read_table(repo / "out3" / table)), table
    old = pq.read_table(repo / "out1" / "extractions.parquet").column("code_hash").to_pylist()
    new = pq.read_table(repo / "out2" / "extractions.parquet").column("code_hash").to_pylist()
    assert old[0] != new[0]


@pytest.mark.slow
def test_pulled_clone_is_up_to_date(tmp_path):
    """catalog + extract on two tiny configs, pushed to a local DVC remote; a fresh git
    clone that runs ``dvc pull`` has a clean ``dvc status`` and ``dvc repro`` runs nothing."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for item in ("extract", "passnet_common", ".dvcignore", "pyproject.toml"):
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, repo / item, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy(src, repo / item)
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": {k: stages[k] for k in ("catalog", "extract")}}))
    write_config_folder(repo / "configs", {k: TINY_CONFIGS[k] for k in ("tiny-llama", "tiny-gpt2")})
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["catalog"].update({"mode": "default", "default": [], "local_dir": "configs"})
    params["extract"]["capture"]["seq_len"] = 8
    (repo / "params.yaml").write_text(yaml.safe_dump(params))
    (repo / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    env = _env(repo)
    dvc = [sys.executable, "-m", "dvc"]

    def run(*args, cwd=repo):
        return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout

    run("git", "init", "-q")
    run("git", "config", "user.email", "t@t")
    run("git", "config", "user.name", "t")
    run(*dvc, "init", "-q")
    run(*dvc, "remote", "add", "-d", "local", str(tmp_path / "remote"))
    assert "Running stage 'extract'" in run(*dvc, "repro")
    run(*dvc, "push")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "pipeline")
    clone = tmp_path / "clone"
    run("git", "clone", "-q", str(repo), str(clone), cwd=tmp_path)
    run(*dvc, "pull", cwd=clone)
    status = run(*dvc, "status", cwd=clone)
    assert "changed" not in status and "deleted" not in status and "up to date" in status.lower(), status
    out = run(*dvc, "repro", cwd=clone)
    assert "Running stage" not in out, out
    assert pq.read_table(clone / "data" / "extract" / "graphs.parquet").equals(
        pq.read_table(repo / "data" / "extract" / "graphs.parquet"))


def test_longest_first_uses_recorded_times_then_the_depth_prior(tmp_path):
    from extract.runs.priors import timing_history
    from extract.runs.scheduler import estimated_seconds, longest_first

    def row(mid, lib, cfg):
        return {"model_id": mid, "library": lib, "config_json": json.dumps(cfg)}

    deep = row("transformers:Deep", "transformers", {"num_hidden_layers": 32, "vision_config": {"num_hidden_layers": 24}})
    shallow = row("transformers:Shallow", "transformers", {"num_hidden_layers": 2})
    vision = row("timm:resnet18", "timm", {"name": "resnet18"})
    measured = row("torchvision:slow", "torchvision", {"name": "slow"})
    assert estimated_seconds(deep, {}) == pytest.approx(3.0 + 0.3 * 56)  # nested sub-config layers count
    assert estimated_seconds(vision, {}) == 3.0
    work = tmp_path / "work"
    work.mkdir()
    (work / "timings.jsonl").write_text(
        json.dumps({"model_id": "torchvision:slow", "seconds": 5.0}) + "\nnot json\n"
        + json.dumps({"model_id": "torchvision:slow", "seconds": 99.0}) + "\n")
    history = timing_history(work)
    assert history == {"torchvision:slow": 99.0}  # the latest entry wins, bad lines skipped
    todo = [(r["model_id"], (r, {}), work / r["model_id"]) for r in (shallow, vision, measured, deep)]
    assert [t[0] for t in longest_first(todo, history)] == [
        "torchvision:slow", "transformers:Deep", "transformers:Shallow", "timm:resnet18"]
    assert [t[0] for t in longest_first(todo, {})][0] == "transformers:Deep"


def test_preload_imports_the_model_code_in_the_parent():
    """The parent imports each row's architecture module (so forked children do not), and a
    name that does not resolve is left to the child."""
    code = (
        "import sys, json\n"
        "from extract.runs.scheduler import preload_libraries\n"
        "m = 'transformers.models.bert.modeling_bert'\n"
        "before = m in sys.modules\n"
        "preload_libraries([{'library': 'transformers', 'architecture': 'BertModel'},\n"
        "                   {'library': 'transformers', 'architecture': 'NoSuchModelForX'}])\n"
        "print(json.dumps([before, m in sys.modules, 'timm' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True, False]
