"""Isolated execution of one model capture per child process.

The parent (which has imported torch and the model libraries but never ran a CPU
kernel -- its warm-up capture, :func:`extract.runs.scheduler.warm_up`, runs on meta tensors -- so no
OpenMP pool exists to be broken by ``fork``) forks one child per model.
Fork makes a child cheap (no re-import of torch/transformers) and isolates everything a
model can break: a segfault, a hang, runaway memory or a Python exception ends only that
child. The parent turns the way a child ended into an error class:

=====================  ==========================================================
``timeout``            used more than ``cpu_budget_s`` CPU seconds (user + system), or
                       still running after the wall backstop ``timeout_s``; killed (SIGKILL)
``hang``               its CPU time did not advance for ``hang_s`` wall seconds (blocked,
                       deadlocked or sleeping); killed
``oom``                resident memory above ``mem_cap_bytes`` (killed by the
                       parent's watchdog), ``MemoryError``, or killed by the kernel
``crash``              ended by a signal (SIGSEGV, SIGABRT, SIGBUS, ...)
``exception:<Type>``   the task raised; the child reported type, message, traceback
``exit:<code>``        exited non-zero without a report
=====================  ==========================================================

Per-child costs kept low (``benchmarks/bench_capture.py`` measures them against the
previous path in one run): the parent's objects are moved to the garbage collector's
permanent generation before forking (``gc.freeze``, the CPython-documented recipe for
pre-fork servers), so a child's full collections neither walk nor copy-on-write the ~0.9 M
objects of torch/transformers it inherited (measured on LlamaForCausalLM: GC 3.3 s -> 0.9 s,
minor page faults 119 K -> 75 K); and the parent sleeps on a pidfd of each child, so the
next model starts the moment one ends instead of at the next poll.

Load-proof limits: a wall-clock limit meant to stop hangs decides, on a loaded machine, which
models are captured (a child given a sixteenth of a core uses 19 CPU s in 300 wall s). With
``cpu_budget_s`` the limit is on the CPU time the child actually got (read from
``/proc/<pid>/stat`` through psutil at each poll), which does not grow with the machine's
load; a child that makes no CPU progress for ``hang_s`` wall seconds is a hang; ``timeout_s``
stays as a wall backstop. Each :class:`Outcome` records wall and CPU seconds.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psutil

from passnet_common import gcfreeze
from passnet_common.io import atomic_write_json


@dataclass
class Outcome:
    """How one isolated task ended."""

    key: str
    ok: bool
    error_class: str | None = None
    error_message: str | None = None
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    cpu_s: float = 0.0  # user + system CPU seconds of the child (from wait4's rusage)
    attempt: int = 1  # runs of this task in this call (transient failures are retried)


def _child(task: Callable[[Any, Path], None], arg: Any, out_dir: Path, mem_cap_bytes: int | None, threads: int) -> None:
    code = 0
    try:
        os.setpgrp()
        child_dies_with_parent()
        if mem_cap_bytes:
            cap_address_space(mem_cap_bytes)  # backstop to the parent's RSS watchdog
        if "torch" in sys.modules:  # the parent imported it; never import it here just for this
            sys.modules["torch"].set_num_threads(max(1, threads))
        task(arg, out_dir)
    except MemoryError as exc:
        _report(out_dir, "oom", f"MemoryError: {exc}")
        code = 3
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        msg = str(exc)
        notes = "\n".join(str(n) for n in getattr(exc, "__notes__", ()) or ())
        tb = traceback.format_exc(limit=8)
        err = f"exception:{type(exc).__name__}"
        if isinstance(exc, RuntimeError) and ("bad_alloc" in msg or "DefaultCPUAllocator: can't allocate memory" in msg):
            err = "oom"
        detail = msg[:2000] + (f"\n{notes[:1000]}" if notes else "")
        _report(out_dir, err, f"{detail}\n--\n{tb[-3000:]}")
        code = 3
    finally:
        os._exit(code)


AS_SLACK_BYTES = 2 << 30
"""Address space allowed above ``mappings at start + cap`` (:func:`cap_address_space`): room for
the virtual reservations (thread stacks, allocator arenas, code caches) that are not memory."""


def cap_address_space(mem_cap_bytes: int, slack_bytes: int = AS_SLACK_BYTES) -> int:
    """Cap this process's address space (``RLIMIT_AS``) at what it maps now (``vms``: the
    libraries already imported) plus ``mem_cap_bytes`` plus ``slack_bytes``: a backstop to a
    resident-memory (RSS) watchdog in the parent, never the cap itself (address space is not
    memory: importing torch maps several GiB it never touches). Returns the limit in bytes."""
    limit = int(psutil.Process().memory_info().vms + int(mem_cap_bytes) + int(slack_bytes))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return limit


def rss_bytes(pid: int) -> int | None:
    """Resident set size of process ``pid`` in bytes (psutil; ``/proc/<pid>/status`` ``VmRSS``
    where psutil fails), None when the process is gone."""
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        pass
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Linux: have this process sent ``sig`` when its parent dies (``prctl(PR_SET_PDEATHSIG)``),
    so a stage process started by ``dvc repro`` does not outlive a killed ``dvc`` and keep
    forking captures as an orphan. Call it in a command's entry point only (a process already
    adopted by init, ``nohup cmd &`` from a closed shell, is left running). Returns False
    where the call is not available (not Linux).

    When the parent is a shell running the command (``sh -c "python -m ... ; ..."``: the shell
    outlives a killed ``dvc``), the nearest ancestor that is not a shell is watched too (a
    daemon thread, every 0.5 s); when it is gone the process ends (its capture children die
    with it through their own death signal).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(1, int(sig), 0, 0, 0) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
    try:
        anc = psutil.Process().parent()
        while anc is not None and anc.pid > 1 and anc.name() in SHELLS:
            anc = anc.parent()
    except psutil.Error:
        anc = None
    if anc is not None and anc.pid > 1 and anc.pid != os.getppid():
        def watch(pid=anc.pid, born=start_ticks(anc.pid)):
            while True:
                time.sleep(0.5)
                if born is None or start_ticks(pid) != born:
                    os._exit(1)

        threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
    return ok


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (field 22 ``starttime`` of
    ``/proc/<pid>/stat``, proc(5)); None when it is gone, a zombie or dead. It tells a process from a
    later one that reuses its pid (``pid_max`` is often 32768: a machine compiling with gcc cycles
    through it in minutes). Unlike ``psutil.Process.create_time`` (these ticks plus the boot time of
    ``/proc/stat``, which moves whole seconds when the wall clock is stepped or slewed) it never
    changes for one process, so two readings of a live process are always equal."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": comm may hold spaces and ')'
    if len(fields) < 20 or fields[0] in (b"Z", b"X", b"x"):
        return None
    return int(fields[19])


# Process names of shells that run a stage command for its caller (``$SHELL -c cmd``).
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})


class WorkFolderBusy(ValueError):
    """Another run holds the lock of a work folder (a ValueError, so the CLIs print it as one
    ``error:`` line)."""


class work_lock:
    """Exclusive lock of a work folder (``flock`` on ``<folder>/.lock``, released when the
    holder exits, however it ends), so two runs never capture into, or assemble from, one
    folder at once. ``wait_s``: seconds to wait for the holder (0: refuse at once).

    Raises:
        WorkFolderBusy: still held after ``wait_s``; the message names the holder's pid.
    """

    def __init__(self, folder: Path, wait_s: float = 0.0):
        self.path = Path(folder) / ".lock"
        self.wait_s = wait_s
        self.fd: int | None = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
                    os.close(fd)
                    raise WorkFolderBusy(f"work folder {self.path.parent} is in use by another run (pid {holder}); "
                                         f"wait for it to end or stop it") from None
                time.sleep(0.5)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None
        return False


def child_dies_with_parent() -> None:
    """Linux: SIGKILL this child when the parent dies (an interrupted run leaves no orphans); a child whose
    parent is already gone exits at once."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # parent already gone
            os._exit(1)
    except (OSError, AttributeError):
        pass


def _report(out_dir: Path, error_class: str, message: str) -> None:
    try:
        atomic_write_json(out_dir / "error.json", {"error_class": error_class, "error_message": message})
    except BaseException:  # noqa: BLE001
        pass


def run_isolated(
    tasks: list[tuple[str, Any, Path]],
    fn: Callable[[Any, Path], None],
    workers: int = 2,
    timeout_s: float = 300.0,
    mem_cap_bytes: int | None = 8 << 30,
    threads_per_worker: int = 1,
    on_done: Callable[[Outcome], None] | None = None,
    poll_s: float = 0.05,
    freeze_gc: bool = True,
    wake_on_exit: bool = True,
    cpu_budget_s: float | None = None,
    hang_s: float | None = None,
) -> list[Outcome]:
    """Run ``fn(arg, out_dir)`` for each ``(key, arg, out_dir)`` in a forked child.

    At most ``workers`` children run at once. ``fn`` writes its results under
    ``out_dir`` (created before the fork); a failure report goes to
    ``out_dir/error.json``. ``on_done`` is called in the parent as each task ends.

    Args:
        timeout_s: wall seconds per task before SIGKILL (with ``cpu_budget_s``: a backstop).
        cpu_budget_s: CPU seconds (user + system) per task before SIGKILL (``timeout``);
            None: no CPU budget.
        hang_s: wall seconds without any CPU progress of the child before SIGKILL
            (``hang``); None: no hang detector.
        mem_cap_bytes: resident-set cap per child (bytes); None disables the watchdog.
        threads_per_worker: ``torch.set_num_threads`` in each child.
        poll_s: interval (s) of the timeout / memory watchdog.
        freeze_gc: ``gc.freeze()`` in the parent for the run, through :mod:`passnet_common.gcfreeze` (children inherit a frozen
            heap and the record of it; undone with ``gc.unfreeze()`` at the end).
        wake_on_exit: wait on a pidfd per child (Linux >= 5.3), so a finished child is
            reaped at once; else (or where pidfds are missing) sleep ``poll_s``.

    Returns:
        One :class:`Outcome` per task, in completion order.
    """
    frozen = freeze_gc and not gcfreeze.heap_frozen()  # a caller's freeze is left alone
    if frozen:
        gcfreeze.freeze()
    try:
        limits = {"wall": timeout_s, "cpu": cpu_budget_s, "hang": hang_s}
        return _run(list(tasks), fn, workers, limits, mem_cap_bytes, threads_per_worker, on_done, poll_s, wake_on_exit)
    finally:
        if frozen:
            gcfreeze.unfreeze()



def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        return None


def _cpu_seconds(proc: psutil.Process | None) -> float | None:
    if proc is None:
        return None
    try:
        t = proc.cpu_times()
        return t.user + t.system
    except psutil.Error:
        return None


def _run(pending, fn, workers, limits, mem_cap_bytes, threads_per_worker, on_done, poll_s, wake_on_exit):
    timeout_s = limits["wall"]
    running: dict[int, tuple[str, Path, float, psutil.Process | None, list]] = {}
    outcomes: list[Outcome] = []
    killed: dict[int, str] = {}
    pidfds: dict[int, int] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, workers):
                key, arg, out_dir = pending.pop(0)
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / "error.json").unlink(missing_ok=True)
                pid = os.fork()
                if pid == 0:  # child
                    for fd in pidfds.values():
                        os.close(fd)
                    _child(fn, arg, out_dir, mem_cap_bytes, threads_per_worker)
                try:
                    proc = psutil.Process(pid)
                except psutil.Error:
                    proc = None
                if wake_on_exit and (fd := _pidfd(pid)) is not None:
                    pidfds[pid] = fd
                now = time.monotonic()
                running[pid] = (key, out_dir, now, proc, [0, 0.0, now])  # peak rss, cpu seen, last cpu progress
            fds = [pidfds[p] for p in running if p in pidfds]
            if fds:
                select.select(fds, [], [], poll_s)  # returns as soon as a child ends
            else:
                time.sleep(poll_s)
            for pid in list(running):
                key, out_dir, start, proc, peak = running[pid]
                cpu = 0.0
                try:
                    done, status, usage = os.wait4(pid, os.WNOHANG)
                    cpu = usage.ru_utime + usage.ru_stime
                except ChildProcessError:
                    done, status = pid, 0
                elapsed = time.monotonic() - start
                if done == 0:
                    rss = 0
                    if proc is not None:
                        try:
                            rss = proc.memory_info().rss
                        except psutil.Error:
                            pass
                    peak[0] = max(peak[0], rss)
                    used = _cpu_seconds(proc) if (limits["cpu"] or limits["hang"]) else None
                    now = time.monotonic()
                    if used is not None and used > peak[1]:
                        peak[1], peak[2] = used, now
                    if pid in killed:
                        continue
                    if elapsed > timeout_s:
                        killed[pid] = "timeout"
                        _kill(pid)
                    elif limits["cpu"] and used is not None and used > limits["cpu"]:
                        killed[pid] = "cpu"
                        _kill(pid)
                    elif limits["hang"] and now - peak[2] > limits["hang"]:
                        killed[pid] = "hang"
                        _kill(pid)
                    elif mem_cap_bytes and rss > mem_cap_bytes and pid not in killed:
                        killed[pid] = "oom"
                        _kill(pid)
                    continue
                del running[pid]
                if pid in pidfds:
                    os.close(pidfds.pop(pid))
                outcome = _classify(key, out_dir, status, killed.pop(pid, None), elapsed, limits, mem_cap_bytes)
                outcome.peak_rss_bytes = peak[0]
                outcome.cpu_s = cpu
                outcomes.append(outcome)
                if on_done is not None:
                    on_done(outcome)
    finally:
        for fd in pidfds.values():
            os.close(fd)
    return outcomes


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _classify(key, out_dir: Path, status: int, killed_for: str | None, elapsed, limits: dict, cap) -> Outcome:
    if killed_for == "timeout":
        return Outcome(key, False, "timeout", f"no result after {limits['wall']:.0f} wall s; killed", elapsed)
    if killed_for == "cpu":
        return Outcome(key, False, "timeout", f"no result after {limits['cpu']:.0f} CPU s; killed", elapsed)
    if killed_for == "hang":
        return Outcome(key, False, "hang", f"no CPU progress for {limits['hang']:.0f} wall s; killed", elapsed)
    if killed_for == "oom":
        return Outcome(key, False, "oom", f"resident memory above {cap / 2**30:.1f} GiB; killed", elapsed)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGKILL:
            return Outcome(key, False, "oom", f"killed by {name} (kernel OOM killer?)", elapsed)
        return Outcome(key, False, "crash", f"child ended by signal {name}", elapsed)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    err = out_dir / "error.json"
    if err.exists():
        rep = json.loads(err.read_text())
        return Outcome(key, False, rep["error_class"], rep["error_message"], elapsed)
    if code != 0:
        return Outcome(key, False, f"exit:{code}", f"child exited with status {code} without a report", elapsed)
    return Outcome(key, True, None, None, elapsed)
