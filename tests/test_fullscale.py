"""The full-scale build machinery (fullscale/): shard assignment, committed shards that survive a
re-run, the seen-hash skip, the summary, the release (regrouped tasks, held-out split, licences,
PassBench + KernelBench exports), publish to / fetch from the stand-in Hub, and the Ray wrapper."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from fullscale.__main__ import COMMANDS, main
from fullscale.config import FullScaleConfig
from fullscale.pipeline import StageFailed
from fullscale.release import build_release, regroup_tasks, verify_release
from fullscale.runner import _cpu_list, core_shares, physical_cores, run_local, run_ray
from fullscale.shards import done_shards, read_manifest, shard_of, shard_of_row, shards_total, split_catalog, write_shard
from fullscale.summary import build_summary
from tests.fullscale_tasks import stub_shard_entry
from tests.test_graphnet import _sample

ROOT = Path(__file__).resolve().parents[1]
AMD_HOST = "AMD EPYC | AuthenticAMD family 25 model 17 | avx2 avx512f"  # a host identity (fullscale.shards.host_identity)
AMD_ZEN2_HOST = "AMD EPYC | AuthenticAMD family 23 model 49 | avx2"
INTEL_HOST = "Intel Xeon | GenuineIntel family 6 model 143 | avx2 avx512f amx_tile"

MLP = '''import torch


def build():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    return m, (torch.randn(2, 16),)
'''
NORM = '''import torch


def build():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.LayerNorm(16), torch.nn.ReLU())
    return m, (torch.randn(2, 16),)
'''
# shard (of 2) of each model id: mlp_a 1, mlp_b 0 (the same graph in both shards: other file bytes, so not a
# config duplicate), norm_a 0, mlp_c 0 (mlp_a's bytes: a config duplicate, so it goes to mlp_a's shard 1)
MODULES = {"mlp_a": MLP, "mlp_b": "# the same module under another file\n" + MLP, "mlp_c": MLP, "norm_a": NORM}


def test_shard_assignment_is_a_function_of_the_id():
    ids = [f"timm:model_{i}" for i in range(400)]
    a = split_catalog([{"model_id": m} for m in ids], 8, 4)
    b = split_catalog([{"model_id": m} for m in reversed(ids)], 8, 4)
    assert sorted(a) == list(range(8))  # no GraphNet row: no GraphNet shard
    assert {k: sorted(r["model_id"] for r in v) for k, v in a.items()} == \
        {k: sorted(r["model_id"] for r in v) for k, v in b.items()}
    assert all(20 <= len(v) <= 80 for v in a.values())  # sha256 spreads 400 ids over 8 shards (expected 50 each)
    assert shard_of("module:mlp_a", 2) == 1 and shard_of("module:mlp_b", 2) == 0 and shard_of("module:norm_a", 2) == 0
    assert shard_of("module:mlp_c", 2) == 0
    dup = split_catalog([{"model_id": "module:mlp_a"}, {"model_id": "module:mlp_c", "duplicate_of": "module:mlp_a"}], 2, 1)
    assert [r["model_id"] for r in dup[1]] == ["module:mlp_a", "module:mlp_c"]  # a duplicate follows its original
    with pytest.raises(ValueError):
        shard_of("x", 0)


def test_graphnet_samples_have_shards_of_their_own_after_the_model_shards():
    """A ``graphnet:`` row goes to ``num_shards + shard_of(id, graphnet_shards)``; the model rows keep the shard
    they had without GraphNet rows, so GraphNet samples added to a build leave its done shards as they are."""
    models = [{"model_id": f"timm:model_{i}"} for i in range(200)]
    samples = [{"model_id": f"graphnet:timm/sample_{i}"} for i in range(120)]
    before = split_catalog(models, 8, 4)
    after = split_catalog(models + samples, 8, 4)
    assert sorted(after) == list(range(12)) and shards_total(models + samples, 8, 4) == 12 and shards_total(models, 8, 4) == 8
    assert {k: after[k] for k in range(8)} == before  # the model shards hold what they held
    assert {r["model_id"] for k in range(8, 12) for r in after[k]} == {r["model_id"] for r in samples}
    assert all(15 <= len(after[k]) <= 45 for k in range(8, 12))  # 120 samples over 4 shards (expected 30 each)
    r = samples[0]
    assert shard_of_row(r, 8, 4) == 8 + shard_of(r["model_id"], 4) and shard_of_row(models[0], 8, 4) == shard_of("timm:model_0", 8)
    dup = {"model_id": "graphnet:x/copy", "duplicate_of": "graphnet:x/orig"}  # a duplicate follows its original
    assert shard_of_row(dup, 8, 4) == shard_of_row({"model_id": "graphnet:x/orig"}, 8, 4)


def test_a_shard_is_not_run_on_graphnet_samples_other_than_the_catalogued_ones(tmp_path):
    """:func:`check_graphnet_samples` names a sample folder that is missing, a file whose bytes differ from the
    catalogued sha256 (another GraphNet checkout), a file the importer reads that was added since the
    catalog, and a row without a relative sample_dir or without hashes; catalogued samples and model rows
    pass. :func:`graphnet_samples_absent` is True only when none of a shard's sample folders exists."""
    from extract.sources.graphnet import SAMPLE_FILES, graphnet_catalog
    from fullscale.pipeline import GRAPHNET_SAMPLE_FILES, check_graphnet_samples, graphnet_samples_absent

    assert GRAPHNET_SAMPLE_FILES == SAMPLE_FILES
    for name in ("cv/a", "cv/b", "cv/c"):
        _sample(tmp_path / "gn", name)
    root = os.path.relpath(tmp_path / "gn", ROOT)  # relative to the repository root, as the committed catalog
    rows = graphnet_catalog(root) + [{"model_id": "timm:resnet18", "config_json": "{}"}]
    assert check_graphnet_samples(rows) == [] and not graphnet_samples_absent(rows)
    absolute = graphnet_catalog(tmp_path / "gn")[:1]
    unhashed = [{**rows[0], "config_json": json.dumps({**json.loads(rows[0]["config_json"]), "files_sha256": {}})}]
    assert check_graphnet_samples(absolute) == check_graphnet_samples(unhashed) == [
        "graphnet:cv/a: the catalog row has no relative sample_dir or no files_sha256"]
    (tmp_path / "gn" / "cv" / "a" / "model.py").write_text(MODULES["mlp_a"])
    shutil.rmtree(tmp_path / "gn" / "cv" / "b")
    (tmp_path / "gn" / "cv" / "c" / "input_tensor_constraints.py").write_text("")  # new shapes for the importer
    assert check_graphnet_samples(rows) == [
        "graphnet:cv/a: model.py is missing or differs from the catalogued file",
        f"graphnet:cv/b: sample folder {ROOT / root / 'cv' / 'b'} is missing",
        "graphnet:cv/c: input_tensor_constraints.py is in the sample folder but not in the catalog (added since)"]
    assert not graphnet_samples_absent(rows) and graphnet_samples_absent(rows[1:2])
    assert not graphnet_samples_absent(rows[3:])  # no GraphNet row: nothing to skip


def test_graphnet_shards_without_a_checkout_are_skipped_not_failed(tmp_path):
    """:func:`skip_absent_graphnet`: a pending GraphNet shard none of whose sample folders exists is left out
    (no failure record); model shards and GraphNet shards with their samples stay pending."""
    import pyarrow as pa

    from fullscale.runner import skip_absent_graphnet
    from fullscale.shards import shard_of_row

    _sample(tmp_path / "gn", "cv/here")
    here = os.path.relpath(tmp_path / "gn" / "cv" / "here", ROOT)
    rows = [{"model_id": "timm:a", "duplicate_of": None, "config_json": "{}", "catalog_error_class": None},
            {"model_id": "graphnet:cv/here", "duplicate_of": None, "config_json": json.dumps({"sample_dir": here}),
             "catalog_error_class": None},
            {"model_id": "graphnet:cv/gone", "duplicate_of": None, "catalog_error_class": None,
             "config_json": json.dumps({"sample_dir": os.path.relpath(tmp_path / "gn" / "cv" / "gone", ROOT)})}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "catalog.parquet")
    cfg = FullScaleConfig(num_shards=2, graphnet_shards=64)
    ids = [shard_of_row(r, 2, 64) for r in rows]
    assert ids[1] != ids[2]  # the two samples in shards of their own
    pending, skipped = skip_absent_graphnet([0, 1, ids[1], ids[2]], tmp_path / "catalog.parquet", cfg)
    assert pending == [0, 1, ids[1]] and skipped == [ids[2]]


def test_done_shards_cut_another_way_are_refused(tmp_path):
    """A committed shard whose manifest records another ``num_shards`` / ``graphnet_shards`` than the config
    makes :func:`check_cut` raise (the summary would count it done for models it does not hold); a manifest
    without the field is not compared; a GraphNet folder given as an absolute path is refused before anything
    is listed."""
    from fullscale.runner import add_graphnet_rows
    from fullscale.shards import CENSUS, check_cut

    _table_shard(tmp_path, 1, {}, num_shards=4)
    _table_shard(tmp_path, 5, {}, kind=CENSUS, census=True, num_shards=4, graphnet_shards=2)
    _table_shard(tmp_path, 2, {})  # no cut recorded
    check_cut(tmp_path, 4, 2)
    with pytest.raises(ValueError, match="graphnet_shards=2, the config says 3"):
        check_cut(tmp_path, 4, 3)
    with pytest.raises(ValueError, match="num_shards=4, the config says 8"):
        check_cut(tmp_path, 8, 2)
    with pytest.raises(ValueError, match="must be relative to the repository root"):
        add_graphnet_rows(tmp_path / "catalog.parquet", {"catalog": {}}, tmp_path / "gn")


def test_write_shard_is_atomic_and_replaces(tmp_path):
    man = {"shard": 3, "models": [], "counts": {}, "finished_utc": "t"}
    write_shard(tmp_path, 3, {"manifest.json": json.dumps(man).encode(), "tables/x.bin": b"1"})
    (tmp_path / "shards" / "s0003.failed.json").write_text("{}")
    write_shard(tmp_path, 3, {"manifest.json": json.dumps(man).encode(), "tables/y.bin": b"2"})
    d = tmp_path / "shards" / "s0003"
    assert sorted(p.name for p in d.rglob("*") if p.is_file()) == ["DONE", "manifest.json", "y.bin"]
    assert not (tmp_path / "shards" / "s0003.failed.json").exists()
    assert [p.name for p in (tmp_path / "shards").iterdir()] == ["s0003"]  # no staging folder left
    with pytest.raises(ValueError):
        write_shard(tmp_path, 4, {"manifest.json": b"{}", "../escape": b"x"})


def _specs(n):
    return [{"shard": i, "num_shards": n} for i in range(n)]


def test_local_executor_writes_each_shard(tmp_path):
    def entry(spec):
        try:
            return stub_shard_entry(spec)
        except RuntimeError as exc:
            return {"shard": spec["shard"], "ok": False, "failure": {"name": "s0002", "phase": "capture", "log_tail": str(exc)}}
    done = []
    res = run_local(_specs(3), tmp_path, entry=entry, on_done=lambda r: done.append(r["shard"]))
    assert done == [0, 1, 2] and [r["ok"] for r in res] == [True, True, False]
    assert [read_manifest(d)["shard"] for d in done_shards(tmp_path)] == [0, 1]
    assert json.loads((tmp_path / "shards" / "s0002.failed.json").read_text())["phase"] == "capture"


def test_core_shares_cut_the_usable_cores_into_disjoint_runs():
    assert core_shares([0, 1], 2) == [[0], [1]]
    assert core_shares([4, 0, 2, 3, 1], 2) == [[0, 1, 2], [3, 4]]
    assert core_shares([0, 1, 2, 3, 4, 5, 6], 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert core_shares([3], 1) == [[3]]
    with pytest.raises(ValueError, match="local_workers=3: needs 1 to 2"):
        core_shares([0, 1], 3)
    with pytest.raises(ValueError, match="local_workers=0: needs 1 to 2"):
        core_shares([0, 1], 0)
    # SMT siblings (Linux numbers them i and i + N/2 on many hosts) stay in one share: two shards never time on
    # one physical core; with fewer physical cores than workers the logical cores are cut
    smt = [[0, 2], [1, 3]]
    assert core_shares([0, 1, 2, 3], 2, groups=smt) == [[0, 2], [1, 3]]
    assert core_shares([0, 1, 2, 3], 4, groups=smt) == [[0], [1], [2], [3]]
    assert _cpu_list("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}


def test_physical_cores_group_smt_siblings(tmp_path):
    """A sysfs laid out as a 4-thread, 2-core host that numbers siblings i and i + 2 (cpu3's topology
    unreadable: alone)."""
    for c, sib in ((0, "0,2"), (1, "1,3"), (2, "0,2")):
        d = tmp_path / f"cpu{c}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(sib + "\n")
    assert physical_cores([0, 1, 2, 3], sysfs=tmp_path) == [[0, 2], [1], [3]]
    assert physical_cores([2, 0], sysfs=tmp_path) == [[0, 2]]
    assert core_shares([0, 1, 2], 2, groups=physical_cores([0, 1, 2], sysfs=tmp_path)) == [[0, 2], [1]]


def _pinned_entry(spec):
    """A shard whose manifest records the cores its thread and a stage command it starts may use."""
    import subprocess
    import sys
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    man = {"shard": spec["shard"], "models": [], "counts": {}, "finished_utc": "t",
           "cores": sorted(os.sched_getaffinity(0)), "child_cores": json.loads(child)}
    return {"shard": spec["shard"], "ok": True, "manifest": man, "files": {"manifest.json": json.dumps(man).encode()}}


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
def test_local_workers_each_run_on_their_own_cores(tmp_path):
    """Two workers: every shard is written, each ran (and its stage command ran) on one share of the cores,
    the shares are disjoint, and the calling thread keeps every core."""
    before = os.sched_getaffinity(0)
    res = run_local(_specs(4), tmp_path, entry=_pinned_entry, workers=2)
    assert [r["shard"] for r in res] == [0, 1, 2, 3] and all(r["ok"] for r in res)
    mans = [read_manifest(d) for d in done_shards(tmp_path)]
    assert [m["shard"] for m in mans] == [0, 1, 2, 3]
    shares = core_shares(sorted(before), 2)
    assert all(m["cores"] == m["child_cores"] and m["cores"] in shares for m in mans)
    assert os.sched_getaffinity(0) == before
    with pytest.raises(RuntimeError, match="shard 2 breaks"):  # the entry's own error stops the run, as with one worker
        run_local(_specs(4), tmp_path / "b", entry=stub_shard_entry, workers=2)
    with pytest.raises(ValueError, match="local_workers=0: needs at least 1"):
        run_local(_specs(1), tmp_path / "c", entry=_pinned_entry, workers=0)


def test_local_workers_raise_when_pinning_fails(tmp_path, monkeypatch):
    """A worker that cannot pin itself runs nothing and its error reaches the caller (not a silent empty run)."""
    def refuse(pid, cores):
        raise OSError(22, "Invalid argument")
    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    with pytest.raises(OSError, match="Invalid argument"):
        run_local(_specs(3), tmp_path, entry=_pinned_entry, workers=2)
    assert done_shards(tmp_path) == []


_INTERRUPTED = """
import json, os, signal, sys, time
from pathlib import Path
from fullscale.pipeline import run_phase
from fullscale.runner import run_local
tmp = Path(sys.argv[1])
# Ctrl-C as in a terminal: a suite started in the background by a shell without job control inherits SIGINT
# ignored, and Python then installs no KeyboardInterrupt handler
signal.signal(signal.SIGINT, signal.default_int_handler)

def entry(spec):
    code = f"import os, time; open({str(tmp)!r} + '/stage%d.pid' % {spec['shard']}, 'w').write(str(os.getpid())); time.sleep(120)"
    run_phase("capture", ["-c", code], tmp / f"s{spec['shard']}.log", None)
    return {"shard": spec["shard"], "ok": True, "manifest": {}, "files": {}}

try:
    run_local([{"shard": i} for i in range(2)], tmp / "out", entry=entry, workers=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
def test_ctrl_c_with_workers_kills_the_running_stage_commands(tmp_path):
    """Ctrl-C in a driver running two shards at once: both stage commands (sessions of their own, which the
    terminal's SIGINT does not reach) are killed, and the driver ends with KeyboardInterrupt."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "driver.py"
    script.write_text(_INTERRUPTED)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    pidfiles = [tmp_path / f"stage{i}.pid" for i in range(2)]
    t0 = time.monotonic()
    while not all(p.exists() and p.read_text() for p in pidfiles) and time.monotonic() - t0 < 120:
        time.sleep(0.1)
    pids = [int(p.read_text()) for p in pidfiles]
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert "interrupted" in out

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    assert not any(alive(p) for p in pids)


def test_run_phase_counts_the_cpu_of_its_own_command(tmp_path):
    """A stage's CPU time is its command's alone: a command that burns >= 0.5 CPU-s and ends while another
    stage runs in another thread does not enter that stage's figure (RUSAGE_CHILDREN would add it)."""
    import threading

    from fullscale.pipeline import run_phase

    done = tmp_path / "burned"
    burn = f"import time, pathlib\nwhile time.process_time() < 0.5: pass\npathlib.Path({str(done)!r}).touch()"
    wait = (f"import time, pathlib\nt = time.time()\nwhile not pathlib.Path({str(done)!r}).exists() and time.time() - t < 300:"
            "\n    time.sleep(0.02)\ntime.sleep(0.2)")
    got = {}
    waiter = threading.Thread(target=lambda: got.update(wait=run_phase("w", ["-c", wait], tmp_path / "w.log", None)))
    waiter.start()
    got["burn"] = run_phase("b", ["-c", burn], tmp_path / "b.log", None)
    waiter.join()
    assert done.exists() and got["burn"]["rc"] == got["wait"]["rc"] == 0
    assert got["burn"]["cpu_s"] >= 0.5
    assert got["wait"]["cpu_s"] < 0.45  # its own start-up and polling only, never the burner's 0.5 s
    with pytest.raises(StageFailed) as exc:  # a timeout kills the command and still reports its CPU time
        run_phase("t", ["-c", "while True: pass"], tmp_path / "t.log", 0.5)
    assert exc.value.record["rc"] is None and exc.value.record["cpu_s"] > 0


@pytest.mark.slow
def test_ray_executor_runs_one_task_per_shard(tmp_path):
    ray = pytest.importorskip("ray")
    res = run_ray(_specs(3), tmp_path, entry=stub_shard_entry, ray_options={"num_cpus": 2}, cpus_per_shard=1)
    assert not ray.is_initialized()
    assert [r["ok"] for r in res] == [True, True, False], [r.get("failure") for r in res]
    assert res[2]["failure"]["phase"] == "ray_task" and "shard 2 breaks" in res[2]["failure"]["log_tail"]
    assert [read_manifest(d)["shard"] for d in done_shards(tmp_path)] == [0, 1]
    # a crashed drain task's record goes with the drain shards, not over the committed full shard's
    run_ray([{"shard": 2, "drain": True}], tmp_path / "d", entry=stub_shard_entry, ray_options={"num_cpus": 2},
            cpus_per_shard=1)
    assert (tmp_path / "d" / "drain" / "s0002.failed.json").is_file() and not (tmp_path / "d" / "shards").exists()


def _override(tmp: Path) -> Path:
    mods = tmp / "modules"
    mods.mkdir()
    for name, src in MODULES.items():
        (mods / f"{name}.py").write_text(src)
    over = {
        "fullscale": {"num_shards": 2, "out": str(tmp / "data_full"), "work": str(tmp / "work"),
                      "secret_dir": str(tmp / "secret"), "secret_share": 0.5},
        "catalog": {"mode": "default", "default": [], "module_dir": str(mods), "graphnet_dir": None},
        "extract": {"workers": 1},
        "curate": {"decompose": {"variants": [1]},
                   "profile": {"all": False, "sample_size": 2, "overlap_compile": False, "compile_workers": 1,
                               "remeasure_passes": 0,
                               "timing": {"warmup": 1, "trials": 10, "min_trials": 5, "check_every": 5,
                                          "min_trial_ms": 1.0, "max_variant_s": 2.0}},
                   "curate": {"rule": "e2e"}},
    }
    p = tmp / "override.yaml"
    p.write_text(yaml.safe_dump(over))
    return p


def _cli(over: Path, *args: str, metrics: Path) -> int:
    """``python -m fullscale <args>`` on the miniature's params; ``--metrics`` (and ``--plot`` beside it, never the
    repository's) where the command writes the summary."""
    writes = (["--metrics", str(metrics), "--plot", str(metrics.with_suffix(".png"))]
              if args[0] in ("run", "release", "summary") else [])
    return main([args[0], "--params", str(ROOT / "params.yaml"), "--full", str(ROOT / "params_full.yaml"),
                 "--override", str(over), *writes, *args[1:]])


@pytest.mark.slow
def test_two_shard_miniature_release_end_to_end(tmp_path, capsys):
    """Slow: 12.5 min wall on the 2-core machine at load ~20 (five stage commands per shard, each a
    fresh Python with torch); its fast slice is the release and executor tests above and below.
    Four tiny module models in two shards: capture -> dedupe -> decompose -> profile -> curate per
    shard; the second shard skips the graph the first committed; a re-run does nothing; the release
    regroups the tasks, holds out a split, writes the card and both exports; publish + fetch round-trip."""
    over = _override(tmp_path)
    metrics = tmp_path / "summary.json"
    out = tmp_path / "data_full"
    assert _cli(over, "run", metrics=metrics) == 0
    shards = done_shards(out)
    assert [read_manifest(d)["shard"] for d in shards] == [0, 1]
    m0, m1 = read_manifest(shards[0]), read_manifest(shards[1])
    assert sorted(m0["models"]) == ["module:mlp_b", "module:norm_a"] and m1["models"] == ["module:mlp_a", "module:mlp_c"]
    assert m0["counts"]["captured"] == 2 and m1["counts"]["captured"] == 2
    # mlp_a's graph is mlp_b's: shard 1 captured it but found nothing new to decompose or profile
    g0 = {r["graph_hash"] for r in pq.read_table(shards[0] / "tables" / "graphs.parquet").to_pylist()}
    g1 = {r["graph_hash"] for r in pq.read_table(shards[1] / "tables" / "graphs.parquet").to_pylist()}
    assert g1 and g1 <= g0
    assert m1["counts"]["unique_graphs_new"] == 0 and m1["seen_before"]["graphs"] == len(g0)
    assert m1["skipped_phases"]["decompose"] == "no unique graph new to this build"
    assert [p["phase"] for p in m0["phases"]] == ["capture", "dedupe", "decompose", "profile", "curate"]
    assert all(p["cpu_s"] > 0 and p["rc"] == 0 for p in m0["phases"])
    assert m0["code"]["commit"] and m0["machine"]["cpu_logical_cores"] >= 1
    prof0 = pq.read_table(shards[0] / "tables" / "profiles.parquet")
    assert "trial_history" not in prof0.column_names
    from passnet_common.machine import cpu_model  # where its timed rows were timed: this machine alone
    timed0 = sum(1 for r in prof0.to_pylist() if r["status"] in ("ok", "accuracy_error", "unstable"))
    assert m0["timed_on"] == ({cpu_model(): timed0} if timed0 else {}) and m1["timed_on"] == {}
    s = json.loads(metrics.read_text())
    assert s["complete"] and (s["shards_done"], s["shards_total"]) == (2, 2)
    assert (s["models"], s["captured"], s["unique_graphs"]) == (4, 4, len(g0))
    assert s["families"] >= 1 and s["variants_screened"] >= s["variants_confirmed"] >= 0
    assert s["tasks"] == m0["counts"]["tasks"] and (s["tasks_shortfall_reason"] or "").startswith("all 2 shards done")
    assert set(s["phases"]) == {"capture", "dedupe", "decompose", "profile", "curate"}

    # a re-run continues from the committed shards: nothing left to do, nothing rewritten
    before = {p: p.stat().st_mtime_ns for p in out.rglob("manifest.json")}
    assert _cli(over, "run", metrics=metrics) == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("manifest.json")} == before

    assert _cli(over, "release", metrics=metrics) == 0
    rel = out / "release"
    man = json.loads((rel / "manifest.json").read_text())
    assert verify_release(rel)["bad"] == []
    nodes = pq.read_table(rel / "tables" / "nodes", columns=["graph_hash"]).column("graph_hash").to_pylist()
    assert set(nodes) == g0  # every unique graph's nodes, once (the README's node queries run on the release)
    lic = pq.read_table(rel / "tables" / "licences.parquet").to_pylist()
    assert {r["model_id"] for r in lic} == {f"module:{m}" for m in MODULES}
    assert all(r["code_licence"] == "unknown" and not r["permissive"] and r["in_release"] for r in lic)  # own modules
    card = (rel / "README.md").read_text()
    assert all(f"`module:{m}`" in card for m in MODULES)
    tasks = sorted((rel / "tasks").glob("*/task.json"))
    assert len(tasks) == man["tasks"] == json.loads(metrics.read_text())["tasks"]
    assert json.loads((rel / "summary.json").read_text()) == json.loads(metrics.read_text())  # one summary
    # its size: every listed file's bytes, and each distinct content once (what git stores; the size budget)
    listed = [rel / f for f in man["files"]]
    assert man["total_bytes"] == sum(p.stat().st_size for p in listed)
    assert man["unique_bytes"] == sum({p.read_bytes(): p.stat().st_size for p in listed}.values())
    runner = sum((t.parent / f).stat().st_size for t in tasks[1:] for f in ("run_task.py", "timing_protocol.py"))
    assert man["unique_bytes"] <= man["total_bytes"] - runner and "over_size_budget" not in man
    secret = json.loads((rel / "secret_split.json").read_text())
    public = sum(len(json.loads(t.read_text())["subgraphs"]) for t in tasks)
    held = sorted((tmp_path / "secret" / "tasks").glob("*/task.json"))
    assert secret["held_out_variants"] == sum(len(json.loads(t.read_text())["subgraphs"]) for t in held)
    assert not any("secret" in f for f in man["files"]) or "secret_split.json" in man["files"]
    if tasks:
        pb = sorted((rel / "passbench").glob("*/graph_list.txt"))
        kb = json.loads((rel / "kernelbench" / "index.json").read_text())
        assert len(pb) == len(tasks) and kb["problems"] + len(kb["skipped"]) == public

    staged = [str(p.relative_to(rel)) for p in (rel / "README.md", *rel.glob("*/export_report.json"), *rel.glob("*/index.json"))
              if p.is_file() and ".tmp-" in p.read_text()]
    assert not staged, f"the staging folder's name leaked into {staged}"
    from passnet_common.hub_standin import HubStandIn

    with HubStandIn() as hub:
        env = {"HF_ENDPOINT": hub.endpoint, "HF_TOKEN": "standin", "HF_HUB_OFFLINE": "0"}
        with pytest.MonkeyPatch.context() as mp:
            for k, v in env.items():
                mp.setenv(k, v)
            import importlib

            import huggingface_hub.constants as hc

            importlib.reload(hc)
            try:
                assert _cli(over, "publish", "--repo", "me/passnet-full", metrics=metrics) == 0
                sha = capsys.readouterr().out.strip().splitlines()[-1]
                shutil.rmtree(rel)
                assert _cli(over, "fetch", "--repo", f"me/passnet-full@{sha}", metrics=metrics) == 0
                from passnet_common.cli import run_cli  # an unknown revision: a clear error (exit 2), the release kept

                assert run_cli(lambda: _cli(over, "fetch", "--repo", "me/passnet-full@" + "0" * 40, metrics=metrics)) == 2
                assert "cannot download dataset 'me/passnet-full'" in capsys.readouterr().err
            finally:
                mp.undo()
                importlib.reload(hc)
    assert verify_release(rel)["bad"] == [] and json.loads((rel / "manifest.json").read_text()) == man


@pytest.mark.slow
def test_a_drain_run_profiles_what_the_rate_floor_left_and_completes_the_miniature(tmp_path):
    """Slow (real stage commands). Shard 1 of the miniature is committed by hand as profiled, 12 linear
    structures and no task, so every kind's task rate is 0 and ``rate_floor`` 0.5 leaves every subgraph of
    shard 0 out: shard 0 profiles nothing, its structures wait, the build is not complete. ``run --drain``
    captures shard 0's models again, decomposes its own graphs only and profiles the waiting subgraphs: nothing
    waits, the build is complete, and the release holds the drain's profiles beside the full shards' tables."""
    from fullscale.shards import DRAIN, FLOOR_REASON

    over = _override(tmp_path)
    cfg = yaml.safe_load(over.read_text())
    cfg["fullscale"].update({"rate_floor": 0.5, "structure_quota": 1})
    over.write_text(yaml.safe_dump(cfg))
    out, metrics = tmp_path / "data_full", tmp_path / "summary.json"
    lin = [{**_sub(f"x{i}", f"X{i}"), "anchor": "linear", "num_ops": 1} for i in range(12)]
    _table_shard(out, 1, {"subgraphs": lin, "profiles": [_prof(r["subgraph_hash"]) for r in lin]}, num_shards=2,
                 models=["module:mlp_a", "module:mlp_c"])
    assert _cli(over, "run", metrics=metrics) == 0
    full = done_shards(out)[0]
    m0 = read_manifest(full)
    subs = pq.read_table(full / "tables" / "subgraphs.parquet").to_pylist()
    waiting = {r["subgraph_hash"] for r in subs if r["skip_reason"] == FLOOR_REASON}
    assert m0["shard"] == 0 and waiting and m0["counts"]["subgraphs_profilable_new"] == 0
    s = json.loads(metrics.read_text())
    assert not s["complete"] and s["structures_below_rate_floor"] >= 1 and s["drain"]["shards_pending"] == 1

    assert _cli(over, "run", "--drain", metrics=metrics) == 0
    drains = done_shards(out, DRAIN)
    assert [read_manifest(d)["shard"] for d in drains] == [0]
    md = read_manifest(drains[0])
    assert md["drain"] and md["rate_floor"] is None and md["counts"]["unique_graphs_new"] == m0["counts"]["unique_graphs_new"]
    assert md["capture_from_full_shard"] is True
    assert sorted(p.name for p in (drains[0] / "tables").iterdir()) <= ["long_tail.parquet", "profiles.parquet",
                                                                        "subgraphs.parquet", "tasks.parquet"]
    dsubs = pq.read_table(drains[0] / "tables" / "subgraphs.parquet").to_pylist()
    profiled = {r["subgraph_hash"] for r in dsubs if r["status"] == "ok"}
    timed = set(pq.read_table(drains[0] / "tables" / "profiles.parquet").column("subgraph_hash").to_pylist())
    assert profiled and timed and timed <= profiled <= waiting  # the miniature's profile samples 2 of them
    s = json.loads(metrics.read_text())
    assert s["complete"] and s["structures_below_rate_floor"] == 0 and s["drain"]["shards_done"] == 1
    assert s["models"] == 4 and s["drain"]["structures_profiled"] == len(
        {r["structure_hash"] for r in dsubs if r["status"] == "ok"})
    assert _cli(over, "run", "--drain", metrics=metrics) == 0 and len(done_shards(out, DRAIN)) == 1  # nothing left
    # the hand-made shard 1 gets the columns real tables have (the release writes their schemas)
    for name, real in (("subgraphs", full), ("profiles", drains[0])):
        fake = done_shards(out)[1] / "tables" / f"{name}.parquet"
        t = pq.read_table(real / "tables" / f"{name}.parquet")
        pq.write_table(pa.Table.from_pylist([{**t.to_pylist()[0], **r} for r in pq.read_table(fake).to_pylist()],
                                            schema=t.schema), fake)
    assert _cli(over, "release", metrics=metrics) == 0
    rel = out / "release"
    prof = {r["subgraph_hash"] for r in pq.read_table(rel / "tables" / "profiles.parquet").to_pylist()}
    assert timed <= prof
    rsubs = {r["subgraph_hash"]: r for r in pq.read_table(rel / "tables" / "subgraphs.parquet").to_pylist()}
    assert all(rsubs[h]["status"] == "ok" for h in profiled)  # the drain's row, not the floor's
    assert json.loads((rel / "manifest.json").read_text())["drain_shards"] == [0]


def test_census_shards_capture_and_decompose_every_graph_once_and_feed_no_skip(tmp_path, capsys):
    """``run --census`` on the four-module miniature: each shard runs capture, dedupe and decompose only into
    ``<out>/census/``; the second census shard finds its only graph in the first and decomposes nothing; the
    summary counts the census's models, graphs and structures (none timed), the release carries their graph
    tables, and the full build still sees both shards pending with nothing seen (the census feeds no skip)."""
    from fullscale.runner import pending_shards
    from fullscale.shards import CENSUS, seen_hashes

    over = _override(tmp_path)
    metrics = tmp_path / "summary.json"
    out = tmp_path / "data_full"
    assert _cli(over, "run", "--census", metrics=metrics) == 0
    assert done_shards(out) == []
    census = done_shards(out, CENSUS)
    assert [read_manifest(d)["shard"] for d in census] == [0, 1]
    m0, m1 = read_manifest(census[0]), read_manifest(census[1])
    assert m0["census"] and m1["census"]
    assert [p["phase"] for p in m0["phases"]] == ["capture", "dedupe", "decompose"]
    assert m0["skipped_phases"]["profile"].startswith("census shard")
    assert not (census[0] / "tables" / "profiles.parquet").exists() and not (census[0] / "tasks").exists()
    g0 = set(pq.read_table(census[0] / "tables" / "unique_graphs.parquet").column("graph_hash").to_pylist())
    subs = pq.read_table(census[0] / "tables" / "subgraphs.parquet").to_pylist()
    assert subs and not any(r["skip_reason"] in ("seen_in_earlier_shard", "structure_quota_reached") for r in subs)
    assert {m for r in subs for m in r["model_ids"]} == set(m0["models"])  # both of shard 0's graphs decomposed
    # mlp_a (shard 1) has mlp_b's graph (shard 0): captured, not decomposed again
    assert m1["counts"]["captured"] == 2 and m1["counts"]["unique_graphs_new"] == 0
    assert m1["skipped_phases"]["decompose"] == "no unique graph new to this build"
    s = json.loads(metrics.read_text())
    assert (s["models"], s["captured"], s["models_profiled"], s["unique_graphs"]) == (4, 4, 0, len(g0))
    assert s["structures"] == len({r["structure_hash"] for r in subs if r["structure_hash"]}) >= 1
    assert (s["structures_timed"], s["variants_screened"], s["tasks"], s["shards_done"]) == (0, 0, 0, 0)
    assert s["census"]["shards_done"] == 2 and s["census"]["models"] == 4 and s["census"]["cpu_s"] > 0
    # the full build is untouched by the census: both shards pending, nothing seen; the census is done
    assert pending_shards(out, 2) == [0, 1] and pending_shards(out, 2, census=True) == []
    assert seen_hashes(out) == (set(), set())
    # the census prices each pending full shard: one member of each structure of its graphs' ok subgraphs (shard
    # 1's graph was decomposed in census shard 0); no CPU estimate before a full shard has profiled
    from fullscale.order import estimates

    g1 = set(pq.read_table(census[1] / "tables" / "graphs.parquet").column("graph_hash").to_pylist())
    want = {0: {r["structure_hash"] for r in subs if r["status"] == "ok" and r["structure_hash"]},
            1: {r["structure_hash"] for r in subs if r["status"] == "ok" and r["structure_hash"]
                and g1 & {m["graph_hash"] for m in r["members"]}}}
    assert [(e.shard, e.subgraphs, e.cpu_s) for e in estimates(out, [0, 1], 1)] == [
        (0, len(want[0]), None), (1, len(want[1]), None)] and want[1]
    capsys.readouterr()
    # plan lists them in the order they would run: with no full shard there is no CPU or task rate, so the yield
    # order is the cost order, fewest subgraphs first
    assert _cli(over, "plan", metrics=metrics) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["pending"] == 2 and plan["order"] == "yield" and plan["drains_pending"] == 0
    assert plan["next"] == sorted([{"shard": f"s000{k}", "subgraphs_to_profile": len(want[k]), "cpu_s": None,
                                    "tasks_expected": None} for k in (0, 1)],
                                  key=lambda r: (r["subgraphs_to_profile"], r["shard"]))
    assert _cli(over, "release", metrics=metrics) == 0
    tables = json.loads((out / "release" / "manifest.json").read_text())["tables"]
    assert tables["models"] == 4 and tables["unique_graphs"] == len(g0) and "subgraphs" not in tables
    nodes = pq.read_table(out / "release" / "tables" / "nodes", columns=["graph_hash"]).column("graph_hash")
    assert set(nodes.to_pylist()) == g0

    # GraphNet samples join the committed build: the catalog gains their rows, they get a shard of their own
    # (id 2 = num_shards + 0 with one GraphNet shard), and the done census shards are not touched
    _sample(tmp_path / "graphnet", "demo/linear_relu")
    (tmp_path / "modules" / "late.py").write_text(NORM)  # a module added since the catalog: not appended with GraphNet
    gn = tmp_path / "override_graphnet.yaml"
    gn.write_text(yaml.safe_dump({"catalog": {"graphnet_dir": os.path.relpath(tmp_path / "graphnet", ROOT)},
                                  "fullscale": {"graphnet_shards": 1}}))
    before = {d.name: (d / "manifest.json").read_bytes() for d in census}
    assert main(["run", "--census", "--params", str(ROOT / "params.yaml"), "--full", str(ROOT / "params_full.yaml"),
                 "--override", str(over), "--override", str(gn), "--metrics", str(metrics), "--plot", ""]) == 0
    cat = pq.read_table(out / "catalog.parquet").to_pylist()
    assert len(cat) == 5 and [r["source"] for r in cat if r["model_id"].startswith("graphnet:")] == ["graphnet"]
    census = done_shards(out, CENSUS)
    assert [read_manifest(d)["shard"] for d in census] == [0, 1, 2]
    assert {d.name: (d / "manifest.json").read_bytes() for d in census[:2]} == before
    m2 = read_manifest(census[2])
    assert m2["models"] == ["graphnet:demo/linear_relu"] and m2["counts"]["captured"] == 1, m2
    s = json.loads(metrics.read_text())
    assert s["shards_total"] == 3 and s["census"]["shards_done"] == 3 and s["by_source"]["graphnet"]["captured"] == 1
    assert s["unique_graphs"] == len(g0) + m2["counts"]["unique_graphs_new"] and m2["counts"]["unique_graphs_new"] == 1


def _fake_shard(out: Path, shard: int, task_folder: Path) -> None:
    """A committed shard holding one task folder (tables empty)."""
    files = {f"tasks/{task_folder.name}/{p.relative_to(task_folder).as_posix()}": p.read_bytes()
             for p in task_folder.rglob("*") if p.is_file() and p.name not in ("run_task.py", "timing_protocol.py")}
    files["runner/run_task.py"] = (task_folder / "run_task.py").read_bytes()
    files["runner/timing_protocol.py"] = (task_folder / "timing_protocol.py").read_bytes()
    man = {"shard": shard, "models": [], "counts": {"tasks": 1}, "phases": [], "machine": {"cpu_model": "x"},
           "code": {"commit": "c"}, "finished_utc": "t"}
    files["manifest.json"] = json.dumps(man).encode()
    write_shard(out, shard, files)


def test_release_pools_a_task_across_shards_and_holds_out_a_split(tmp_path):
    """Two shards (run at once) each made a task of the same subgraph, at different sizes: the release
    pools them into one task, holds out one of its two variants (secret_share 0.5) outside the release,
    and commits to it; another key gives another commitment."""
    import torch
    import torch.fx as fx
    from torch.fx.passes.shape_prop import ShapeProp

    from curate.select.tasks import group_tasks, write_task_folders
    from passnet_common.record import CapturedGraph, describe_graph
    from passnet_common.store import store_path, write_graph
    from tests.test_release_exports import rms

    out = tmp_path / "data_full"
    x = [torch.randn(1, 8, 16), torch.ones(16)]
    gm = fx.symbolic_trace(rms)
    ShapeProp(gm).propagate(*x)
    rec = describe_graph(0, CapturedGraph(gm, ["input", "parameter"], x, None), with_stats=False)
    write_graph(tmp_path / "store", rec)
    for shard, size in ((0, "catalog"), (1, "workload")):
        member = {"subgraph_hash": rec["graph_hash"], "size": size, "pattern": "rms", "speedup_e2e": 0.5,
                  "speedup_compiler": 0.5, "variant_folder": str(store_path(tmp_path / "store", rec["graph_hash"]))}
        write_task_folders(group_tasks([member]), tmp_path / f"tasks{shard}", -5, {"machine": "test"})
        _fake_shard(out, shard, next((tmp_path / f"tasks{shard}").iterdir()))
    cfg = FullScaleConfig(num_shards=2, out=str(out), secret_dir=str(tmp_path / "secret"), secret_share=0.5)
    tasks = regroup_tasks(done_shards(out), 10, None)
    assert len(tasks) == 1 and len(tasks[0]["variants"]) == 2 and tasks[0]["task_id"].startswith("t")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASSNET_SECRET_KEY", "k1")
        man = build_release(out, cfg, build_summary(out, 2))
        sec1 = json.loads((out / "release" / "secret_split.json").read_text())
        pub1 = json.loads(next((out / "release" / "tasks").glob("*/task.json")).read_text())
        mp.setenv("PASSNET_SECRET_KEY", "k2")
        build_release(out, cfg, lambda n: build_summary(out, 2, n))  # the summary made from the release's count
        sec2 = json.loads((out / "release" / "secret_split.json").read_text())
    # two shard tasks pooled into one: the release's summary counts 1 (and says so in its shortfall reason)
    got, want = json.loads((out / "release" / "summary.json").read_text()), json.loads(json.dumps(build_summary(out, 2, 1)))
    for moment in ("written_utc", "load_avg_1m_at_write"):  # when and under what load each was made
        got.pop(moment), want.pop(moment)
    assert got == want and got["tasks"] == 1
    assert got["tasks_shortfall_reason"] != build_summary(out, 2)["tasks_shortfall_reason"]
    assert man["tasks"] == 1 and man["held_out_variants"] == 1
    pub = json.loads(next((out / "release" / "tasks").glob("*/task.json")).read_text())
    hid = json.loads(next((tmp_path / "secret" / "tasks").glob("*/task.json")).read_text())
    # the rebuild under k2 kept k1's split (a new key must not publish what k1 held out)
    assert [s["variant_id"] for s in pub["subgraphs"]] == [s["variant_id"] for s in pub1["subgraphs"]]
    assert sec1["kept_from_previous"] == 0 and sec2["kept_from_previous"] == 2
    assert sec2["previous_key_fingerprint"] == sec1["key_fingerprint"]
    assert sec1["variant_split"] == sec2["variant_split"] and len(sec2["variant_split"]["held_out"]) == 1
    assert sec2["variant_split"]["held_out"] == [hid["subgraphs"][0]["variant_id"]]
    assert len(pub["subgraphs"]) == 1 and len(hid["subgraphs"]) == 1
    assert pub["subgraphs"][0]["variant_id"] != hid["subgraphs"][0]["variant_id"]
    assert (out / "release" / "tasks" / pub["task_id"] / "run_task.py").is_file()
    assert sec1["held_out_variants"] == 1 and sec1["commitment_sha256"] != sec2["commitment_sha256"]
    assert "k1" not in json.dumps(sec1) and sec1["key_fingerprint"] != sec2["key_fingerprint"]
    assert (out / "release" / "passbench" / pub["task_id"] / "graph_list.txt").read_text().count("\n") == 1
    assert json.loads((out / "release" / "kernelbench" / "index.json").read_text())["problems"] == 1


def test_the_summary_names_two_cpus_of_one_model_name_apart(tmp_path):
    """Shards run on a Zen 4 and a Zen 2 VM that both say ``AMD EPYC`` are two machines in the summary (their
    manifests' ``cpu_identity``); a manifest without an identity is grouped by its model name."""
    out = tmp_path / "data_full"
    for shard, ident in enumerate((AMD_HOST, AMD_ZEN2_HOST, AMD_HOST, None)):
        mk = {"cpu_model": "AMD EPYC", "cpu_logical_cores": 2, "node": "vm", "load_avg_1m": 1.0 + shard,
              **({"cpu_identity": ident} if ident else {})}
        man = {"shard": shard, "models": [], "counts": {"tasks": 0}, "phases": [], "machine": mk, "code": {"commit": "c"},
               "finished_utc": "t"}
        write_shard(out, shard, {"manifest.json": json.dumps(man).encode()})
    got = {(m["cpu_identity"], m["shards"], tuple(m["load_avg_1m"])) for m in build_summary(out, 4)["machine"]}
    assert got == {(AMD_HOST, 2, (1.0, 3.0)), (AMD_ZEN2_HOST, 1, (2.0,)), (None, 1, (4.0,))}


def test_release_size_counts_each_distinct_content_once_against_the_budget(monkeypatch):
    """Every task folder holds the same runner files: the budget counts their bytes once (what git stores)."""
    from fullscale.release import release_size

    runner, own = {"sha256": "a" * 64, "bytes": 30_000}, {"sha256": "b" * 64, "bytes": 5_000}
    listed = {"tasks/t1/run_task.py": runner, "tasks/t2/run_task.py": runner, "tasks/t1/task.json": own}
    assert release_size(listed) == {"total_bytes": 65_000, "unique_bytes": 35_000}
    monkeypatch.setattr("fullscale.release.RELEASE_MAX_BYTES", 40_000)  # under the files' sum, over the distinct bytes
    assert "over_size_budget" not in release_size(listed)
    monkeypatch.setattr("fullscale.release.RELEASE_MAX_BYTES", 34_999)
    assert release_size(listed)["over_size_budget"] is True


def test_a_rebuild_keeps_the_released_split_whatever_the_key():
    """:func:`split_task` against earlier releases (:func:`previous_split`'s record): a variant published
    stays public and one held out stays held out, under any key, also when its task has another id now
    (a re-cut group, a task missing from the release before); new variants are drawn by the key's HMAC
    order only as far as the task's share still needs; a release written before ``variant_split`` holds
    out every unpublished variant of a task whose stem it released."""
    from fullscale.release import _mac, split_task

    def task(tid, ids):
        return {"task_id": tid, "variants": [(None, None, {"variant_id": i}) for i in ids]}

    ids = [f"v{i}" for i in range(6)]
    held, decided = split_task(task("tnew", ids), b"k", 0.2, None)
    assert held == {min(ids, key=lambda i: _mac(b"k", i))} and decided == 0  # round(0.2 x 6) = 1
    prev = {"public": {"v0", "v1", "v2", "w0"}, "held": {"v3", "x1"}, "stems": set(), "key_fingerprint": "f"}
    for key in (b"k", b"other"):
        got, known = split_task(task("told", ids), key, 0.2, prev)  # v3 held before: it fills the share
        assert got == {"v3"} and known == 4
        got, _ = split_task(task("tother-1", ["x0", "x1", "v1"]), key, 0.2, prev)  # x1 held under another task id
        assert got == {"x1"}
        got, _ = split_task(task("tnew", ["w0", "w1"]), key, 0.5, prev)
        assert got == {"w1"}  # w0 was public: only w1 can be held out
    got, _ = split_task(task("t2", ["v3", "x1", "n1", "n2", "n3", "n4"]), b"k", 0.2, prev)
    assert got == {"v3", "x1"}  # both stay held out although the share asks one
    got, _ = split_task(task("t3", [f"n{i}" for i in range(10)] + ["v3"]), b"k", 0.3, prev)
    assert "v3" in got and len(got) == 3 and got - {"v3"} == set(sorted(  # tops the share up with new ones
        [f"n{i}" for i in range(10)], key=lambda i: _mac(b"k", i))[:2])
    old = {"public": {"v0", "v1"}, "held": set(), "stems": {"told"}, "key_fingerprint": "f"}
    assert split_task(task("told-1", ["v1", "v9"]), b"k", 0.2, old)[0] == {"v9"}  # pre-variant_split release
    assert split_task(task("tone", ["v7"]), b"k", 0.2, prev) == (set(), 0)


def test_the_split_record_is_cumulative_across_builds_that_miss_a_task(tmp_path):
    """:func:`previous_split` reads ``variant_split`` from every folder it is given and unions them, and
    a build whose tasks miss one that an earlier build held keeps its variants in the record (so the
    task, back in a later build under another key, keeps its held-out variant)."""
    from fullscale.release import previous_split, split_task

    r1, r2 = tmp_path / "a", tmp_path / "b"
    for r, vs in ((r1, {"public": ["p1"], "held_out": ["h1"]}), (r2, {"public": ["p2"], "held_out": ["h2", "p1"]})):
        r.mkdir()
        (r / "secret_split.json").write_text(json.dumps({"variant_split": vs, "key_fingerprint": "f"}))
    prev = previous_split(r1, r2, tmp_path / "missing")
    assert prev["public"] == {"p1", "p2"} and prev["held"] == {"h1", "h2"}
    assert previous_split(tmp_path / "missing") is None
    task = {"task_id": "tx", "variants": [(None, None, {"variant_id": i}) for i in ("h1", "p1", "n1")]}
    assert split_task(task, b"attacker", 0.2, prev)[0] == {"h1"}
    # the secret folder's own record and its held-out task folders count too (a release built elsewhere)
    sd = tmp_path / "secret"
    (sd / "kept" / "t9").mkdir(parents=True)
    (sd / "kept" / "t9" / "task.json").write_text(json.dumps({"subgraphs": [{"variant_id": "h9"}]}))
    (sd / "split.json").write_text(json.dumps({"variant_split": {"public": ["p9"], "held_out": ["h8"]}}))
    got = previous_split(tmp_path / "missing", secret_dir=sd)
    assert got["held"] == {"h8", "h9"} and got["public"] == {"p9"}


def test_a_variant_held_out_in_one_task_is_held_out_in_every_task_that_holds_it():
    """:func:`split_tasks`: a variant id in two task groups, held out in one, is held out in both."""
    from fullscale.release import split_task, split_tasks

    def task(tid, ids):
        return {"task_id": tid, "variants": [(None, None, {"variant_id": i}) for i in ids]}

    prev = {"public": {"a1"}, "held": set(), "stems": set(), "key_fingerprint": None}
    ta, tb = task("ta", ["a1", "x"]), task("tb", ["x", "b1", "b2", "b3", "b4", "b5"])
    assert split_task(ta, b"k", 0.2, prev)[0] == {"x"} and "x" not in split_task(tb, b"k", 0.2, prev)[0]
    got = split_tasks([ta, tb], b"k", 0.2, prev)
    assert got[0][0] == {"x"} and "x" in got[1][0]


def test_a_stage_past_the_deadline_is_stopped_and_recorded(tmp_path):
    """A shard whose deadline has come: its running stage is stopped (rc None) and the shard is a
    failure record naming that phase (so the next run does it again). Run again, a shard keeps only its
    capture resume folder and its profile's finished attempts from the earlier run, the attempts only if
    they were made with the same params."""
    import time

    from extract.sources.modules import module_catalog
    from fullscale.params import params_digest
    from fullscale.pipeline import shard_entry
    from passnet_common.io import write_parquet
    from passnet_common.schema import to_table

    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "mlp_a.py").write_text(MLP)
    write_parquet(tmp_path / "catalog.parquet", to_table("models", module_catalog(tmp_path / "modules")))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    w = tmp_path / "work" / "shards" / "s0000"  # what an earlier run of the shard left, with the same params
    for rel in ("capture/done/a.json", "profile/attempts/ab/abcd/check.json", "profile/profiles.parquet",
                "profile/variants/x.json", "decompose/subgraphs.parquet", "logs/profile.log", "attempts/stray.json"):
        (w / rel).parent.mkdir(parents=True, exist_ok=True)
        (w / rel).write_text("{}")
    (w / "profile" / "attempts.params_sha256").write_text(params_digest(params))
    spec = {"shard": 0, "num_shards": 1, "graphnet_shards": 1, "params": params, "catalog": str(tmp_path / "catalog.parquet"),
            "out": str(tmp_path / "out"), "work": str(tmp_path / "work"), "deadline_epoch": time.time()}
    res = shard_entry(spec)
    assert res["ok"] is False
    f = res["failure"]
    assert (f["phase"], f["rc"], f["models"]) == ("capture", None, 1)  # 1 s left: killed while importing torch
    assert f["phases_done"][-1]["phase"] == "capture" and f["code"]["commit"]
    # the capture's resume folder and the profile's finished attempts survive the re-run; the rest is rebuilt
    left = {str(p.relative_to(w)) for p in w.rglob("*.json") if "capture" not in p.parts or p.name == "a.json"}
    assert left == {"capture/done/a.json", "profile/attempts/ab/abcd/check.json"}, left
    assert not (w / "profile" / "profiles.parquet").exists() and not (w / "decompose").exists()
    assert f["resumed_attempts"] == {"checked": 1, "timed": 0} and f["progress"]["profile_checked"] == 1
    # attempts made with other params are not resumed
    (w / "profile" / "attempts.params_sha256").write_text("other params")
    f = shard_entry({**spec, "deadline_epoch": time.time()})["failure"]
    assert not (w / "profile" / "attempts").exists() and f["resumed_attempts"] == {"checked": 0, "timed": 0}
    assert (w / "profile" / "attempts.params_sha256").read_text() == params_digest(params)


def test_a_drain_shard_needs_its_full_shard_and_keeps_its_own_scratch_record_and_pack(tmp_path):
    """A drain of a shard with no committed full shard is refused by name. With one committed, a drain stopped
    at its deadline works in ``<work>/drain/s0000``, from a copy of the full shard's capture folder (which stays
    as it was), and its failure record says ``drain`` and goes to ``<out>/drain/``, where the next ``--drain``
    run looks for it."""
    import time

    from extract.sources.modules import module_catalog
    from fullscale.pipeline import shard_entry
    from fullscale.runner import _finish
    from passnet_common.io import write_parquet
    from passnet_common.schema import to_table

    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "mlp_a.py").write_text(MLP)
    write_parquet(tmp_path / "catalog.parquet", to_table("models", module_catalog(tmp_path / "modules")))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    out = tmp_path / "out"
    spec = {"shard": 0, "num_shards": 1, "graphnet_shards": 1, "params": params, "catalog": str(tmp_path / "catalog.parquet"),
            "out": str(out), "work": str(tmp_path / "work"), "deadline_epoch": time.time(), "drain": True}
    with pytest.raises(ValueError, match="drain s0000: full shard s0000 is not committed"):
        shard_entry(spec)
    with pytest.raises(ValueError, match="a census shard or a drain shard, not both"):
        shard_entry({**spec, "census": True})
    _table_shard(out, 0, {"unique_graphs": [{"graph_hash": "g"}]})
    full_scratch = tmp_path / "work" / "shards" / "s0000" / "capture" / "done" / "a.json"
    full_scratch.parent.mkdir(parents=True)
    full_scratch.write_text("{}")
    res = shard_entry(spec)
    f = res["failure"]
    assert res["ok"] is False and f["drain"] is True and (f["phase"], f["rc"]) == ("capture", None)
    assert (tmp_path / "work" / "drain" / "s0000" / "logs" / "capture.log").is_file() and full_scratch.is_file()
    assert (tmp_path / "work" / "drain" / "s0000" / "capture" / "done" / "a.json").is_file()  # the full shard's, copied
    _finish(out, res, None)
    assert (out / "drain" / "s0000.failed.json").is_file() and not (out / "shards" / "s0000.failed.json").exists()
    assert build_summary(out, 1)["shards_failed"]["drain/s0000"]["phase"] == "capture"


def test_run_drain_starts_a_drain_shard_of_each_full_shard_with_a_waiting_structure(tmp_path, monkeypatch, capsys):
    """``run --drain`` on a build whose full shard 1 left structure B waiting below the floor (shard 0 none):
    one spec, shard 1, marked ``drain`` (id order); ``--census --drain`` is refused by name."""
    import fullscale.runner
    from fullscale.shards import FLOOR_REASON

    over = _override(tmp_path)
    out = tmp_path / "data_full"
    _table_shard(out, 0, {"subgraphs": [_sub("a1", "A")], "profiles": [_prof("a1")]}, num_shards=2)
    _table_shard(out, 1, {"subgraphs": [_sub("b1", "B", "skipped", FLOOR_REASON)]}, num_shards=2)
    got = []
    monkeypatch.setattr(fullscale.runner, "run_local", lambda specs, *a, **k: got.extend(specs) or [])
    assert _cli(over, "run", "--drain", metrics=tmp_path / "summary.json") == 0
    assert [(s["shard"], s.get("drain"), s["census"]) for s in got] == [(1, True, False)]
    capsys.readouterr()
    assert _cli(over, "plan", metrics=tmp_path / "summary.json") == 0
    assert json.loads(capsys.readouterr().out)["drains_pending"] == 1
    from passnet_common.cli import run_cli

    assert run_cli(lambda: _cli(over, "run", "--drain", "--census", metrics=tmp_path / "summary.json")) == 2
    assert "--census and --drain" in capsys.readouterr().err


def _attempt_tree(att: Path, cpu: str, keys: list[str]) -> dict[str, bytes]:
    """Profile attempt files as the profile writes them (check, result, a replicate, a re-measurement pass)."""
    files = {}
    for k in keys:
        files[f"{k[:2]}/{k}/check.json"] = json.dumps({"status": "ok", "check_seconds": 1.0, "key": k}).encode()
        for rel in ("result.json", "rep1/result.json", "rep1/pass1/result.json"):
            files[f"{k[:2]}/{k}/{rel}"] = json.dumps({"cpu_model": cpu, "time_seconds": 2.0, "stable": True, "capped": False,
                                                      "speedup_compiler": 0.9, "key": k, "file": rel}).encode()
    for rel, data in files.items():
        (att / rel).parent.mkdir(parents=True, exist_ok=True)
        (att / rel).write_bytes(data)
    return files


def test_a_stopped_shards_attempts_pack_restores_them_and_refuses_what_is_not_one(tmp_path):
    """:func:`pack_attempts` / :func:`unpack_attempts`: every attempt file (replicates and passes included)
    comes back byte for byte in another folder, a file already there is kept, stray files are not packed;
    a pack of other params, a path leaving the attempts layout, data that is not a JSON object or a file that
    is not Parquet writes nothing and says why."""
    import pyarrow as pa

    from fullscale.shards import attempt_machines, pack_attempts, unpack_attempts

    src = tmp_path / "a"
    files = _attempt_tree(src, "AMD EPYC", ["ab12cd34ef56", "ab99cd34ef56", "0f1e2d3c4b5a"])
    (src / "ab" / "stray.txt").write_text("x")
    (src / "notes.json").write_text("{}")
    pack = tmp_path / "s0007.attempts.parquet"
    pack.write_bytes(pack_attempts(src, "digest-1", AMD_HOST))
    assert pack_attempts(tmp_path / "none", "digest-1", AMD_HOST) is None

    dst = tmp_path / "b"
    local = dst / "0f" / "0f1e2d3c4b5a" / "result.json"
    local.parent.mkdir(parents=True)
    local.write_bytes(b'{"cpu_model": "Intel Xeon", "time_seconds": 1.0}')
    got = unpack_attempts(pack, dst, "digest-1", "AMD EPYC", AMD_HOST)
    assert got == {"files": 11, "kept_local": 1, "machines": {"AMD EPYC": 8}, "timings_left_out": {}}  # 3 result files a key, one kept
    assert {p.relative_to(dst).as_posix(): p.read_bytes() for p in dst.rglob("*") if p.is_file()} == \
        {**files, "0f/0f1e2d3c4b5a/result.json": b'{"cpu_model": "Intel Xeon", "time_seconds": 1.0}'}
    assert attempt_machines(dst) == {"AMD EPYC": 8, "Intel Xeon": 1}

    other = tmp_path / "c"
    assert unpack_attempts(pack, other, "digest-2", "AMD EPYC", AMD_HOST)["refused"].endswith("was made with other params (digest-1)")
    tbl = pq.read_table(pack)
    meta = tbl.schema.metadata
    ok_check = b'{"status": "ok", "check_seconds": 1}'
    deep = b"[" * 100000 + b"]" * 100000
    res = "ab/ab12cd34ef56/result.json"
    timing = {"cpu_model": "x", "time_seconds": 1, "stable": True, "capped": False}
    for rows, why in (([("ab/ab12cd34ef56/../../../x/check.json", ok_check)], "is not an attempt file"),
                      ([("ab/cd12cd34ef56/check.json", ok_check)], "is not an attempt file"),  # key not under its prefix
                      ([("ab/ab12cd34ef56/check.json", b"[1]")], "is not a JSON object"),
                      ([("ab/ab12cd34ef56/check.json", b"{oops")], "is not JSON"),
                      ([("ab/ab12cd34ef56/check.json", b"{}")], "is not a compile check"),
                      ([(res, b'{"cpu_model": "x"}')], "is not a timing result"),
                      ([(res, b'{"cpu_model": "x", "time_seconds": 1}')], "holds no timing"),
                      ([(res, json.dumps({**timing, "speedup_compiler": "fast"}).encode())], "speedup that is not a number"),
                      ([(res, json.dumps({**timing, "trial_history": "not json"}).encode())], "trial_history"),
                      ([(res, json.dumps({**timing, "status": 3}).encode())], "status that is not text"),
                      ([("ab/ab12cd34ef56/check.json", deep)], "is not JSON"),  # RecursionError
                      ([("ab/ab12cd34ef56/check.json", ok_check)] * 2, "is given twice")):
        bad = pa.table({"path": [r for r, _ in rows], "data": pa.array([d for _, d in rows], pa.binary()),
                        "host": [AMD_HOST] * len(rows)})
        pq.write_table(bad.replace_schema_metadata(meta), tmp_path / "bad.parquet")
        assert why in unpack_attempts(tmp_path / "bad.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)["refused"], rows[0][0]
    as_text = pa.table({"path": ["ab/ab12cd34ef56/check.json"], "data": [ok_check.decode()], "host": [AMD_HOST]})
    pq.write_table(as_text.replace_schema_metadata(meta), tmp_path / "text.parquet")
    assert "data (binary) expected" in unpack_attempts(tmp_path / "text.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)["refused"]
    host_int = pa.table({"path": ["ab/ab12cd34ef56/check.json"], "data": [ok_check], "host": [7]})
    pq.write_table(host_int.replace_schema_metadata(meta), tmp_path / "host.parquet")
    assert "column host (string) expected" in unpack_attempts(tmp_path / "host.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)["refused"]
    no_host = pa.table({"path": ["ab/ab12cd34ef56/check.json"], "data": [ok_check]})  # a /2 pack must name hosts
    pq.write_table(no_host.replace_schema_metadata(meta), tmp_path / "no_host.parquet")
    got = unpack_attempts(tmp_path / "no_host.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)
    assert "not a profile attempts pack" in got["refused"]
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    assert "not a readable Parquet file" in unpack_attempts(tmp_path / "junk.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)["refused"]
    pq.write_table(pa.table({"path": ["x"], "data": [b"{}"]}), tmp_path / "plain.parquet")
    assert "not a profile attempts pack" in unpack_attempts(tmp_path / "plain.parquet", other, "digest-1", "AMD EPYC", AMD_HOST)["refused"]
    assert not other.exists()
    # nothing is written through a symbolic link or where a file stands in for a folder; neither raises
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = tmp_path / "d"
    linked.mkdir()
    (linked / "ab").symlink_to(outside)
    got = unpack_attempts(pack, linked, "digest-1", "AMD EPYC", AMD_HOST)
    assert "through a symbolic link" in got["refused"] and not any(outside.iterdir())
    blocked = tmp_path / "e"
    blocked.mkdir()
    (blocked / "ab").write_text("a file")
    assert "NotADirectoryError" in unpack_attempts(pack, blocked, "digest-1", "AMD EPYC", AMD_HOST)["refused"]


def test_timings_of_another_cpu_model_are_neither_unpacked_nor_kept_from_the_scratch_folder(tmp_path):
    """A machine takes up a timing folder (its result, its re-measurement passes) only when it was timed on its own
    CPU model: from a pack another model's folders give their compile check alone; in the scratch folder
    (storage machines share, a disk moved to another host) another model's timings are removed before the pack
    is read, the check kept. A machine that cannot name its CPU takes no timing from a pack and removes none."""
    from fullscale.shards import drop_foreign_timings, pack_attempts, unpack_attempts

    src = tmp_path / "a"
    files = _attempt_tree(src, "AMD EPYC", ["ab12cd34ef56"])  # check, result, rep1/result, rep1/pass1/result
    pack = tmp_path / "s0007.attempts.parquet"
    pack.write_bytes(pack_attempts(src, "d", AMD_HOST))
    for cpu in ("Intel Xeon", "unknown"):
        got = unpack_attempts(pack, tmp_path / cpu, "d", cpu, "unknown" if cpu == "unknown" else f"{cpu} | h")
        assert got == {"files": 1, "kept_local": 0, "machines": {}, "timings_left_out": {"AMD EPYC": 3}}
        assert [p.name for p in (tmp_path / cpu).rglob("*.json")] == ["check.json"]

    # a scratch folder holding an AMD replicate 0 (with an error file and a pass) beside Intel's replicate 1
    att = tmp_path / "scratch"
    _attempt_tree(att, "AMD EPYC", ["cd12cd34ef56"])
    k = att / "cd" / "cd12cd34ef56"
    (k / "error.json").write_text('{"error_class": "timeout"}')
    (k / "pass1").mkdir()
    (k / "pass1" / "result.json").write_text('{"cpu_model": "AMD EPYC", "time_seconds": 1}')
    for rel in ("rep1/result.json", "rep1/pass1/result.json"):
        (k / rel).write_text('{"cpu_model": "Intel Xeon", "time_seconds": 1}')
    (k / "rep2").mkdir()
    (k / "rep2" / "result.json").write_text("{torn")
    before = sorted(p.relative_to(att).as_posix() for p in att.rglob("*.json"))
    assert drop_foreign_timings(att, "unknown", "unknown", None) == {}
    assert drop_foreign_timings(att, "Intel Xeon", INTEL_HOST, INTEL_HOST) == {"AMD EPYC": 3}
    assert sorted(p.relative_to(att).as_posix() for p in att.rglob("*.json")) == [
        "cd/cd12cd34ef56/check.json", "cd/cd12cd34ef56/rep1/pass1/result.json", "cd/cd12cd34ef56/rep1/result.json",
        "cd/cd12cd34ef56/rep2/result.json"]  # the unreadable one is the profile's to judge
    assert len(before) == 7 and drop_foreign_timings(att, "Intel Xeon", INTEL_HOST, INTEL_HOST) == {}
    # the same CPU model name on another host (a Zen 2 and a Zen 4 both say "AMD EPYC"), or a scratch folder whose
    # stamp names no host: every timing goes, the checks stay; a pack's rows of another host give their checks alone
    for scratch_host, key in ((AMD_HOST, AMD_HOST), (None, "host not recorded")):
        zen2 = tmp_path / f"zen2-{key}"
        _attempt_tree(zen2, "AMD EPYC", ["ef12cd34ef56"])
        assert drop_foreign_timings(zen2, "AMD EPYC", AMD_ZEN2_HOST, scratch_host) == {key: 3}
        assert [p.name for p in zen2.rglob("*.json")] == ["check.json"]
    got = unpack_attempts(pack, tmp_path / "zen2", "d", "AMD EPYC", AMD_ZEN2_HOST)
    assert got == {"files": 1, "kept_local": 0, "machines": {}, "timings_left_out": {AMD_HOST: 3}}
    got = unpack_attempts(pack, tmp_path / "zen4", "d", "AMD EPYC", AMD_HOST)  # the host that timed them
    assert got == {"files": 4, "kept_local": 0, "machines": {"AMD EPYC": 3}, "timings_left_out": {}}
    # a timing child killed on another host left an error file and no result: the host alone judges it
    err = tmp_path / "err"
    (err / "cd" / "cd12cd34ef56").mkdir(parents=True)
    (err / "cd" / "cd12cd34ef56" / "error.json").write_text('{"error_class": "Timeout"}')
    (tmp_path / "err.parquet").write_bytes(pack_attempts(err, "d", AMD_ZEN2_HOST))
    got = unpack_attempts(tmp_path / "err.parquet", tmp_path / "zen4-err", "d", "AMD EPYC", AMD_HOST)
    assert got == {"files": 0, "kept_local": 0, "machines": {}, "timings_left_out": {AMD_ZEN2_HOST: 1}}
    assert drop_foreign_timings(err, "AMD EPYC", AMD_ZEN2_HOST, AMD_ZEN2_HOST) == {}  # its own host keeps it
    assert drop_foreign_timings(err, "AMD EPYC", AMD_HOST, AMD_ZEN2_HOST) == {AMD_ZEN2_HOST: 1} and not any(err.rglob("*.json"))
    # a machine that cannot read its identity keeps its own scratch folder (stamped unknown) and takes no pack timing
    own = tmp_path / "own"
    _attempt_tree(own, "AMD EPYC", ["ef12cd34ef56"])
    assert drop_foreign_timings(own, "AMD EPYC", "unknown", "unknown") == {}
    assert unpack_attempts(pack, tmp_path / "own2", "d", "AMD EPYC", "unknown")["timings_left_out"] == {AMD_HOST: 3}
    assert files  # the pack's tree was written as the profile writes it


ZEN4_CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx fma avx2 avx512f avx512dq avx512_bf16 avx512_vnni

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
flags\t\t: avx2 fma avx512_vnni avx512_bf16 avx512f
"""


def test_a_host_identity_tells_apart_two_cpus_of_one_model_name_and_a_pack_without_hosts_gives_checks_alone(tmp_path):
    """:func:`host_identity`: two VMs whose model name is ``AMD EPYC`` -- a Zen 4 with AVX-512 and a Zen 2 with AVX2
    -- have two identities; an Arm CPU is named by implementer and part, a big.LITTLE one (RK3588: Cortex-A55 +
    A76) by both kinds, so it differs from a board of the little cores alone (RK3568), and so does an x86 CPU
    whose processors' flags differ; an unknown model or a ``cpuinfo`` that names no family is unknown. A ``/1``
    pack (no host column, written before hosts were recorded) is read, and its timings are left out on every
    machine, the checks written."""
    import pyarrow as pa

    from fullscale.shards import host_identity, read_pack, unpack_attempts

    zen4 = host_identity("AMD EPYC", ZEN4_CPUINFO)
    assert zen4 == "AMD EPYC | AuthenticAMD family 25 model 17 | avx2 avx512f avx512_bf16 avx512_vnni"
    zen2_info = re.sub(r" avx512\w*", "", ZEN4_CPUINFO.replace(": 25", ": 23").replace(": 17", ": 49"))
    zen2 = host_identity("AMD EPYC", zen2_info)
    assert zen2 == "AMD EPYC | AuthenticAMD family 23 model 49 | avx2" and zen2 != zen4
    arm = "processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n\nHardware\t: x\n"
    assert host_identity("Neoverse-V1", arm) == "Neoverse-V1 | implementer 0x41 part 0xd40 | asimd sve"
    a55 = "processor\t: {}\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n"
    a76 = a55.replace("0xd05", "0xd0b")
    rk3568 = "\n".join(a55.format(i) for i in range(4))
    rk3588 = "\n".join([*(a55.format(i) for i in range(4)), *(a76.format(i) for i in range(4, 8))])
    assert host_identity("aarch64", rk3568) == "aarch64 | implementer 0x41 part 0xd05 | asimd"
    assert host_identity("aarch64", rk3588) == "aarch64 | implementer 0x41 part 0xd05 | asimd + implementer 0x41 part 0xd0b | asimd"
    uneven = ZEN4_CPUINFO.replace("flags\t\t: avx2 fma avx512_vnni avx512_bf16 avx512f", "flags\t\t: avx2 fma")
    assert host_identity("AMD EPYC", uneven) == zen4.replace(" | avx2 ", " | avx2 + AuthenticAMD family 25 model 17 | avx2 ")
    assert host_identity("unknown", ZEN4_CPUINFO) == "unknown" and host_identity("AMD EPYC", "model name\t: x\n") == "unknown"
    assert host_identity("AMD EPYC").startswith("AMD EPYC | ") or host_identity("AMD EPYC") == "unknown"  # this machine's

    src = tmp_path / "a"
    files = _attempt_tree(src, "AMD EPYC", ["ab12cd34ef56"])
    v1 = pa.table({"path": sorted(files), "data": pa.array([files[r] for r in sorted(files)], pa.binary())})
    v1 = v1.replace_schema_metadata({b"format": b"passnet-profile-attempts/1", b"params_sha256": b"d"})
    pq.write_table(v1, tmp_path / "v1.parquet")
    digest, got, hosts = read_pack(tmp_path / "v1.parquet")
    assert (digest, got, set(hosts.values())) == ("d", files, {None})
    res = unpack_attempts(tmp_path / "v1.parquet", tmp_path / "b", "d", "AMD EPYC", zen4)
    assert res == {"files": 1, "kept_local": 0, "machines": {}, "timings_left_out": {"host not recorded": 3}}


def test_a_merged_pack_keeps_each_timing_folder_whole_and_a_bad_one_stops_nothing(tmp_path):
    """:func:`write_failure` merges the stop's attempts into the committed pack by timing folder: a folder the
    stop holds comes from the stop alone (passes the profile cleared to time a variant afresh, an error file it
    removed before a retry, do not come back), a folder only the pack holds is kept; a torn attempt file on disk
    is left out of the pack; a stop whose pack cannot be read writes its record and keeps the committed pack."""
    from fullscale.shards import _pack_bytes, pack_attempts, resume_pack_path, write_failure

    def res(stable):
        return json.dumps({"cpu_model": "c", "time_seconds": 1.0, "stable": stable, "capped": False}).encode()

    key, other = "ab/ab12cd34ef56", "cd/cd12cd34ef56"
    old = {f"{key}/result.json": res(False), f"{key}/pass1/result.json": res(False), f"{key}/rep1/result.json": res(True),
           f"{other}/error.json": b'{"error_class": "Timeout"}'}
    a = tmp_path / "a"
    for rel, data in old.items():
        (a / rel).parent.mkdir(parents=True, exist_ok=True)
        (a / rel).write_bytes(data)
    write_failure(tmp_path / "out", 3, {"shard": 3}, resume_pack=pack_attempts(a, "P", "c | h"))
    b = tmp_path / "b"  # the next run cleared the unstable passes, timed afresh; retried `other`
    new = {f"{key}/result.json": res(True), f"{other}/check.json": b'{"status": "ok", "check_seconds": 2}'}
    for rel, data in new.items():
        (b / rel).parent.mkdir(parents=True, exist_ok=True)
        (b / rel).write_bytes(data)
    (b / key / "rep2").mkdir()
    (b / key / "rep2" / "result.json").write_bytes(b'{"cpu_model": "c", "time_seconds"')  # torn by a crash
    write_failure(tmp_path / "out", 3, {"shard": 3}, resume_pack=pack_attempts(b, "P", "c | h"))
    pack = resume_pack_path(tmp_path / "out", 3)
    got = {r["path"]: r["data"] for r in pq.read_table(pack).to_pylist()}
    assert got == {**new, f"{key}/rep1/result.json": res(True)}
    before = pack.read_bytes()
    bad = _pack_bytes({"ab/ab12cd34ef56/check.json": b"{}"}, "P", {})  # written unchecked
    assert write_failure(tmp_path / "out", 3, {"shard": 3, "again": 1}, resume_pack=bad).is_file()
    assert pack.read_bytes() == before and json.loads((tmp_path / "out" / "shards" / "s0003.failed.json").read_text())["again"]


def test_a_shard_stopped_on_one_machine_resumes_its_attempts_on_another(tmp_path, monkeypatch):
    """The failure record of a shard stopped at its deadline comes with its finished attempts
    (``<out>/shards/<name>.attempts.parquet``); a run of that shard with an empty scratch folder (another
    machine of the same CPU model) takes them up, says so, and packs them again when it stops too; a machine
    of another CPU model takes up the compile checks only; the shard's folder, once written, replaces record
    and pack."""
    import time

    import fullscale.pipeline
    from extract.sources.modules import module_catalog
    from fullscale.params import params_digest
    from fullscale.pipeline import shard_entry
    from fullscale.runner import _finish
    from fullscale.shards import host_identity, pack_attempts, resume_pack_path
    from passnet_common.io import write_parquet
    from passnet_common.schema import to_table

    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "mlp_a.py").write_text(MLP)
    write_parquet(tmp_path / "catalog.parquet", to_table("models", module_catalog(tmp_path / "modules")))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    out = tmp_path / "out"
    first = tmp_path / "machine_a" / "shards" / "s0000" / "profile" / "attempts"  # a run stopped on machine A
    files = _attempt_tree(first, "AMD EPYC", ["ab12cd34ef56", "cd12cd34ef56"])
    pack = resume_pack_path(out, 0)
    pack.parent.mkdir(parents=True)
    pack.write_bytes(pack_attempts(first, params_digest(params), host_identity("AMD EPYC")))

    spec = {"shard": 0, "num_shards": 1, "graphnet_shards": 1, "params": params, "catalog": str(tmp_path / "catalog.parquet"),
            "out": str(out), "work": str(tmp_path / "machine_b"), "deadline_epoch": time.time()}
    # machine D, another CPU model: the checks come back, the timings are made again there (none mixes CPUs)
    monkeypatch.setattr(fullscale.pipeline, "cpu_model", lambda: "Intel Xeon")
    res = shard_entry({**spec, "work": str(tmp_path / "machine_d")})
    assert res["failure"]["resumed_from_pack"] == {"files": 2, "kept_local": 0, "machines": {},
                                                   "timings_left_out": {"AMD EPYC": 6}}
    assert res["failure"]["resumed_attempts"] == {"checked": 2, "timed": 0}
    att_d = tmp_path / "machine_d" / "shards" / "s0000" / "profile" / "attempts"
    assert {p.relative_to(att_d).as_posix() for p in att_d.rglob("*") if p.is_file()} == \
        {r for r in files if r.endswith("/check.json")}
    # an AMD timing that reached D's scratch folder some other way (shared storage) is removed, not pooled
    stray = att_d / "ab" / "ab12cd34ef56" / "result.json"
    stray.write_bytes(files["ab/ab12cd34ef56/result.json"])
    res = shard_entry({**spec, "work": str(tmp_path / "machine_d")})
    assert res["failure"]["foreign_timings_dropped"] == {"AMD EPYC": 1} and not stray.exists()
    assert res["failure"]["resumed_from_pack"]["timings_left_out"] == {"AMD EPYC": 6}

    monkeypatch.setattr(fullscale.pipeline, "cpu_model", lambda: "AMD EPYC")
    res = shard_entry(spec)  # machine B, the CPU model of machine A: nothing in its scratch
    f = res["failure"]
    assert f["resumed_from_pack"] == {"files": 8, "kept_local": 0, "machines": {"AMD EPYC": 6}, "timings_left_out": {}}
    assert f["resumed_attempts"] == {"checked": 2, "timed": 6} and f["attempt_machines"] == {"AMD EPYC": 6}
    assert f["foreign_timings_dropped"] == {}
    att = tmp_path / "machine_b" / "shards" / "s0000" / "profile" / "attempts"
    assert {p.relative_to(att).as_posix(): p.read_bytes() for p in att.rglob("*") if p.is_file()} == files
    _finish(out, res, None)
    assert (out / "shards" / "s0000.failed.json").is_file()
    assert {r["path"]: r["data"] for r in pq.read_table(pack).to_pylist()} == files  # packed again, whole
    assert build_summary(out, 1)["shards_failed"]["s0000"]["attempts_packed"] == 8

    # other params: the pack is not taken up, and a run with nothing to pack leaves it as it is
    other = {**params, "catalog": {**params["catalog"], "sample_seed": 1}}
    shutil.rmtree(tmp_path / "machine_b")
    res = shard_entry({**spec, "params": other, "deadline_epoch": time.time()})
    assert "other params" in res["failure"]["resumed_from_pack"]["refused"] and res["resume_pack"] is None
    before = pack.read_bytes()
    _finish(out, res, None)
    assert pack.read_bytes() == before
    # a worker that cannot see the committed pack (a Ray node without the folder) stops with attempts of its
    # own: the driver merges them into the pack instead of replacing it
    blind = tmp_path / "machine_c" / "shards" / "s0000" / "profile" / "attempts"
    mine = _attempt_tree(blind, "Intel Xeon", ["ef12cd34ef56"])
    (blind.parent / "attempts.params_sha256").write_text(params_digest(params))
    (blind.parent / "attempts.host").write_text(host_identity("Intel Xeon"))  # machine C's own scratch folder
    monkeypatch.setattr(fullscale.pipeline, "cpu_model", lambda: "Intel Xeon")  # machine C's own timings
    res = shard_entry({**spec, "out": str(tmp_path / "empty_out"), "work": str(tmp_path / "machine_c"),
                       "deadline_epoch": time.time()})
    assert res["failure"]["resumed_from_pack"] is None and res["failure"]["attempt_machines"] == {"Intel Xeon": 3}
    _finish(out, res, None)
    assert {r["path"]: r["data"] for r in pq.read_table(pack).to_pylist()} == {**files, **mine}

    # a census run over a scratch folder another host stamped (one shared `work` path) leaves the stamp, so the
    # full run after it drops that host's timings; a stamp that is not UTF-8 names no host and stops nothing
    other_host = "AMD EPYC | GenuineTest family 0 model 0 | avx2"  # another CPU that says AMD EPYC
    monkeypatch.setattr(fullscale.pipeline, "cpu_model", lambda: "AMD EPYC")
    shared = tmp_path / "machine_e" / "shards" / "s0000" / "profile"
    _attempt_tree(shared / "attempts", "AMD EPYC", ["ef12cd34ef56"])
    (shared / "attempts.params_sha256").write_text(params_digest(params))
    (shared / "attempts.host").write_text(other_host)
    e_spec = {**spec, "out": str(tmp_path / "empty_out"), "work": str(tmp_path / "machine_e")}
    res = shard_entry({**e_spec, "census": True, "deadline_epoch": time.time()})
    assert res["failure"]["phase"] == "capture" and (shared / "attempts.host").read_text() == other_host
    res = shard_entry({**e_spec, "deadline_epoch": time.time()})
    assert res["failure"]["foreign_timings_dropped"] == {other_host: 3}
    assert (shared / "attempts.host").read_text() == host_identity("AMD EPYC")
    _attempt_tree(shared / "attempts", "AMD EPYC", ["ef12cd34ef56"])
    (shared / "attempts.host").write_bytes(b"AMD EPYC \xae")
    res = shard_entry({**e_spec, "deadline_epoch": time.time()})
    assert res["failure"]["foreign_timings_dropped"] == {"host not recorded": 3}

    # a shard's folder replaces its record and its pack
    pack.write_bytes(pack_attempts(first, params_digest(params), host_identity("AMD EPYC")))
    write_shard(out, 0, {"manifest.json": json.dumps({"shard": 0}).encode()})
    assert not pack.exists() and not (out / "shards" / "s0000.failed.json").exists()


def test_commit_shard_commits_the_folder_and_the_removal_of_its_record_and_pack(tmp_path, monkeypatch):
    """``--commit``: a shard now done is committed with its folder added and its failure record and attempts
    pack removed; a file staged elsewhere in the tree stays out of the commit."""
    import subprocess

    import fullscale.runner as runner

    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*a):
        return subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    out = repo / "data_full"
    (out / "shards").mkdir(parents=True)
    (out / "shards" / "s0003.failed.json").write_text("{}")
    (out / "shards" / "s0003.attempts.parquet").write_bytes(b"pack")
    (repo / "other.txt").write_text("a")
    git("add", "-A")
    git("commit", "-q", "-m", "stopped")
    (repo / "other.txt").write_text("b")
    git("add", "other.txt")
    monkeypatch.setattr(runner, "ROOT", repo)
    write_shard(out, 3, {"manifest.json": b'{"shard": 3}'})
    (repo / "m").mkdir()
    (repo / "m" / "s.json").write_text('{"tasks": 1}')  # --metrics: the summary the run wrote, committed with the shard
    (repo / "m" / "absent.png").unlink(missing_ok=True)  # a plot not drawn (no task rates yet): nothing to commit
    outside = tmp_path / "elsewhere.json"  # a --metrics outside the repository: left out
    outside.write_text("{}")
    runner.commit_shard(out, 3, "shard 3 done", written=[repo / "m" / "s.json", repo / "m" / "absent.png", outside])
    assert git("log", "-1", "--format=%s").strip() == "shard 3 done"
    assert sorted(git("show", "--name-status", "--format=", "HEAD").splitlines()) == [
        "A\tdata_full/shards/s0003/DONE", "A\tdata_full/shards/s0003/manifest.json",
        "A\tm/s.json", "D\tdata_full/shards/s0003.attempts.parquet", "D\tdata_full/shards/s0003.failed.json"]
    assert git("diff", "--cached", "--name-only").split() == ["other.txt"]


def test_profile_counts_read_the_profiles_two_phases():
    """Screened: every timed run-0 CPU row of both phases (a protocol variant was screened first);
    confirmed: the stable protocol rows. Skipped, run-1 and device rows do not count. The count once
    looked for a phase named ``confirm``, which the profile never writes, and reported 0 confirmed."""
    from fullscale.summary import profile_counts

    def row(phase, status, stable=True, run=0, device="cpu"):
        return {"phase": phase, "status": status, "stable": stable, "run": run, "device": device}

    rows = ([row("screen", "ok")] * 3 + [row("screen", "skipped", None)] + [row("protocol", "ok")] * 4
            + [row("protocol", "unstable", False)] + [row("protocol", "ok", run=1), row("protocol", "ok", device="cuda")])
    rows = [{**r, "subgraph_hash": f"h{i}", "size": "catalog", "dtype": "float32"} for i, r in enumerate(rows)]
    assert profile_counts(rows) == (8, 4)
    one_phase = [{k: v for k, v in r.items() if k != "phase"} for r in rows]
    assert profile_counts(one_phase) == (8, 7)  # no phase column: every timed row screened, the stable ones confirmed
    # a variant is (subgraph, size, dtype): another size or dtype of h0 is another variant, the same one is not
    again = [{**rows[0], "size": "mid"}, {**rows[0], "dtype": "bfloat16"}, dict(rows[0])]
    assert profile_counts(rows + again) == (10, 4)


def test_summary_counts_a_variant_two_concurrent_shards_timed_once(tmp_path):
    """Shards that run at once do not see each other's subgraphs, so both may time one variant (in the full
    build: 114 variants of 23 subgraphs, counted twice). The summary counts it once, with the rows of the shard
    that finished first -- screened, confirmed and its long-tail labels -- whatever the shards' ids."""
    def prof(h, stable, size="catalog"):
        return {"subgraph_hash": h, "size": size, "dtype": "float32", "status": "ok" if stable else "unstable",
                "stable": stable, "phase": "protocol", "run": 0, "device": "cpu"}

    def lt(h, e2e, comp, size="catalog"):
        return {"subgraph_hash": h, "size": size, "dtype": "float32", "status": "ok", "run": 0,
                "slower_e2e": e2e, "slower_compiler": comp}

    # shard 0 finished second: its row of the shared variant (hX, catalog) is not the one counted
    _table_shard(tmp_path, 0, {"subgraphs": [_sub("hX", "A"), _sub("h0", "B")],
                               "profiles": [prof("hX", True), prof("h0", True)],
                               "long_tail": [lt("hX", True, True), lt("h0", False, False)]},
                 finished_utc="2026-01-02T00:00:00")
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("hX", "A"), _sub("h1", "C")],
                               "profiles": [prof("hX", False), prof("hX", True, "mid"), prof("h1", True)],
                               "long_tail": [lt("hX", False, False), lt("hX", True, False, "mid"), lt("h1", False, False)]},
                 finished_utc="2026-01-01T00:00:00")
    s = build_summary(tmp_path, 2)
    # variants: (hX, catalog) once, from shard 1 (unstable, not slower); (hX, mid); h0; h1
    assert (s["variants_screened"], s["variants_confirmed"], s["variants_timed_again"]) == (4, 3, 1)
    assert (s["slowdown_share_e2e"], s["slowdown_share_compiler"]) == (0.25, 0.0)


def _sha(h: str) -> str:
    import hashlib

    return hashlib.sha256(h.encode()).hexdigest()


def test_structure_quota_keeps_the_first_members_by_hash_order_whatever_the_row_order():
    """``structure_picks``: per structure, the ok rows beyond ``quota - profiled`` are skipped, the
    kept ones first in sha256(hash) order, whatever order the shard lists them in; rows not ok or
    without a structure hash are never skipped; a structure the committed shards filled is skipped whole."""
    from fullscale.shards import structure_picks

    rows = [{"subgraph_hash": h, "structure_hash": p, "status": s} for h, p, s in [
        ("a1", "A", "ok"), ("a2", "A", "ok"), ("a3", "A", "ok"), ("b1", "B", "ok"),
        ("c1", "C", "ok"), ("c2", "C", "ok"), ("c3", "C", "ok"), ("d1", "D", "skipped"), ("e1", None, "ok")]]
    c_first = sorted(["c1", "c2", "c3"], key=_sha)
    skip = structure_picks(rows, {"A": 1}, 1)
    kept = {r["subgraph_hash"] for r, s in zip(rows, skip) if not s}
    assert kept == {"b1", c_first[0], "d1", "e1"}  # A's one slot was taken by a committed shard
    skip2 = structure_picks(rows, {"A": 1}, 2)
    kept2 = {r["subgraph_hash"] for r, s in zip(rows, skip2) if not s}
    assert kept2 == {sorted(["a1", "a2", "a3"], key=_sha)[0], "b1", *c_first[:2], "d1", "e1"}
    rev = list(reversed(rows))  # the same rows in another order pick the same members
    assert {r["subgraph_hash"] for r, s in zip(rev, structure_picks(rev, {"A": 1}, 1)) if not s} == kept
    with pytest.raises(ValueError, match="quota"):
        structure_picks(rows, {}, 0)


def _table_shard(out: Path, shard: int, tables: dict[str, list[dict]], kind: str = "shards", **man_fields) -> None:
    import io

    import pyarrow as pa

    files = {}
    for name, rows in tables.items():
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buf)
        files[f"tables/{name}.parquet"] = buf.getvalue()
    man = {"shard": shard, "models": [], "counts": {"tasks": 0}, "phases": [], "machine": {"cpu_model": "x"},
           "code": {"commit": "c"}, "finished_utc": "t", **man_fields}
    files["manifest.json"] = json.dumps(man).encode()
    write_shard(out, shard, files, kind)


def _sub(h, structure, status="ok", why=None, pattern="p", models=("m",)):
    return {"subgraph_hash": h, "structure_hash": structure, "pattern": pattern, "status": status,
            "skip_reason": why, "model_ids": list(models), "num_models": len(models)}


def _prof(h, status="ok"):
    return {"subgraph_hash": h, "status": status, "run": 0, "device": "cpu"}


def test_profiled_structures_count_members_a_committed_shard_timed(tmp_path):
    """A member counts once (by hash) when a committed shard left it ok and timed it: a member whose
    variants were all skipped keeps its structure's slot free, and seen-before and over-quota rows do not
    count; a quota-skipped subgraph is not "seen", so a later shard judges it again."""
    from fullscale.shards import QUOTA_REASON, SEEN_REASON, profiled_structures, seen_hashes

    _table_shard(tmp_path, 0, {"subgraphs": [_sub("h1", "A"), _sub("h2", "A"), _sub("h3", "B", "skipped", SEEN_REASON),
                                              _sub("h6", "D")],
                               "profiles": [_prof("h1"), _prof("h2", "unstable"), _prof("h6", "skipped")]})
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("h1", "A", "skipped", SEEN_REASON), _sub("h4", "B"),
                                              _sub("h5", "C", "skipped", QUOTA_REASON)],
                               "profiles": [_prof("h4", "accuracy_error")]})
    assert profiled_structures(tmp_path) == {"A": 2, "B": 1}  # D's only member was never timed
    assert seen_hashes(tmp_path)[1] == {"h1", "h2", "h4", "h6"}  # h5 (over the quota) is judged again later


def test_structure_quota_marks_the_subgraphs_table_in_place(tmp_path):
    """``_mark_structure_quota`` rewrites status / skip_reason of the rows over the quota and keeps the
    table's schema and other columns."""
    import pyarrow as pa

    from fullscale.pipeline import _mark_structure_quota
    from fullscale.shards import QUOTA_REASON

    rows = [{"subgraph_hash": h, "structure_hash": "A", "status": "ok", "skip_reason": None, "num_nodes": i}
            for i, h in enumerate(["x1", "x2", "x3"])]
    schema = pa.schema([("subgraph_hash", pa.string()), ("structure_hash", pa.string()), ("status", pa.string()),
                        ("skip_reason", pa.string()), ("num_nodes", pa.int64())])
    path = tmp_path / "subgraphs.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    assert _mark_structure_quota(path, {}, 1) == 2
    t = pq.read_table(path)
    assert t.schema == schema
    got = t.to_pylist()
    keep = min(["x1", "x2", "x3"], key=_sha)
    assert [(g["status"], g["skip_reason"]) for g in got] == [
        ("ok", None) if g["subgraph_hash"] == keep else ("skipped", QUOTA_REASON) for g in got]
    assert [g["num_nodes"] for g in got] == [0, 1, 2]


def test_summary_projects_from_the_current_design_and_counts_timed_structures(tmp_path):
    """The projection uses the CPU per model of the shards run with the design (stage params digest and
    structure quota) of the most recently finished shard when they hold >= 10 models, else the whole
    build's; structures, structures timed and subgraphs over the quota (timed in no shard) are counted
    from the tables."""
    import pyarrow as pa

    from fullscale.shards import QUOTA_REASON

    pq.write_table(pa.Table.from_pylist([{"model_id": f"timm:m{i}", "source": "timm"} for i in range(40)]),
                   tmp_path / "catalog.parquet")
    old = [f"timm:m{i}" for i in range(10)]
    new = [f"timm:m{i}" for i in range(10, 22)]
    _table_shard(tmp_path, 0, {"subgraphs": [_sub("h1", "A"), _sub("h2", "A")], "profiles": [_prof("h1"), _prof("h2")]},
                 models=old, params_sha256="p", structure_quota=None, cpu_s=5000.0, finished_utc="2026-01-02T00:00:00")
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("h3", "A", "skipped", QUOTA_REASON), _sub("h4", "B"),
                                             _sub("h5", "C", "skipped", QUOTA_REASON), _sub("h1", "A", "skipped", QUOTA_REASON)],
                               "profiles": [_prof("h4")]},
                 models=new, params_sha256="p", structure_quota=1, cpu_s=1200.0, finished_utc="2026-01-03T00:00:00")
    s = build_summary(tmp_path, 4)
    assert s["projection_basis"] == {"scope": "design", "design": "p:quota=1", "shards": 1, "models": 12,
                                     "cpu_s_per_model": 100.0}
    assert s["projected_core_hours_remaining"] == round(100.0 * (40 - 22) / 3600, 2)
    assert s["cpu_s_per_model"] == round(6200.0 / 22, 2)  # the whole build's, beside the projection's basis
    # h1 was timed in shard 0, so only h3 and h5 are left out by the quota
    assert (s["structures"], s["structures_timed"], s["subgraphs_skipped_structure_quota"]) == (3, 2, 2)
    # a latest design with too few models: projected from the whole build
    _table_shard(tmp_path, 2, {"subgraphs": [_sub("h7", "E")], "profiles": [_prof("h7")]}, models=["timm:m30"],
                 params_sha256="q", structure_quota=1, cpu_s=10.0, finished_utc="2026-01-04T00:00:00")
    s = build_summary(tmp_path, 4)
    assert s["projection_basis"]["scope"] == "build" and s["projection_basis"]["models"] == 23
    assert s["projected_core_hours_remaining"] == round(6210.0 / 23 * (40 - 23) / 3600, 2)


def test_summary_projects_what_200_tasks_take_from_the_current_designs_rate(tmp_path):
    """``tasks_target_projection``: the current design's shard tasks per timed structure (an older design's
    shard with many tasks does not count), the structures to time for 200 tasks at that rate, rounded up, and
    their profile core-hours at that design's profile CPU per timed structure; the shortfall reason says so."""
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist([{"model_id": f"timm:m{i}", "source": "timm"} for i in range(40)]),
                   tmp_path / "catalog.parquet")
    _table_shard(tmp_path, 0, {"subgraphs": [_sub("h1", "A"), _sub("h2", "B")], "profiles": [_prof("h1"), _prof("h2")]},
                 models=["timm:m0"], params_sha256="old", structure_quota=None, counts={"tasks": 9},
                 finished_utc="2026-01-01T00:00:00")
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("h3", "C"), _sub("h4", "D"), _sub("h5", "E"), _sub("h6", "F")],
                               "profiles": [_prof("h3"), _prof("h4"), _prof("h5")]},
                 models=["timm:m1"], params_sha256="p", structure_quota=1, counts={"tasks": 1},
                 phases=[{"phase": "profile", "cpu_s": 360.0, "wall_s": 360.0}], finished_utc="2026-01-02T00:00:00")
    s = build_summary(tmp_path, 4)
    # rate 1 task / 3 structures timed (C, D, E); 200 - 10 tasks -> 570 structures; 120 CPU s each -> 19 core-hours
    assert {k: v for k, v in s["tasks_target_projection"].items() if k not in ("highest_rate_first", "yield_order")} == {
        "design": "p:quota=1", "rate_basis": "design", "tasks_per_structure_timed": 0.3333,
        "structures_to_time": 570, "structures_untimed": 1, "core_hours": 19.0}
    assert "200 need about 570 more structures timed" in s["tasks_shortfall_reason"]
    # no shard lists its task's subgraph: no task rate above 0, so no number of structures reaches 200
    hrf = s["tasks_target_projection"]["highest_rate_first"]
    assert {k: v for k, v in hrf.items() if k != "backtest"} == {"tasks_expected_untimed": 0.0, "structures_to_time": None,
                                                                  "core_hours": None}
    assert {k: hrf["backtest"][k] for k in ("shards", "structures", "with_task", "at_projection", "structures_to_time")} == \
        {"shards": 2, "structures": 6, "with_task": 0, "at_projection": None, "structures_to_time": None}
    # a shard of the same design that resumed earlier attempts: its structure and task count, its CPU (one run's) does not
    _table_shard(tmp_path, 2, {"subgraphs": [_sub("h7", "G")], "profiles": [_prof("h7")]}, models=["timm:m2"],
                 params_sha256="p", structure_quota=1, counts={"tasks": 1}, resumed_attempts={"checked": 9, "timed": 9},
                 phases=[{"phase": "profile", "cpu_s": 1.0, "wall_s": 1.0}], finished_utc="2026-01-03T00:00:00")
    s = build_summary(tmp_path, 4)
    assert s["profile_core_hours_known_structures"]["profile_cpu_s_per_structure"] == 120.0
    assert s["tasks_target_projection"]["tasks_per_structure_timed"] == 0.5  # 2 tasks / 4 structures timed


def test_summary_projects_200_tasks_timing_the_highest_rate_kinds_first(tmp_path):
    """``highest_rate_first``: a full shard timed 4 one-op conv2d structures (2 tasks) and 4 four-op linear
    ones (none) at 100 profile CPU-s each: overall 0.25 tasks a subgraph; sizes one op (2 + 20 x 0.25) / 24,
    four ops 5 / 24; kinds one-op conv2d (2 + 10 x 7/24) / 14 = 0.3512, four-op linear (10 x 5/24) / 14 =
    0.1488. The census knows 700 untimed one-op conv2d and 300 four-op linear structures: they are expected
    to give 700 x 0.3512 + 300 x 0.1488 = 290.5 tasks, and the 198 still missing need ceil(198 / 0.3512) = 564
    conv2d structures, 15.7 core-hours."""
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist([{"model_id": f"timm:m{i}", "source": "timm"} for i in range(4)]),
                   tmp_path / "catalog.parquet")
    timed = [{**_sub(f"{a}{i}", f"{a.upper()}{i}"), "anchor": a, "num_ops": ops} for a, ops in (("conv2d", 1), ("linear", 4))
             for i in range(4)]
    _table_shard(tmp_path, 0, {"subgraphs": timed, "profiles": [_prof(r["subgraph_hash"]) for r in timed],
                               "tasks": [{"subgraph_hashes": ["conv2d0"]}, {"subgraph_hashes": ["conv2d1"]}]},
                 models=["timm:m0"], params_sha256="p", structure_quota=1, counts={"tasks": 2},
                 phases=[{"phase": "profile", "cpu_s": 800.0, "wall_s": 800.0}])
    untimed = [{**_sub(f"u{a}{i}", f"U{a}{i}"), "anchor": a, "num_ops": ops}
               for a, ops, n in (("conv2d", 1, 700), ("linear", 4, 300)) for i in range(n)]
    _table_shard(tmp_path, 1, {"subgraphs": untimed}, "census", census=True, models=["timm:m1"])
    summary = build_summary(tmp_path, 4)
    # per size; no anchor has the 10 profiled structures the summary's list asks for
    assert summary["task_rates"] == {"by_ops": {"1": [4, 2], "4": [4, 0]}, "by_anchor": {}}
    got = summary["tasks_target_projection"]
    assert got["highest_rate_first"] == {"tasks_expected_untimed": 290.5, "structures_to_time": 564, "core_hours": 15.7,
                                         "backtest": None}  # one full shard: nothing to leave out
    assert got["structures_to_time"] == 792  # at the overall 2 tasks / 8 structures, for comparison


def test_summary_counts_graphs_per_source_and_those_two_sources_share(tmp_path):
    """``unique_graphs_by_source`` counts each source's distinct graphs (a graph two sources gave counts for
    both); ``unique_graphs_shared_across_sources`` the graphs of more than one source: a GraphNet sample
    whose graph equals a timm model's, across a full and a census shard."""
    import pyarrow as pa

    rows = [{"model_id": m, "source": m.split(":")[0]} for m in ("timm:a", "timm:b", "graphnet:cv/a", "graphnet:cv/c")]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "catalog.parquet")
    _table_shard(tmp_path, 0, {"graphs": [{"model_id": "timm:a", "graph_hash": "g1"}, {"model_id": "timm:b", "graph_hash": "g1"},
                                          {"model_id": "timm:b", "graph_hash": "g2"}]}, models=["timm:a", "timm:b"])
    _table_shard(tmp_path, 4, {"graphs": [{"model_id": "graphnet:cv/a", "graph_hash": "g2"},
                                          {"model_id": "graphnet:cv/c", "graph_hash": "g3"}]},
                 models=["graphnet:cv/a", "graphnet:cv/c"], kind="census", census=True)
    s = build_summary(tmp_path, 6)
    assert s["unique_graphs"] == 3 and s["unique_graphs_by_source"] == {"graphnet": 2, "timm": 2}
    assert s["unique_graphs_shared_across_sources"] == 1  # g2: timm:b and graphnet:cv/a


def test_release_nodes_files_keep_each_graph_in_its_lowest_shard_and_do_not_move(tmp_path):
    """:func:`node_partitions`: a graph's nodes go to the file of the lowest shard id that holds it (the full
    shard of an id before its census shard); a shard done later adds its file and leaves every earlier
    file's rows as they were."""
    from fullscale.release import node_partitions
    from fullscale.shards import CENSUS

    def nodes(*hs):
        return {"nodes": [{"graph_hash": h, "node_index": i} for h in hs for i in range(2)]}

    _table_shard(tmp_path, 3, nodes("g1", "g2"), kind=CENSUS, census=True)
    _table_shard(tmp_path, 1, nodes("g3", "g2"), kind=CENSUS, census=True)
    _table_shard(tmp_path, 1, nodes("g2", "g3"))  # the full shard of id 1 wins over its census shard

    def parts():
        p = node_partitions(done_shards(tmp_path) + done_shards(tmp_path, CENSUS))
        return {k: v.to_pylist() for k, v in p.items()}

    before = parts()
    assert {k: [r["graph_hash"] for r in v] for k, v in before.items()} == {"s0001": ["g2", "g2", "g3", "g3"],
                                                                         "s0003": ["g1", "g1"]}
    _table_shard(tmp_path, 5, nodes("g1", "g4"), kind=CENSUS, census=True)
    after = parts()
    assert {k: after[k] for k in before} == before and [r["graph_hash"] for r in after["s0005"]] == ["g4", "g4"]


def test_release_keeps_the_profiled_row_and_every_shards_models(tmp_path):
    """``concat_tables``: of one subgraph's rows in several shards the profiled one wins over a quota-skipped
    and a seen one, whatever the shard order, and its model_ids / num_models are the union of them all."""
    from fullscale.release import concat_tables
    from fullscale.shards import QUOTA_REASON, SEEN_REASON

    _table_shard(tmp_path, 0, {"subgraphs": [_sub("h1", "A", "skipped", QUOTA_REASON, models=("m1",))]})
    _table_shard(tmp_path, 1, {"subgraphs": [_sub("h1", "A", models=("m2",))]})
    _table_shard(tmp_path, 2, {"subgraphs": [_sub("h1", "A", "skipped", SEEN_REASON, models=("m3", "m1"))]})
    rows = concat_tables(done_shards(tmp_path), "subgraphs").to_pylist()
    assert len(rows) == 1
    assert (rows[0]["status"], rows[0]["model_ids"], rows[0]["num_models"]) == ("ok", ["m1", "m2", "m3"], 3)


def test_release_unique_graphs_take_every_shards_members_and_name_the_nodes_file():
    """:func:`release_unique_graphs`: a graph whose row came from its first shard (one member) gets the
    members of every model of the release's graphs table -- sorted, instances counted, models counted
    once -- and ``store_path`` the nodes file that holds it; a graph absent from the graphs table keeps
    its row's members, with an empty ``store_path`` when no nodes file holds it."""
    import pyarrow as pa

    from fullscale.release import release_unique_graphs
    from passnet_common.schema import to_table

    base = {"structure_hash": "s", "wl_hash": "w", "canonical_version": 4, "num_nodes": 3}
    ug = to_table("unique_graphs", [
        {"graph_hash": "g1", **base, "num_instances": 1, "num_models": 1,
         "members": [{"model_id": "timm:b", "graph_index": 0}], "store_path": "/build/machine/graph_store/g1"},
        {"graph_hash": "g2", **base, "num_instances": 1, "num_models": 1,
         "members": [{"model_id": "timm:c", "graph_index": 0}], "store_path": "/build/machine/graph_store/g2"}])
    graphs = pa.Table.from_pylist([{"model_id": "timm:b", "graph_index": 0, "graph_hash": "g1"},
                                   {"model_id": "graphnet:cv/a", "graph_index": 2, "graph_hash": "g1"},
                                   {"model_id": "graphnet:cv/a", "graph_index": 0, "graph_hash": "g1"}])
    rows = {r["graph_hash"]: r for r in release_unique_graphs(ug, graphs, {"g1": "tables/nodes/s0003.parquet"}).to_pylist()}
    assert rows["g1"]["members"] == [{"model_id": "graphnet:cv/a", "graph_index": 0},
                                     {"model_id": "graphnet:cv/a", "graph_index": 2},
                                     {"model_id": "timm:b", "graph_index": 0}]
    assert (rows["g1"]["num_instances"], rows["g1"]["num_models"], rows["g1"]["store_path"]) == (3, 2, "tables/nodes/s0003.parquet")
    assert (rows["g2"]["members"], rows["g2"]["num_models"], rows["g2"]["store_path"]) == (
        [{"model_id": "timm:c", "graph_index": 0}], 1, "")


def test_verify_release_names_differing_missing_and_extra_files(tmp_path):
    """:func:`verify_release` against a manifest: a changed file is ``differ``, a deleted one ``missing``,
    a task folder added by hand ``extra`` (with the task folders counted on disk), and a manifest that is
    not JSON is a ValueError naming the file."""
    import hashlib

    rel = tmp_path / "release"
    files = {"tables/a.parquet": b"a", "tasks/t1/task.json": b"{}", "README.md": b"card"}
    for k, b in files.items():
        (rel / k).parent.mkdir(parents=True, exist_ok=True)
        (rel / k).write_bytes(b)
    (rel / "manifest.json").write_text(json.dumps({"files": {k: {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)}
                                                             for k, b in files.items()}, "tasks": 1, "total_bytes": 7}))
    assert verify_release(rel)["bad"] == []
    (rel / "tables/a.parquet").write_bytes(b"b")
    (rel / "README.md").unlink()
    (rel / "tasks/t2").mkdir()
    (rel / "tasks/t2/task.json").write_text("{}")
    v = verify_release(rel)
    assert (v["differ"], v["missing"], v["extra"]) == (["tables/a.parquet"], ["README.md"], ["tasks/t2/task.json"])
    assert (v["tasks"], v["task_folders"]) == (1, 2) and v["bad"] == [*v["differ"], *v["missing"], *v["extra"], "tasks/"]
    # a task folder linked in from outside: a link, and the task folders on disk no longer the manifest's count
    (rel / "tasks/t2/task.json").unlink()
    (rel / "tasks/t2").rmdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "task.json").write_text("{}")
    (rel / "tasks/t3").symlink_to(tmp_path / "outside", target_is_directory=True)
    v = verify_release(rel)
    assert v["links"] == ["tasks/t3"] and v["extra"] == [] and v["task_folders"] == 2 and "tasks/t3" in v["bad"]
    good = json.loads((rel / "manifest.json").read_text())
    for broken in ("{not json", json.dumps({**good, "files": ["README.md"]}),
                   json.dumps({**good, "files": {"/etc/hostname": {"sha256": "0" * 64}}}),
                   json.dumps({**good, "files": {"../x": {"sha256": "0" * 64}}}),
                   json.dumps({**good, "files": {"README.md": "abc"}})):
        (rel / "manifest.json").write_text(broken)
        with pytest.raises(ValueError, match="manifest.json"):
            verify_release(rel)


def test_verify_release_refuses_what_the_manifest_does_not_vouch_for(tmp_path):
    """Cases beyond changed, missing and added files: a pipe in place of a listed file is missing and extra
    (never read: a read would block), an empty folder and a file under ``.cache/`` that huggingface_hub does
    not write are extra (its download bookkeeping is not), and a release folder that is a link, a manifest
    that is a pipe, or manifest fields that do not add up are refused."""
    import hashlib
    import os

    rel = tmp_path / "release"
    files = {"tasks/t1/task.json": b"{}", "README.md": b"card"}
    for k, b in files.items():
        (rel / k).parent.mkdir(parents=True, exist_ok=True)
        (rel / k).write_bytes(b)
    entries = {k: {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for k, b in files.items()}
    good = {"files": entries, "tasks": 1, "total_bytes": 6, "unique_bytes": 6}
    (rel / "manifest.json").write_text(json.dumps(good))
    (rel / ".cache/huggingface/download").mkdir(parents=True)
    (rel / ".cache/huggingface/download/README.md.metadata").write_text("sha\n")
    (rel / ".cache/huggingface/.gitignore").write_text("*\n")
    assert verify_release(rel)["bad"] == []
    (rel / ".cache/huggingface/evil.py").write_text("print(1)\n")
    (rel / "tasks/tempty").mkdir()
    (rel / "tasks/t1/task.json").unlink()
    os.mkfifo(rel / "tasks/t1/task.json")
    v = verify_release(rel)
    assert v["missing"] == ["tasks/t1/task.json"]
    assert v["extra"] == [".cache/huggingface/evil.py", "tasks/t1/task.json", "tasks/tempty/"]
    (rel / "tasks/t1/task.json").unlink()
    (rel / "tasks/t1/task.json").write_bytes(b"{}")
    for broken, why in (({**good, "tasks": True}, "integers"), ({**good, "total_bytes": 1}, "sum of its files"),
                        ({**good, "unique_bytes": 2}, "distinct"),
                        ({**good, "files": {**entries, "README.md": {"sha256": "g" * 64, "bytes": 4}}}, "sha256"),
                        ({**good, "files": {**entries, "README.md": {"sha256": entries["README.md"]["sha256"]}}}, "size")):
        (rel / "manifest.json").write_text(json.dumps(broken))
        with pytest.raises(ValueError, match=why):
            verify_release(rel)
    (rel / "manifest.json").unlink()
    os.mkfifo(rel / "manifest.json")
    with pytest.raises(ValueError, match="not a regular file"):
        verify_release(rel)
    (rel / "manifest.json").unlink()
    (rel / "manifest.json").write_text(json.dumps(good))
    (tmp_path / "link").symlink_to(rel, target_is_directory=True)
    with pytest.raises(ValueError, match="symbolic link"):
        verify_release(tmp_path / "link")


def test_verify_release_counts_table_rows_and_fetch_says_whether_the_release_is_the_commit(tmp_path):
    """A manifest whose ``tables`` count differs from the Parquet footers (the nodes table summed over its files)
    is ``rows``, named by table path, though every file matches its sha256; ``fetch``'s git line names the files
    of a release edited together with its manifest (which then passes the manifest check), and says
    ``as committed`` for an untouched one."""
    import hashlib
    import subprocess

    from fullscale.commands.fetch import against_commit

    rel = tmp_path / "data_full" / "release"
    (rel / "tables" / "nodes").mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2, 3]}), rel / "tables" / "tasks.parquet")
    for part, n in (("s0000", 2), ("s0001", 5)):
        pq.write_table(pa.table({"graph_hash": ["g"] * n}), rel / "tables" / "nodes" / f"{part}.parquet")
    files = {p.relative_to(rel).as_posix(): p.read_bytes() for p in rel.rglob("*.parquet")}

    def manifest(tables):
        (rel / "manifest.json").write_text(json.dumps({
            "files": {k: {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for k, b in files.items()},
            "tasks": 0, "total_bytes": sum(len(b) for b in files.values()), "tables": tables}))

    manifest({"tasks": 3, "nodes": 7})
    assert verify_release(rel)["bad"] == []
    manifest({"tasks": 999, "nodes": 2, "graphs": 1})
    v = verify_release(rel)
    assert v["rows"] == ["tables/graphs.parquet (None rows, manifest 1)", "tables/nodes/*.parquet (7 rows, manifest 2)",
                         "tables/tasks.parquet (3 rows, manifest 999)"] and v["bad"] == v["rows"]

    def git(*a):
        return subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    assert against_commit(rel, tmp_path) is None  # no git work tree
    git("init", "-q")
    manifest({"tasks": 3, "nodes": 7})
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "release")
    assert against_commit(rel, tmp_path).startswith("git: as committed at HEAD")
    assert against_commit(tmp_path / "elsewhere", rel) is None  # a release outside the work tree
    # a bytecode cache a task run leaves (.gitignore hides it from a plain git status) is not the committed release
    (tmp_path / ".gitignore").write_text("__pycache__/\n")
    git("add", ".gitignore")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "ignore")
    (rel / "tables" / "__pycache__").mkdir()
    (rel / "tables" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    line = against_commit(rel, tmp_path)
    assert line.startswith("git: 1 file(s) differ") and "__pycache__" in line, line
    (rel / "tables" / "__pycache__" / "x.pyc").unlink()
    (rel / "tables" / "__pycache__").rmdir()
    # a table edited together with its manifest entry and count: the manifest check passes, git names both
    pq.write_table(pa.table({"x": [1, 2, 3, 4]}), rel / "tables" / "tasks.parquet")
    files["tables/tasks.parquet"] = (rel / "tables" / "tasks.parquet").read_bytes()
    manifest({"tasks": 4, "nodes": 7})
    assert verify_release(rel)["bad"] == []
    line = against_commit(rel, tmp_path)
    assert line.startswith("git: 2 file(s) differ") and "data_full/release/tables/tasks.parquet" in line, line


def test_release_keeps_one_variant_per_computation_and_the_held_out_twin(tmp_path):
    """:func:`regroup_tasks`: the float32 and bfloat16 variants of a subgraph whose inputs and weights are all
    integer are one computation (the variant dtype casts only floating tensors): the release keeps one --
    the one an earlier release held out, so its public twin is not a copy of it; else the float32 one --
    and counts the other as dropped. Variants with a floating input keep both dtypes, and so does an entry
    without metadata (nothing is known)."""
    from fullscale.release import computation_key, regroup_tasks

    def sg(h, size, dtype, inputs, weights=()):
        return {"subgraph_hash": h, "size": size, "dtype": dtype, "variant_id": f"{h}:{size}:{dtype}",
                "input_meta": [{"dtype": d} for d in inputs], "weight_meta": [{"dtype": d} for d in weights]}

    ints = [sg("hi", s, d, ["int64", "bool"]) for s in ("catalog", "workload") for d in ("float32", "bfloat16")]
    floats = [sg("hf", "catalog", d, ["int64"], ["float32"]) for d in ("float32", "bfloat16")]
    bare = [{"subgraph_hash": "hb", "size": "catalog", "dtype": d, "variant_id": f"hb:catalog:{d}"} for d in ("float32", "bfloat16")]
    assert computation_key(ints[0]) == computation_key(ints[1]) == ("hi", "catalog", None)
    assert computation_key(floats[0]) != computation_key(floats[1]) and computation_key(bare[0]) != computation_key(bare[1])
    shard = tmp_path / "s0000"
    for name, subs in (("a", ints), ("b", floats), ("c", bare)):
        (shard / "tasks" / name).mkdir(parents=True)
        (shard / "tasks" / name / "task.json").write_text(json.dumps({"pattern": name, "subgraphs": subs}))

    def kept(public=(), held=()):
        prev = {"public": set(public), "held": set(held), "stems": set(), "key_fingerprint": None}
        return {t["pattern"]: (sorted(v[2]["variant_id"] for v in t["variants"]), t["twins_dropped"])
                for t in regroup_tasks([shard], 10, None, prev)}

    got = kept()
    assert got["a"] == (["hi:catalog:float32", "hi:workload:float32"], 2)
    assert got["b"] == (["hf:catalog:bfloat16", "hf:catalog:float32"], 0) and got["c"][1] == 0
    assert kept(held={"hi:workload:bfloat16"})["a"] == (["hi:catalog:float32", "hi:workload:bfloat16"], 2)
    # twins an earlier release put on both sides: the held one is a copy of a published variant, no secret;
    # the public one stays (a task never loses its public variant to a held-out copy)
    assert kept(public={"hi:workload:bfloat16"}, held={"hi:workload:float32"})["a"] == (
        ["hi:catalog:float32", "hi:workload:bfloat16"], 2)
    # unknown dtypes keep both: a null or missing dtype name, a metadata entry that is not a dict
    for meta in ([{"dtype": None}], [{}], [["int64"]]):
        pair = [{**ints[0], "input_meta": meta, "dtype": d} for d in ("float32", "bfloat16")]
        assert computation_key(pair[0]) != computation_key(pair[1]), meta
    assert computation_key({**ints[0], "input_meta": [{"dtype": "torch.int64"}]})[2] is None
    # complex tensors are not floating (the variant's cast leaves them): a complex-only pair is one computation,
    # a complex input beside a float weight is not
    cplx = [{**ints[0], "input_meta": [{"dtype": "torch.complex64"}], "dtype": d} for d in ("float32", "bfloat16")]
    assert computation_key(cplx[0]) == computation_key(cplx[1]) == ("hi", "catalog", None)
    mixed = [{**c, "weight_meta": [{"dtype": "torch.float32"}]} for c in cplx]
    assert computation_key(mixed[0]) != computation_key(mixed[1])


@pytest.mark.parametrize("command,takes", [("run", True), ("release", True), ("summary", True),
                                           ("plan", False), ("fetch", False), ("publish", False)])
def test_only_commands_that_write_the_summary_take_metrics(command, takes, capsys):
    """``--metrics`` names where the summary is written: run, release and summary take it; plan, fetch and
    publish write none and refuse it as an unknown option (argparse's usage error, exit 2) instead of
    ignoring it."""
    mod = importlib.import_module(next(c.module for c in COMMANDS if c.name == command))
    p = argparse.ArgumentParser()
    mod.add_args(p)
    argv = ["--repo", "me/passnet-full"] if command == "publish" else []  # its one required option
    if takes:
        assert p.parse_args([*argv, "--metrics", "x.json"]).metrics == "x.json"
    else:
        assert not hasattr(p.parse_args(argv), "metrics")
        with pytest.raises(SystemExit) as e:
            p.parse_args([*argv, "--metrics", "x.json"])
        assert e.value.code == 2
        assert "unrecognized arguments: --metrics" in capsys.readouterr().err


def test_release_draws_the_plot_from_the_summary_it_wrote(tmp_path, monkeypatch):
    """``release`` rewrites the summary with the release's task count, then draws the task-rate plot from that
    summary (it once left the plot ``summary`` had drawn from the shards' count): the CSV beside the PNG holds
    the rates of the summary the release wrote, here a committed summary with the 1-op bar changed to 7 of 10."""
    import fullscale.commands.release as cmd

    s = json.loads((ROOT / "metrics" / "full" / "summary.json").read_text())
    s["task_rates"]["by_ops"]["1"] = [10, 7]
    metrics, png = tmp_path / "summary.json", tmp_path / "rates.png"

    def fake_release(out, cfg, metrics_path, command):
        Path(metrics_path).write_text(json.dumps(s))
        return {"tasks": 7, "held_out_variants": 0, "files": {}, "total_bytes": 0, "unique_bytes": 0}

    monkeypatch.setattr(cmd, "release_with_summary", fake_release)
    monkeypatch.setattr("fullscale.commands.write_params", lambda params, path: path)  # nothing under the build's work
    assert main(["release", "--metrics", str(metrics), "--plot", str(png)]) == 0
    assert png.stat().st_size > 0
    assert "by_ops,1,10,7,0.7," in png.with_suffix(".csv").read_text()
    png.unlink()
    assert main(["release", "--metrics", str(metrics), "--plot", ""]) == 0 and not png.exists()


def test_model_licences_spell_one_licence_one_way_and_never_guess():
    """Per catalog row: timm's lower-case Hub licence ids read as the SPDX ids the package metadata gives
    (``apache-2.0`` of a timm config is the code's ``Apache-2.0``), a non-commercial or custom licence is not
    permissive, and a source without a library (a module, a GraphNet sample) is ``unknown``, never permissive."""
    from fullscale.licences import PERMISSIVE, model_licences

    rows = [{"model_id": m} for m in ("timm:bat_resnext26ts", "timm:convmixer_1024_20_ks9_p14", "timm:dla102",
                                       "timm:convnextv2_atto", "timm:mobileone_s0", "transformers:BertModel",
                                       "module:mlp", "graphnet:sample")]
    got = {r["model_id"]: (r["code_licence"], r["config_licence"], r["permissive"]) for r in model_licences(rows)}
    assert got["timm:bat_resnext26ts"] == ("Apache-2.0", "Apache-2.0", True)
    assert got["timm:convmixer_1024_20_ks9_p14"] == ("Apache-2.0", "MIT", True)
    assert got["timm:dla102"] == ("Apache-2.0", "BSD-3-Clause", True)
    assert got["timm:convnextv2_atto"] == ("Apache-2.0", "CC-BY-NC-4.0", False)
    assert got["timm:mobileone_s0"] == ("Apache-2.0", "mobileone-license", False)
    assert got["transformers:BertModel"] == ("Apache-2.0", "Apache-2.0", True)
    assert got["module:mlp"] == got["graphnet:sample"] == ("unknown", "unknown", False)
    assert all(lic.lower() in PERMISSIVE for c, f, p in got.values() if p for lic in (c, f))


def test_capture_measured_counts_every_attempt_a_failure_record_holds(tmp_path):
    """``capture_measured`` prices capture from the failed shards' progress: a model captured twice (its
    first attempt ran out of memory) costs both attempts, and the projection scales the mean per model
    over the catalog."""
    import pyarrow as pa

    from fullscale.shards import write_failure

    pq.write_table(pa.Table.from_pylist([{"model_id": f"timm:m{i}", "source": "timm"} for i in range(36)]),
                   tmp_path / "catalog.parquet")
    progress = {"capture": [{"model_id": "timm:m0", "ok": False, "error_class": "oom", "cpu_s": 70.0},
                            {"model_id": "timm:m0", "ok": True, "error_class": None, "cpu_s": 50.0},
                            {"model_id": "timm:m1", "ok": True, "error_class": None, "cpu_s": 30.0},
                            {"model_id": "timm:m2", "ok": None, "error_class": None, "cpu_s": None}]}
    write_failure(tmp_path, 0, {"shard": 0, "name": "s0000", "phase": "capture", "rc": None, "progress": progress})
    got = build_summary(tmp_path, 4)["capture_measured"]
    assert got == {"models": 2, "cpu_s": 150.0, "cpu_s_per_model": 75.0, "projected_core_hours_all_models": 0.8}


def test_fetch_repo_refuses_a_release_folder_that_is_a_link_before_downloading(tmp_path, monkeypatch):
    """``fetch --repo`` replaces the release folder; when that folder is a link it is refused with a
    ValueError naming it (exit 2) before anything is downloaded, and the link and its target stay."""
    import fullscale.hub as hub

    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    link = tmp_path / "release"
    link.symlink_to(target)
    monkeypatch.setattr(hub, "snapshot_download", lambda *a, **k: pytest.fail("downloaded into a linked release folder"))
    with pytest.raises(ValueError, match="release: the release folder is a link"):
        hub.fetch_release("me/passnet-full", link)
    assert link.is_symlink() and (target / "keep.txt").read_text() == "x"
    assert not (tmp_path / ".release.download").exists()


def test_fetch_writes_nothing_and_names_a_missing_release(tmp_path, capsys):
    """``fetch`` runs no stage, so it writes no ``<work>/params.yaml`` (``plan`` and ``run`` do); on a build
    with no release folder it exits 2 naming it."""
    from passnet_common.cli import run_cli

    over = _override(tmp_path)
    assert run_cli(lambda: _cli(over, "fetch", metrics=tmp_path / "s.json")) == 2
    assert "release" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


def test_a_missing_override_file_names_the_options_that_give_overrides(tmp_path):
    """``--params`` names itself; a missing ``--full`` or ``--override`` file names those two (it once said
    ``--params``, an option the user had given right)."""
    from fullscale.params import merged_params

    with pytest.raises(FileNotFoundError, match=r"nope\.yaml not found \(give --full / --override PATH\)"):
        merged_params(ROOT / "params.yaml", tmp_path / "nope.yaml")
    with pytest.raises(FileNotFoundError, match=r"gone\.yaml not found \(give --params PATH\)"):
        merged_params(tmp_path / "gone.yaml")
