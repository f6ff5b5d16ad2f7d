"""The parent's side of the scorer's trust boundary: sandbox processes, shared memory, one clock.

Design (``docs/scoring.md``, "The trust boundary"). Four processes per candidate run:

* the **parent** (this process): builds the inputs, owns the shared-memory slots, holds every
  check, the tolerance code, the scores and the **only clock** that decides anything
  (``time.perf_counter_ns`` here, around each request and each call of a timed trial:
  :meth:`Sandbox.stream`);
* a **reference** sandbox (:mod:`curate.score.boundary.sandbox`, role ``reference``, trusted): the eager
  graph;
* a **candidate** sandbox (role ``candidate``): the candidate's code, the graph, its own input and
  output slots, and nothing of the evaluator (a test lists its ``sys.modules``); untrusted for a
  ``module:`` / ``pass:`` candidate (below);
* a **Dynamo-only** sandbox (:func:`dynamo_sandbox`): the Dynamo-only reference
  (``torch.compile(backend="eager")``) run *as a candidate*: the same script in role
  ``candidate``, started, set up, loaded (``backend:eager``), bound to slots of the same sizes and
  timed with the same requests as the candidate's sandbox, one per candidate, so that a
  candidate that is Dynamo-only itself measures 1 against it by construction (one process per
  timed side; the same history: both start with the candidate).

How they start (:class:`Zygote`): one process per parent runs the sandbox script in role
``zygote``: it imports torch and the Dynamo / Inductor machinery once, with the candidate role's
refusal of the evaluator's packages in place, runs nothing, and forks every sandbox above on
request (a few ms instead of an interpreter start and those imports, seconds per sandbox on a
loaded machine); each forked sandbox keeps only its two pipe ends and gets the same ``setup``
request as a spawned one, so the sandboxes' roles, set-up, baselines and requests are those of
spawned ones (a sandbox the zygote cannot fork is spawned). Each candidate sandbox serves one
candidate for all its subgraphs (re-timing and re-validation get a fresh one; it is closed when
its candidate's run ends); the reference sandbox serves every candidate.

Isolation (:func:`isolation_level`, recorded as ``isolation`` in the rows and in
``metrics/score.json``). Every trusted process (this one, the zygote, the references, the
Dynamo-only sandbox, a ``backend:`` candidate's sandbox) is not dumpable (:func:`set_not_dumpable`).
An untrusted candidate sandbox (``module:`` / ``pass:``) runs in a private folder with its own
Inductor cache and, under ``uid`` isolation (this process is root), as its own uid
(:data:`UID_BASE` + pid) with ``RLIMIT_NPROC``, ``PR_SET_NO_NEW_PRIVS`` and no capability but,
where the interpreter is not readable by other uids (:func:`world_readable_install`),
``CAP_DAC_READ_SEARCH``; under ``dumpable``
isolation (not root) it keeps this process's uid and can signal the trusted processes, which
:mod:`curate.score.boundary.child` charges to it (``reference_disturbed``). Processes it leaves
outside itself are found (:meth:`Sandbox.strays`: orphans adopted by the zygote, processes of its
uid) and killed with it.

What crosses: the graph (pickled by the parent), a candidate's source text and requests go in on
the sandbox's own request socket; inputs go in through an anonymous shared-memory file
(``memfd_create``: no name in ``/dev/shm`` or anywhere) the parent writes (in a timed trial one
fresh set per call, each written when its call starts, with its call's RNG seed in the set's seed
word: :meth:`Sandbox.stream`, :class:`SharedSlots`); outputs come back
only through another such file, plain contiguous buffers of the reference's dtype and shape that
the sandbox copies each call's outputs into *before the call's done byte*, inside the parent's
timed window (every call's slots are copied by the parent with the sandbox stopped,
:meth:`Sandbox.hold`, the checked calls' copies kept, so what it writes after its done byte is never
what is checked, and the stops do not tell it which calls are checked); each
file's descriptor is passed to its own sandbox only (:func:`bind`, ``SCM_RIGHTS``),
so the reference's slots (the expected outputs) are mapped in the reference sandbox and here and
nowhere else; replies are JSON lines on a pipe (the parent never unpickles anything from a
sandbox).

What the parent reads from ``/proc/<pid>`` of the candidate sandbox: its threads
(``task/``; a thread that is not in the baseline taken before the candidate was imported, seen at
the start or end of any timed trial, is a violation), its CPU time, all threads, dead ones
included (``stat`` utime + stime): more CPU than wall time over the trials of a single-threaded
run is a violation (work done in parallel with, or between, the timed windows), and the
processes it left (the zygote's ``children`` after every trial, every process of its uid at the
checkpoints). While one side is timed, every other side's process is stopped (:meth:`Sandbox.freeze`),
for an untrusted candidate with every process of its own (its cgroup's, :class:`CandidateGroup`,
else its descendants and the zygote's orphans; a process beside the sandbox found then is a
violation), and each trusted side's nice and CPU affinity must be those its zygote started with
(:func:`sched_state`; a same-uid candidate could change them).

Residual risks (also in ``docs/scoring.md``): the candidate's process holds this boundary's copy
loop (:mod:`curate.score.boundary.sandbox`), so code that reaches it (the static check refuses the
routes it knows) can skip or fake the copy: the slots then hold stale values and fail the checked
calls, since every check reads the slots from the parent; threads that start and end between two
of the parent's looks are seen only through CPU time; a candidate can read every world-readable
file (the evaluator's source, the task folder), while the expected outputs exist only in the
reference sandbox's and the parent's memory; native code is held only by the process boundary,
the uid, the clock and the slot checks (there is no system-call filter); with
``CAP_DAC_READ_SEARCH`` the candidate reads every file of the machine (it writes only its own); a candidate that catches
the kernel's refusal and computes honestly instead scores as honest code; a candidate that
memoizes outputs by a key read from all of an input's values is not caught by the near-repeat
check (it gains nothing either: no call of a trial repeats another's inputs); a candidate sandbox lives for all of its
candidate's subgraphs, so its own state (caches, a table of earlier inputs) carries to its later
subgraphs, never the evaluator's; every forked sandbox starts from the same zygote image (the same
RNG states, which decide nothing: the parent draws every input seed); under ``dumpable``
isolation the candidate can write every file of this process's uid (the evaluator's source, the
resume journal, the shared Inductor cache) and signal the trusted processes; a sandbox that had to
be spawned has no subreaper, so its orphans are found by the uid scan only.
"""

from __future__ import annotations

import atexit
import copy
import ctypes
import functools
import json
import mmap
import os
import pickle
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Container

import psutil
import torch

from curate.score.config import run_config
from passnet_common.worker import rss_bytes as rss
from passnet_common.worker import start_ticks

SANDBOX = Path(__file__).with_name("sandbox.py")
"""The script the sandboxes run (stdlib + torch only)."""

GUARD = Path(__file__).parents[1] / "defenses" / "dispatch_guard.py"
"""PassNet's dispatch guard, loaded by file into the candidate sandbox only when ``dispatch_guard``
is on (it must run the candidate's replacement there)."""

ALIGN = 64
"""Byte alignment of every slot in the shared-memory files."""

POLL_S = 0.2
"""Seconds between two RSS readings of a sandbox while the parent waits for its reply."""

HOLD_LIMIT_S = 10.0
"""Seconds a sandbox may take to stop (:meth:`Sandbox.hold`) before the parent fails it."""

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

UID_BASE = 1_000_000
"""An untrusted candidate sandbox of a root parent runs as uid ``UID_BASE + its pid``: one uid per
sandbox (no two live processes share a pid), outside the range of system and login users, so
every process of that uid is that candidate's (counted, and killed when the sandbox is closed)."""

NPROC_EXTRA = 6
"""``RLIMIT_NPROC`` of an untrusted sandbox under ``uid`` isolation: its own threads plus this many
(the C++ compiler's chain of children when Inductor builds a kernel; no pool of daemons)."""

PR_SET_DUMPABLE = 4


def set_not_dumpable() -> bool:
    """``prctl(PR_SET_DUMPABLE, 0)`` on this process (trusted: the parent holds every expected
    output and the slots' descriptors): no process of the same uid without ``CAP_SYS_PTRACE`` may
    open its ``/proc/<pid>/fd``, ``mem`` or ``environ``, or ptrace it. False where it failed."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, ctypes.c_ulong(0), ctypes.c_ulong(0),
                                                         ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return False


@functools.cache
def world_readable_install() -> bool:
    """Whether another uid may read this interpreter, its standard library, the virtual environment
    and the C headers Inductor compiles against (every folder on the way searchable by others).
    Where not (a Python installed under ``/root``), an untrusted sandbox under ``uid`` isolation
    keeps ``CAP_DAC_READ_SEARCH`` (read any file; nothing else), or it could not import a module
    or compile a kernel."""
    for top in {sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))}:
        p = Path(top).resolve()
        for d in [p, *p.parents]:
            try:
                if d.stat().st_mode & 0o005 != 0o005:
                    return False
            except OSError:
                return False
    return True


def isolation_level() -> str:
    """How an untrusted candidate sandbox is separated from the trusted processes:

    * ``uid`` (the parent runs as root): the sandbox drops to its own unprivileged uid
      (:data:`UID_BASE` + pid) with no supplementary groups, ``PR_SET_NO_NEW_PRIVS``,
      ``RLIMIT_NPROC``, no core files and a private folder; it can neither signal, ptrace nor open
      the ``/proc/<pid>/fd`` / ``mem`` of any trusted process, nor write a trusted file;
    * ``dumpable`` (not root): the same uid as the trusted processes, which are all non-dumpable
      (no ``/proc/<pid>/fd``, ``mem`` or ptrace from a same-uid process) and whose zygote adopts any
      orphan; a same-uid candidate can still *signal* them, which :mod:`curate.score.boundary.child`
      charges to it (``reference_disturbed``) and the orphan check names (``processes_started``).

    Recorded in every row (``isolation``) and in ``metrics/score.json``."""
    return "uid" if hasattr(os, "geteuid") and os.geteuid() == 0 else "dumpable"


class SandboxFailure(RuntimeError):
    """A sandbox died, ran past its deadline or above the memory cap.

    Attributes:
        cls: ``timeout`` | ``oom`` | ``crash``. role: ``candidate`` | ``reference`` | ``dynamo`` (the
        sandbox's label: the Dynamo-only sandbox runs in role ``candidate`` but is the harness's).
        state: the process's state letter (``/proc/<pid>/stat``) when it was found failed, before
        it was killed (``T``: stopped by a signal; None: already gone).
    """

    def __init__(self, message: str, cls: str, role: str, state: str | None = None):
        super().__init__(message)
        self.cls, self.role, self.state = cls, role, state


def rss_bytes(pid: int) -> int | None:
    """Resident memory of ``pid`` (bytes; :func:`passnet_common.worker.rss_bytes`)."""
    return rss(pid)


@functools.cache
def trusted_inductor_cache(inductor_cache: str | None) -> str:
    """The Inductor cache folder of the trusted processes: ``inductor_cache`` (resolved) when set;
    else Inductor's own default (``<tmp>/torchinductor_<user>``), made here, before any sandbox
    starts, when it is missing, and used only when it is this process's own folder that no one
    else may write; else a fresh private folder. Left to Inductor, the default folder is made by the
    first trusted compile, and an untrusted candidate (another uid) that ran before it could make it
    first, in the world-writable ``/tmp``, and own the folder from which the trusted sandboxes then
    import generated code (``attack_cache_plant.py``)."""
    if inductor_cache:
        return str(Path(inductor_cache).resolve())
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir  # noqa: PLC0415  (light: no Inductor import)

    d = default_cache_dir()
    try:
        os.mkdir(d, 0o755)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="passnet_inductor_")
    st = os.lstat(d)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022:
        return d
    return tempfile.mkdtemp(prefix="passnet_inductor_")


def sandbox_env(threads: int, inductor_cache: str | None) -> dict[str, str]:
    """The environment of a sandbox (or zygote) process: the parent's without ``PYTHONPATH`` /
    ``PYTHONSTARTUP``, ``OMP_NUM_THREADS`` = ``threads`` (no OpenBLAS / OpenMP pool at import)
    and ``TORCHINDUCTOR_CACHE_DIR`` = :func:`trusted_inductor_cache` (read when Inductor loads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["OMP_NUM_THREADS"] = str(threads)
    env["TORCHINDUCTOR_CACHE_DIR"] = trusted_inductor_cache(inductor_cache)
    return env


def _state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``/proc/<pid>/stat``; None when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _all_stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` is stopped (state ``T`` / ``t``) or the process is
    gone (``/proc/<pid>/task/<tid>/stat``)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if st not in ("T", "t", "Z", "X"):
            return False
    return True


def pids_of_uid(uid: int) -> set[int]:
    """Live processes whose real uid is ``uid`` (``/proc/<pid>/status``)."""
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid and _state(int(d)) not in (None, "Z", "X"):
                            out.add(int(d))
                        break
        except (OSError, ValueError, IndexError):
            continue
    return out


def _kill_all(pids: set[int]) -> None:
    for p in pids:
        try:
            os.kill(p, 9)
        except OSError:
            pass


def descendants(pid: int) -> set[int]:
    """Every live or zombie descendant of process ``pid`` (``/proc/<pid>/task/<tid>/children`` of each
    of its threads, recursively; a few small reads, no scan of ``/proc``)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = {int(x) for x in f.read().split()}
            except (OSError, ValueError):
                continue
            new = kids - out
            out |= new
            todo.extend(new)
    return out


def sched_state(pid: int) -> tuple[int, tuple[int, ...]] | None:
    """``(nice, sorted CPU affinity)`` of process ``pid`` (0: this one); None when it is gone. Neither
    read needs a permission, so the parent reads them of every sandbox."""
    try:
        return os.getpriority(os.PRIO_PROCESS, pid), tuple(sorted(os.sched_getaffinity(pid)))
    except OSError:
        return None


CGROUP_V1 = Path("/sys/fs/cgroup")
"""Where the cgroup v1 hierarchies are mounted (``cpuacct`` used, when writable)."""


class CandidateGroup:
    """An own cgroup v1 ``cpuacct`` group for one untrusted sandbox (a root parent where that
    hierarchy is mounted and writable; :meth:`create` returns None elsewhere). The sandbox joins it
    before any candidate code runs, and every process it starts is born in it; its uid cannot move
    a process out (the group's files are root's). So :meth:`pids` is every process of the
    candidate wherever it was re-parented, and :meth:`cpu_ms` their CPU time, dead and
    never-reaped ones included."""

    def __init__(self, d: Path):
        self.dir = d

    @staticmethod
    def available() -> bool:
        """Whether this process may make groups in cgroup v1 ``cpuacct`` (root, mounted and writable)."""
        return hasattr(os, "geteuid") and os.geteuid() == 0 and (CGROUP_V1 / "cpuacct" / "cgroup.procs").exists() \
            and os.access(CGROUP_V1 / "cpuacct", os.W_OK)

    @classmethod
    def create(cls, name: str, pid: int) -> CandidateGroup | None:
        """Group ``name`` holding process ``pid``; None when cgroup v1 ``cpuacct`` is not available."""
        if not cls.available():
            return None
        d = CGROUP_V1 / "cpuacct" / name
        try:
            d.mkdir()
            (d / "cgroup.procs").write_text(f"{pid}\n")
            if not (d / "cpuacct.usage").exists():
                raise OSError("no cpuacct.usage")
        except OSError:
            _rmdir_group(d)
            return None
        return cls(d)

    def pids(self) -> set[int]:
        """Every process in the group now (``cgroup.procs``)."""
        try:
            return {int(x) for x in (self.dir / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    def cpu_ms(self) -> float:
        """CPU time of every process that was ever in the group (ms; ``cpuacct.usage``)."""
        try:
            return int((self.dir / "cpuacct.usage").read_text()) / 1e6
        except (OSError, ValueError):
            return float("nan")

    def remove(self) -> None:
        """Kill every process in the group, remove the group."""
        for _ in range(3):
            left = self.pids()
            if not left:
                break
            _kill_all(left)
            time.sleep(0.01)
        _rmdir_group(self.dir)


def _rmdir_group(d: Path) -> None:
    for _ in range(50):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # processes still leaving it
            time.sleep(0.01)


class Forked:
    """The process handle of a sandbox forked by a :class:`Zygote` (not this process's child, so
    no exit status): ``poll()`` None while it lives, else -9; ``kill()``; ``wait(timeout)``."""

    def __init__(self, pid: int):
        self.pid = pid
        self._start = start_ticks(pid)

    def poll(self) -> int | None:
        st = start_ticks(self.pid)
        return None if st is not None and st == self._start else -9

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass

    def wait(self, timeout: float | None = None) -> int:
        end = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() >= end:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(0.01)
        return -9


class Zygote:
    """A process that runs the sandbox script in role ``zygote``: it imports torch and the Dynamo /
    Inductor machinery once, runs nothing, and forks a sandbox per :meth:`fork` (see
    :func:`curate.score.boundary.sandbox.zygote`). A forked sandbox then gets the same ``setup``
    request as a spawned one; what it saves is the interpreter start and those imports (seconds
    per sandbox on a loaded machine). One per ``threads`` / memory cap / Inductor cache."""

    def __init__(self, threads: int, inductor_cache: str | None):
        self._sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen([sys.executable, "-s", str(SANDBOX), "zygote", str(child.fileno())],
                                         pass_fds=(child.fileno(),), cwd=tempfile.gettempdir(),
                                         env=sandbox_env(threads, inductor_cache), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL)
        finally:
            child.close()
        self._buf = b""
        self.known: set[int] = set()  # the sandboxes it forked for this parent, alive
        self.sched = sched_state(0)  # nice and CPU affinity every trusted process of this zygote starts with

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and self._sock.fileno() >= 0

    def orphans(self) -> set[int]:
        """Live children of the zygote that are not sandboxes it forked: processes a sandbox left
        behind (re-parented here: the zygote is their child subreaper). ``/proc/<pid>/task/<pid>/children``."""
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                kids = {int(x) for x in f.read().split()}
        except (OSError, ValueError):
            return set()
        return {p for p in kids - self.known if _state(p) not in (None, "Z", "X")}

    def fork(self, role: str, cwd: str, r_fd: int, w_fd: int, deadline: float) -> int | None:
        """Fork a sandbox in ``role`` reading requests on ``r_fd`` and replying on ``w_fd`` (the
        child's pipe ends; the caller closes its copies); its pid, or None when the zygote is gone,
        refused (it has threads) or did not answer before ``deadline`` (then it is stopped)."""
        try:
            socket.send_fds(self._sock, [(json.dumps({"role": role, "cwd": cwd}) + "\n").encode()], [r_fd, w_fd])
            while b"\n" not in self._buf:
                ready, _, _ = select.select([self._sock], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    self.close()
                    return None
                chunk = self._sock.recv(1 << 12)
                if not chunk:
                    self.close()
                    return None
                self._buf += chunk
        except OSError:
            self.close()
            return None
        line, self._buf = self._buf.split(b"\n", 1)
        rep = json.loads(line)
        if "pid" not in rep:
            return None
        self.known.add(int(rep["pid"]))
        return int(rep["pid"])

    def close(self) -> None:
        """Close the socket: the zygote reaps its ended children (their CPU time then counts in
        this process's ``getrusage``) and exits; killed when it has not within 5 s."""
        self._sock.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class Sandbox:
    """One sandbox process (role ``candidate`` or ``reference``) and its request pipe.

    ``request(msg, deadline)`` sends a pickled request and waits for the JSON reply, reading the
    process's RSS every :data:`POLL_S` s (above ``mem_cap`` bytes: killed, ``oom``); past the
    monotonic ``deadline``: killed, ``timeout``; a closed pipe: ``crash``
    (:class:`SandboxFailure`). ``timed(msg, deadline)`` is the same request with the parent's
    wall time of it (ms).
    """

    def __init__(self, role: str, mem_cap: int, threads: int, inductor_cache: str | None = None,
                 start_timeout_s: float = 180.0, label: str | None = None, zygote: Zygote | None = None,
                 untrusted: bool = False):
        set_not_dumpable()  # the parent holds every expected output and every slot's descriptor
        self.role, self.mem_cap = role, mem_cap
        self.label = label or role  # what failures name: reference | candidate | dynamo
        self.peak_rss = 0
        self.tainted = False  # a row of it had a violation or crash: not handed out again
        self.untrusted = untrusted
        self.uid: int | None = None
        self._zygote = zygote
        self._frozen: set[int] = set()  # processes :meth:`freeze` stopped, until :meth:`thaw`
        self._held: set[int] = set()  # processes :meth:`hold` stopped, until :meth:`release`
        self.cgroup: CandidateGroup | None = None
        self._buf = b""
        self._sock, c_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)  # requests (+ slot descriptors)
        p_r, c_w = os.pipe()  # JSON replies
        c_r = c_sock.fileno()
        self._dir = tempfile.mkdtemp(prefix=f"passnet_{role}_")
        deadline = time.monotonic() + start_timeout_s
        try:
            pid = zygote.fork(role, self._dir, c_r, c_w, deadline) if zygote is not None else None
            self.proc: subprocess.Popen | Forked = Forked(pid) if pid is not None else subprocess.Popen(
                [sys.executable, "-s", str(SANDBOX), role, str(c_r), str(c_w)], pass_fds=(c_r, c_w), cwd=self._dir,
                env=sandbox_env(threads, inductor_cache), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        finally:
            c_sock.close()
            os.close(c_w)
        self.forked = pid is not None
        self._r, self._w = p_r, self._sock.fileno()
        self.pid = self.proc.pid
        # an untrusted sandbox joins its own cgroups before its set-up request, so before any candidate code
        self.cgroup = CandidateGroup.create(f"passnet_{os.getpid()}_{self.pid}", self.pid) if untrusted else None
        cache = trusted_inductor_cache(inductor_cache)
        msg: dict = {"op": "setup", "threads": threads, "inductor_cache": cache}
        self.isolation = "trusted"
        if untrusted:
            self.isolation = isolation_level()
            if self.isolation == "uid":
                self.uid = UID_BASE + self.pid
                os.chown(self._dir, self.uid, self.uid)
            os.chmod(self._dir, 0o700)
            msg["drop"] = {"dir": self._dir, "uid": self.uid, "nproc": threads + 4 + NPROC_EXTRA,
                           "read_all": self.uid is not None and not world_readable_install()}
        rep = self.request(msg, deadline)
        if "error" in rep or (self.uid is not None and rep.get("uid") != self.uid):
            raise self._fail(f"{self.label} sandbox set-up failed ({self.isolation} isolation): "
                             f"{rep.get('error') or rep}", "crash")
        self.baseline_tasks = self.tasks()

    # --- /proc readings ---------------------------------------------------------------------

    def tasks(self) -> set[int]:
        """Thread ids of the process now (``/proc/<pid>/task``; empty when gone or not Linux)."""
        try:
            return {int(t) for t in os.listdir(f"/proc/{self.pid}/task")}
        except OSError:
            return set()

    def own_cpu_ms(self) -> float:
        """CPU time of the threads of :attr:`baseline_tasks` (the sandbox's own, taken before the
        candidate was imported) that are alive, in ms (``/proc/<pid>/task/<tid>/schedstat``, ns).
        :meth:`cpu_ms` less this is the CPU of every other thread and process of the candidate,
        those that already ended included."""
        ns = 0
        for t in self.baseline_tasks:
            try:
                with open(f"/proc/{self.pid}/task/{t}/schedstat") as f:
                    ns += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return ns / 1e6

    def strays(self, full: bool = False) -> set[int]:
        """Processes this untrusted sandbox left outside itself (empty for a trusted one): orphans
        re-parented to the zygote (:meth:`Zygote.orphans`, one small ``/proc`` read: every trial)
        and, with ``full`` under ``uid`` isolation, every other live process of the sandbox's uid
        (a scan of ``/proc``: the checkpoints). Its own children are :func:`curate.score.defenses.checks`'s
        ``processes_started`` already."""
        if not self.untrusted:
            return set()
        out = self._zygote.orphans() if self._zygote is not None and self._zygote.alive else set()
        if full and (self.uid is not None or self.cgroup is not None):
            if self.uid is not None:
                out |= pids_of_uid(self.uid) - {self.pid}
            if self.cgroup is not None:
                out |= self.cgroup.pids() - {self.pid}
            out -= descendants(self.pid)
        return out

    def _left(self) -> set[int]:
        """Every process of this untrusted sandbox but itself: its descendants, the zygote's
        orphans and (``uid``) every process of its uid."""
        out = self.strays(full=True)
        if self.proc.poll() is None:  # a dead sandbox's pid may be another process's by now
            try:
                out |= {c.pid for c in psutil.Process(self.pid).children(recursive=True)}
            except psutil.Error:
                pass
        if self.uid is not None:
            out |= pids_of_uid(self.uid)
        if self.cgroup is not None:
            out |= self.cgroup.pids()
        return out - {self.pid}

    def freeze(self) -> set[int]:
        """Stop (``SIGSTOP``) this sandbox while another side is timed (:func:`curate.score.defenses.clock.measure_boundary`
        stops every side but the timed one, so every side's process is continued just before its
        own trials alike). For an untrusted sandbox, also every process it has outside itself (its
        cgroup's, else its descendants, the zygote's orphans and theirs): nothing of the candidate
        runs then, whatever it started (a process spinning on a core while the references are
        timed). The sandbox is stopped first (it forks nothing more), then what it left, again until
        no new process is found. Returns the other processes found (a process of the candidate alive
        while another side is timed: ``processes_started``); :meth:`thaw` continues them."""
        if self._frozen or self.proc.poll() is not None:
            return set()
        stopped: set[int] = set()
        zombies: set[int] = set()  # ended but not reaped: they ran beside the sandbox all the same
        todo = {self.pid}
        while todo:
            for p in todo:
                try:
                    os.kill(p, 19)  # SIGSTOP: cannot be caught or ignored
                except OSError:
                    pass
            stopped |= todo
            for p in todo:  # stopped before anything of them is listed again (a running process may fork)
                for _ in range(2000):
                    if _state(p) in (None, "T", "t", "Z", "X"):
                        break
                    time.sleep(0.0001)
            if not self.untrusted:
                break
            found = descendants(self.pid) | self.strays()
            if self.cgroup is not None:
                found |= self.cgroup.pids()
            for o in list(found):
                found |= descendants(o)
            zombies |= {p for p in found if _state(p) in ("Z", "X")}
            todo = {p for p in found - stopped - zombies if _state(p) is not None}
        self._frozen = stopped
        return (stopped | zombies) - {self.pid}

    def thaw(self) -> None:
        """Continue (``SIGCONT``) what :meth:`freeze` stopped."""
        for p in self._frozen:
            try:
                os.kill(p, 18)  # SIGCONT
            except OSError:
                pass
        self._frozen = set()

    def cpu_ms(self) -> float:
        """CPU time of the process, all threads (dead ones included), user + system, and of its
        children it has reaped (a helper process forked and reaped inside a timed trial), in ms
        (``/proc/<pid>/stat`` fields 14-17, clock ticks of 1/``SC_CLK_TCK`` s)."""
        if self.cgroup is not None:  # every process of the candidate, however it ended
            return self.cgroup.cpu_ms()
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) * 1e3 / CLK_TCK
        except (OSError, IndexError, ValueError):
            return float("nan")

    # --- requests ---------------------------------------------------------------------------

    def _send(self, msg: dict, fds: tuple | list = ()) -> None:
        data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        data = struct.pack("<I", len(data)) + data
        try:
            while data:
                data = data[os.write(self._w, data):]
            if fds:  # one byte carrying the descriptors, read by the sandbox right after this request
                socket.send_fds(self._sock, [b"F"], list(fds))
        except (BrokenPipeError, OSError) as exc:
            raise self._fail(f"{self.label} sandbox died (exit code {self.proc.poll()})", "crash") from exc

    def _fail(self, why: str, cls: str) -> SandboxFailure:
        state = _state(self.pid)
        self.kill()
        return SandboxFailure(why, cls, self.label, state)

    def _watch(self, now: float, deadline: float) -> None:
        """While waiting on the reply pipe: the resident-memory cap (``oom``) and the subgraph's
        deadline (``timeout``); either kills the sandbox through :meth:`_fail`."""
        rss = rss_bytes(self.pid) if self.proc.poll() is None else None
        self.peak_rss = max(self.peak_rss, rss or 0)
        if rss is not None and rss > self.mem_cap:
            raise self._fail(f"resident memory {rss / 2**30:.2f} GiB above the cap mem_cap_gb = "
                             f"{self.mem_cap / 2**30:.2f} GiB; killed", "oom")
        if now >= deadline:
            raise self._fail("timeout: the sandbox did not answer before the subgraph's deadline", "timeout")

    def _recv(self, deadline: float) -> dict:
        watched = 0.0
        while b"\n" not in self._buf:
            now = time.monotonic()
            if now - watched >= POLL_S:
                watched = now
                self._watch(now, deadline)
            ready, _, _ = select.select([self._r], [], [], min(POLL_S, max(0.0, deadline - now)))
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise self._fail(f"{self.label} sandbox died (exit code {self.proc.wait(5)})", "crash")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise self._fail(f"{self.label} sandbox sent a malformed reply", "crash") from exc

    def request(self, msg: dict, deadline: float, fds: tuple | list = ()) -> dict:
        """Send ``msg`` (and ``fds`` after it, ``SCM_RIGHTS``) and wait for the reply."""
        self._send(msg, fds)
        return self._recv(deadline)

    def timed(self, msg: dict, deadline: float) -> tuple[dict, float]:
        """``(reply, ms)``: the parent's ``perf_counter_ns`` from before the request is written to
        after the reply is read (the only clock that decides anything)."""
        t0 = time.perf_counter_ns()
        self._send(msg)
        rep = self._recv(deadline)
        return rep, (time.perf_counter_ns() - t0) / 1e6

    def hold(self, deadline: float) -> None:
        """Stop (``SIGSTOP``) the sandbox, and every process of its cgroup, and return once the
        kernel reports every thread of each stopped (``/proc/<pid>/task/<tid>/stat`` state ``T``):
        from then on nothing of the sandbox writes into its slots until :meth:`release`. A process
        that does not stop before ``deadline`` (or within :data:`HOLD_LIMIT_S`) fails the sandbox
        (``crash``)."""
        pids = {self.pid} | (self.cgroup.pids() if self.cgroup is not None else set())
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        self._held = pids
        limit = min(deadline, time.monotonic() + HOLD_LIMIT_S)
        for p in pids:
            while not _all_stopped(p):
                if time.monotonic() >= limit:
                    raise self._fail(f"{self.label} sandbox did not stop for the copy of a checked call's slots", "crash")
                time.sleep(0.00005)

    def release(self) -> None:
        """Continue (``SIGCONT``) what :meth:`hold` stopped."""
        for p in self._held:
            try:
                os.kill(p, signal.SIGCONT)
            except OSError:
                pass
        self._held = set()

    def stream(self, msg: dict, deliver: Callable[[int], None], deadline: float,
               collect: Callable[[int], None] | None = None, checked: Container[int] = ()) -> tuple[dict, list[float], float]:
        """One timed trial with one input set per call, each delivered only when its call starts:
        send ``msg`` (a ``run`` request with ``stream``; its ``sets`` are the calls), then for call
        ``i``: ``deliver(i)`` (the parent writes that call's input set into its slot; the sandbox
        is waiting, blocked, for its go byte), start the clock, write the go byte, read the done
        byte the sandbox writes once the call's outputs are in their slots, stop the clock, then,
        for **every** call (when ``collect`` is given), stop the sandbox (:meth:`hold`: the kernel
        reports it stopped), ``collect(i, i in checked)`` (the parent copies that call's slots, kept
        for a call of ``checked``, into a scratch copy of the same size otherwise, before the sandbox
        gets the next go byte; outside the clock like the deliveries) and continue it
        (:meth:`release`): the copy is of the slots as they were when the sandbox stopped, right
        after its done byte, never of outputs it writes while the parent copies. Every call gets
        the same ``SIGSTOP`` / ``SIGCONT`` pair and a stop of about the same length (the same copy),
        so a candidate that counts the signals (a ``SIGCONT`` handler) or times its stops learns
        nothing of which calls are checked (``cheat_sympy_sigcont`` counts the holds to find the
        checked calls and skip the rest).

        Returns ``(reply, per-call ms, busy ms)``: the parent's ``perf_counter_ns`` around each go /
        done pair (the deliveries are outside it, the same for every side; the last call's time runs
        on to the reply line, so outputs written into the slots after the last done byte are timed), and the request's whole
        wall time less the deliveries (the time the sandbox may have run: the CPU account's
        wall). An error reply that comes instead of a done byte (the call raised) ends the trial; any
        other byte there (not the loop's: a done byte or a reply line written on the pipe by the
        candidate's code) leaves the stream unreadable, and the sandbox fails (``crash``)."""
        t_req = time.perf_counter_ns()
        self._send(msg)
        per: list[float] = []
        outside = 0
        for i in range(len(msg["sets"])):
            d0 = time.perf_counter_ns()
            deliver(i)
            t0 = time.perf_counter_ns()
            outside += t0 - d0
            try:
                os.write(self._w, b"g")
            except OSError as exc:
                raise self._fail(f"{self.label} sandbox died (exit code {self.proc.poll()})", "crash") from exc
            b = self._byte(deadline)
            t1 = time.perf_counter_ns()
            if b != b".":  # the reply of a call that raised; any other reply before the last call is not the loop's
                self._buf = b + self._buf
                rep = self._recv(deadline)
                if "error" not in rep:
                    raise self._fail(f"{self.label} sandbox replied before call {i + 1} of {len(msg['sets'])} ended "
                                     "without an error (a malformed stream)", "crash")
                return rep, per, (time.perf_counter_ns() - t_req - outside) / 1e6
            per.append((t1 - t0) / 1e6)
            if collect is not None:  # every call stopped and copied alike: the signals say nothing of which is checked
                self.hold(deadline)
                try:
                    collect(i, i in checked)
                finally:
                    self.release()
                outside += time.perf_counter_ns() - t1
                t1 = time.perf_counter_ns()
        rep = self._recv(deadline)
        t_end = time.perf_counter_ns()
        if per:  # the span from the last done byte to the reply is the last call's: work put off past it is timed
            per[-1] += (t_end - t1) / 1e6
        return rep, per, (t_end - t_req - outside) / 1e6

    def _byte(self, deadline: float) -> bytes:
        """The next byte on the reply pipe (a stream's done byte), with :meth:`_recv`'s deadline and
        memory-cap watch."""
        if self._buf:
            b, self._buf = self._buf[:1], self._buf[1:]
            return b
        watched = time.monotonic()
        while True:
            ready, _, _ = select.select([self._r], [], [], min(POLL_S, max(0.0, deadline - watched)))
            if ready:
                b = os.read(self._r, 1)
                if not b:
                    raise self._fail(f"{self.label} sandbox died (exit code {self.proc.wait(5)})", "crash")
                return b
            now = time.monotonic()
            self._watch(now, deadline)
            watched = now

    def modules(self, deadline: float) -> list[str]:
        """The names in the sandbox's ``sys.modules`` now."""
        return self.request({"op": "modules"}, deadline)["modules"]

    def kill(self) -> None:
        """Kill the process and, for an untrusted sandbox, everything it left (:meth:`strays`).
        Once only: a second call (``close`` after a failure killed it) does nothing, because by then
        its pid, and the uid ``UID_BASE + pid``, may belong to a newer sandbox of the same zygote."""
        if self._r < 0:
            return
        if self._frozen:
            self.thaw()
        victims = self._left() if self.untrusted else set()
        if self.proc.poll() is None:
            self.proc.kill()
        _kill_all(victims)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        if self.untrusted:  # what was re-parented or forked while it died
            _kill_all(self._left() - {self.pid})
        if self._zygote is not None:
            self._zygote.known.discard(self.pid)
        try:
            os.close(self._r)
        except OSError:
            pass
        self._sock.close()
        self._r = self._w = -1
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        shutil.rmtree(self._dir, ignore_errors=True)

    def close(self) -> None:
        """Stop the process at once (:meth:`kill`): it holds nothing to save, and a torch
        interpreter's own shutdown takes seconds on a loaded machine."""
        self.kill()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and self._w >= 0


class SharedSlots:
    """An anonymous shared-memory file (``memfd_create``: no name in any folder; descriptor
    :attr:`fd`) the parent owns, holding ``n_sets`` sets of leaves with the given specs;
    ``views[k][j]`` is the parent's tensor of leaf ``j`` of set ``k`` (None for a non-tensor leaf);
    ``message()`` and :attr:`fd` are what a sandbox needs to map the same slots (:func:`bind`
    passes the descriptor to that sandbox only).

    Each set also has a seed word (``("seed", offset)`` ending its layout row: an int64 the sandbox
    reads before that set's call when the request's ``seed`` is ``"slot"``, and re-seeds its RNG
    with): :meth:`write` puts a call's seed there with its inputs, so a call's seed is delivered
    with its input set, outside the clock, and exists in the sandbox only from then.

    Args:
        specs: per leaf ``("tensor", dtype_name, shape)`` or ``("const", value)``.
        n_sets: sets of slots.
    """

    def __init__(self, specs: list[tuple], n_sets: int):
        self.layout, off = [], 0
        self.seed_offsets: list[int] = []
        for _ in range(n_sets):
            row = []
            for s in specs:
                if s[0] == "const":
                    row.append(("const", s[1]))
                    continue
                _, dtype, shape = s
                nb = _numel(shape) * torch.empty((), dtype=getattr(torch, dtype)).element_size()
                row.append(("tensor", off, dtype, list(shape)))
                off += -(-nb // ALIGN) * ALIGN
            row.append(("seed", off))
            self.seed_offsets.append(off)
            off += ALIGN
            self.layout.append(row)
        self.nbytes = max(ALIGN, off)
        self.fd = os.memfd_create("passnet_slots", os.MFD_CLOEXEC)  # no name in any folder
        os.ftruncate(self.fd, self.nbytes)
        self._map = mmap.mmap(self.fd, self.nbytes)
        self.buf = torch.frombuffer(self._map, dtype=torch.uint8)
        self.views = [[None if leaf[0] == "const" else
                       self.buf[leaf[1]:leaf[1] + _numel(leaf[3]) * torch.empty((), dtype=getattr(torch, leaf[2])).element_size()]
                       .view(getattr(torch, leaf[2])).view(leaf[3]) for leaf in row if leaf[0] != "seed"] for row in self.layout]
        self.seeds = [self.buf[o:o + 8].view(torch.int64) for o in self.seed_offsets]

    def message(self) -> tuple:
        """``(nbytes, layout)``: what a sandbox needs, beside the descriptor :attr:`fd`, to map the slots."""
        return (self.nbytes, [[list(leaf) for leaf in row] for row in self.layout])

    def write(self, k: int, values: list, seed: int | None = None) -> None:
        """Copy ``values`` (one input set) into set ``k``, and ``seed`` (when given) into its seed word."""
        for v, x in zip(self.views[k], values):
            if v is not None:
                v.copy_(x)
        if seed is not None:
            self.seeds[k][0] = int(seed)

    def read(self, k: int) -> list:
        """Set ``k`` as fresh tensors (copies: the slots are rewritten by the next run)."""
        return [None if v is None else v.clone() for v in self.views[k]]

    def close(self) -> None:
        """Close the descriptor (the memory goes with the last mapping)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def bind(box, deadline: float, inputs: SharedSlots | None = None, outputs: SharedSlots | None = None,
         treespec: str | None = None) -> dict:
    """Map ``inputs`` / ``outputs`` in ``box``: their layouts in the request, their ``memfd``
    descriptors passed after it over the box's own request socket (``SCM_RIGHTS``), so no other
    process can open them by any name."""
    msg: dict = {"op": "bind"}
    fds = []
    if inputs is not None:
        msg["inputs"] = inputs.message()
        fds.append(inputs.fd)
    if outputs is not None:
        msg["outputs"] = outputs.message()
        msg["treespec"] = treespec
        fds.append(outputs.fd)
    return box.request(msg, deadline, fds=fds)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def leaf_specs(values: list) -> list[tuple]:
    """Slot specs of a list of values (tensors -> ``("tensor", dtype, shape)``; others constants)."""
    out = []
    for x in values:
        if isinstance(x, torch.Tensor):
            out.append(("tensor", str(x.dtype).replace("torch.", ""), list(x.shape)))
        else:
            out.append(("const", x))
    return out


@functools.cache
def host_best_rate(kind: str, repeats: int = 5) -> float:
    """The host's best measured rate of ``kind`` on one thread, over the parent's clock, best of
    ``repeats`` per case; measured once per process and argument pair (``functools.cache``).

    * ``copy`` (bytes/s): a ``torch`` copy, read + write bytes, of float32 buffers from cache size
      (256 KiB) to memory size (64 MiB);
    * ``mm`` (FLOP/s): ``torch.mm`` of square float32 and bfloat16 matrices (n = 256, 512;
      2 n^3 FLOPs, the count :class:`torch.utils.flop_counter.FlopCounterMode` gives a matmul;
      one untimed call first).

    Raises:
        ValueError: unknown ``kind``.
    """
    cases: list[tuple[Callable[[], Any], float]] = []
    if kind == "copy":
        for size in (1 << 18, 1 << 22, 1 << 26):
            src, dst = torch.ones(size // 4), torch.empty(size // 4)
            cases.append((lambda src=src, dst=dst: dst.copy_(src), 2.0 * size))
    elif kind == "mm":
        for dtype in (torch.float32, torch.bfloat16):
            for n in (256, 512):
                a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
                cases.append((lambda a=a, b=b: torch.mm(a, b), 2.0 * n**3))
    else:
        raise ValueError(f"unknown rate kind {kind!r}; known: copy, mm")
    best = 0.0
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for work, amount in cases:
            work()
            for _ in range(repeats):
                t0 = time.perf_counter_ns()
                work()
                dt = (time.perf_counter_ns() - t0) / 1e9
                if dt > 0:
                    best = max(best, amount / dt)
    finally:
        torch.set_num_threads(n_threads)
    return best


def host_copy_bandwidth() -> float:
    """The host's best measured memory bandwidth (bytes/s; :func:`host_best_rate` ``copy``) for the
    roofline check. A candidate moving its inputs' and outputs' bytes faster than a multiple of
    this is not computing what it returns (the check of an L2-resident kernel at 4x the physical
    peak)."""
    return host_best_rate("copy")


def host_flop_peak() -> float:
    """The host's best measured compute rate (FLOP/s, one thread; :func:`host_best_rate` ``mm``)
    for the roofline's compute roof."""
    return host_best_rate("mm")


_ZYGOTES: dict[tuple, Zygote] = {}
_REFERENCES: dict[tuple, Sandbox] = {}
_CANDIDATES: dict[tuple, tuple[str, Sandbox]] = {}
_DYNAMOS: dict[tuple, tuple[str, Sandbox]] = {}

DYNAMO_CANDIDATE = ("backend", "eager")
"""The Dynamo-only reference as the candidate sandbox loads it: kind and target of the
``control = backend:eager`` candidate (``torch.compile(backend="eager")``)."""


def _key(cfg: dict) -> tuple:
    cfg = run_config(cfg)
    return (int(cfg["threads"]), float(cfg["mem_cap_gb"]), cfg["inductor_cache"])


def mem_cap_bytes(cfg: dict) -> int:
    """The resident-memory cap of a sandbox in bytes (``mem_cap_gb``, GiB; default: :class:`curate.score.config.ScoreConfig`)."""
    return int(float(run_config(cfg)["mem_cap_gb"]) * (1 << 30))


def zygote(cfg: dict) -> Zygote:
    """The :class:`Zygote` for ``cfg``'s threads / memory cap / Inductor cache (one per parent
    process; restarted when it died). Every sandbox of this module is forked from it; one that
    cannot be (the zygote refused or is gone) is spawned instead, the same script in the same role."""
    k = _key(cfg)
    z = _ZYGOTES.get(k)
    if z is None or not z.alive:
        z = _ZYGOTES[k] = Zygote(k[0], k[2])
    return z


def reference_sandbox(cfg: dict) -> Sandbox:
    """The reference sandbox for ``cfg``'s threads / memory cap / Inductor cache: one per parent
    process, shared by every candidate (it runs only the trusted eager graphs; it keeps those of its
    last 8 subgraphs), restarted when it died. The Dynamo-only reference is not here but in
    :func:`dynamo_sandbox`, timed exactly as a candidate is."""
    k = _key(cfg)
    box = _REFERENCES.get(k)
    if box is None or not box.alive:
        box = _REFERENCES[k] = Sandbox("reference", mem_cap_bytes(cfg), k[0], k[2], zygote=zygote(cfg))
    return box


def harness_found_dead(cfg: dict) -> str | None:
    """``reference`` / ``dynamo`` when that trusted sandbox held for ``cfg`` exists and is no longer
    alive (it died between two requests: nothing of the harness kills it there); else None."""
    k = _key(cfg)
    box = _REFERENCES.get(k)
    if box is not None and not box.alive:
        return "reference"
    held = _DYNAMOS.get(k)
    return "dynamo" if held is not None and not held[1].alive else None


def candidate_sandbox(cfg: dict, who: str, untrusted: bool = True) -> Sandbox:
    """The candidate sandbox for candidate ``who`` (its spec and source hash): a fresh process for
    each new candidate (nothing one candidate leaves in its process reaches another's rows), kept
    across that candidate's subgraphs, restarted when it died, a thread of it outlived a subgraph or
    a row of it had a violation or crash (``tainted``). Tests pass ``share_sandbox`` (``who`` =
    ``"shared"``): honest candidates then share one process, and any caught one ends it."""
    k = _key(cfg)
    held = _CANDIDATES.get(k)
    if held is not None and (held[0] != who or not held[1].alive or held[1].tainted or held[1].untrusted != untrusted
                             or held[1].tasks() - held[1].baseline_tasks):
        held[1].close()
        resume_trusted()
        held = None
    if held is None:
        held = _CANDIDATES[k] = (who, Sandbox("candidate", mem_cap_bytes(cfg), k[0], k[2], zygote=zygote(cfg),
                                              untrusted=untrusted))
    return held[1]


def candidate_started(cfg: dict, who: str) -> bool:
    """Whether a sandbox of candidate ``who`` has been started for ``cfg`` and not closed by
    :func:`close_candidate` (its code may have run, and may still run: its process or what it left)."""
    held = _CANDIDATES.get(_key(cfg))
    return held is not None and held[0] == who and held[1].untrusted


def candidate_leftovers(cfg: dict) -> set[int]:
    """Processes the held untrusted candidate sandbox left outside itself now
    (:meth:`Sandbox.strays` with the uid scan); empty when none is held."""
    held = _CANDIDATES.get(_key(cfg))
    return held[1].strays(full=True) if held is not None and held[1].untrusted else set()


def close_candidate(cfg: dict) -> None:
    """Close the candidate sandbox held for ``cfg`` and kill what it left (the next candidate's
    references then run with no untrusted process alive)."""
    held = _CANDIDATES.pop(_key(cfg), None)
    if held is not None:
        held[1].close()
        resume_trusted()


def resume_trusted() -> None:
    """``SIGCONT`` to every trusted process of this parent (the zygotes, references and Dynamo-only
    sandboxes): a process a candidate stopped and left stopped runs again once the candidate is gone."""
    pids = [z.proc.pid for z in _ZYGOTES.values() if z.alive]
    pids += [b.pid for b in list(_REFERENCES.values()) + [b for _, b in _DYNAMOS.values()] if b.alive]
    for p in pids:
        try:
            os.kill(p, 18)  # SIGCONT
        except OSError:
            pass


def dynamo_sandbox(cfg: dict, who: str) -> Sandbox:
    """The Dynamo-only sandbox for candidate ``who``: a candidate sandbox in every respect (script,
    role ``candidate``, threads, memory cap, set-up; failures labelled ``dynamo``) that loads
    :data:`DYNAMO_CANDIDATE`, fresh for each new candidate as the candidate's own (``who`` as in
    :func:`candidate_sandbox`; the ``eager`` candidate gets one too), restarted when it died. It
    runs only torch's own ``eager`` backend, so no violation taints it."""
    k = _key(cfg)
    held = _DYNAMOS.get(k)
    if held is not None and (held[0] != who or not held[1].alive):
        held[1].close()
        held = None
    if held is None:
        held = _DYNAMOS[k] = (who, Sandbox("candidate", mem_cap_bytes(cfg), k[0], k[2], label="dynamo", zygote=zygote(cfg)))
    return held[1]


def close_sandboxes() -> None:
    """Stop every sandbox this process started (also at exit)."""
    for box in list(_REFERENCES.values()) + [b for _, b in list(_CANDIDATES.values()) + list(_DYNAMOS.values())]:
        box.close()
    for z in _ZYGOTES.values():
        z.close()
    _REFERENCES.clear()
    _CANDIDATES.clear()
    _DYNAMOS.clear()
    _ZYGOTES.clear()


atexit.register(close_sandboxes)


def graph_payload(gm: torch.fx.GraphModule) -> bytes:
    """``gm`` pickled for a sandbox *as it is*: its graph (a fresh ``fx.Graph`` copy with the same
    nodes, arguments and code generator) and a plain root module holding only the attributes its
    ``get_attr`` / ``call_module`` nodes name. Pickling a ``GraphModule`` itself re-traces its
    generated code on load, which rewrites calls (``F.batch_norm``'s positional defaults become
    fewer arguments) so that a pass's pattern literals no longer match."""
    g = torch.fx.Graph()
    out = g.graph_copy(gm.graph, {})
    g.output(out)
    g._codegen = copy.deepcopy(gm.graph._codegen)
    root = torch.nn.Module()
    for n in gm.graph.nodes:
        if n.op in ("get_attr", "call_module"):
            obj = gm
            for part in str(n.target).split("."):
                obj = getattr(obj, part)
            _set_path(root, str(n.target), obj)
    return pickle.dumps((root, g), protocol=pickle.HIGHEST_PROTOCOL)


def _set_path(root: torch.nn.Module, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    mod = root
    for p in parents:
        if not hasattr(mod, p):
            mod.add_module(p, torch.nn.Module())
        mod = getattr(mod, p)
    if isinstance(value, torch.nn.Module):
        mod.add_module(last, value)
    elif isinstance(value, torch.nn.Parameter):
        mod.register_parameter(last, value)
    elif isinstance(value, torch.Tensor):
        mod.register_buffer(last, value)
    else:
        setattr(mod, last, value)
