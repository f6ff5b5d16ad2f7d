"""Load-proof limits and kill safety of the isolated worker.

None of these asserts a duration: the CPU budget is counted in CPU seconds the child got,
the hang detector fires on a child that uses no CPU at all, and the memory child is given a
wall backstop and CPU budget far above what it needs, so the verdicts do not depend on load.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from passnet_common.io import atomic_write_json
from passnet_common.worker import WorkFolderBusy, run_isolated, work_lock


def _task(kind: str, out_dir: Path) -> None:
    if kind == "spin":
        while True:  # CPU-bound forever: stopped by the CPU budget
            sum(i * i for i in range(10_000))
    elif kind == "sleep":
        time.sleep(3600)  # no CPU progress: a hang
    elif kind == "busy_ok":
        sum(i * i for i in range(200_000))
    atomic_write_json(out_dir / "result.json", {"kind": kind})


def test_cpu_budget_and_hang_detector_classify_without_wall_limits(tmp_path):
    tasks = [(k, k, tmp_path / k) for k in ("spin", "sleep", "busy_ok")]
    # wall backstop 1 h: only the CPU budget (1 CPU s) and the hang detector (3 s without
    # any CPU progress) can end the first two
    outs = {o.key: o for o in run_isolated(tasks, _task, workers=3, timeout_s=3600, mem_cap_bytes=None,
                                           cpu_budget_s=1.0, hang_s=3.0, poll_s=0.05)}
    assert outs["spin"].error_class == "timeout" and "CPU s" in outs["spin"].error_message
    assert outs["spin"].cpu_s >= 1.0  # killed for the CPU it used, whatever the wall time was
    assert outs["sleep"].error_class == "hang" and outs["sleep"].cpu_s < 1.0
    assert outs["busy_ok"].ok


def test_a_loaded_child_is_not_a_hang(tmp_path):
    """A CPU-bound child sharing one core with a CPU hog still makes CPU progress: not a hang,
    and it finishes (the hog is this test's own busy process, pinned to the same core)."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        cpu = sorted(os.sched_getaffinity(0))[0]
        os.sched_setaffinity(hog.pid, {cpu})
        mine = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
        try:
            outs = run_isolated([("busy_ok", "busy_ok", tmp_path / "b")], _task, workers=1, timeout_s=3600,
                                mem_cap_bytes=None, cpu_budget_s=120, hang_s=20.0)
        finally:
            os.sched_setaffinity(0, mine)
    finally:
        hog.kill()
        hog.wait()
    assert outs[0].ok


STAGE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from passnet_common.worker import die_with_parent, run_isolated, work_lock

    def task(arg, out_dir):
        time.sleep(3600)

    die_with_parent()
    with work_lock(Path(sys.argv[1])):
        run_isolated([(f"t{i}", None, Path(sys.argv[1]) / f"t{i}") for i in range(2)], task, workers=2,
                     timeout_s=3600, mem_cap_bytes=None)
""")


def _wait_for(pred, what: str, limit_s: float = 120.0):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.mark.parametrize("through_shell", [False, True])
def test_killing_the_parent_of_a_stage_leaves_no_process(tmp_path, through_shell):
    """`dvc repro` killed with SIGKILL: its stage process and the stage's children die too.
    The stand-in for dvc is a Python process; with ``through_shell`` it starts the stage
    through ``sh -c "...; echo done"`` (a shell that outlives it), else directly."""
    script = tmp_path / "stage.py"
    script.write_text(STAGE)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    stage_cmd = [sys.executable, str(script), str(tmp_path / "work")]
    if through_shell:
        stage_cmd = ["/bin/sh", "-c", " ".join(stage_cmd) + "; echo done"]
    dvc = subprocess.Popen([sys.executable, "-c", f"import subprocess; subprocess.run({stage_cmd!r})"], env=env)
    proc = psutil.Process(dvc.pid)

    def stage_proc():
        return next((p for p in proc.children(recursive=True) if p.cmdline()[1:2] == [str(script)]), None)

    _wait_for(lambda: stage_proc() is not None and len(stage_proc().children()) == 2, "the stage's two children")
    stage = stage_proc()
    family = proc.children(recursive=True)
    assert len(family) == (4 if through_shell else 3)
    # a second run on the same work folder refuses while the first holds the lock
    with pytest.raises(WorkFolderBusy, match=f"pid {stage.pid}"):
        with work_lock(tmp_path / "work"):
            pass
    os.kill(dvc.pid, signal.SIGKILL)
    dvc.wait()
    gone, alive = psutil.wait_procs(family, timeout=60)
    assert alive == [] and len(gone) == len(family)
    with work_lock(tmp_path / "work"):  # released with its holder
        pass


def test_work_lock_waits_for_the_holder(tmp_path):
    import threading

    order = []
    with work_lock(tmp_path) as held:
        assert (tmp_path / ".lock").read_text() == str(os.getpid())

        def second():
            with work_lock(tmp_path, wait_s=600):
                order.append("second")

        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.3)
        order.append("first")
    t.join()
    assert order == ["first", "second"] and held.fd is None


HANG_ONCE = """
import time
from pathlib import Path

import torch

MARK = Path({mark!r})


def build():
    if not MARK.exists():  # the first attempt hangs (no CPU progress), the retry does not
        MARK.write_text("1")
        time.sleep(3600)
    return torch.nn.Linear(4, 2), (torch.ones(3, 4),)
"""


def test_a_hang_is_retried_in_the_same_run_and_leaves_no_trace_in_the_tables(tmp_path):
    import pyarrow.parquet as pq

    from extract.runs.assemble import assemble
    from extract.runs.attempts import attempt_key, work_dir
    from extract.runs.scheduler import capture_all
    from extract.sources.catalog import build_catalog

    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "hang_once.py").write_text(HANG_ONCE.format(mark=str(tmp_path / "mark")))
    rows = build_catalog({"mode": "default", "default": [], "module_dir": str(mods)})
    tables = {}
    for run in ("retried", "clean"):  # the second run finds the mark: no hang, one attempt
        work = tmp_path / run / "work"
        counts = capture_all(rows, {}, work, workers=1, timeout_s=3600, mem_cap_gb=None, progress=False,
                             cpu_budget_s=600, hang_s=10, retries=1)
        assert counts["retried_in_run"] == (1 if run == "retried" else 0)
        res = json.loads((work_dir(work, attempt_key(rows[0], {})) / "result.json").read_text())
        assert res["status"] == "ok" and res["attempts"] == (2 if run == "retried" else 1)
        log = [json.loads(line) for line in (work / "timings.jsonl").read_text().splitlines()]
        assert [e["error_class"] for e in log] == (["hang", None] if run == "retried" else [None])
        assert all(e["cpu_s"] >= 0 and e["seconds"] > 0 for e in log)  # CPU seconds beside wall seconds
        assemble(rows, {}, work, tmp_path / run / "out", tmp_path / run / "store")
        tables[run] = {t: (tmp_path / run / "out" / f"{t}.parquet").read_bytes()
                       for t in ("models", "extractions", "graphs")}
    assert tables["retried"] == tables["clean"]  # bookkeeping is not in the dataset
    assert pq.read_table(tmp_path / "clean" / "out" / "extractions.parquet").num_rows == 1
