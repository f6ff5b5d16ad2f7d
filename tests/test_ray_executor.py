"""`extract.runs.executor`: the Ray executor gives the same outcomes and files as the local one."""

from __future__ import annotations

from pathlib import Path

import pytest

from extract.runs.executor import get_executor
from tests.ray_tasks import square_task

ray = pytest.importorskip("ray")


def _run(name: str, work: Path):
    tasks = [(f"k{a}", a, work / f"k{a}") for a in (3, -1, 99, 5)]
    for _, _, d in tasks:
        d.mkdir(parents=True, exist_ok=True)
    seen = []
    outs = get_executor(name, {"num_cpus": 2})(tasks, square_task, workers=2, timeout_s=8, mem_cap_bytes=None,
                                               on_done=lambda o: seen.append(o.key))
    files = {p.relative_to(work).as_posix(): p.read_text() for p in sorted(work.rglob("result.json"))}
    return {o.key: (o.ok, o.error_class) for o in outs}, files, sorted(seen)


def test_ray_and_local_give_identical_outcomes_and_files(tmp_path):
    try:
        local = _run("local", tmp_path / "local")
        remote = _run("ray", tmp_path / "ray")
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert local == remote
    outcomes, files, seen = local
    assert outcomes["k3"] == (True, None) and outcomes["k5"] == (True, None)
    assert outcomes["k99"][0] is False and outcomes["k99"][1] == "timeout"
    assert outcomes["k-1"][0] is False
    assert files == {"k3/result.json": '{"x": 3, "y": 9}', "k5/result.json": '{"x": 5, "y": 25}'}
    assert seen == ["k-1", "k3", "k5", "k99"]


def test_unknown_executor_is_rejected():
    with pytest.raises(ValueError, match="must be one of"):
        get_executor("dask")


@pytest.mark.slow
def test_capture_tables_identical_local_vs_ray(tmp_path):
    """The extract stage on two tiny configs: local and Ray executors write identical tables."""
    import json

    import pyarrow.parquet as pq

    from extract.runs.assemble import assemble
    from extract.runs.scheduler import capture_all
    from extract.sources.local import local_catalog
    from passnet_common.params import load_params

    cfgs = tmp_path / "cfg"
    cfgs.mkdir()
    (cfgs / "gpt2.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                                                "n_layer": 1, "n_embd": 16, "n_head": 2, "vocab_size": 64}))
    (cfgs / "bert.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"],
                                                "num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
                                                "intermediate_size": 32, "vocab_size": 64}))
    rows = local_catalog(cfgs)
    capture = dict(load_params("params.yaml", "extract")["capture"])
    tables = {}
    try:
        for name in ("local", "ray"):
            capture_all(rows, capture, tmp_path / name / "work", workers=2, timeout_s=300, mem_cap_gb=None,
                        progress=False, executor=name, ray_params={"num_cpus": 2})
            assemble(rows, capture, tmp_path / name / "work", tmp_path / name / "out", tmp_path / name / "store")
            tables[name] = {t: pq.read_table(tmp_path / name / "out" / f"{t}.parquet")
                            for t in ("models", "extractions", "graphs")}
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert tables["local"]["extractions"].column("status").to_pylist() == ["ok", "ok"]
    for t in ("models", "extractions", "graphs"):
        assert tables["local"][t].equals(tables["ray"][t]), t
