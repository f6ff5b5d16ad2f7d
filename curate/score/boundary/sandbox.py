"""The far side of the scorer's trust boundary: a process that runs graphs and nothing else.

Run as a script, so it imports **no module of the evaluator** (only the standard library and
torch), and in roles ``candidate`` and ``zygote`` refuses to import ``curate`` / ``passnet_common``
at all (a meta-path finder; the folder of this file is also dropped from ``sys.path``). Started by
:mod:`curate.score.boundary.parent` as ``python sandbox.py zygote <socket fd>`` (:func:`zygote`:
torch and the Dynamo / Inductor machinery imported once, then one fork per sandbox, which serves
its role as below; the zygote is not dumpable and is the child subreaper of its sandboxes), or,
when the zygote cannot fork, as ``python sandbox.py <role> <request socket fd> <reply pipe fd>``.
Two sandbox roles:

* ``candidate``: loads the candidate (``backend:``, ``module:``, ``pass:``) and compiles it for
  the graph; holds no reference, no expected output, no check, no tolerance code and no timer
  whose reading decides anything;
* ``reference``: the trusted eager graph. (The Dynamo-only reference,
  ``torch.compile(backend="eager")``, runs in a sandbox of role ``candidate`` that loads
  ``backend:eager``, so that it is timed exactly as a candidate is.)

Trust. The first request, ``setup``, decides it: an **untrusted** sandbox (a ``module:`` /
``pass:`` candidate's; ``drop`` in the request) runs :func:`drop_privileges` before any candidate
code: its own folder (cwd, ``HOME``, ``TMPDIR``, its own Inductor cache), no core files,
``PR_SET_NO_NEW_PRIVS``, and, when the parent is root, its own unprivileged uid with
``RLIMIT_NPROC``; a **trusted** one (the reference, the Dynamo-only sandbox, a ``backend:``
candidate's: torch's code only) makes itself not dumpable (no same-uid process may open its
``/proc/<pid>/fd`` or ``mem``, or ptrace it). An exception of the candidate's code that the
kernel raised as a refusal (``EPERM`` / ``EACCES``) is flagged ``denied`` in the reply.

What crosses the boundary. Parent -> here: pickled requests on this sandbox's own request socket
(the parent is trusted by this process; this process is not trusted by the parent, which never
unpickles anything from it), the graph (a pickled ``GraphModule``), a candidate's source text,
and, after each ``bind`` request, the descriptors of two anonymous shared-memory files
(``memfd``, ``SCM_RIGHTS``; no name anywhere, passed to this sandbox only) with their layouts:
input slots (the parent writes fresh values before every run; in a timed trial one set per call,
written only when that call starts: :meth:`Runner.run` ``stream``), each input a tensor over its
own bytes of the file, each set with a seed word (its call's RNG seed, written with its inputs),
and output slots, one plain contiguous buffer per output leaf with the
reference's dtype and shape. Here -> parent: one JSON line per request on a pipe (``ok``,
``error``, findings), and in a timed trial one done byte per call. Outputs leave only by being
**copied into the output slots inside the run**, i.e. inside the parent's timed window: deferred
work (a lazy tensor subclass, a thread still computing) is either done before the copy returns,
and so timed, or refused. An output leaf that is not exactly ``torch.Tensor`` (a subclass), or that
shares storage with the inputs where the reference's does not, is reported as a finding
(``output_type`` / ``output_alias``); an output of another dtype, shape or structure is a wrong
answer (``output_mismatch``: it fails at every level).

This file is the only evaluator code in the candidate's process. It decides nothing: the parent
times every run on its own clock, reads this process's threads, CPU time and the processes it
left behind from ``/proc``, and compares the slots with the reference's.
"""

from __future__ import annotations

import copy
import ctypes
import errno
import importlib.util
import json
import mmap
import os
import pickle
import resource
import socket
import struct
import sys
import tempfile
import time
from typing import NoReturn

BLOCKED = ("curate", "passnet_common")
"""Top-level packages the candidate process refuses to import (the evaluator's)."""


PR_SET_DUMPABLE, PR_SET_KEEPCAPS, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 4, 8, 24, 36, 38, 47
"""``prctl(2)`` options (linux/prctl.h)."""

CAP_DAC_READ_SEARCH = 2
"""The one capability an untrusted sandbox may keep (``read_all``): read and search any file, e.g.
an interpreter installed under a folder only root may enter; it writes, signals and ptraces
nothing more (linux/capability.h)."""


def prctl(option: int, *args: int) -> bool:
    """``prctl(option, *args)`` (missing arguments 0) through libc; False where it failed or there is no libc."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        vals = [ctypes.c_ulong(v) for v in (list(args) + [0, 0, 0, 0])[:4]]
        return libc.prctl(option, *vals) == 0
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return False


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _keep_only_read_search() -> None:
    """After ``setresuid`` with ``PR_SET_KEEPCAPS``: permitted = effective = inheritable = ambient =
    ``CAP_DAC_READ_SEARCH`` alone (ambient: the compiler Inductor runs inherits it).

    Raises:
        OSError: the kernel did not leave exactly that set.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = data[0].inheritable = 1 << CAP_DAC_READ_SEARCH
    if libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data) != 0:  # _LINUX_CAPABILITY_VERSION_3
        raise OSError(ctypes.get_errno(), "capset failed")
    prctl(PR_CAP_AMBIENT, 2, CAP_DAC_READ_SEARCH)  # PR_CAP_AMBIENT_RAISE


def capabilities() -> dict[str, int]:
    """This process's capability sets (``/proc/self/status`` ``CapInh`` / ``CapPrm`` / ``CapEff`` / ``CapAmb``)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line[:3] == "Cap" and line.split(":")[0] in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
                out[line.split(":")[0]] = int(line.split()[1], 16)
    return out


def drop_privileges(spec: dict) -> dict:
    """Make this process the untrusted candidate's, before any candidate code runs: its own
    folder ``spec["dir"]`` (cwd, ``HOME``, ``TMPDIR``, the Inductor / Triton caches: never the
    trusted Inductor cache), no core files, and, when ``spec["uid"]`` is set (the parent is
    root), ``setgroups([])`` + ``setresgid`` / ``setresuid`` to that unprivileged uid (one per
    sandbox, so every process of that uid is this candidate's) with ``RLIMIT_NPROC`` =
    ``spec["nproc"]`` (processes and threads of that uid: the compiler's few children, no pool of
    daemons), every capability dropped (bounding set included) but, with ``spec["read_all"]``
    (the interpreter lives where the new uid may not read), ``CAP_DAC_READ_SEARCH``; then
    ``PR_SET_NO_NEW_PRIVS`` (no set-uid binary gives anything back). Returns what holds
    (``{"uid", "no_new_privs", "caps"}``).

    Raises:
        OSError: a step that must hold did not (the parent then refuses to run the candidate).
    """
    d = spec["dir"]
    os.chdir(d)
    who = f"passnet_{spec.get('uid') if spec.get('uid') is not None else os.getuid()}"
    os.environ.update(HOME=d, TMPDIR=os.path.join(d, "tmp"), TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "inductor"),
                      TRITON_CACHE_DIR=os.path.join(d, "cache", "triton"), XDG_CACHE_HOME=os.path.join(d, "cache"),
                      USER=who, LOGNAME=who, LNAME=who, USERNAME=who)  # Inductor's default folders: under TMPDIR
    tempfile.tempdir = os.path.join(d, "tmp")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    uid = spec.get("uid")
    keep = 1 << CAP_DAC_READ_SEARCH if spec.get("read_all") else 0
    if uid is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (int(spec["nproc"]), int(spec["nproc"])))
        for cap in range(64):  # the bounding set: nothing but what it keeps, whatever it executes
            if not keep >> cap & 1:
                prctl(PR_CAPBSET_DROP, cap)
        prctl(PR_SET_KEEPCAPS, 1 if keep else 0)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid):  # pragma: no cover - the kernel refused silently
            raise OSError(errno.EPERM, "setresuid did not take")
        if keep:
            _keep_only_read_search()
            prctl(PR_SET_KEEPCAPS, 0)
        caps = capabilities()
        if caps.get("CapPrm") != keep or caps.get("CapEff") != keep:
            raise OSError(errno.EPERM, f"capabilities after the drop are {caps}, not {keep:#x}")
    nnp = prctl(PR_SET_NO_NEW_PRIVS, 1)
    for sub in ("tmp", "inductor", "cache"):  # made by the new uid: its own
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    return {"uid": os.getuid(), "no_new_privs": nnp, "caps": capabilities()}


class _RefuseEvaluator:
    """A ``sys.meta_path`` finder that refuses the evaluator's packages (:data:`BLOCKED`)."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name}: the evaluator's modules are not importable in the candidate process")
        return None


def _read(fd: int) -> dict | None:
    head = b""
    while len(head) < 4:
        chunk = os.read(fd, 4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = struct.unpack("<I", head)
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, min(1 << 20, n - got))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return pickle.loads(b"".join(parts))  # from the parent (trusted by this process)


def _write(fd: int, obj: dict) -> None:
    data = (json.dumps(obj, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


class Slots:
    """Tensors viewing a shared-memory file (a ``memfd`` the parent created and passed to this
    process alone, descriptor ``fd``; it has no name anywhere): ``sets[k][j]`` is leaf ``j`` of
    set ``k`` (a plain contiguous tensor, or a constant for a non-tensor leaf). Each leaf is its
    own storage over its own bytes of the file (``torch.frombuffer`` with an offset and a count),
    so a tensor the candidate receives reaches no other leaf and no other set through its storage
    (``untyped_storage()``, ``as_strided`` are bounded by it). ``ptrs``: the leaves' storage
    addresses. The mapping stays valid after ``fd`` is closed."""

    def __init__(self, torch, fd: int, nbytes: int, layout: list):
        self.map = mmap.mmap(fd, max(1, nbytes))
        self.sets = []
        self.seed_offsets: list[int | None] = []
        self.ptrs: set[int] = set()
        for leaves in layout:
            row = []
            self.seed_offsets.append(None)
            for leaf in leaves:
                if leaf[0] == "const":
                    row.append(leaf[1])
                    continue
                if leaf[0] == "seed":  # the set's seed word, not an input
                    self.seed_offsets[-1] = int(leaf[1])
                    continue
                _, off, dtype, shape = leaf
                nb = _numel(shape) * _itemsize(torch, dtype)
                if not nb:
                    row.append(torch.empty(shape, dtype=getattr(torch, dtype)))
                    continue
                t = torch.frombuffer(self.map, dtype=torch.uint8, count=nb, offset=off).view(getattr(torch, dtype)).view(shape)
                self.ptrs.add(t.untyped_storage().data_ptr())
                row.append(t)
            self.sets.append(row)

    def seed(self, k: int) -> int:
        """Set ``k``'s seed word (written by the parent with the set's inputs)."""
        off = self.seed_offsets[k]
        if off is None:
            raise RuntimeError(f"set {k} has no seed word")
        return struct.unpack_from("<q", self.map, off)[0]


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _itemsize(torch, dtype: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


class Runner:
    """The request loop of one sandbox process."""

    def __init__(self, role: str):
        import torch  # noqa: PLC0415  (import order: the sandbox's torch loads after main's set-up (this folder off sys.path, the evaluator's packages refused), so nothing torch imports at start-up can reach them)

        self.torch = torch
        self.role = role
        self.ins: Slots | None = None
        self.outs: Slots | None = None
        self.fns: dict = {}
        self.cache: dict = {}
        self.treespec = None
        self.chan: socket.socket | None = None  # the request socket (slot descriptors arrive on it)
        self.rfd = self.wfd = -1  # the request socket's and the reply pipe's descriptors (go / done bytes of a stream)

    # --- requests -------------------------------------------------------------------------

    def setup(self, msg: dict) -> dict:
        """Threads, caches, then (``msg["drop"]``, an untrusted candidate's sandbox)
        :func:`drop_privileges`; a trusted sandbox (``reference``, Dynamo-only, a torch backend)
        is made non-dumpable instead (no ``/proc/<pid>/fd``, ``mem`` or ptrace for a same-uid
        process). Reply ``{"pid", "uid", "dumpable"}``."""
        torch = self.torch
        torch.set_num_threads(int(msg["threads"]))
        drop = msg.get("drop")
        if msg.get("inductor_cache") and not drop:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = msg["inductor_cache"]
        try:
            import tqdm  # noqa: PLC0415  (optional: absent in an environment without tqdm; the sandbox imports only the standard library and torch for itself)

            tqdm.tqdm.monitor_interval = 0  # no tqdm monitor thread: any thread is the candidate's
        except ImportError:  # pragma: no cover
            pass
        import torch._inductor.config as ic  # noqa: PLC0415  (env: after TORCHINDUCTOR_CACHE_DIR is set above (torch._dynamo reads it at import))

        ic.compile_threads = 1
        ic.fallback_random = True
        # torch's own intra-op pool starts at the first parallel kernel: start it now, before the
        # parent takes its baseline of this process's threads
        x = torch.randn(1 << 18)
        (x.softmax(0) @ x + torch.mm(x[:4096].view(64, 64), x[:4096].view(64, 64)).sum()).item()
        held: dict = {}
        if drop:
            held = drop_privileges(drop)
            import torch._inductor.codecache as cc  # noqa: PLC0415  (imported by the zygote already; its precompiled-header folder was fixed then, in the shared default folder)

            if hasattr(cc, "_HEADER_DIR"):
                cc._HEADER_DIR = os.path.join(drop["dir"], "inductor", "precompiled_headers")
                cc._HEADER_LOCK_DIR = os.path.join(cc._HEADER_DIR, "locks")
        else:
            prctl(PR_SET_DUMPABLE, 0)
            import torch._inductor.codecache as cc  # noqa: PLC0415  (imported by the zygote already, its header folder fixed in Inductor's default folder then)

            if msg.get("inductor_cache") and hasattr(cc, "_HEADER_DIR"):  # the parent made it: no candidate could
                cc._HEADER_DIR = os.path.join(msg["inductor_cache"], "precompiled_headers")
                cc._HEADER_LOCK_DIR = os.path.join(cc._HEADER_DIR, "locks")
        return {"ok": True, "pid": os.getpid(), "uid": os.getuid(), "dumpable": _dumpable(), **held}

    def bind(self, msg: dict) -> dict:
        """Map the slots whose ``memfd`` descriptors follow the request on the socket (one byte
        with ``SCM_RIGHTS``: the input file first when ``inputs`` is in ``msg``, then the output
        file); the descriptors are closed once mapped."""
        torch = self.torch
        want = ("inputs" in msg) + ("outputs" in msg)
        _, fds, _, _ = socket.recv_fds(self.chan, 1, want)
        if len(fds) != want:
            raise RuntimeError(f"bind: {len(fds)} slot descriptors received, {want} expected")
        try:
            it = iter(fds)
            if "inputs" in msg:
                self.ins = Slots(torch, next(it), *msg["inputs"])
            if "outputs" in msg:
                self.outs = Slots(torch, next(it), *msg["outputs"])
                self.treespec = msg.get("treespec")
        finally:
            for fd in fds:
                os.close(fd)
        return {"ok": True}

    def load(self, msg: dict) -> dict:
        """Build the callables for the graph in ``msg["graph"]``: ``eager`` (reference role) or
        ``candidate``. Errors: ``{"error", "code"}`` with code 3 (compile failure) or 2
        (the compiled code's first run raised)."""
        # the sandbox's torch (self.torch, imported after the sandbox's own set-up), with its submodules
        import torch._dynamo  # noqa: PLC0415  (import order: torch only after main's set-up; binds the name torch to self.torch)
        import torch.fx  # noqa: PLC0415  (import order: as above)

        key = msg.get("key")
        if self.role == "reference" and key is not None and key in self.cache:
            self.fns, reply = self.cache[key]
            return reply
        root, graph = pickle.loads(msg["graph"])
        gm = torch.fx.GraphModule(root, graph)
        self.fns = {}
        ex = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.ins.sets[0]]
        if self.role == "reference":
            reply = self._reference(gm, ex, msg)
            if key is not None:
                while len(self.cache) >= 8:  # the reference's compiled graphs of the last 8 subgraphs
                    self.cache.pop(next(iter(self.cache)))
                self.cache[key] = (self.fns, reply)
            return reply
        return self._candidate(gm, ex, msg)

    def _reference(self, gm, ex, msg: dict) -> dict:
        self.fns["eager"] = gm
        return {"ok": True}

    def _candidate(self, gm, ex, msg: dict) -> dict:
        kind, target = msg["kind"], msg["target"]
        try:
            if kind == "backend":
                self.fns["candidate"] = self._compile(gm, target, ex)
                return {"ok": True}
            mod = _load_file(target) if msg.get("source") is None else _load_source(msg["source"], target)
            if kind == "module":
                self.fns["candidate"] = self._compile(gm, mod.backend, ex)
                return {"ok": True}
        except _RunError as exc:
            return {"error": str(exc), "code": 2, "denied": _denied(exc)}
        except Exception as exc:  # noqa: BLE001 - every failure of the candidate is a result
            return {"error": f"{type(exc).__name__}: {exc}"[:500], "code": 3,
                    "guard": type(exc).__name__ == "DispatchGuardError", "denied": _denied(exc)}
        return self._pass(mod, gm, ex, msg)

    def _compile(self, gm, backend, ex):
        torch = self.torch
        torch._dynamo.reset()
        compiled = torch.compile(gm, backend=backend, fullgraph=False, dynamic=False)
        torch.manual_seed(0)
        try:
            compiled(*ex)
        except torch._dynamo.exc.BackendCompilerFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - compiled, then the first run failed: code 2
            raise _RunError(f"{type(exc).__name__}: {exc}"[:500]) from exc
        return compiled

    def _pass(self, mod, gm, ex, msg: dict) -> dict:
        from torch.fx.subgraph_rewriter import replace_pattern  # noqa: PLC0415  (import order: torch only after main's set-up, see Runner.__init__)

        try:
            pairs = getattr(mod, "PATTERNS", None) or [(mod.pattern, mod.replacement)]
            g2 = copy.deepcopy(gm)
            guard = _load_file(msg["guard_path"], "dispatch_guard") if msg.get("guard_path") else None
            env = guard.node_values(g2, ex) if guard else None
            matches, used = 0, []
            for k, (pat, rep) in enumerate(pairs):
                found = replace_pattern(g2, pat, rep)
                if found:
                    used.append(k)
                    if guard is not None:
                        guard.check_replacement(pat, rep, found[0], env)
                matches += len(found)
            g2.recompile()
        except Exception as exc:  # noqa: BLE001
            return {"error": f"{type(exc).__name__}: {exc}"[:500], "code": 3,
                    "guard": type(exc).__name__ == "DispatchGuardError", "denied": _denied(exc)}
        self.fns["candidate"] = g2
        return {"ok": True, "matches": matches, "used": used}

    def probe(self, msg: dict) -> dict:
        """Run ``side`` once on input set ``set`` and describe its outputs (the reference's layout)."""
        torch = self.torch
        from torch.utils._pytree import tree_flatten  # noqa: PLC0415  (import order: torch only after main's set-up, see Runner.__init__)

        if msg.get("seed") is not None:
            torch.manual_seed(int(msg["seed"]))
        out = self.fns[msg["side"]](*self.ins.sets[int(msg["set"])])
        leaves, spec = tree_flatten(out)
        desc = []
        for o in leaves:
            if isinstance(o, torch.Tensor):
                desc.append(["tensor", str(o.dtype).replace("torch.", ""), list(o.shape),
                             self._aliases_input(o)])
            else:
                desc.append(["const", repr(o)])
        return {"ok": True, "leaves": desc, "treespec": str(spec)}

    def _aliases_input(self, o) -> bool:
        try:
            p = o.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - no storage: cannot alias
            return False
        return bool(o.numel()) and p in self.ins.ptrs

    def _in_output_slots(self, o) -> bool:
        """Whether ``o``'s storage is one of the output slots' (an output the candidate wrote into
        the harness's slot itself: the loop's copy would then be of a tensor onto itself, which
        every other side pays for and it skips)."""
        try:
            p = o.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - no storage: not a slot
            return False
        return bool(o.numel()) and self.outs is not None and p in self.outs.ptrs

    def run(self, msg: dict) -> dict:
        """Call ``side`` on each input set of ``sets`` (in order) and copy every output leaf into
        that set's output slots. Findings: ``output_type`` (a leaf not exactly ``torch.Tensor``),
        ``output_alias`` (a leaf on an input's storage where the reference's is not), ``output_slot``
        (a leaf on an output slot's storage: written into the slot, its copy skipped),
        ``output_mismatch`` (structure, dtype or shape not the reference's; the set's slots are
        then left as they were and the parent fails the call).

        ``stream`` (a timed trial): before each call this process waits for the parent's go byte
        on the request socket (the parent writes that call's input set into its slot just before
        it, after the previous call's done byte), and after each call's outputs are in their slots
        it writes one done byte (``.``) on the reply pipe; the reply line follows the last call
        (an error reply, which starts with ``{``, ends the trial at the call that raised). So no
        input set of a trial exists in this process before its call.

        ``seed``: None (no re-seeding), an int (every call re-seeded with it), or ``"slot"`` (each
        call re-seeded with its set's own seed word, which the parent writes with the set's inputs:
        :class:`Slots`)."""
        torch = self.torch
        from torch.utils._pytree import tree_flatten  # noqa: PLC0415  (import order: torch only after main's set-up, see Runner.__init__)

        fn = self.fns[msg["side"]]
        seed = msg.get("seed")
        allowed_alias = set(msg.get("alias", ()))
        base = int(msg.get("out_base", 0))
        stream = bool(msg.get("stream"))
        findings, mismatched = [], []

        def call(k: int) -> None:
            if seed == "slot":  # this call's own seed, delivered with its input set
                torch.manual_seed(self.ins.seed(k))
            elif seed is not None:
                torch.manual_seed(int(seed))
            leaves, spec = tree_flatten(fn(*self.ins.sets[k]))
            slots = self.outs.sets[k + base]
            if len(leaves) != len(slots) or (self.treespec is not None and str(spec) != self.treespec):
                mismatched.append(k)
                return
            for j, (o, s) in enumerate(zip(leaves, slots)):
                if not isinstance(s, torch.Tensor):
                    if repr(o) != s:
                        mismatched.append(k)
                    continue
                if type(o) is not torch.Tensor and type(o) is not torch.nn.Parameter:
                    findings.append(f"output_type: output {j} is a {type(o).__module__}.{type(o).__qualname__}, "
                                    "not a plain torch.Tensor")
                    continue
                if o.dtype != s.dtype or o.shape != s.shape:
                    mismatched.append(k)
                    continue
                if j not in allowed_alias and self._aliases_input(o):
                    findings.append(f"output_alias: output {j} is a view of the inputs")
                if self._in_output_slots(o):
                    findings.append(f"output_slot: output {j} lies in the harness's output slots (written there "
                                    "directly, so that its copy into the slot is skipped)")
                s.copy_(o)

        for k in msg["sets"]:
            if stream and os.read(self.rfd, 1) != b"g":
                raise RuntimeError("stream: the parent's go byte did not arrive")
            call(k)  # its outputs are copied and released before the done byte
            if stream:
                os.write(self.wfd, b".")
        out: dict = {"ok": True}
        if findings:
            out["findings"] = sorted(set(findings))
        if mismatched:
            out["mismatched"] = sorted(set(mismatched))
        return out


class _RunError(RuntimeError):
    pass


def _load_source(source: str, path: str):
    """The candidate module from its source text (sent by the parent: a candidate whose privileges
    were dropped cannot read the parent's files), ``__file__`` a copy in this process's own folder."""
    local = os.path.join(os.getcwd(), f"candidate_{abs(hash(path))}.py")
    with open(local, "w") as f:
        f.write(source)
    return _load_file(local)


def _dumpable() -> int | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
    except (OSError, AttributeError):  # pragma: no cover
        return None


def _denied(exc: BaseException | None) -> bool:
    """Whether ``exc`` or an exception it was raised from / during is a refusal by the kernel
    (``EPERM`` / ``EACCES``): the candidate reached for something that is not its own."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _load_file(path: str, name: str = "candidate"):
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load candidate file {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def serve(runner: Runner, rfd: int, wfd: int) -> int:
    """Answer requests on the socket ``rfd`` with JSON lines on the pipe ``wfd`` until ``exit`` or
    a closed channel."""
    runner.chan = socket.socket(fileno=rfd)
    runner.rfd, runner.wfd = rfd, wfd
    while True:
        msg = _read(rfd)
        if msg is None or msg.get("op") == "exit":
            return 0
        op = msg["op"]
        try:
            if op == "modules":
                reply = {"ok": True, "modules": sorted(sys.modules)}
            else:
                reply = getattr(runner, op)(msg)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which classifies it
            reply = {"error": f"{type(exc).__name__}: {exc}"[:500], "code": 2, "denied": _denied(exc)}
        _write(wfd, reply)


def zygote(sock_fd: int) -> int:
    """Role ``zygote``: import torch and the Dynamo / Inductor machinery once (nothing run: no
    thread beyond this one, no candidate code), then fork a sandbox per request.

    This process is not dumpable and is the *child subreaper* of its sandboxes: a process a
    sandbox leaves behind (a double-forked daemon) is re-parented here, where the parent lists it.

    A request on the Unix socket ``sock_fd`` is one JSON line ``{"role", "cwd"}`` with the
    sandbox's two channel ends attached (``SCM_RIGHTS``: its request socket, its reply pipe); the reply is ``{"pid"}``, or ``{"error"}``
    when this process has more than one thread (a fork would copy a torch with half its pool: the
    parent then spawns). The forked child keeps only the two pipe ends (every other descriptor,
    this socket included, is closed), moves to ``cwd``, restores the default signal handling and
    runs :func:`serve` in ``role`` exactly as a spawned sandbox does (it then gets the same
    ``setup`` request). Children are reaped here as they end (``SIGCHLD``), so that their CPU
    time is counted in this process's children, and so in the parent's (``getrusage``)."""
    import signal  # noqa: PLC0415  (only this role handles signals)
    import socket  # noqa: PLC0415  (only this role receives descriptors)

    import torch  # noqa: PLC0415  (import order: after main's set-up, see Runner.__init__)

    try:
        import tqdm  # noqa: PLC0415  (optional, as in Runner.setup)

        tqdm.tqdm.monitor_interval = 0
    except ImportError:  # pragma: no cover
        pass
    import torch._dynamo  # noqa: PLC0415, F401  (pre-imported for every child; TORCHINDUCTOR_CACHE_DIR is in this process's environment)
    import torch._inductor.compile_fx  # noqa: PLC0415, F401  (as above)
    import torch._inductor.config as ic  # noqa: PLC0415  (as above)
    import torch.fx.subgraph_rewriter  # noqa: PLC0415, F401  (as above)
    import torch.utils._pytree  # noqa: PLC0415, F401  (as above)

    ic.compile_threads = 1
    ic.fallback_random = True
    del torch
    # trusted: no same-uid process may open /proc/<pid>/fd or mem of this one (its children
    # inherit this until a candidate's drops its uid); orphans of any sandbox (a double-forked
    # daemon) become this process's children, where the parent finds them
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)

    def reap(*_) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def finish() -> NoReturn:  # the parent closed the socket after killing the sandboxes: reap them, then exit
        for _ in range(200):
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    time.sleep(0.01)
            except ChildProcessError:
                break
        os._exit(0)  # nothing to flush; torch's interpreter shutdown would take seconds

    signal.signal(signal.SIGCHLD, reap)
    sock = socket.socket(fileno=sock_fd)
    buf = b""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 2)
        except OSError:
            return finish()
        if not data:
            return finish()
        buf += data
        if b"\n" not in buf:
            for fd in fds:
                os.close(fd)
            continue
        line, buf = buf.split(b"\n", 1)
        req = json.loads(line)
        if len(fds) != 2 or len(os.listdir("/proc/self/task")) != 1:
            for fd in fds:
                os.close(fd)
            sock.sendall((json.dumps({"error": "cannot fork: a pipe end is missing or this process has threads"}) + "\n").encode())
            continue
        pid = os.fork()
        if pid == 0:  # the sandbox
            rfd, wfd = fds
            keep = {0, 1, 2, rfd, wfd}
            for fd in os.listdir("/proc/self/fd"):
                if int(fd) not in keep:
                    try:
                        os.close(int(fd))
                    except OSError:
                        pass
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.chdir(req["cwd"])
            code = 1
            try:
                code = serve(Runner(req["role"]), rfd, wfd)
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        sock.sendall((json.dumps({"pid": pid}) + "\n").encode())


def main(argv: list[str]) -> int:
    role = argv[1]
    if role in ("candidate", "zygote"):  # a zygote's children are candidate sandboxes (and the reference)
        sys.meta_path.insert(0, _RefuseEvaluator())
    if role == "zygote":
        return zygote(int(argv[2]))
    return serve(Runner(role), int(argv[2]), int(argv[3]))


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]  # no `import checks` from here
    sys.exit(main(sys.argv))
