"""Selection comparison on spawned workers: the same table and metrics as one process (proxy.compare.workers)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import torch

SMALL = dict(seq_len=32, batch_size=4)


@pytest.fixture(scope="module")
def tiny_artifacts(tmp_path_factory):
    """A tiny random 8-expert Qwen3-MoE base (with the corpus tokenizer) and its statistics."""
    from proxy_artifacts.pipeline import run_stats
    from tests.proxy_helpers import save_tiny_base

    d = tmp_path_factory.mktemp("cmpbase")
    base, stats = d / "base", d / "stats"
    save_tiny_base(base, num_experts=8, moe_intermediate_size=24)
    params = {
        "model": {"path": str(base), "revision": None},
        "stats": dict(SMALL, dataset="builtin", categories=["text", "code", "reverse"], num_samples=4,
                      char_tokens_per_batch=16, seed=0, threads=1),
        "prune": {"method": "frequency", "views": {"act": 1.0, "router": 1.0}, "representative": "frequency",
                  "merge": "none", "calibration": {"windows_per_category": 4, "seq_len": 32, "ridge": 0.01},
                  "categories": "all", "new_top_k": None, "seed": 0, "threads": 1},
        "eval": dict(SMALL, windows_per_category=4, task_problems=2),
        "compare": {"keep_ratios": [0.5, 0.25], "reference_ratio": 0.5, "random_seeds": [0, 1],
                    "methods": [{"name": "frequency", "method": "frequency"},
                                {"name": "random", "method": "random"},
                                {"name": "reap+output_merge", "method": "reap", "merge": "output"}]},
    }
    run_stats(params, str(base), stats)
    return params, base, stats


class _InProcessPool:
    """Stand-in for ``ProcessPoolExecutor`` running the worker functions here: the initializer
    once, every submitted run at once (the parallel branch of run_compare without the spawn)."""

    made: list = []

    def __init__(self, max_workers, mp_context=None, initializer=None, initargs=()):
        self.max_workers, self.start_method, self.initargs = max_workers, mp_context.get_start_method(), initargs
        _InProcessPool.made.append(self)
        initializer(*initargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        from concurrent.futures import Future

        f = Future()
        f.set_result(fn(*args))
        return f


def test_parallel_branch_reassembles_in_job_order_with_the_parents_calibration(tiny_artifacts, tmp_path, monkeypatch):
    """The workers > 1 branch, run in this process with the results arriving in reverse order:
    same rows and same file bytes as workers 1; every worker gets spawn, the prune threads and
    the parent's output-merge calibration windows."""
    from proxy_artifacts import pipeline
    from proxy_artifacts.checkpoint import load_base
    from proxy_artifacts.pipeline import load_stats, merge_calibration, run_compare

    params, base, stats = tiny_artifacts
    ref = run_compare(params, str(base), stats, tmp_path / "w1.parquet", tmp_path / "w1.json")
    monkeypatch.setattr(pipeline, "ProcessPoolExecutor", _InProcessPool)
    monkeypatch.setattr(pipeline, "as_completed", lambda fs: list(fs)[::-1])
    _InProcessPool.made.clear()
    prm = {**params, "compare": {**params["compare"], "workers": 3}}
    rows = run_compare(prm, str(base), stats, tmp_path / "w3.parquet", tmp_path / "w3.json")
    assert rows == ref
    assert (tmp_path / "w3.parquet").read_bytes() == (tmp_path / "w1.parquet").read_bytes()
    assert (tmp_path / "w3.json").read_bytes() == (tmp_path / "w1.json").read_bytes()
    (pool,) = _InProcessPool.made
    assert pool.max_workers == 3 and pool.start_method == "spawn"
    _, tok, _, _ = load_base(str(base))
    want = merge_calibration(tok, params["prune"], load_stats(stats)[1])
    assert want.shape == (12, 32) and torch.equal(torch.from_numpy(pool.initargs[3]), want)


@pytest.mark.slow
def test_compare_on_two_workers_equals_one_process(tiny_artifacts, tmp_path):
    """workers 2 (spawned) writes the same bytes as workers 1 (in-process, the definition): the
    table in job order (random over 2 seeds, an output merge) and the metrics JSON."""
    from proxy_artifacts.pipeline import compare_jobs, run_compare

    params, base, stats = tiny_artifacts
    out = {}
    for w in (1, 2):
        prm = {**params, "compare": {**params["compare"], "workers": w}}
        rows = run_compare(prm, str(base), stats, tmp_path / f"w{w}.parquet", tmp_path / f"w{w}.json")
        out[w] = rows
    assert out[2] == out[1]
    assert (tmp_path / "w2.parquet").read_bytes() == (tmp_path / "w1.parquet").read_bytes()
    assert (tmp_path / "w2.json").read_bytes() == (tmp_path / "w1.json").read_bytes()
    # the rows follow the job order: ratio, then method, then seed (random: seeds 0 and 1)
    want = [(r, m["name"], s) for r, m, s in compare_jobs(params["compare"], params["prune"])]
    assert [(r["keep_ratio"], r["method"], r["seed"]) for r in out[2]] == want
    assert want[:4] == [(0.5, "frequency", 0), (0.5, "random", 0), (0.5, "random", 1), (0.5, "reap+output_merge", 0)]
    # the runs really differ (a swapped or repeated row would show): the two random seeds keep different experts
    assert out[1][1]["heldout_loss_proxy"] != out[1][2]["heldout_loss_proxy"]
    assert pq.read_table(tmp_path / "w2.parquet").num_rows == len(want) == 8
    summary = json.loads((tmp_path / "w2.json").read_text())
    assert summary["r0.5/random"]["heldout_loss_proxy"] == round(
        (out[1][1]["heldout_loss_proxy"] + out[1][2]["heldout_loss_proxy"]) / 2, 6)
