"""Isolation: a model that segfaults, hangs, raises or exhausts memory is recorded with
its error class, and the others still complete."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import time
from pathlib import Path

from passnet_common.io import atomic_write_json
from passnet_common.worker import run_isolated


def _task(kind: str, out_dir: Path) -> None:
    if kind == "segfault":
        import faulthandler

        faulthandler.disable()  # pytest's handler would print every loaded module
        ctypes.string_at(0)  # dereference NULL -> SIGSEGV
    elif kind == "abort":
        import faulthandler

        faulthandler.disable()
        os.kill(os.getpid(), signal.SIGABRT)
    elif kind == "hang":
        time.sleep(600)
    elif kind == "raise":
        raise ValueError("bad config for this model")
    elif kind == "memory":
        blocks = []
        while True:  # grow until the watchdog or the address-space cap stops us
            blocks.append(bytearray(64 << 20))
    atomic_write_json(out_dir / "result.json", {"kind": kind, "pid": os.getpid()})


def test_failures_are_classified_and_the_rest_completes(tmp_path):
    kinds = ["ok1", "segfault", "hang", "raise", "memory", "abort", "ok2"]
    tasks = [(k, k, tmp_path / k) for k in kinds]
    seen = []
    # The watchdog reads a child's RSS, which counts the pages it shares with this (forked)
    # process: the cap sits 1 GiB above this process's own RSS, whatever earlier tests loaded.
    import psutil

    cap = psutil.Process().memory_info().rss + (1 << 30)
    # No wall limit decides a verdict (under load the memory child hit a 3 s wall
    # limit before the cap): the hang is caught by the hang detector (no CPU progress for
    # 5 s), the wall backstop and CPU budget are far above what any other child needs.
    outcomes = run_isolated(tasks, _task, workers=2, timeout_s=3600, mem_cap_bytes=cap, on_done=seen.append,
                            cpu_budget_s=600, hang_s=5.0)
    by = {o.key: o for o in outcomes}
    assert set(by) == set(kinds) and len(seen) == len(kinds)
    assert by["ok1"].ok and by["ok2"].ok
    for k in ("ok1", "ok2"):
        res = json.loads((tmp_path / k / "result.json").read_text())
        assert res["kind"] == k and res["pid"] != os.getpid()  # ran in a child
    assert by["segfault"].error_class == "crash" and "SIGSEGV" in by["segfault"].error_message
    assert by["abort"].error_class == "crash" and "SIGABRT" in by["abort"].error_message
    assert by["hang"].error_class == "hang" and "no CPU progress" in by["hang"].error_message
    assert by["raise"].error_class == "exception:ValueError"
    assert "bad config for this model" in by["raise"].error_message
    assert by["memory"].error_class == "oom"
    assert not any(o.ok for o in outcomes if o.key not in ("ok1", "ok2"))


def _gc_state(kind: str, out_dir: Path) -> None:
    import gc

    from passnet_common import gcfreeze

    busy = sum(i * i for i in range(2_000_000))  # some CPU time for the child's rusage
    atomic_write_json(out_dir / "result.json", {"frozen": gc.get_freeze_count(), "recorded": gcfreeze._frozen_here,
                                                "busy": busy > 0})


def test_children_inherit_a_frozen_heap_and_the_parent_gets_it_back(tmp_path):
    import gc

    assert gc.get_freeze_count() == 0
    for freeze, wake in ((True, True), (False, False)):
        tasks = [(f"t{i}", "x", tmp_path / f"{freeze}-{i}") for i in range(3)]
        outcomes = run_isolated(tasks, _gc_state, workers=2, timeout_s=60, freeze_gc=freeze, wake_on_exit=wake)
        assert sorted(o.key for o in outcomes) == ["t0", "t1", "t2"] and all(o.ok for o in outcomes)
        got = [json.loads((tmp_path / f"{freeze}-{i}" / "result.json").read_text()) for i in range(3)]
        frozen = [g["frozen"] for g in got]
        assert all(f > 0 for f in frozen) if freeze else frozen == [0, 0, 0]
        assert [g["recorded"] for g in got] == [freeze] * 3  # the child inherits the record (heap_frozen in O(1))
        assert all(o.cpu_s > 0 for o in outcomes)  # the child's CPU time from wait4
        assert gc.get_freeze_count() == 0  # unfrozen after the run
        from passnet_common import gcfreeze

        assert not gcfreeze._frozen_here


def test_start_ticks_names_one_process_and_ignores_the_boot_clock(monkeypatch):
    """``start_ticks`` is the same for a live process however the wall clock moves (psutil's
    ``create_time`` adds /proc/stat's boot time, which moves with it), and None once it is a zombie
    or gone; a later process has later ticks."""
    import subprocess
    import sys

    import psutil
    from psutil import _pslinux

    from passnet_common.worker import start_ticks

    me = start_ticks(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        born = start_ticks(child.pid)
        assert me is not None and born is not None and born >= me
        before = psutil.Process(child.pid).create_time()
        real = _pslinux.boot_time()
        monkeypatch.setattr(_pslinux, "boot_time", lambda: real + 1.0)  # the clock stepped by a second
        assert psutil.Process(child.pid).create_time() == before + 1.0  # psutil's start time moved with it
        assert start_ticks(child.pid) == born
    finally:
        child.stdin.close()
    for _ in range(500):  # exited, not yet reaped: a zombie
        if psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE:
            break
        time.sleep(0.01)
    assert start_ticks(child.pid) is None
    child.wait()
    assert start_ticks(child.pid) is None
