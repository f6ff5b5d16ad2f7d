"""The side-by-side cost measurement (``proxy_artifacts.cost.measure_side_by_side``) on tiny checkpoints.

Each (round, model) runs in its own forked child: its peak memory is its own model's (a larger
model gives a larger peak by at least its extra weights, reference and optimizer state; a peak the
parent reached before forking does not count), and a child that fails raises naming its model.
"""

from __future__ import annotations

import json

import pytest

from proxy_artifacts import cost

KW = dict(batch=2, seq_len=8, steps=1, rounds=2)


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory):
    """{"base": a 16-expert tiny MoE with wide experts, "small": a 4-expert narrow one} (folders), and
    the difference of their parameter counts."""
    from safetensors import safe_open

    from tests.proxy_helpers import save_tiny_base

    root = tmp_path_factory.mktemp("cost")
    save_tiny_base(root / "big", num_experts=16, moe_intermediate_size=512)
    save_tiny_base(root / "small", num_experts=4, moe_intermediate_size=32)

    def n_params(d):
        with safe_open(str(d / "model.safetensors"), "pt") as f:
            return sum(_prod(f.get_slice(k).get_shape()) for k in f.keys())

    return {"base": str(root / "big"), "small": str(root / "small")}, n_params(root / "big") - n_params(root / "small")


def _fresh_parent(models: dict, kw: dict, hog_mb: int = 0) -> dict:
    """``measure_side_by_side(models, **kw)`` in a fresh interpreter, as the ``proxy_cost`` stage runs it:
    torch refuses autograd in a child forked from a process whose autograd engine has started (this
    test process has run backward passes in other tests). ``hog_mb``: the parent first makes that many MiB
    resident and frees them (a peak before the forks). Returns the result, or ``{"error": message}``."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom proxy_artifacts import cost\n"
            f"hog = bytearray({hog_mb} << 20)\nfor i in range(0, len(hog), 4096):\n    hog[i] = 1\ndel hog\n"
            "try:\n    r = cost.measure_side_by_side(json.loads(sys.argv[1]), **json.loads(sys.argv[2]))\n"
            "except RuntimeError as e:\n    r = {'error': str(e)}\nprint(json.dumps(r))")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(models), json.dumps(kw)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def test_each_child_measures_its_own_model(tiny_pair):
    models, d_params = tiny_pair
    r = _fresh_parent(models, KW, hog_mb=256)  # a parent peak before the forks: must not reach any child's figure
    assert r["memory_kind"] == "cpu_peak_rss_delta" and r["device"] == "cpu"
    assert set(r["step_ms_median"]) == {"base", "small"} and all(v > 0 for v in r["step_ms_median"].values())
    big, small = r["peak_memory_bytes"]["base"], r["peak_memory_bytes"]["small"]
    # policy weights + reference weights + gradients + two AdamW moments, float32, all resident at the step
    assert big - small >= 5 * 4 * d_params
    assert 0 < small < 256 << 20
    assert r["peak_memory_ratio"]["small"] == round(small / big, 4) < 1
    assert r["step_time_ratio"]["small"] == round(r["step_ms_median"]["small"] / r["step_ms_median"]["base"], 4)
    assert r["rounds"] == 2 and r["steps"] == 1


def test_failing_child_raises_naming_the_model(tiny_pair, tmp_path):
    models, _ = tiny_pair
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"model_type": "no_such_family"}))
    import re

    err = _fresh_parent({"base": models["small"], "broken": str(bad)}, KW)["error"]
    assert re.search(r"cost child for broken \(.*broken\) failed: exception:", err), err
    err = _fresh_parent({"base": models["small"], "gone": str(tmp_path / "absent")}, KW)["error"]
    assert re.search(r"cost child for gone .* model folder .* not found", err), err


def test_bad_arguments():
    with pytest.raises(ValueError, match="lack the base 'base'"):
        cost.measure_side_by_side({"r0.5": "x"})
    with pytest.raises(ValueError, match="isolation 'spawn'"):
        cost.measure_side_by_side({"base": "x"}, isolation="spawn")


def test_peak_rss_reset_drops_an_earlier_peak():
    if not cost._reset_peak_rss():
        pytest.skip("/proc/self/clear_refs not writable here")
    hog = bytearray(128 << 20)
    for i in range(0, len(hog), 4096):  # make it resident
        hog[i] = 1
    del hog
    assert cost._reset_peak_rss()
    assert cost._peak_rss_bytes(True) - cost._rss_bytes() < 64 << 20


@pytest.mark.slow
def test_exec_path_entry_point(tiny_pair):
    """``isolation="exec"``: a fresh ``python -m proxy_artifacts.cost MODEL ...`` per child."""
    models, d_params = tiny_pair
    r = cost.measure_side_by_side(models, isolation="exec", **{**KW, "rounds": 1})
    assert r["peak_memory_bytes"]["base"] - r["peak_memory_bytes"]["small"] >= 5 * 4 * d_params


def test_forked_child_maps_back_the_parents_library_pages():
    """Linux leaves a forked child's file-backed page-table entries empty; :func:`cost.populate`
    restores the parent's resident library pages, so the child's baseline matches a fresh process's."""
    import os

    def rss_file():
        for line in open("/proc/self/status"):
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024

    runs = cost.resident_file_runs()
    if not runs:
        pytest.skip("/proc/self/pagemap not readable here")
    parent = rss_file()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        before = rss_file()
        ok = cost.populate(runs)
        os.write(w, f"{before} {rss_file()} {int(ok)}".encode())
        os._exit(0)
    os.close(w)
    before, after, ok = (int(x) for x in os.read(r, 200).split())
    os.waitpid(pid, 0)
    if not ok:
        pytest.skip("MADV_POPULATE_READ refused (Linux < 5.14)")
    assert before < 0.5 * parent  # the fork dropped them (why the child would over-count)
    assert after >= 0.95 * parent
